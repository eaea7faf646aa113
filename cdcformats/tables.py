"""Typed tables: one schema per table, derived from the change events of a stream and evolved as its columns come,
widen and go, as a typed target (``debezium-avro``, a typed Spark row) needs it.

    schema = cf.TableSchema.of_events(events)[cf.Table("orders", "shop")]
    schema.columns        # (Column('id', int64, nullable=False), Column('price', decimal(10,2)), ...)
    schema.key            # ('id',)

A column's type is a ``ColumnType``: ``boolean``, ``int8`` .. ``int64``, ``float`` (32 bits), ``double``,
``decimal(p,s)`` (or ``decimal``, of any scale, where the source declares none), ``string``, ``bytes``, ``date`` (days),
``time(n)`` and ``timestamp(n)`` (integers in units of 10^-n seconds: 3 milliseconds, 6 microseconds, 9 nanoseconds; a
``time(3)`` an int32, as Connect's ``Time``), ``json`` (JSON text), or ``null`` for a column that has held nothing but
nulls yet; and the nested types of the model's nested values: ``array<T>`` (a tuple whose items are of one type T) and
``struct<name:T,...>`` (a ``Struct``, its fields by name). A nested value has a type where its members are JSON's own
(null, booleans, integers as ``int64``, finite floats as ``double``, text, and nested values of those) and each array's
items widen to one type; any other (``(1, "a")``, a Struct holding bytes, an empty Struct) has none, and a typed target
writes it as its JSON text.

A cell's type is what its source declares, where its value fits it (``declared_type``: a SQL name such as
``decimal(10,2)`` or ``bigint(20) unsigned``, a Kafka Connect or Debezium type name, or a whole Connect field schema as
``connect-json`` and ``debezium-json`` keep it), else the type of its value (``value_type``): so a value is never
changed to fit its column. Dates and times that a source sends as text (Canal's ``2024-05-01``) stay text: their
column is a ``string`` that keeps the declared name as its ``source_type``. A null value says nothing of its
column's type: a column that has held only nulls is a ``null`` column until a value comes.

Evolution (``TableSchema.evolved``), the rules a registry's BACKWARD check accepts:

* a new column is added, nullable, after the others;
* a type widens: ``null`` to anything, ``int8`` -> ``int16`` -> ``int32`` -> ``int64``, ``float`` -> ``double``, a
  decimal to a larger precision at the same scale, an array's items as a column's type, a struct by its fields as a
  table by its columns (a field added, a field widened, a field a value leaves out kept); a narrower value fits the
  wider column as it is;
* a column that a change leaves out stays, nullable;
* a key column may become nullable;
* anything else (a type that changes kind, a decimal's scale, the key columns) is a ``SchemaConflict`` naming the
  table, the column and both types.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from .core.sql_types import sql_type
from .errors import CdcFormatsError
from .model import ChangeEvent, Struct, Table, Value

_INT_RANGE = {"int8": 2**7, "int16": 2**15, "int32": 2**31, "int64": 2**63}
_INTS = tuple(_INT_RANGE)
NAMES = ("null", "boolean", *_INTS, "float", "double", "decimal", "string", "bytes", "date", "time", "timestamp",
         "json", "array", "struct")
_TEMPORAL_PRECISIONS = (3, 6, 9)


@dataclass(frozen=True, slots=True)
class ColumnType:
    """A column's type: ``name`` one of ``NAMES``; ``precision`` a decimal's digits (None: any) or the fractional
    second digits of a time or timestamp (3, 6 or 9); ``scale`` a decimal's scale (None: any, per value); ``items``
    an array's item type; ``fields`` a struct's fields, (name, type) pairs in order."""

    name: str
    precision: int | None = None
    scale: int | None = None
    items: ColumnType | None = None
    fields: tuple[tuple[str, ColumnType], ...] = ()

    def __post_init__(self) -> None:
        if self.name not in NAMES:
            raise ValueError(f"unknown column type {self.name!r}; expected one of {', '.join(NAMES)}")
        if (self.items is not None) != (self.name == "array") or (self.fields and self.name != "struct"):
            raise ValueError("an array takes an item type, a struct its fields, and no other type either")
        if self.name == "struct":
            object.__setattr__(self, "fields", tuple(self.fields))
            names = [name for name, _ in self.fields]
            if not names or len(set(names)) != len(names):
                raise ValueError(f"a struct has fields, each named once, not {names}")
        if self.name in ("time", "timestamp"):
            if self.precision not in _TEMPORAL_PRECISIONS or self.scale is not None:
                raise ValueError(f"{self.name} takes a precision of 3, 6 or 9 fractional second digits")
        elif self.name == "decimal":
            if self.precision is not None and self.precision < 1:
                raise ValueError(f"decimal precision {self.precision} is not positive")
            if self.scale is None and self.precision is not None:
                raise ValueError("a decimal of any scale has no precision")
            if self.scale is not None and (self.scale < 0 or (self.precision or self.scale) < self.scale):
                raise ValueError(f"decimal scale {self.scale} is not within 0 and the precision")
        elif self.precision is not None or self.scale is not None:
            raise ValueError(f"{self.name} takes no precision or scale")

    def __str__(self) -> str:
        if self.items is not None:
            return f"array<{self.items}>"
        if self.fields:
            return f"struct<{','.join(f'{name}:{field_type}' for name, field_type in self.fields)}>"
        if self.name == "decimal" and self.scale is not None:
            return f"decimal({self.precision if self.precision is not None else '*'},{self.scale})"
        if self.precision is not None:
            return f"{self.name}({self.precision})"
        return self.name

    @classmethod
    def parse(cls, text: str) -> ColumnType:
        """The type ``str()`` writes: ``int64``, ``decimal(10,2)``, ``decimal(*,2)``, ``timestamp(6)``,
        ``array<string>``, ``struct<id:int64,tags:array<string>>`` (field names without ``:,<>``)."""
        parsed, rest = _parse_type(text)
        if rest.strip():
            raise ValueError(f"not a column type: {text!r}")
        return parsed

    def fits(self, value: Value) -> bool:
        """Whether a column of this type holds ``value`` exactly, as it is."""
        if value is None:
            return True
        kind = type(value)
        name = self.name
        if name in _INT_RANGE:
            return kind is int and -_INT_RANGE[name] <= value < _INT_RANGE[name]  # type: ignore[operator]
        if name == "date":
            return kind is int and -(2**31) <= value < 2**31  # type: ignore[operator]
        if name == "time" and self.precision == 3:  # milliseconds of the day, an int32 as Connect's Time has them
            return kind is int and -(2**31) <= value < 2**31  # type: ignore[operator]
        if name in ("time", "timestamp"):
            return kind is int
        if name == "double":
            return kind is float
        if name == "float":
            return kind is float and _is_single(value)  # type: ignore[arg-type]
        if name == "decimal":
            return kind is Decimal and _decimal_fits(value, self)  # type: ignore[arg-type]
        if name == "array":
            assert self.items is not None  # an array has its item type
            return kind is tuple and all(self.items.fits(item) for item in value)  # type: ignore[union-attr]
        if name == "struct":
            if kind is not Struct:
                return False
            field_types = dict(self.fields)
            return all(name in field_types and field_types[name].fits(item)
                       for name, item in value.fields)  # type: ignore[union-attr]
        return kind is _KIND_OF[name]


_SIMPLE_TYPE = re.compile(r"\s*([a-z0-9]+)\s*(?:\(\s*(\*|\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*")
_FIELD_NAME = re.compile(r"\s*([^:,<>]+?)\s*:")


def _parse_type(text: str) -> tuple[ColumnType, str]:
    """The type at the start of ``text``, and the text after it."""
    match = _SIMPLE_TYPE.match(text)
    if match is None:
        raise ValueError(f"not a column type: {text!r}")
    name, precision, scale = match.groups()
    rest = text[match.end():]
    if name not in ("array", "struct"):
        return _simple_type(name, precision, scale), rest
    if not rest.startswith("<"):
        raise ValueError(f"{name} needs its types in <...>: {text!r}")
    rest = rest[1:]
    if name == "array":
        items, rest = _parse_type(rest)
        if not rest.lstrip().startswith(">"):
            raise ValueError(f"an array has one item type: {text!r}")
        return ColumnType("array", items=items), rest.lstrip()[1:]
    fields = []
    while True:
        field = _FIELD_NAME.match(rest)
        if field is None:
            raise ValueError(f"expected a field name and ':' in {text!r}")
        field_type, rest = _parse_type(rest[field.end():])
        fields.append((field.group(1), field_type))
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:]
            continue
        if rest.startswith(">"):
            return ColumnType("struct", fields=tuple(fields)), rest[1:]
        raise ValueError(f"expected ',' or '>' in {text!r}")


def _simple_type(name: str, precision: str | None, scale: str | None) -> ColumnType:
    return ColumnType(name, None if precision is None or precision == "*" else int(precision),
                      None if scale is None else int(scale))


_KIND_OF: dict[str, type] = {"null": type(None), "boolean": bool, "string": str, "json": str, "bytes": bytes}


def _is_single(value: float) -> bool:
    """Whether a 32-bit float holds ``value`` exactly (NaN and the infinities too)."""
    if not math.isfinite(value):
        return True
    try:
        return struct.unpack(">f", struct.pack(">f", value))[0] == value
    except OverflowError:
        return False


def _decimal_fits(value: Decimal, column: ColumnType) -> bool:
    """A decimal column holds an unscaled integer and a scale: no NaN, infinity or negative zero; at any scale, one
    that a 32-bit integer holds (Connect's and Debezium's scale is an int32: 1E+2147483648 has none); at a fixed
    scale, only values of that many fraction digits, within the precision."""
    if not value.is_finite() or (value.is_zero() and value.is_signed()):
        return False
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # a finite decimal's exponent is a number
    if column.scale is None:
        return -(2**31) <= -exponent < 2**31
    digits = len(value.as_tuple().digits)
    return exponent == -column.scale and (column.precision is None or digits <= column.precision)


def value_type(value: Value) -> ColumnType:
    """The type a value has where its source declares none: an integer is an ``int64``, a float a ``double``, a
    decimal a ``decimal`` of any scale, a nested value its ``nested_type``. A value that no column type holds (a
    decimal NaN, a nested value without a type) has none: ``ValueError``; a typed target writes it as text first."""
    kind = type(value)
    if kind is tuple or kind is Struct:
        found = nested_type(value)
        if found is None:
            raise ValueError("a nested value of members no one type holds, or that JSON has no form for, has no column "
                             "type")
        return found
    if kind is int:
        return ColumnType("int64")
    if kind is float:
        return ColumnType("double")
    if kind is Decimal and _decimal_fits(value, ColumnType("decimal")):  # type: ignore[arg-type]
        return ColumnType("decimal")
    for name, name_kind in _KIND_OF.items():
        if kind is name_kind:
            return ColumnType(name)
    raise ValueError(f"a {kind.__name__} value has no column type")


def nested_type(value: Value) -> ColumnType | None:
    """The type of a nested value (see the module's docstring), or None where it has none."""
    if type(value) is tuple:
        items: ColumnType | None = ColumnType("null")
        for item in value:
            item_type = _member_type(item)
            items = None if item_type is None or items is None else widened(items, item_type)
            if items is None:
                return None
        return ColumnType("array", items=items)
    if type(value) is Struct and value.fields:
        fields = [(name, _member_type(item)) for name, item in value.fields]
        typed = [(name, field_type) for name, field_type in fields if field_type is not None]
        return ColumnType("struct", fields=tuple(typed)) if len(typed) == len(fields) else None
    return None


def _member_type(value: Value) -> ColumnType | None:
    kind = type(value)
    if kind is tuple or kind is Struct:
        return nested_type(value)
    if value is None:
        return ColumnType("null")
    if kind is float:
        return ColumnType("double") if math.isfinite(value) else None  # type: ignore[arg-type]
    return {bool: ColumnType("boolean"), int: ColumnType("int64"), str: ColumnType("string")}.get(kind)


# -- declared types ------------------------------------------------------------------------------------------------

_CONNECT_NAMES = {
    **{name: ColumnType(name) for name in ("boolean", *_INTS, "float", "double", "string", "bytes")},
    "org.apache.kafka.connect.data.Decimal": ColumnType("decimal"),
    "org.apache.kafka.connect.data.Date": ColumnType("date"),
    "org.apache.kafka.connect.data.Time": ColumnType("time", 3),
    "org.apache.kafka.connect.data.Timestamp": ColumnType("timestamp", 3),
    "io.debezium.time.Date": ColumnType("date"),
    "io.debezium.time.Time": ColumnType("time", 3),
    "io.debezium.time.MicroTime": ColumnType("time", 6),
    "io.debezium.time.NanoTime": ColumnType("time", 9),
    "io.debezium.time.Timestamp": ColumnType("timestamp", 3),
    "io.debezium.time.MicroTimestamp": ColumnType("timestamp", 6),
    "io.debezium.time.NanoTimestamp": ColumnType("timestamp", 9),
    "io.debezium.time.ZonedTimestamp": ColumnType("string"),
    "io.debezium.time.ZonedTime": ColumnType("string"),
    "io.debezium.data.Json": ColumnType("json"),
    "io.debezium.data.VariableScaleDecimal": ColumnType("decimal"),
}
# Debezium's parameter of a Connect field schema that names the source's own type (column.propagate.source.type).
_SOURCE_COLUMN_TYPE = "__debezium.source.column.type"
# Unsigned integers need the next width up.
_UNSIGNED_WIDER = {"int8": "int16", "int16": "int32", "int32": "int64"}


def declared_type(type_name: str | None) -> ColumnType | None:
    """The column type a source's type name declares, or None for a name that declares none this module knows."""
    if not type_name:
        return None
    connect = connect_type(type_name)
    if connect is not None:
        return connect
    if type_name.startswith("{"):  # a Connect schema of no type this module knows: its source's SQL type, if any
        return _source_column_type(type_name)
    sql = sql_type(type_name)
    if sql is None or sql.parameters is None:
        return None
    name = sql.column
    if name in _UNSIGNED_WIDER and sql.unsigned:
        return ColumnType(_UNSIGNED_WIDER[name])
    if name == "decimal":
        if not sql.parameters:
            return ColumnType("decimal")
        precision, scale = sql.parameters[0], sql.parameters[1] if len(sql.parameters) > 1 else 0
        # DECIMAL(0) declares a decimal of no digits, which no column holds: the values decide its type.
        return ColumnType("decimal", precision, scale) if 0 <= scale <= precision and precision > 0 else None
    if name in ("time", "timestamp"):
        digits = sql.parameters[0] if sql.parameters else 0
        return ColumnType(name, 3 if digits <= 3 else 6 if digits <= 6 else 9)
    return ColumnType(name)


def connect_type(type_name: str | None) -> ColumnType | None:
    """The column type a Kafka Connect type name (``int32``, ``io.debezium.time.MicroTimestamp``) or field schema
    (kept whole as a cell's type, ``connect_schema``) declares, or None for any other name. Connect's values are
    always of their schema's type, null or not."""
    if not type_name:
        return None
    if type_name in _CONNECT_NAMES:
        return _CONNECT_NAMES[type_name]
    schema = _connect_schema(type_name)
    if schema is None:
        return None
    parameters: dict[str, Any] = schema["parameters"] if type(schema.get("parameters")) is dict else {}
    named = _CONNECT_NAMES.get(str(schema.get("name"))) or _CONNECT_NAMES.get(str(schema.get("type")))
    if named is not None and named.name == "decimal" and str(parameters.get("scale", "")).isdigit():
        scale = int(parameters["scale"])
        precision = str(parameters.get("connect.decimal.precision", ""))
        if precision.isdigit() and int(precision) >= max(scale, 1):
            return ColumnType("decimal", int(precision), scale)
        return ColumnType("decimal", None, scale)
    return named


def _connect_schema(text: str) -> dict[str, Any] | None:
    """A Connect field schema kept whole as a cell's type, parsed; None for text that is none."""
    if not text.startswith("{"):
        return None
    try:
        schema = json.loads(text)
    except ValueError:
        return None
    return schema if type(schema) is dict else None


def _source_column_type(text: str) -> ColumnType | None:
    """The type that a Connect field schema's ``__debezium.source.column.type`` parameter declares."""
    schema = _connect_schema(text)
    parameters = schema.get("parameters") if schema is not None else None
    return declared_type(parameters.get(_SOURCE_COLUMN_TYPE)) if type(parameters) is dict else None


def cell_type(value: Value, type_name: str | None) -> ColumnType:
    """The type of a cell's column: what its type name declares where the value fits it, else its value's. A null
    says nothing of its column's type (a column whose values are off its declared type has nulls too): ``null``."""
    if value is None:
        return ColumnType("null")
    declared = declared_type(type_name)
    if declared is not None and declared.fits(value):
        return declared
    return value_type(value)


def widened(current: ColumnType, new: ColumnType) -> ColumnType | None:
    """The type that holds the values of both, by the rules of evolution; None when there is none (a conflict)."""
    if current == new or new.name == "null":
        return current
    if current.name == "null":
        return new
    if current.name in _INT_RANGE and new.name in _INT_RANGE:
        return max(current, new, key=lambda column_type: _INTS.index(column_type.name))
    if {current.name, new.name} == {"float", "double"}:
        return ColumnType("double")
    if current.name == new.name == "decimal" and current.scale == new.scale and current.scale is not None:
        if current.precision is None or new.precision is None:
            return ColumnType("decimal", None, current.scale)
        return ColumnType("decimal", max(current.precision, new.precision), current.scale)
    if current.items is not None and new.items is not None:
        items = widened(current.items, new.items)
        return None if items is None else ColumnType("array", items=items)
    if current.fields and new.fields:
        fields = dict(current.fields)
        for name, field_type in new.fields:
            merged = field_type if name not in fields else widened(fields[name], field_type)
            if merged is None:
                return None
            fields[name] = merged
        return ColumnType("struct", fields=tuple(fields.items()))
    return None


# -- table schemas -------------------------------------------------------------------------------------------------

class SchemaConflict(CdcFormatsError, ValueError):
    """A change that a table's schema cannot take by the rules of evolution: ``table``, ``column`` (``key`` for the
    key columns) and both types say which."""

    def __init__(self, table: Table | None, column: str, current: object, new: object) -> None:
        self.table, self.column, self.current, self.new = table, column, current, new
        super().__init__(f"schema conflict in table {table_name(table)}, column {column}: {current} cannot become "
                         f"{new} (a table's schema may add columns, widen int8 to int64, float to double, a "
                         "decimal's precision at one scale, and an array's items or a struct's fields alike)")


def table_name(table: Table | None) -> str:
    """A table's dotted name: catalog, schema, name."""
    if table is None:
        return "(no table)"
    return ".".join(part for part in (table.catalog, table.schema, table.name) if part is not None)


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a table: its name, type, whether it may be null, and the source's own type name of it (kept
    verbatim, ``VARCHAR(255)``)."""

    name: str
    type: ColumnType
    nullable: bool = True
    source_type: str | None = None

    def __post_init__(self) -> None:
        if type(self.type) is str:
            object.__setattr__(self, "type", ColumnType.parse(self.type))
        if type(self.type) is not ColumnType:
            raise TypeError(f"column {self.name!r}: expected a ColumnType, got {type(self.type).__name__}")


@dataclass(frozen=True, slots=True)
class TableSchema:
    """A table's columns in order and the names of its key columns, in key order."""

    table: Table | None
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "key", tuple(self.key))
        names = [column.name for column in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"table {table_name(self.table)}: a column is named twice in {names}")
        missing = [name for name in self.key if name not in names]
        if missing:
            raise ValueError(f"table {table_name(self.table)}: key columns {missing} are not columns")

    def column(self, name: str) -> Column | None:
        for column in self.columns:
            if column.name == name:
                return column
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def key_columns(self) -> tuple[Column, ...]:
        by_name = {column.name: column for column in self.columns}
        return tuple(by_name[name] for name in self.key)

    @classmethod
    def of_event(cls, event: ChangeEvent) -> TableSchema:
        """The schema one change shows: the columns of its key cells that its images leave out, then those of its
        before and after images in order, each cell typed by ``cell_type``. A column whose cells differ in type takes
        the widened one, or is a ``SchemaConflict``. A key column is nullable only where a key cell is null; every
        other column is nullable."""
        columns: dict[str, Column] = {}
        key_names = tuple(cell.name for cell in event.key)
        images = (*(event.before or ()), *(event.after or ()))
        in_images = {cell.name for cell in images}
        key_cells = [cell for cell in event.key if cell.name not in in_images]
        for cell in (*key_cells, *images, *event.key):
            observed = Column(cell.name, cell_type(cell.value, cell.type),
                              cell.name not in key_names or cell.value is None, cell.type)
            earlier = columns.get(cell.name)
            columns[cell.name] = observed if earlier is None else _merged(event.table, earlier, observed)
        return cls(event.table, tuple(columns.values()), key_names)

    @classmethod
    def of_events(cls, events: Iterable[ChangeEvent]) -> dict[Table | None, TableSchema]:
        """The schema of each table of a stream, evolved change by change (``SchemaConflict`` where it cannot)."""
        schemas: dict[Table | None, TableSchema] = {}
        for event in events:
            observed = cls.of_event(event)
            current = schemas.get(event.table)
            schemas[event.table] = observed if current is None else current.evolved(observed)
        return schemas

    def evolved(self, observed: TableSchema) -> TableSchema:
        """This schema, evolved to hold what ``observed`` (another change's) shows; ``SchemaConflict`` where the
        rules of evolution do not allow it. The source type names of ``observed`` replace those before them."""
        if observed.key and self.key and observed.key != self.key:
            raise SchemaConflict(self.table, "key", list(self.key), list(observed.key))
        key = self.key or observed.key
        seen = {column.name: column for column in observed.columns}
        columns = [column if column.name not in seen else _merged(self.table, column, seen.pop(column.name))
                   for column in self.columns]
        columns += seen.values()

        def nullable(name: str) -> bool:
            """Only a key column can be required, and it is until a key cell of it is null."""
            if name not in key:
                return True
            return any(schema.key and name in schema.key and getattr(schema.column(name), "nullable", False)
                       for schema in (self, observed))

        return TableSchema(self.table, tuple(replace(column, nullable=nullable(column.name)) for column in columns),
                           key)


@runtime_checkable
class SchemaSource(Protocol):
    """Where the schemas of tables are kept: a ``debezium-avro`` codec, whose schema registry holds each table's
    versions, is one. Typed Spark rows take their schema from one (``table_rows(..., schema=source)``)."""

    def table_schema(self, table: Table) -> TableSchema | None:
        """The latest schema of ``table``, or None where none is kept."""


def _merged(table: Table | None, current: Column, new: Column) -> Column:
    merged = widened(current.type, new.type)
    if merged is None:
        raise SchemaConflict(table, current.name, current.type, new.type)
    return Column(current.name, merged, current.nullable or new.nullable, new.source_type)


__all__ = ["Column", "ColumnType", "SchemaConflict", "SchemaSource", "TableSchema", "cell_type", "connect_type",
           "declared_type", "nested_type", "table_name", "value_type", "widened"]
