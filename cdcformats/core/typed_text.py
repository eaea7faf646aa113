"""Typed values for formats that write every value as text (lindorm and its Arrow decoder, arcion with
``column_types``, canal-json); ``render`` is also the text a value is written as where a format has no form for its
kind (``Codec.carried_cell``, ``json_form``, ``connect_schema``).

A text value becomes a typed value only when its column's type name says which type, *and* writing the typed value
back gives the same text: "7" in a BIGINT column becomes 7, but "007" stays the text "007", so a round trip never
changes a byte. Type names are the SQL names of ``sql_types``, whose column types say which kind of value: integers
(INT8 and BIGINT alike), floats (FLOAT8, DOUBLE PRECISION), booleans and decimals (NUMBER, DECIMAL(10,2)); any other
name (VARCHAR, DATE) keeps its text.

A nested value (an array or a ``Struct``) has no SQL type here: its text is its JSON (``json_form``), which is also
how the JSON formats without a schema write it.
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec

from ..model import INT64_MAX, INT64_MIN, MAX_NESTING, Struct, Value, check_value
from . import sql_types

# The kind of value a column of each type that ``sql_types`` declares holds, where its text is typed.
_KIND_OF_COLUMN: dict[str, type] = {**dict.fromkeys(["int8", "int16", "int32", "int64"], int),
                                    **dict.fromkeys(["float", "double"], float), "boolean": bool, "decimal": Decimal}
# The SQL type names whose text is typed.
TYPED_NAMES = tuple(name for name, column in sql_types.COLUMN_TYPES.items() if column in _KIND_OF_COLUMN)


@functools.lru_cache(maxsize=4096)  # a stream has few type names, and every value it reads or writes asks
def kind_of(type_name: str | None) -> type | None:
    """The Python type a column of this SQL type holds, or None when its values stay text."""
    declared = sql_types.sql_type(type_name)
    return None if declared is None else _KIND_OF_COLUMN.get(declared.column)


def json_form(value: Value) -> Any:
    """A value as the JSON formats without a schema write it: an array as a JSON array, a Struct as an object (its
    fields in order); bytes as base64 text; a decimal, NaN or an infinity as its text, which no JSON number holds
    exactly."""
    if type(value) is tuple:
        return [json_form(item) for item in value]
    if type(value) is Struct:
        return {name: json_form(item) for name, item in value.fields}
    if type(value) is bytes:
        return base64.b64encode(value).decode("ascii")
    if type(value) is Decimal or (type(value) is float and not math.isfinite(value)):
        return render(value)
    return value


def from_json(parsed: Any, where: str = "value", depth: int = 0) -> Value:
    """A parsed JSON value as a model value, the inverse of ``json_form`` for JSON values: an array a tuple, an
    object a ``Struct``, recursively. ``ValueError`` names where an integer beyond 64 bits is, or the first array or
    object deeper than the model's ``MAX_NESTING`` (found on the way down, before Python's recursion runs out)."""
    if (type(parsed) is list or type(parsed) is dict) and depth == MAX_NESTING:
        raise ValueError(f"{where}: nested deeper than {MAX_NESTING} levels")
    if type(parsed) is list:
        return tuple(from_json(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(parsed))
    if type(parsed) is dict:
        return Struct(tuple((name, from_json(item, f"{where}.{name}", depth + 1)) for name, item in parsed.items()))
    check_value(parsed, where)
    return parsed


def is_json(value: Value) -> bool:
    """Whether ``json_form`` writes ``value`` as it is: no bytes, decimals, NaN or infinities in it."""
    if type(value) is tuple:
        return all(is_json(item) for item in value)
    if type(value) is Struct:
        return all(is_json(item) for _, item in value.fields)
    return type(value) not in (bytes, Decimal) and not (type(value) is float and not math.isfinite(value))


def render(value: Value) -> str:
    """The text of a typed value: the form `parse` reads back to the same value; a nested value's is its JSON."""
    kind = type(value)
    if kind is tuple or kind is Struct:  # not is_nested(): this runs for every value a text format writes
        return msgspec.json.encode(json_form(value)).decode()
    if kind is bool:
        return "true" if value else "false"
    if type(value) is float:  # not kind: mypy narrows value on this form
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    return str(value)


def _convert(text: str, kind: type) -> Value:
    if kind is int:
        number = int(text)
        return number if INT64_MIN <= number <= INT64_MAX else text
    if kind is float:
        return float(text)
    if kind is bool:
        return {"true": True, "false": False}.get(text, text)
    return Decimal(text)


def parse(text: str, type_name: str | None, spelled: Callable[[Value], str] = render) -> Value:
    """The typed value of ``text`` in a column of ``type_name``, or ``text`` itself when that would not round-trip:
    when ``spelled``, the text a format writes a typed value as (``render`` unless it spells numbers its own way),
    would not give ``text`` back."""
    kind = kind_of(type_name)
    if kind is None:
        return text
    try:
        value = _convert(text, kind)
    except (ValueError, InvalidOperation):
        return text
    return value if spelled(value) == text else text


def carries(value: Value, type_name: str | None) -> bool:
    """Whether ``value`` in a column of ``type_name`` survives render-then-parse unchanged."""
    if value is None:
        return True
    kind = kind_of(type_name)
    if type(value) is str:
        return kind is None or parse(value, type_name) is value
    if type(value) is tuple or type(value) is Struct:  # a nested value's text is JSON, which no SQL type reads
        return kind is None
    return type(value) is kind
