"""debezium-avro's records read back: Confluent's wire format (``MAGIC``, then the schema id), and what a registered
schema says of the records written with it (``Reader``): the fields of its row, key and ``source`` position, each
Avro type read back as a column type and each value as a change-event value.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import fastavro

from ...errors import DecodeError
from ...model import Cell, Image, Source, Struct, Table, Value
from ...tables import Column, ColumnType, TableSchema
from .avro_columns import COLUMN_PROPERTY, FLOAT, LOGICAL, NAME, VARIABLE_DECIMAL, implied_of_field
from .connect_cells import connect_struct, decimal_of, is_connect_float, type_read
from .connect_schema import SOURCE_TYPE, connect_float
from .debezium_envelope import SOURCE_FIELDS, read_time

MAGIC = b"\x00"
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MIDNIGHT = datetime.datetime(1970, 1, 1)
# The column types of Connect names and Avro logical types, for reading.
_TYPE_OF_NAME = {
    **{connect_name: ColumnType(*(key if isinstance(key, tuple) else (key,))) for key, (_, connect_name)
       in LOGICAL.items()},
    "org.apache.kafka.connect.data.Date": ColumnType("date"), "date": ColumnType("date"),
    "org.apache.kafka.connect.data.Time": ColumnType("time", 3), "time-millis": ColumnType("time", 3),
    "time-micros": ColumnType("time", 6),
    "org.apache.kafka.connect.data.Timestamp": ColumnType("timestamp", 3),
    "timestamp-millis": ColumnType("timestamp", 3), "timestamp-micros": ColumnType("timestamp", 6),
    "local-timestamp-millis": ColumnType("timestamp", 3), "local-timestamp-micros": ColumnType("timestamp", 6),
}
# What a change-event value written for the Avro type of each column type needs.
_TIME_UNIT = {3: datetime.timedelta(milliseconds=1), 6: datetime.timedelta(microseconds=1)}


def time_us(record: dict[str, Any], path: str) -> int | None:
    """Microseconds from ``ts_us`` where it is there, else from ``ts_ms``, as debezium-json reads them."""
    try:
        return read_time(record, path)
    except DecodeError as error:
        raise error.relabeled(NAME) from None


@dataclass
class _Field:
    """One field of a row, key or source record as read: its Avro name, its column and the cell type it reads as."""

    avro_name: str
    column: Column
    cell_type: str | None

    def cell(self, record: dict[str, Any], path: str) -> Cell:
        """The cell of this field in a row or key record: Debezium's variable-scale decimal in the form the type
        name gives (``value_in``), and the type named as ``type_read`` names the value."""
        value = record.get(self.avro_name)
        if self.cell_type is None and type(value) in _AS_READ:  # most cells: read as they are, without a type
            return Cell(self.column.name, value)
        value = value_in(value, f"{path}.{self.avro_name}", connect_struct(self.cell_type))
        if type(value) is float and self.column.type == FLOAT and is_connect_float(self.cell_type):
            value = connect_float(value)
        return Cell(self.column.name, value, type_read(self.cell_type, value))


@dataclass
class Reader:
    """What a registered schema says about the records written with it."""

    schema_id: int
    parsed: Any
    row: list[_Field] = field(default_factory=list)
    key_fields: list[_Field] = field(default_factory=list)
    position: list[_Field] = field(default_factory=list)
    connector: str | None = None

    @classmethod
    def of(cls, text: str, schema_id: int, part: str) -> Reader:
        try:
            schema = json.loads(text)
            parsed = fastavro.parse_schema(schema)
        except Exception as error:  # a registry may hold anything under an id
            raise DecodeError(NAME, f"schema {schema_id} is not an Avro schema ({type(error).__name__}: {error})",
                              field=part) from None
        reader = cls(schema_id, parsed)
        if type(schema) is not dict or schema.get("type") != "record":
            raise DecodeError(NAME, f"schema {schema_id} is not a record schema", field=part)
        if part == "key":  # a record of the key columns, which may have any names ("op" too)
            reader.key_fields = _read_fields(schema["fields"])
            return reader
        envelope = {entry.get("name"): entry for entry in schema.get("fields", [])}
        row_type = _non_null(envelope.get("after", envelope.get("before", {})).get("type"))
        if type(row_type) is dict and row_type.get("type") == "record":
            reader.row = _read_fields(row_type["fields"])
        elif type(row_type) is str:  # after refers to the record before defined
            before = _non_null(envelope.get("before", {}).get("type"))
            reader.row = _read_fields(before["fields"]) if type(before) is dict else []
        source = envelope.get("source", {}).get("type")
        if type(source) is dict and source.get("type") == "record":
            connector = str(source.get("namespace", "")).rpartition(".")[2]
            reader.connector = None if connector in ("", "common") else connector
            reader.position = [entry for entry in _read_fields(source["fields"])
                               if entry.column.name not in SOURCE_FIELDS]
        return reader

    def table_schema(self, table: Table | None) -> TableSchema:
        return TableSchema(table, tuple(entry.column for entry in self.row),
                           tuple(entry.column.name for entry in self.key_fields))

    def position_schema(self) -> TableSchema:
        return TableSchema(None, tuple(entry.column for entry in self.position))

    def image(self, record: Any, path: str) -> Image | None:
        if record is None:
            return None
        return tuple(entry.cell(record, path) for entry in self.row)

    def key(self, record: dict[str, Any]) -> Image:
        return tuple(entry.cell(record, "key") for entry in self.key_fields)

    def source(self, record: Any, envelope: dict[str, Any] | None = None) -> tuple[Table | None, Source]:
        """The table and source of a ``source`` record: no table where it names none, db and schema neither. The
        capture time is the ``envelope``'s, read once the source is (so that the source's errors come first)."""
        if type(record) is not dict:
            raise DecodeError(NAME, "expected the source record", field="source")
        name, db, schema = record.get("table"), record.get("db"), record.get("schema")
        if type(name) is not str and (name is not None or db is not None or schema is not None):
            raise DecodeError(NAME, "expected the table's name with its db and schema", field="source.table")
        table = None if name is None else Table(name, schema, db) if schema is not None else Table(name, db)
        position = []
        for entry in self.position:
            value = record.get(entry.avro_name)
            if value is None:
                continue
            position.append((entry.column.name, value if type(value) in _AS_READ
                             else value_in(value, f"source.{entry.avro_name}")))
        connector = record.get("connector")
        commit_time_us = time_us(record, "source.")
        return table, Source(connector if type(connector) is str else None, tuple(position), commit_time_us,
                             None if envelope is None else time_us(envelope, ""))


def _non_null(avro_type: Any) -> Any:
    if type(avro_type) is list:
        branches = [branch for branch in avro_type if branch != "null"]
        return branches[0] if len(branches) == 1 else (branches or ["null"])[0]
    return avro_type


def _read_fields(fields: list[dict[str, Any]]) -> list[_Field]:
    read = []
    for entry in fields:
        avro_type = _non_null(entry.get("type"))
        optional = type(entry.get("type")) is list and "null" in entry["type"]
        column_type = _column_type_of(avro_type)
        parameters = avro_type.get("connect.parameters", {}) if type(avro_type) is dict else {}
        parameters = parameters or entry.get("connect.parameters", {})
        source_type = parameters.get(SOURCE_TYPE) if type(parameters) is dict else None
        cell_type_name = source_type if source_type is not None else implied_of_field(avro_type)
        name = entry.get(COLUMN_PROPERTY, entry["name"])
        read.append(_Field(entry["name"], Column(name, column_type, optional, source_type), cell_type_name))
    return read


def _column_type_of(avro_type: Any) -> ColumnType:
    """The column type of a field's Avro type (``json`` for a map, or a record referred to by name)."""
    if avro_type == VARIABLE_DECIMAL:  # the record, referred to by name after its first field
        return ColumnType("decimal")
    if type(avro_type) is str:
        return {"null": ColumnType("null"), "boolean": ColumnType("boolean"), "int": ColumnType("int32"),
                "long": ColumnType("int64"), "float": ColumnType("float"), "double": ColumnType("double"),
                "string": ColumnType("string"), "bytes": ColumnType("bytes")}.get(avro_type, ColumnType("json"))
    if type(avro_type) is not dict:
        return ColumnType("json")
    named = avro_type.get("connect.name") or avro_type.get("logicalType")
    if named in _TYPE_OF_NAME:
        return _TYPE_OF_NAME[named]
    if named == VARIABLE_DECIMAL:
        return ColumnType("decimal")
    if avro_type.get("logicalType") == "decimal":
        parameters = avro_type.get("connect.parameters") or {}
        precision = parameters.get("connect.decimal.precision")
        scale = int(avro_type.get("scale", 0))
        return ColumnType("decimal", int(precision) if precision is not None else None, scale)
    if avro_type.get("connect.type") in ("int8", "int16"):
        return ColumnType(avro_type["connect.type"])
    if type(avro_type.get("type")) is str and avro_type["type"] not in ("record", "array", "map", "enum", "fixed"):
        return _column_type_of(avro_type["type"])
    if avro_type.get("type") == "array":
        return ColumnType("array", items=_column_type_of(_non_null(avro_type.get("items"))))
    if avro_type.get("type") == "record" and avro_type.get("fields"):
        return ColumnType("struct", fields=tuple((entry["name"], _column_type_of(_non_null(entry.get("type"))))
                                                 for entry in avro_type["fields"]))
    if avro_type.get("type") in ("enum",):
        return ColumnType("string")
    if avro_type.get("type") == "fixed":
        return ColumnType("bytes")
    return ColumnType("json")


# The values fastavro reads that are change-event values as they are (``value_in``).
_AS_READ = frozenset({type(None), bool, int, float, str, bytes, Decimal})


def value_in(value: Any, where: str, variable_decimal_struct: bool = False) -> Value:
    """A value as fastavro reads it, as a change-event value: logical types back to the integers they are written
    as, Debezium's variable-scale decimal to a decimal (or to the struct ``{scale, value}`` that its JSON sends, where
    ``variable_decimal_struct``), records and maps to Structs, arrays to tuples."""
    kind = type(value)
    if kind is dict:
        if set(value) == {"scale", "value"} and type(value["value"]) is bytes:
            if variable_decimal_struct:
                return Struct((("scale", value["scale"]), ("value", value["value"])))
            return decimal_of(value["scale"], value["value"])
        return Struct(tuple((name, value_in(item, f"{where}.{name}")) for name, item in value.items()))
    if kind is list:
        return tuple(value_in(item, f"{where}[{index}]") for index, item in enumerate(value))
    if kind is datetime.date:
        return (value - _EPOCH_DATE).days
    if kind is datetime.datetime:
        moment = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        return (moment - _EPOCH) // _TIME_UNIT[6 if moment.microsecond % 1000 else 3]
    if kind is datetime.time:
        return (datetime.datetime.combine(_MIDNIGHT, value) - _MIDNIGHT) // _TIME_UNIT[3]
    if kind is Decimal or kind in (type(None), bool, int, float, str, bytes):
        return value
    raise DecodeError(NAME, f"a {kind.__name__} value has no change-event form", field=where)
