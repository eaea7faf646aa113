"""debezium-avro's Avro form of column types and values: the Avro type of each ``cdcformats.tables`` column type as
Debezium's ``AvroConverter`` writes it (with the Connect names and parameters it sets), the fields of a row or key
record, the value written for a cell, and the names Avro allows.

``NAME`` is the format's: the errors that its parts in the kit (``avro_columns``, ``connect_cells``, ``avro_records``,
``avro_tables``) raise are debezium-avro's.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from ...contract import as_text
from ...model import Struct, Table, Value, is_nested
from ...tables import Column, ColumnType, nested_type
from .connect_schema import DECIMAL, SOURCE_TYPE

NAME = "debezium-avro"
COLUMN_PROPERTY = "cdcformats.column"
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# How each column type is written: the Avro type and Debezium's Connect name for it.
LOGICAL: dict[Any, tuple[str, str]] = {
    "date": ("int", "io.debezium.time.Date"),
    ("time", 3): ("int", "io.debezium.time.Time"),
    ("time", 6): ("long", "io.debezium.time.MicroTime"),
    ("time", 9): ("long", "io.debezium.time.NanoTime"),
    ("timestamp", 3): ("long", "io.debezium.time.Timestamp"),
    ("timestamp", 6): ("long", "io.debezium.time.MicroTimestamp"),
    ("timestamp", 9): ("long", "io.debezium.time.NanoTimestamp"),
    "json": ("string", "io.debezium.data.Json"),
}
_PRIMITIVE = {"null": "null", "boolean": "boolean", "int32": "int", "int64": "long", "float": "float",
              "double": "double", "string": "string", "bytes": "bytes"}
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
ANY_DECIMAL = ColumnType("decimal")  # the column a decimal of any scale fits: any but NaN, infinities and -0
FLOAT = ColumnType("float")


def untyped_nested_as_text(value: Value) -> Value:
    """A nested value that no Avro type holds (``nested_type`` has none, or a struct field's name is none Avro
    allows) as the JSON text it is written as; any other value as it is."""
    return as_text(value) if is_nested(value) and not _typed_in_avro(value) else value


def _typed_in_avro(value: Value) -> bool:
    found = nested_type(value)
    return found is not None and _avro_names_only(found)


def _avro_names_only(column_type: ColumnType) -> bool:
    if column_type.items is not None:
        return _avro_names_only(column_type.items)
    return all(_AVRO_NAME.fullmatch(name) and _avro_names_only(field_type) for name, field_type in column_type.fields)


def avro_name(name: str) -> str:
    """A name Avro allows: invalid characters as ``_``, as Debezium's schema name adjuster writes them."""
    adjusted = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return adjusted if _AVRO_NAME.fullmatch(adjusted) else f"_{adjusted}"


def dotted(prefix: str, table: Table | None) -> str:
    """Debezium's ``<prefix>.<schema>.<table>``: the names of a table's topic and records (the prefix alone for a
    change without a table)."""
    parts = (prefix,) if table is None else (prefix, table.schema, table.name)
    return ".".join(avro_name(part) for part in parts if part is not None)


def _implied_type(column_type: ColumnType) -> str | None:
    """The cell type that reading a field written for ``column_type`` gives without a source type parameter."""
    return implied_of_field(_avro_type(column_type, None, set()))


def implied_of_field(avro_type: Any) -> str | None:
    """The cell type a field of this (non-null) Avro type reads as without a source type parameter, as
    ``debezium-json`` names Connect types: the Connect name where it is not the default one of its value's kind."""
    if type(avro_type) is not dict:
        return {"int": "int32", "float": "float"}.get(avro_type)
    if "connect.type" in avro_type:
        return str(avro_type["connect.type"])
    name = avro_type.get("connect.name")
    if name in (None, DECIMAL, VARIABLE_DECIMAL) or avro_type.get("type") == "record":
        return implied_of_field(avro_type.get("type")) if type(avro_type.get("type")) is str and name is None \
            else None
    return str(name)


def _avro_type(column_type: ColumnType, source_type: str | None, defined: set[str], record_name: str = "") -> Any:
    """The Avro type of a column type (names already ``defined`` in the schema are referred to by name), with the
    source's type name as a parameter where it is given; a variable-scale decimal, a named record defined once per
    schema, has the parameter on its field instead (``record_fields``). A struct is a record named ``record_name`` (its
    column's field name), or that name followed by ``_`` as often as it takes to be new in the schema."""
    name = column_type.name
    schema: dict[str, Any]
    if column_type.items is not None:
        schema = {"type": "array", "items": _optional(_avro_type(column_type.items, None, defined, record_name))}
    elif column_type.fields:
        while record_name in defined:
            record_name += "_"
        defined.add(record_name)
        schema = {"type": "record", "name": record_name, "fields": [
            {"name": field_name, "type": _optional(_avro_type(field_type, None, defined,
                                                              f"{record_name}_{field_name}")), "default": None}
            for field_name, field_type in column_type.fields]}
    elif name == "decimal" and column_type.scale is None:
        if VARIABLE_DECIMAL in defined:
            return VARIABLE_DECIMAL
        defined.add(VARIABLE_DECIMAL)
        return {"type": "record", "name": "VariableScaleDecimal", "namespace": "io.debezium.data",
                "fields": [{"name": "scale", "type": "int"}, {"name": "value", "type": "bytes"}],
                "connect.doc": "Variable scaled decimal", "connect.version": 1, "connect.name": VARIABLE_DECIMAL}
    elif name in _PRIMITIVE:
        schema = {"type": _PRIMITIVE[name]}
    elif name in ("int8", "int16"):
        schema = {"type": "int", "connect.type": name}
    elif name == "decimal":
        scale = column_type.scale
        assert scale is not None  # the decimal of any scale was written above, as Debezium's record
        parameters = {"scale": str(scale)}
        if column_type.precision is not None:
            parameters["connect.decimal.precision"] = str(column_type.precision)
        schema = {"type": "bytes", "scale": column_type.scale,
                  # Connect's default precision, or the scale where it is larger: Avro wants scale <= precision.
                  "precision": max(64, scale) if column_type.precision is None else column_type.precision,
                  "connect.version": 1, "connect.parameters": parameters, "connect.name": DECIMAL,
                  "logicalType": "decimal"}
    else:
        avro, connect_name = LOGICAL[name if name in LOGICAL else (name, column_type.precision)]
        schema = {"type": avro, "connect.version": 1, "connect.name": connect_name}
    if source_type is not None:
        schema.setdefault("connect.parameters", {})[SOURCE_TYPE] = source_type
    return schema["type"] if len(schema) == 1 else schema


def _optional(avro_type: Any) -> Any:
    """``avro_type`` or null: a union with null, except for the null type itself (a column of nulls only, with or
    without a source type parameter), which a union could not hold twice."""
    if avro_type == "null" or (type(avro_type) is dict and avro_type.get("type") == "null"):
        return avro_type
    return ["null", avro_type]


def record_fields(columns: tuple[Column, ...], required: frozenset[str], defined: set[str],
                  taken: set[str] | None = None) -> list[dict[str, Any]]:
    """The fields of a row or key record: a field per column, optional (null default) unless ``required``; field
    names ``taken`` by fields before them are not used again."""
    fields = []
    taken = set() if taken is None else taken
    for column in columns:
        implied = _implied_type(column.type)
        source_type = column.source_type if column.source_type != implied and column.source_type is not None \
            else None
        field_name = _field_name(column.name, taken)
        avro_type = _avro_type(column.type, source_type, defined, field_name)
        entry: dict[str, Any] = {"name": field_name}
        if source_type is not None and column.type.name == "decimal" and column.type.scale is None:
            entry["connect.parameters"] = {SOURCE_TYPE: source_type}
        if column.name in required and not column.nullable:
            entry["type"] = avro_type
        else:
            entry["type"], entry["default"] = _optional(avro_type), None
        if field_name != column.name:
            entry[COLUMN_PROPERTY] = column.name
        fields.append(entry)
    return fields


def _field_name(name: str, taken: set[str]) -> str:
    field_name = avro_name(name)
    while field_name in taken:
        field_name += "_"
    taken.add(field_name)
    return field_name


def column_type_name(column: Column) -> str | None:
    """The type name of a column's cells: its source type, or the type its Avro type implies."""
    return column.source_type if column.source_type is not None else _implied_type(column.type)


def avro_value(value: Value, column_type: ColumnType) -> Any:
    kind = type(value)
    if kind is tuple:
        assert column_type.items is not None  # a nested value is written in a column of its type
        return [avro_value(item, column_type.items) for item in value]  # type: ignore[union-attr]
    if kind is Struct and column_type == ANY_DECIMAL:  # Debezium's variable-scale decimal, as its JSON sends it
        return dict(value.fields)  # type: ignore[union-attr]
    if kind is Struct:
        fields = dict(value.fields)  # type: ignore[union-attr]
        return {name: avro_value(fields.get(name), field_type) for name, field_type in column_type.fields}
    if kind is Decimal and column_type.scale is None:
        sign, digits, exponent = value.as_tuple()  # type: ignore[union-attr]
        assert isinstance(exponent, int)  # only finite decimals fit a decimal column
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        return {"scale": -exponent, "value": unscaled.to_bytes(_byte_length(unscaled), "big", signed=True)}
    return value


def written_value(value: Value, column_type: ColumnType) -> Value:
    """A value as reading it back from a column of ``column_type`` gives it: a struct with every field of the type,
    in the type's order."""
    kind = type(value)
    if kind is tuple and column_type.items is not None:
        return tuple(written_value(item, column_type.items) for item in value)  # type: ignore[union-attr]
    if kind is Struct and column_type.fields:
        fields = dict(value.fields)  # type: ignore[union-attr]
        return Struct(tuple((name, written_value(fields.get(name), field_type))
                            for name, field_type in column_type.fields))
    return value


def _byte_length(number: int) -> int:
    return max(1, (number + (number < 0)).bit_length() // 8 + 1)
