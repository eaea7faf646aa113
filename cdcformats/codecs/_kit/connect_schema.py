"""Kafka Connect schemas as JsonConverter writes them with ``schemas.enable=true``: struct schemas generated from row
images, and values read back through them. Shared by ``connect-json``, ``debezium-json`` and
``lindorm-subscription`` (the last two also through ``debezium_envelope``).

A struct schema, as ``JsonConverter.asJsonSchema`` writes it (key order included)::

    {"type": "struct",
     "fields": [{"type": "int32", "optional": false, "field": "id"},
                {"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
                 "parameters": {"scale": "2"}, "field": "price"}],
     "optional": false, "name": "shop.items.Value"}

Values by Connect type: ``boolean`` a JSON boolean; ``int8`` .. ``int64`` a JSON integer in that type's range; ``float``
/ ``double`` (Connect's FLOAT32 / FLOAT64) a JSON number, or the text ``NaN``, ``Infinity``, ``-Infinity`` (Jackson's
text for non-finite numbers, which this module reads and writes, though Connect's own reader may not); ``string`` text;
``bytes`` base64 text. Logical types: ``Decimal`` (bytes: the big-endian two's complement unscaled value, parameter
``scale``), ``Date`` and ``Time`` (int32), ``Timestamp`` (int64); their values stay the integers they are.

Reading, a field becomes a cell of the value its type says: int8 .. int64, Date, Time and Timestamp an int; float and
double a float (a float rounded to single precision, as Connect holds it, and written as the shortest text of that
single, as Java prints it); a Decimal a ``Decimal``, exactly. The cell's type name is the source column type of
Debezium's ``__debezium.source.column.type`` parameter when the field has one, else the Connect type (``int32``, or the
logical name) when it is not the one a value of that kind gets by default, else none; and when writing the cell back
(below) would not give the field's schema as it is (an ``optional`` that is not "whether the value is null", another
schema name, a version, a doc, parameters such as ``connect.decimal.precision``), the type is the field's whole schema
as compact JSON text, without its ``field``: ``{"type":"int32","optional":true}``. So a field's schema always survives
a round trip, through other formats too (Avro and Protobuf keep cell types verbatim).

Reading is liberal, as real producers break their own schemas: a value that disagrees with its type (the text "0" in
an int32 field, a number in a Decimal field, text that is not base64 in a bytes field, an unknown type) is read as it
was sent, and its cell keeps the whole schema. ``array``, ``map`` and ``struct`` fields are nested values, their
members read the same way: a map is an object (a ``Struct``), or an array of [key, value] pairs where its keys are not
text, as JsonConverter writes them; a struct's fields come in its schema's order, then any the payload adds.

Writing, a cell whose type is such a JSON schema is written with that schema, when its value reads back exactly through
it (otherwise the type is dropped and the schema generated from the value). Else a cell's Connect type is the one its
type name asks for when its value fits it exactly: a Connect type name itself, or a SQL name (TINYINT int8, SMALLINT
int16, INT/INTEGER int32, BIGINT int64, FLOAT/REAL float, DOUBLE double, BOOLEAN boolean, DECIMAL/NUMERIC Decimal,
VARCHAR/CHAR/TEXT string, BINARY/VARBINARY bytes). Otherwise the value's kind decides: bool boolean, int int64, float
double, str string, bytes bytes, Decimal Decimal, a null value a string, and a nested value the ``array`` or ``struct``
generated member by member (``nested_schema``; a nested value that none holds is written as its JSON text). A null
value's field is optional, every other one required. Where reading the field back would not give the cell's type name,
the name is written as ``__debezium.source.column.type``, so that every type name survives. Decimals that Connect cannot
hold (NaN, infinities, negative zero, a scale beyond 32 bits) have no form.
"""

from __future__ import annotations

import base64
import math
import re
import struct
from decimal import Decimal
from typing import Any, NamedTuple

import msgspec
from msgspec.structs import replace

from ...core import typed_text
from ...errors import DecodeError
from ...model import (
    INT64_MAX,
    INT64_MIN,
    MAX_NESTING,
    Cell,
    CellKind,
    ChangeEvent,
    Image,
    Struct,
    Value,
    is_nested,
    same_value,
)
from .json_message import AS_IS_TYPES, encode, json_type, value_of, with_jackson_floats

# What a Connect schema lets a format carry beyond the JSON values: a format with a schema wrapper carries these only
# when it writes the wrapper.
TYPED_FEATURES = frozenset({"cell.type", "value.bytes", "value.decimal", "value.float_nonfinite",
                            "value.nested_non_json"})
DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
SOURCE_TYPE = "__debezium.source.column.type"

# Every Connect type a cell can have, by the name a cell's type carries: primitive names, and logical names with the
# primitive type they are written as.
_PRIMITIVE_OF = {
    **{name: name for name in ("boolean", "int8", "int16", "int32", "int64", "float", "double", "string", "bytes")},
    DECIMAL: "bytes", DATE: "int32", TIME: "int32", TIMESTAMP: "int64",
}
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_SQL_TYPES = {
    "TINYINT": "int8", "SMALLINT": "int16", "INT": "int32", "INTEGER": "int32", "BIGINT": "int64", "LONG": "int64",
    "FLOAT": "float", "REAL": "float", "DOUBLE": "double", "BOOLEAN": "boolean", "BOOL": "boolean",
    "DECIMAL": DECIMAL, "NUMERIC": DECIMAL, "VARCHAR": "string", "CHAR": "string", "TEXT": "string",
    "BINARY": "bytes", "VARBINARY": "bytes",
}
_DEFAULT_OF_KIND = {type(None): "string", bool: "boolean", int: "int64", float: "double", str: "string",
                    bytes: "bytes", Decimal: DECIMAL}
_NESTED_TYPES = ("array", "map", "struct")
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_SCALE = re.compile(r"-?[0-9]{1,10}")
_INT32_MAX = 2**31 - 1


# -- writing ----------------------------------------------------------------------------------------------------------

_PUT = CellKind.PUT


def is_json_scalar(value: Value) -> bool:
    """Whether a value is one that JSON writes and reads back as it is, with or without a schema: text, an integer,
    a boolean, null or a finite float."""
    return type(value) in AS_IS_TYPES or type(value) is float and math.isfinite(value)


# The kinds of value whose field schema, in a cell without a type, says the kind alone (``generated_schema``).
_LAID_OUT_KINDS = frozenset({str, int, bool, float, type(None)})


def plain_layout(cells: Image) -> tuple[tuple[str, type], ...] | None:
    """The names and kinds of value of ``cells``, where each has no type and a scalar value: all that their fields'
    schemas depend on (``field_schema``), so that a struct schema made once serves every row of that layout; None
    for any other cells."""
    layout = []
    for cell in cells:
        kind = type(cell.value)
        if cell.type is not None or kind not in _LAID_OUT_KINDS:
            return None
        layout.append((cell.name, kind))
    return tuple(layout)


def written_whole(image: Image, typed: bool) -> bool:
    """Whether a struct (a Connect row, an envelope's ``before`` or ``after``) writes ``image`` as it is, and reads
    it back so: one cell per column, each a put of a JSON scalar (``is_json_scalar``) without a version, and without
    a type unless the struct is ``typed`` (with a schema): then with none, or one that is no field schema (a field
    schema is read back only where the value agrees with it, ``as_read_back``). For the fast path of encode
    (``Codec.encode_whole``): no allocation but for an image of several cells."""
    for cell in image:
        value = cell.value
        if cell.kind is not _PUT or cell.version is not None or (
                type(value) not in AS_IS_TYPES and not (type(value) is float and math.isfinite(value))):
            return False
        cell_type = cell.type
        if cell_type is not None and (not typed or cell_type.startswith("{")):
            return False
    return len(image) < 2 or len({cell.name for cell in image}) == len(image)


def whole_fields(image: Image, layout: list[tuple[str, type]] | None = None) -> dict[str, Any] | None:
    """An image that a struct without a type writes as it is (``written_whole``, untyped) as its JSON object, spelt
    as Jackson writes it, built in the walk that checks it; None for any other image. With ``layout``, each cell's
    name and kind of value is added to it (``plain_layout``'s, for a schema made once per layout)."""
    fields: dict[str, Any] = {}
    for cell in image:
        value = cell.value
        kind = type(value)
        if cell.kind is not _PUT or cell.version is not None or cell.type is not None:
            return None
        if type(value) is float:  # not kind: mypy narrows value on this form
            if not math.isfinite(value):
                return None
            fields[cell.name] = with_jackson_floats(value)
        elif kind in AS_IS_TYPES:
            fields[cell.name] = value
        else:
            return None
        if layout is not None:
            layout.append((cell.name, kind))
    return fields if len(fields) == len(image) else None


def carries_decimal(value: Decimal) -> bool:
    """Whether a Connect Decimal (an unscaled integer and a scale) holds ``value`` exactly."""
    if not value.is_finite() or (value.is_zero() and value.is_signed()):
        return False
    return abs(_exponent(value)) <= _INT32_MAX


def image_struct_schema(event: ChangeEvent, image_name: str, name: str | None) -> dict[str, Any]:
    """The optional struct schema of an envelope's ``before`` or ``after``: from its cells, or from the other image's
    when it is absent (Debezium has one row schema for both)."""
    image = getattr(event, image_name)
    cells = image if image is not None else (event.after if image_name == "before" else event.before) or ()
    return {**struct_schema([field_schema(cell) for cell in cells], True, name), "field": image_name}


def schema_only_features(value: Value) -> list[str]:
    """The features of a value that only a column schema makes readable from JSON (a value in a plain JSON object,
    such as Debezium's ``source``, loses them)."""
    if type(value) is bytes:
        return ["value.bytes"]
    if type(value) is Decimal:
        return ["value.decimal"]
    if type(value) is float and not math.isfinite(value):
        return ["value.float_nonfinite"]
    if is_nested(value) and not typed_text.is_json(value):
        return ["value.nested_non_json"]
    return []


def connect_type(cell: Cell) -> str:
    """The Connect type (a primitive or a logical name) a cell is written as."""
    wanted = cell.type if cell.type in _PRIMITIVE_OF else _sql_type(cell.type)
    if wanted is not None and _fits(cell.value, wanted):
        return wanted
    return _DEFAULT_OF_KIND[type(cell.value)]


def field_schema(cell: Cell) -> dict[str, Any]:
    """The schema of the field that holds ``cell`` in a struct, as JsonConverter writes it: the one its type keeps
    (``kept_schema``), else the one generated from its value and type name."""
    kept = kept_schema(cell.type)
    if kept is not None:
        return {**kept, "field": cell.name}
    return generated_schema(cell)


def generated_schema(cell: Cell) -> dict[str, Any]:
    """The field schema generated from a cell's value and type name (for a nested value, one that ``nested_schema``
    has)."""
    if is_nested(cell.value):
        schema = nested_schema(cell.value)
        if schema is None:  # Connect has none: the value is written as its JSON text (as_read_back)
            return generated_schema(Cell(cell.name, typed_text.render(cell.value), cell.type))
        if cell.type is not None:
            schema["parameters"] = {SOURCE_TYPE: cell.type}
        return {**schema, "field": cell.name}
    kind = connect_type(cell)
    schema = {"type": _PRIMITIVE_OF[kind], "optional": cell.value is None}
    parameters: dict[str, str] = {}
    if kind != _PRIMITIVE_OF[kind]:
        schema["name"], schema["version"] = kind, 1
        if kind == DECIMAL:
            assert cell.value is None or type(cell.value) is Decimal  # connect_type: only a decimal is written so
            parameters["scale"] = str(-_exponent(cell.value)) if cell.value is not None else "0"
    if cell.type is not None and cell.type != _implied_type(kind, cell.value):  # None is always implied
        parameters[SOURCE_TYPE] = cell.type
    if parameters:
        schema["parameters"] = parameters
    schema["field"] = cell.name
    return schema


def nested_schema(value: Value) -> dict[str, Any] | None:
    """The schema generated for a nested value, without ``field``: a Struct a struct of its fields, an
    array an array of its items' one schema (optional when one is null; an optional string when there is none); None
    when Connect has none: for an array whose items differ in schema, or a member that is a decimal no Connect Decimal
    holds."""
    if type(value) is Struct:
        fields = []
        for name, item in value.fields:
            schema = _member_schema(item)
            if schema is None:
                return None
            fields.append({**schema, "field": name})
        return {"type": "struct", "fields": fields, "optional": False}
    assert type(value) is tuple
    present = [_member_schema(item) for item in value if item is not None]
    schemas = [schema for schema in present if schema is not None]
    if len(schemas) != len(present) or len({encode(schema) for schema in schemas}) > 1:
        return None
    items = schemas[0] if schemas else {"type": "string", "optional": True}
    return {"type": "array", "items": {**items, "optional": items["optional"] or None in value}, "optional": False}


def _member_schema(value: Value) -> dict[str, Any] | None:
    """The schema of a member of a nested value: the one a cell of that value without a type gets (None for a
    decimal that no Connect Decimal holds)."""
    if is_nested(value):
        return nested_schema(value)
    if type(value) is Decimal and not carries_decimal(value):
        return None
    schema = generated_schema(Cell("", value))
    del schema["field"]
    return schema


def kept_schema(type_name: str | None) -> dict[str, Any] | None:
    """The field schema a cell's type keeps: a type that is a JSON object (``{"type":"int32","optional":true}``) is
    the field's whole Connect schema, without its ``field``."""
    if not type_name or not type_name.startswith("{"):
        return None
    try:
        schema = msgspec.json.decode(type_name)
    except (msgspec.DecodeError, RecursionError):
        return None
    return schema if type(schema) is dict and type(schema.get("type")) is str and "field" not in schema else None


def as_read_back(cell: Cell) -> Cell:
    """A cell, as the base rules write it, as its Connect schema gives it back: a decimal no Connect Decimal holds
    as its text (Debezium's ``decimal.handling.mode=string``); a value that the schema its type keeps does not read
    back exactly with a schema generated from its value, its type taken away; a type that reads back otherwise
    (JSON text not in the compact form, or a schema generation gives anyway) as it reads back; a nested value no
    Connect schema holds as its JSON text."""
    value, type_name = cell.value, cell.type
    if cell.kind is not CellKind.PUT:
        return cell
    if type(value) is Decimal and not carries_decimal(value):
        return replace(cell, value=typed_text.render(value))
    schema = kept_schema(type_name)
    if schema is not None:
        if not _holds_decimal_not_carried(value):  # one that does has no JsonConverter form to read back
            try:
                read, read_type = read_value(json_value(value), schema, "", "")
            except DecodeError:
                read, read_type = None, None
            if read_type is not None and same_value(read, value):
                return cell if read_type == type_name else replace(cell, type=read_type)
        cell = replace(cell, type=None)
    written = nested_as_read_back(value)
    return cell if written is value else replace(cell, value=written)


def _holds_decimal_not_carried(value: Value) -> bool:
    """Whether a nested value holds a decimal that no Connect Decimal holds (NaN, an infinity, -0)."""
    if type(value) is tuple:
        return any(_holds_decimal_not_carried(item) for item in value)
    if type(value) is Struct:
        return any(_holds_decimal_not_carried(item) for _, item in value.fields)
    return type(value) is Decimal and not carries_decimal(value)


def nested_as_read_back(value: Value) -> Value:
    """A value as Connect gives it back: a nested value that no Connect schema holds (an array whose items differ,
    a decimal Connect cannot hold) as its JSON text."""
    return typed_text.render(value) if is_nested(value) and nested_schema(value) is None else value


def holds(schema: Any, value: Any) -> bool:
    """Whether a JSON value agrees with a field schema, so that a Connect reader reads it through that schema: null
    only in an optional field; a value of the field's type; a struct's members exactly the fields its schema names,
    each agreeing with its own; an array's items, a map's keys and values with theirs."""
    if type(schema) is not dict:
        return False
    if value is None:
        return schema.get("optional") is True
    primitive, name, parameters = schema.get("type"), schema.get("name"), schema.get("parameters") or {}
    if type(primitive) is not str or (name is not None and type(name) is not str) or type(parameters) is not dict:
        return False
    kind = name if name in _PRIMITIVE_OF and _PRIMITIVE_OF[name] == primitive else primitive
    if kind == "string":  # the common kinds first, as _typed reads them
        return type(value) is str
    if kind in _INT_BITS:
        return _fits(value, kind)
    if kind == "struct":
        fields = schema.get("fields")
        if type(value) is not dict or type(fields) is not list or any(type(field) is not dict for field in fields):
            return False
        by_name = {field.get("field"): field for field in fields}
        return (len(by_name) == len(fields) and by_name.keys() == value.keys()
                and all(holds(by_name[member], item) for member, item in value.items()))
    if kind == "array":
        return type(value) is list and all(holds(schema.get("items"), item) for item in value)
    if kind == "map":
        pairs = value.items() if type(value) is dict else value if type(value) is list else None
        return pairs is not None and all(
            type(pair) in (tuple, list) and len(pair) == 2 and holds(schema.get("keys"), pair[0])
            and holds(schema.get("values"), pair[1]) for pair in pairs)
    if any(type(text) is not str for text in parameters.values()):
        return False
    try:
        _typed(value, kind, schema, parameters, "", "", 0)
    except _OffType:
        return False
    return True


def json_value(value: Value) -> Any:
    """A value as JsonConverter writes it: bytes and decimals as base64, non-finite floats as Jackson's text."""
    if type(value) is bytes:
        return base64.b64encode(value).decode("ascii")
    if type(value) is Decimal:
        sign, digits, _ = value.as_tuple()
        unscaled = int("".join(map(str, digits))) * (-1 if sign else 1)
        size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1  # BigInteger.toByteArray()
        return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode("ascii")
    if type(value) is float and not math.isfinite(value):
        return typed_text.render(value)
    if type(value) is tuple:
        return [json_value(item) for item in value]
    if type(value) is Struct:
        return {name: json_value(item) for name, item in value.fields}
    return value


def struct_schema(fields: list[dict[str, Any]], optional: bool, name: str | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "struct", "fields": fields, "optional": optional}
    if name is not None:
        schema["name"] = name
    return schema


def json_field_schema(name: str, value: Any) -> dict[str, Any]:
    """The schema of a field holding a JSON value that is no cell (Debezium's ``source`` and ``transaction``)."""
    if type(value) in (list, dict):
        schema = nested_schema(typed_text.from_json(value))
        if schema is not None:  # else it is written as its JSON text (debezium_envelope.position_losses)
            return {**schema, "field": name}
    kind = {bool: "boolean", int: "int64", float: "double"}.get(type(value), "string")
    return {"type": kind, "optional": value is None, "field": name}


def _sql_type(type_name: str | None) -> str | None:
    if not type_name:
        return None
    return _SQL_TYPES.get(type_name.split("(", 1)[0].strip().upper())


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # finite ('n', 'N' or 'F' otherwise): carries_decimal() holds
    return exponent


def _fits(value: Value, kind: str) -> bool:
    """Whether ``value`` is written as ``kind`` and read back unchanged."""
    if value is None:
        return True
    if _PRIMITIVE_OF[kind] in _INT_BITS:
        bits = _INT_BITS[_PRIMITIVE_OF[kind]]
        return type(value) is int and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    if kind == "float":
        return type(value) is float and (not math.isfinite(value) or _float32(value) == value)
    return _DEFAULT_OF_KIND[type(value)] == kind


def _implied_type(kind: str, value: Value) -> str | None:
    """The type name reading a field of Connect type ``kind`` gives its cell, without a source type parameter."""
    return None if kind == _DEFAULT_OF_KIND[type(value)] else kind


def _single(value: float) -> float:
    """``value`` rounded to single precision, as Java's ``(float)`` cast does."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def connect_float(value: float) -> float:
    """``value`` as a Connect ``float`` holds it and Java prints it, as this module reads one (``_float32``)."""
    return _float32(value)


def _float32(value: float) -> float:
    """``value`` as a Connect ``float`` holds it: rounded to single precision, then as the double of the shortest
    text that reads back as that single (what Java prints: 5.18, not 5.179999828338623)."""
    single = _single(value)
    if not math.isfinite(single) or single == 0:
        return single
    for digits in range(1, 10):  # nine significant digits tell every single apart
        shortest = float(f"{single:.{digits}g}")
        if _single(shortest) == single:
            return shortest
    return single


# -- reading ----------------------------------------------------------------------------------------------------------

def struct_fields(schema: Any, format_name: str, path: str) -> list[dict[str, Any]]:
    """The field schemas of a struct schema, each with a unique name."""
    if type(schema) is not dict or schema.get("type") != "struct" or type(schema.get("fields")) is not list:
        raise DecodeError(format_name, "expected a struct schema with fields", field=path)
    names: set[str] = set()
    for index, field in enumerate(schema["fields"]):
        if type(field) is not dict or type(field.get("field")) is not str:
            raise DecodeError(format_name, "expected a field schema with a name", field=f"{path}.fields[{index}]")
        if field["field"] in names:
            raise DecodeError(format_name, f"field {field['field']!r} twice", field=f"{path}.fields[{index}]")
        names.add(field["field"])
    return schema["fields"]


# The Connect types whose field, as ``generated_schema`` writes it (no name, no parameters, optional only for null),
# reads a JSON value of one kind as it is, into a cell without a type: the kind.
_PLAIN_KIND_OF: dict[Any, type] = {"string": str, "int64": int, "boolean": bool, "double": float}


class FieldPlan(NamedTuple):
    """How to read one field's values, found once for every value of its schema (``field_plan``): the kind of value
    it reads as it is, into a cell without a type (None: none), whether it reads a null as it is, and its field
    schema (which ``read_value`` reads any other value by)."""

    kind: type | None
    reads_null: bool
    schema: dict[str, Any]


def field_plan(field: dict[str, Any]) -> FieldPlan:
    """The plan of a field schema with a name: a plain field (``_PLAIN_KIND_OF``) as ``generated_schema`` writes it,
    optional only for null, reads a value of its kind as it is."""
    field_type, optional = field.get("type"), field.get("optional")
    plain = len(field) == 3 and type(field_type) is str
    return FieldPlan(_PLAIN_KIND_OF.get(field_type) if plain and optional is False else None,
                     plain and optional is True and field_type == "string", field)


class StructPlan(NamedTuple):
    """How to read the payloads of one struct schema, found once for every payload of it (``struct_plan``): each
    field's name and its ``field_plan``."""

    fields: tuple[tuple[str, type | None, bool, dict[str, Any]], ...]
    names: frozenset[str]


def struct_plan(schema: Any, format_name: str, path: str) -> StructPlan:
    """The plan of a struct schema, checked as ``struct_fields`` checks it."""
    planned = [(field["field"], *field_plan(field)) for field in struct_fields(schema, format_name, path)]
    return StructPlan(tuple(planned), frozenset(name for name, *_ in planned))


def read_struct(schema: Any, payload: Any, format_name: str, path: str) -> tuple[Cell, ...]:
    """The cells of a struct payload, in the schema's field order (a field the payload lacks is null), then the
    payload's fields the schema does not declare, read as JSON without a schema."""
    return read_planned(struct_plan(schema, format_name, f"{path}.schema"), payload, format_name, path)


def read_planned(plan: StructPlan, payload: Any, format_name: str, path: str) -> tuple[Cell, ...]:
    """``read_struct`` of a schema whose plan is given."""
    if type(payload) is not dict:
        raise DecodeError(format_name, f"expected an object, got {json_type(payload)}", field=f"{path}.payload")
    cells = []
    present = 0  # the fields the payload has: where that is all of it, it has none the schema does not declare
    for name, kind, reads_null, field in plan.fields:
        if name in payload:
            present += 1
        value: Any = payload.get(name)
        value_kind = type(value)  # not narrowing value (mypy would, to its kind's)
        # a value of the kind the field reads as it is: most fields
        if value_kind is kind and (value_kind is not int or INT64_MIN <= value <= INT64_MAX) \
                or value is None and reads_null:
            cells.append(Cell(name, value))
            continue
        value, type_name = read_value(value, field, format_name, f"{path}.payload.{name}")
        cells.append(Cell(name, value, type_name))
    if present < len(payload):
        where = f"{path}.payload."
        cells += [Cell(name, value_of(value, format_name, where, name)) for name, value in payload.items()
                  if name not in plan.names]
    return tuple(cells)


def read_value(value: Any, field: dict[str, Any], format_name: str, path: str, depth: int = 0
               ) -> tuple[Value, str | None]:
    """A JSON value read through its field schema, and the type name of its cell.

    A value that disagrees with its schema (the text "0" in an int32 field, a number in a Decimal field, an object in
    an unknown type) is read as it was sent, and its cell keeps the whole schema as its type, so that it is written
    back as it came. ``depth``: the levels of nested values around it (a member of a nested value is read here too).
    """
    primitive, name = field.get("type"), field.get("name")
    if type(primitive) is not str or (name is not None and type(name) is not str):
        raise DecodeError(format_name, "a field schema's type and name are text", field=path)
    kind = name if name in _PRIMITIVE_OF and _PRIMITIVE_OF[name] == primitive else primitive
    parameters = field.get("parameters") or {}
    if type(parameters) is not dict or any(type(text) is not str for text in parameters.values()):
        raise DecodeError(format_name, "schema parameters must be text", field=path)
    given = {name: part for name, part in field.items() if name != "field"}
    try:
        result = None if value is None else _typed(value, kind, field, parameters, format_name, path, depth)
    except _OffType:
        return value_of(value, format_name, path, depth=depth), encode(given).decode()
    if SOURCE_TYPE in parameters:
        type_name = parameters[SOURCE_TYPE]
    else:
        type_name = None if kind in _NESTED_TYPES else _implied_type(kind, result)
    if ((is_nested(result) and nested_schema(result) is None)
            or generated_schema(Cell("", result, type_name)) != {**given, "field": ""}):
        type_name = encode(given).decode()  # the schema is more than its type: the cell keeps all of it
    return result, type_name


class _OffType(Exception):
    """A value that disagrees with its schema: it is read as it was sent."""


def _member(value: Any, schema: Any, format_name: str, path: str, depth: int) -> Value:
    """A member of a nested value read through its schema (as a cell's value, its type left to the whole schema)."""
    if type(schema) is not dict:
        raise _OffType
    return read_value(value, schema, format_name, path, depth)[0]


def _nested(value: Any, kind: str, field: dict[str, Any], format_name: str, path: str, depth: int) -> Value:
    """An array, a map (an object when its keys are text, else an array of [key, value] pairs, as JsonConverter
    writes them) or a struct (its schema's fields in order, then any the payload adds), ``depth`` levels deep."""
    if type(value) in (list, dict) and depth == MAX_NESTING:
        raise DecodeError(format_name, f"{path}: nested deeper than {MAX_NESTING} levels", field=path)
    if kind == "array" and type(value) is list:
        return tuple(_member(item, field.get("items"), format_name, f"{path}[{index}]", depth + 1)
                     for index, item in enumerate(value))
    if kind == "map" and type(value) is dict:
        return Struct(tuple((key, _member(item, field.get("values"), format_name, f"{path}.{key}", depth + 1))
                            for key, item in value.items()))
    if kind == "map" and type(value) is list and all(type(pair) is list and len(pair) == 2 for pair in value):
        if value and depth + 1 == MAX_NESTING:  # each pair is a level of its own
            raise DecodeError(format_name, f"{path}[0]: nested deeper than {MAX_NESTING} levels", field=path)
        return tuple((_member(pair[0], field.get("keys"), format_name, f"{path}[{index}][0]", depth + 2),
                      _member(pair[1], field.get("values"), format_name, f"{path}[{index}][1]", depth + 2))
                     for index, pair in enumerate(value))
    if kind == "struct" and type(value) is dict and type(field.get("fields")) is list:
        fields = [member for member in field["fields"] if type(member) is dict and type(member.get("field")) is str]
        names = [member["field"] for member in fields]
        if len(set(names)) != len(names):
            raise _OffType
        members = [(name, _member(value.get(name), member, format_name, f"{path}.{name}", depth + 1))
                   for name, member in zip(names, fields)]
        members += [(name, value_of(item, format_name, f"{path}.", name, depth + 1)) for name, item in value.items()
                    if name not in names]
        return Struct(tuple(members))
    raise _OffType


def _typed(value: Any, kind: str, field: dict[str, Any], parameters: dict[str, str], format_name: str, path: str,
           depth: int) -> Value:
    """The value of a JSON value of a Connect type; ``_OffType`` when the value disagrees with the type."""
    if kind in _NESTED_TYPES:
        return _nested(value, kind, field, format_name, path, depth)
    if kind not in _PRIMITIVE_OF:
        raise _OffType
    primitive = _PRIMITIVE_OF[kind]
    if primitive in _INT_BITS:
        if not _fits(value, primitive):
            raise _OffType
        return value
    if primitive in ("float", "double"):
        if type(value) is str and value in _NONFINITE:
            return _NONFINITE[value]
        if type(value) not in (int, float):
            raise _OffType
        try:
            number = float(value)
        except OverflowError:
            raise _OffType from None
        return _float32(number) if primitive == "float" else number
    if primitive == "boolean":
        if type(value) is not bool:
            raise _OffType
        return value
    if primitive == "string":
        if type(value) is not str:
            raise _OffType
        return value
    if type(value) is not str:
        raise _OffType
    try:
        data = base64.b64decode(value, validate=True)
    except ValueError:  # binascii.Error, or text that is not ASCII
        raise _OffType from None
    if kind != DECIMAL:
        return data
    scale = parameters.get("scale")
    if scale is None or not _SCALE.fullmatch(scale) or abs(int(scale)) > _INT32_MAX or not data:
        raise _OffType  # a Decimal needs its unscaled bytes and its scale as a parameter
    sign, digits, _ = Decimal(int.from_bytes(data, "big", signed=True)).as_tuple()
    return Decimal((sign, digits, -int(scale)))
