"""JSON in and out for the JSON-based formats, with the limits that keep hostile input harmless.

msgspec parses exactly (integers of any size stay integers, so an enormous number is refused by the model's 64-bit
check instead of being rounded to a float, as some parsers do) and refuses NaN literals and numbers beyond a double.

Values go in with ``value_of`` (arrays as tuples, objects as ``Struct``) and out with ``json_form``. The formats
that Kafka Connect's JsonConverter writes come out as Jackson spells JSON (``jackson_float``, ``encode_as_jackson``),
so that what Debezium sent is written back byte for byte.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import msgspec

from ...contract import Option
from ...core.typed_text import from_json
from ...errors import DecodeError, EncodeError
from ...model import INT64_MAX, INT64_MIN, Cell, Table, Value

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# The Python types of a parsed JSON scalar.
SCALAR_TYPES = (str, int, float, bool, type(None))
# The values JSON writes and reads back as they are, told by their type alone (a float only where it is finite, an
# integer only within 64 bits, which the model holds to): what a writer passes through without a call.
AS_IS_TYPES = frozenset({str, int, bool, type(None)})


def _positive_int(value: Any) -> int:
    if type(value) is not int or value <= 0:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


MAX_MESSAGE_BYTES = Option(
    "max_message_bytes", "largest message accepted, in bytes; a larger one is refused without being parsed",
    DEFAULT_MAX_MESSAGE_BYTES, _positive_int)

_decoder = msgspec.json.Decoder()
# msgspec's reader of any JSON, for a reader's path of every message: ``load`` tells what is wrong with one.
parse = _decoder.decode
encode = msgspec.json.encode

# Where msgspec's JSON and Jackson's differ: a backslash pair (matched only to keep escapes aligned), a control
# character's escape (Jackson's hex digits are upper case) and a character beyond the BMP (which Jackson escapes as
# its UTF-16 surrogate pair).
_NOT_JACKSON = re.compile(rb"\\\\|\\u00[0-9a-f]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _as_jackson(match: re.Match[bytes]) -> bytes:
    text = match.group()
    if text[0] != 0x5C:  # a character beyond the BMP
        code = ord(text.decode("utf-8")) - 0x10000
        return b"\\u%04X\\u%04X" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    return text[:4] + text[4:].upper() if text[1] == 0x75 else text


_BACKSLASH = ord("\\")


def encode_as_jackson(document: Any) -> bytes:
    """``document`` as JSON text spelt as Jackson writes it (with its numbers as ``jackson_float`` made them)."""
    text = encode(document)
    # The usual case, told by two scans in C far cheaper than the pattern's: every escape opens with a backslash, and
    # looking for one byte (an int) is a memchr, where looking for b"\\u00" costs twenty times more.
    if text.isascii() and (_BACKSLASH not in text or b"\\u00" not in text):
        return text
    return _NOT_JACKSON.sub(_as_jackson, text)


# The values that hold no float: left as they are without a call (most of a document).
_FLOATLESS = frozenset({str, int, bool, type(None), msgspec.Raw})


def with_jackson_floats(value: Any) -> Any:
    """A JSON value (as ``json_form`` gives it) with its finite floats as Jackson spells them (``jackson_float``)."""
    if type(value) is float:
        return jackson_float(value) if math.isfinite(value) else value
    if type(value) is list:
        return [item if type(item) in _FLOATLESS else with_jackson_floats(item) for item in value]
    if type(value) is dict:
        return {name: item if type(item) in _FLOATLESS else with_jackson_floats(item) for name, item in value.items()}
    return value


def jackson_float(value: float) -> msgspec.Raw:
    """A finite float as Java's ``Double.toString`` spells it, which Jackson writes: the shortest digits, in plain
    notation from 10^-3 up to 10^7 and in Java's scientific notation (``1.0E7``, ``-3.4E38``, ``1.0E-4``) beyond."""
    if 1e-3 <= abs(value) < 1e7 or value == 0:
        return msgspec.Raw(repr(value).encode())  # plain there, with ".0" when whole, as Java writes it
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)  # finite
    shown = "".join(map(str, digits))
    mantissa = f"{shown[0]}.{shown[1:] or '0'}"
    return msgspec.Raw(f"{'-' if sign else ''}{mantissa}E{exponent + len(shown) - 1}".encode())


def load(format_name: str, message: Any, max_bytes: int) -> Any:
    """Parse one JSON message, or raise DecodeError saying why."""
    if type(message) is not bytes:  # most messages are: told without a call
        if isinstance(message, str):
            message = message.encode("utf-8", "surrogatepass")
        elif not isinstance(message, (bytes, bytearray, memoryview)):
            raise DecodeError(format_name, f"expected bytes or str, got {type(message).__name__}")
    if len(message) > max_bytes:
        raise DecodeError(format_name, f"message of {len(message)} bytes is over the limit of {max_bytes} "
                                       "(option max_message_bytes)")
    try:
        return _decoder.decode(message)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as error:
        # msgspec reports invalid UTF-8 inside a string as Python's UnicodeDecodeError.
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise DecodeError(format_name, f"not valid JSON: {reason}") from None


def load_object(format_name: str, message: Any, max_bytes: int) -> dict[str, Any]:
    document = load(format_name, message, max_bytes)
    if type(document) is not dict:
        raise DecodeError(format_name, f"expected a JSON object, got {json_type(document)}")
    return document


def json_type(value: Any) -> str:
    """How a parsed JSON value is called in an error message."""
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def raw(format_name: str, text: Any, field: str) -> msgspec.Raw:
    """JSON text kept from a decoded message, checked before it is written back verbatim."""
    if type(text) is str:
        try:
            msgspec.json.decode(text)
        except msgspec.DecodeError:
            pass
        else:
            return msgspec.Raw(text.encode())
    raise EncodeError(format_name, f"expected JSON text to write back verbatim, got {text!r}", field=field)


def is_canonical(text: Any, nested_only: bool = False) -> bool:
    """Whether ``text`` is JSON exactly as this module writes it (so that it reads back unchanged); with
    ``nested_only``, an object or an array."""
    if type(text) is not str:
        return False
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return False
    return encode(value).decode() == text and (not nested_only or type(value) in (dict, list))


def database_table(format_name: str, database: Any, name: Any) -> Table | None:
    """The table of a message that names it in two fields, ``database`` and ``table`` (Canal, Maxwell): each a string
    or null. A message without a table has none; a database without a table is an error that names the table."""
    for field, value in (("database", database), ("table", name)):
        if value is not None and type(value) is not str:
            raise DecodeError(format_name, f"expected a string or null, got {json_type(value)}", field=field)
    if name is None:
        if database is not None:
            raise DecodeError(format_name, "a database without a table", field="table")
        return None
    return Table(name, database)


def cells_of(fields: dict[str, Any], format_name: str, where: str) -> tuple[Cell, ...]:
    """The cells of a parsed JSON object's fields, each value read by ``value_of``: handed to the model as they are
    first, which checks them, since most are scalars it holds as they are (a call per value costs more)."""
    try:
        return tuple([Cell(name, value) for name, value in fields.items()])
    except (TypeError, ValueError):  # an array, an object or an integer beyond 64 bits: read, or named
        return tuple([Cell(name, value_of(value, format_name, where, name)) for name, value in fields.items()])


def value_of(parsed: Any, format_name: str, where: str, name: str = "", depth: int = 0) -> Value:
    """A parsed JSON value as a cell value (``typed_text.from_json``): an array a tuple, an object a ``Struct``. An
    integer beyond 64 bits, or nesting deeper than the model holds (``depth``: the levels around it already), is
    refused, naming where it is: at ``where + name``, joined only then, since most values of a message are read
    without an error."""
    kind = type(parsed)
    if kind is not list and kind is not dict and (kind is not int or INT64_MIN <= parsed <= INT64_MAX):
        return parsed  # a scalar the model holds as it is
    path = where + name
    try:
        return from_json(parsed, path, depth)
    except ValueError as error:
        raise DecodeError(format_name, str(error), field=path) from None
