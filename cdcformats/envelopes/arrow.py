"""The canonical change event as Apache Arrow data, and batch decode/encode over Arrow arrays.

This is what the Spark functions run on (Spark hands Python UDFs Arrow batches), and it needs nothing but pyarrow.

The Arrow type mirrors the model one to one (``EVENT``): a value is a struct with one member per kind
(``boolean``, ``long``, ``double``, ``string``, ``bytes``, ``decimal``, ``nested``), exactly one of them set, and the
struct null for a null value; a decimal travels as its exact text, as in the Avro and Protobuf envelopes, so any
precision and scale survive.

Spark types cannot recurse, so a nested value (an array or a ``Struct``) travels as JSON text in ``nested``, which
``from_json`` and ``get_json_object`` read: arrays as arrays, Structs as objects with their fields in order, null,
booleans, integers and text as JSON writes them, and floats always with a fraction or an exponent (``1.0``), so that
they stay floats. What JSON has no form for is an object of one tagged member: ``{"$binary": "<base64>"}``,
``{"$decimal": "<exact text>"}``, ``{"$double": "NaN"}`` (or ``"Infinity"``, ``"-Infinity"``); a Struct whose only
field has one of the names ``$binary``, ``$decimal``, ``$double`` or ``$struct`` is written inside ``{"$struct": ...}``,
so that it is never read as a tag.

The last field, ``error``, is set only on a row that could not be decoded under ``errors="dead-letter"``: it names the
format, the reason and the field, and keeps the raw input, as Spark's ``from_json`` keeps a corrupt record.

A codec may decode a whole batch at once: its ``batch_decoder()`` gives a ``BatchDecoder``, ``values -> (events,
undecided)``, and the rows flagged in ``undecided`` (a boolean array) are decoded one by one with ``decode_message``,
which is the reference, so the fast path only ever has to recognise what it can do exactly. The property tests
check that both paths agree.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from ..codecs._kit import typed_text
from ..errors import CodecError, DecodeError, EncodeError
from ..model import MAX_NESTING, Cell, CellKind, ChangeEvent, Op, Source, Struct, Table, Value, is_nested
from ..options import error_mode

VALUE = pa.struct([
    ("boolean", pa.bool_()), ("long", pa.int64()), ("double", pa.float64()), ("string", pa.string()),
    ("bytes", pa.binary()), ("decimal", pa.string()), ("nested", pa.string()),
])
CELL = pa.struct([
    ("name", pa.string()), ("value", VALUE), ("type", pa.string()), ("version", pa.int64()), ("kind", pa.string()),
])
ENTRY = pa.struct([("name", pa.string()), ("value", VALUE)])
TABLE = pa.struct([("catalog", pa.string()), ("schema", pa.string()), ("name", pa.string())])
SOURCE = pa.struct([
    ("system", pa.string()), ("position", pa.list_(ENTRY)), ("commit_time_us", pa.int64()),
    ("capture_time_us", pa.int64()),
])
ERROR = pa.struct([
    ("format", pa.string()), ("reason", pa.string()), ("field", pa.string()), ("message", pa.string()),
    ("raw", pa.binary()),
])
EVENT = pa.struct([
    ("op", pa.string()), ("table", TABLE), ("key", pa.list_(CELL)), ("before", pa.list_(CELL)),
    ("after", pa.list_(CELL)), ("source", SOURCE), ("key_only", pa.bool_()), ("attributes", pa.list_(ENTRY)),
    ("error", ERROR),
])

# What a column function does with a row it cannot convert (cdcformats.options.ERROR_MODES): one row per row.
COLUMN_ERROR_MODES = ("fail", "null", "dead-letter")

# -- Python objects <-> Arrow rows ------------------------------------------------------------------------------------

_MEMBER_OF_TYPE = {bool: "boolean", int: "long", float: "double", str: "string", bytes: "bytes"}


_TAGS = ("$binary", "$decimal", "$double", "$struct")


def _tagged(value: Value) -> Any:
    """A nested value's members as the ``nested`` text writes them (see the module's docstring)."""
    if type(value) is tuple:
        return [_tagged(item) for item in value]
    if type(value) is Struct:
        members = {name: _tagged(item) for name, item in value.fields}
        return {"$struct": members} if len(members) == 1 and value.fields[0][0] in _TAGS else members
    if type(value) is bytes:
        return {"$binary": base64.b64encode(value).decode("ascii")}
    if type(value) is Decimal:
        return {"$decimal": str(value)}
    if type(value) is float and not math.isfinite(value):
        return {"$double": typed_text.render(value)}
    return value


def _untagged(member: Any, where: str, depth: int) -> Value:
    """The value of a member of ``nested`` text, ``depth`` levels deep: the inverse of ``_tagged``."""
    if type(member) in (list, dict) and depth == MAX_NESTING:
        raise EncodeError("arrow", f"nested deeper than {MAX_NESTING} levels", field=where)
    if type(member) is list:
        return tuple(_untagged(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(member))
    if type(member) is not dict:
        return member
    if len(member) == 1:
        (tag, tagged), = member.items()
        if tag == "$struct" and type(tagged) is dict:
            member = tagged
        elif tag in _TAGS and type(tagged) is str:
            return _tag_value(tag, tagged, where)
    return Struct(tuple((name, _untagged(item, f"{where}.{name}", depth + 1)) for name, item in member.items()))


def _tag_value(tag: str, text: str, where: str) -> Value:
    try:
        if tag == "$binary":
            return base64.b64decode(text, validate=True)
        if tag == "$decimal":
            return Decimal(text)
        if text in ("NaN", "Infinity", "-Infinity"):
            return float(text)
    except (ValueError, ArithmeticError):
        pass
    raise EncodeError("arrow", f"{tag} does not hold {text!r}", field=where)


def value_row(value: Value) -> dict[str, Any] | None:
    if value is None:
        return None
    if type(value) is Decimal:
        return {"decimal": str(value)}
    if is_nested(value):
        return {"nested": msgspec.json.encode(_tagged(value)).decode()}
    return {_MEMBER_OF_TYPE[type(value)]: value}


def _cell_row(cell: Cell) -> dict[str, Any]:
    return {"name": cell.name, "value": value_row(cell.value), "type": cell.type, "version": cell.version,
            "kind": cell.kind.value}


def _image_row(cells: Sequence[Cell] | None) -> list[dict[str, Any]] | None:
    return None if cells is None else [_cell_row(cell) for cell in cells]


def _entries_row(entries: Iterable[tuple[str, Value]]) -> list[dict[str, Any]]:
    return [{"name": name, "value": value_row(value)} for name, value in entries]


def event_row(event: ChangeEvent) -> dict[str, Any]:
    """``event`` as a Python dict of the ``EVENT`` type."""
    table = event.table
    source = event.source
    return {
        "op": event.op.value,
        "table": None if table is None else {"catalog": table.catalog, "schema": table.schema, "name": table.name},
        "key": _image_row(event.key), "before": _image_row(event.before), "after": _image_row(event.after),
        "source": {"system": source.system, "position": _entries_row(source.position),
                   "commit_time_us": source.commit_time_us, "capture_time_us": source.capture_time_us},
        "key_only": event.key_only, "attributes": _entries_row(event.attributes), "error": None,
    }


def error_row(error: CodecError) -> dict[str, Any]:
    """A dead-letter row: every event field null, ``error`` set, the raw input kept as bytes."""
    raw = error.raw
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    elif not isinstance(raw, (bytes, type(None))):
        raw = repr(raw).encode("utf-8", "backslashreplace")
    return {"error": {"format": error.format, "reason": error.reason, "field": error.field, "message": str(error),
                      "raw": raw}}


def error_from_row(row: dict[str, Any]) -> DecodeError:
    """The decode error that a dead-letter row holds."""
    return DecodeError(row["format"], row["reason"], field=row["field"], raw=row["raw"])


def to_arrow(rows: Sequence[ChangeEvent | CodecError | None]) -> pa.StructArray:
    """Events (and, for dead-letter rows, errors; None for null rows) as an ``EVENT`` array."""
    return pa.array([None if row is None else error_row(row) if isinstance(row, CodecError) else event_row(row)
                     for row in rows], type=EVENT)


def value_from_row(row: dict[str, Any] | None, where: str) -> Value:
    """The model's value of a ``VALUE`` row, the inverse of ``value_row`` (``EncodeError`` naming ``where``)."""
    if row is None:
        return None
    members = [(name, value) for name, value in row.items() if value is not None]
    if not members:
        return None
    if len(members) > 1:
        raise EncodeError("arrow", f"a value has one member set, this one {len(members)}: "
                                   f"{', '.join(name for name, _ in members)}", field=where)
    name, value = members[0]
    if name == "decimal":
        try:
            return Decimal(value)
        except ArithmeticError:
            raise EncodeError("arrow", f"not a decimal: {value!r}", field=where) from None
    if name == "nested":
        try:
            nested = _untagged(msgspec.json.decode(value), where, 0)
        except (msgspec.DecodeError, RecursionError) as error:
            raise EncodeError("arrow", f"nested is not JSON: {error}", field=where) from None
        if not is_nested(nested):
            raise EncodeError("arrow", f"nested holds an array or an object, not {value!r}", field=where)
        return nested
    return value


def _name(row: dict[str, Any]) -> Any:
    """A cell's or entry's name as the row has it, unchecked (None when a hand-built struct leaves it out): the model
    refuses a name that is not a str, and event_from_row reports that."""
    return row.get("name")


def _cells(rows: list[dict[str, Any]] | None, where: str) -> tuple[Cell, ...] | None:
    if rows is None:
        return None
    cells = []
    for index, row in enumerate(rows):
        path = f"{where}[{index}]"
        try:
            kind = CellKind(row.get("kind") or "PUT")
        except ValueError:
            raise EncodeError("arrow", f"unknown cell kind {row.get('kind')!r}; expected one of "
                                       f"{', '.join(kind.value for kind in CellKind)}", field=f"{path}.kind") from None
        cells.append(Cell(_name(row), value_from_row(row.get("value"), f"{path}.value"), row.get("type"),
                          row.get("version"), kind))
    return tuple(cells)


def _entries(rows: list[dict[str, Any]] | None, where: str) -> tuple[tuple[str, Value], ...]:
    return tuple((_name(row), value_from_row(row.get("value"), f"{where}[{index}].value"))
                 for index, row in enumerate(rows or ()))


def event_from_row(row: dict[str, Any]) -> ChangeEvent:
    """The event of one ``EVENT`` row (as ``to_pylist`` gives it); raises ``EncodeError`` naming the field when the
    row is not a change event (a dead-letter row, an unknown op, a value with two members). A struct built by hand
    may leave fields out: a missing field is null (an empty key, attributes or position)."""
    if row.get("error") is not None:
        raise EncodeError("arrow", f"this row is a dead letter, not an event: {row['error'].get('message')}",
                          field="error")
    try:
        op = Op(row.get("op"))
    except ValueError:
        raise EncodeError("arrow", f"unknown op {row.get('op')!r}; expected one of "
                                   f"{', '.join(op.value for op in Op)}", field="op") from None
    try:
        table = None if row.get("table") is None else Table(**row["table"])
        source_row = row.get("source") or {}
        source = Source(source_row.get("system"), _entries(source_row.get("position"), "source.position"),
                        source_row.get("commit_time_us"), source_row.get("capture_time_us"))
        return ChangeEvent(op, table, _cells(row.get("key"), "key") or (), _cells(row.get("before"), "before"),
                           _cells(row.get("after"), "after"), source, bool(row.get("key_only")),
                           _entries(row.get("attributes"), "attributes"))
    except (TypeError, ValueError) as error:  # the model refuses it: a null name, say
        raise EncodeError("arrow", str(error)) from None


# -- batches ----------------------------------------------------------------------------------------------------------

def _handled(error: CodecError, errors: str) -> CodecError | None:
    """What a bad row becomes: raised under "fail", a null row under "null", the error row under "dead-letter"."""
    if errors == "fail":
        raise error
    return error if errors == "dead-letter" else None


def decode_rows(messages: Sequence[Any], read: Callable[[Any], ChangeEvent | None], errors: str
                ) -> list[ChangeEvent | CodecError | None]:
    """Decode each message on its own with ``read`` (a null message, or one that ``read`` finds holds no change,
    gives a null row)."""
    rows: list[ChangeEvent | CodecError | None] = []
    for message in messages:
        if message is None:
            rows.append(None)
            continue
        try:
            rows.append(read(message))
        except DecodeError as error:
            if error.raw is None:
                error.raw = message
            rows.append(_handled(error, errors))
    return rows


BatchDecoder = Callable[[pa.Array], tuple[pa.StructArray, pa.BooleanArray]]


def decode_array(values: pa.Array, read: Callable[[Any], ChangeEvent | None], errors: str = "fail",
                 read_batch: BatchDecoder | None = None) -> pa.StructArray:
    """Decode an array of messages (binary or string, or the structs ``read`` takes) into an ``EVENT`` array of the
    same length.

    ``read`` decodes one message (the reference); ``read_batch``, a codec's ``batch_decoder()``, decodes a whole batch
    and leaves to ``read`` the rows it flags as undecided. ``errors``: "fail" raises the first ``DecodeError``;
    "null" gives a null row; "dead-letter" a row with only ``error`` set.
    """
    error_mode(errors, COLUMN_ERROR_MODES)
    if read_batch is None:
        return to_arrow(decode_rows(values.to_pylist(), read, errors))
    fast, undecided = read_batch(values)
    if not pc.any(undecided).as_py():
        return fast
    indexes = pc.indices_nonzero(undecided)
    slow = decode_rows(values.take(indexes).to_pylist(), read, errors)
    full: list[ChangeEvent | CodecError | None] = [None] * len(values)
    for index, row in zip(indexes.to_pylist(), slow):
        full[index] = row
    return pc.if_else(undecided, to_arrow(full), fast)


def encode_array(events: pa.StructArray, write: Callable[[ChangeEvent], Any], format_name: str,
                 errors: str = "fail") -> list[Any]:
    """Each ``EVENT`` row written by ``write`` (a null row gives None), errors handled as in ``decode_array``."""
    error_mode(errors, COLUMN_ERROR_MODES)
    results: list[Any] = []
    for row in events.to_pylist():
        if row is None:
            results.append(None)
            continue
        if row.get("error") is not None:  # a message that could not be read: its error goes on
            results.append(_handled(error_from_row(row["error"]), errors))
            continue
        try:
            results.append(write(event_from_row(row)))
        except CodecError as error:
            if error.format == "arrow":  # the row is not an event at all: report it as the target's input error
                error.relabeled(format_name)
            if error.raw is None:
                error.raw = repr(row)
            results.append(_handled(error, errors))
    return results
