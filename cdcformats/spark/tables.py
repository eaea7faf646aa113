"""Typed Spark rows of change events: one Spark column per table column, of the type ``cdcformats.tables`` gives it.

    from cdcformats.spark import latest_state, merge_into, table_rows, table_schema
    changes = table_rows(events, "shop.orders")        # every change of shop.orders as a typed row
    state = latest_state(events, typed=True, table="shop.orders")   # the current typed row of each key
    merge_into(spark, "orders", state, key="id")       # applied to a Parquet table, swapped in at once

``events`` is a DataFrame with a decoded event column (``EVENT_TYPE``, as ``cdc_decode`` gives it); rows with an
``error`` or a null event are left out. A table is a ``cdcformats.Table`` or its dotted name (``"name"``,
``"schema.name"``, ``"catalog.schema.name"``), and matches ``event.table`` exactly: a part the name leaves out is null.

Spark types (``spark_type``): boolean ``BooleanType``; int8 .. int64 ``ByteType`` .. ``LongType``; float
``FloatType``; double ``DoubleType``; ``decimal(p,s)`` ``DecimalType(p,s)`` (``decimal(*,s)``: ``DecimalType(38,s)``);
a decimal of any scale, or one Spark cannot hold (more than 38 digits or a scale over 38), ``StringType`` holding the
exact decimal text (``1.50``, ``1E+3``: Python's ``str(Decimal)``); string and json ``StringType``; bytes
``BinaryType``; date ``DateType`` (from days since the epoch); ``time(n)`` ``LongType``, the integer as it is (units of
10^-n seconds since midnight); ``timestamp(3|6|9)`` ``TimestampType`` from milliseconds, microseconds or nanoseconds
since the epoch, where nanoseconds are rounded down to the microsecond, Spark's precision (a loss: ``time(9)`` keeps
them); ``array<T>`` an ``ArrayType`` and ``struct<...>`` a ``StructType`` of those types; and a column that held
nothing but nulls (``null``) ``StringType``, all null.

A value goes into its column only where it fits it (``ColumnType.fits``, and Spark's ranges: a ``decimal(*,s)`` of
more than 38 digits, a millisecond timestamp beyond the ±292,000 years Spark's microseconds reach); any other value
(a schema the caller gave that disagrees with the stream) fails the job with an error that names the table, the
column, the value and the type, or, with ``errors="null"``, is null. It never becomes another value. A decimal is
read in the spelling Python's ``str(Decimal)`` writes, which is what every decoder writes. A nested value is read from
its JSON text by ``from_json`` in ``FAILFAST`` mode: one that does not fit its column fails the job with Spark's error
in either mode, and a struct's field that its type does not name is left out, so give a nested column the type its
values have (a derived schema always does). Typed rows run as Spark SQL expressions, no Python per row; deriving a
schema types the nested values in Python, to tell their types apart.
"""

from __future__ import annotations

import json
import operator
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache, reduce
from typing import Any

import pyarrow as pa
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..core.error_modes import error_mode
from ..envelopes import arrow
from ..errors import CodecError, ConfigurationError
from ..model import Table
from ..tables import Column as TableColumn
from ..tables import (
    ColumnType,
    SchemaConflict,
    SchemaSource,
    TableSchema,
    cell_type,
    nested_type,
    table_name,
    widened,
)

ROW_ERROR_MODES = ("fail", "null")
# Spark's widest decimal.
MAX_DECIMAL_DIGITS = 38
_LONG_MAX = 2**63 - 1
_VALUE_TYPE = from_arrow_type(arrow.VALUE)
# A schema a caller gives: the schema itself, its column names and types, or where it is kept (a schema registry).
GivenSchema = TableSchema | Mapping[str, ColumnType | str] | SchemaSource

# -- tables and schemas -----------------------------------------------------------------------------------------------


def as_table(table: Table | str) -> Table:
    """A ``Table``, or the table a dotted name names: ``name``, ``schema.name`` or ``catalog.schema.name``."""
    if isinstance(table, Table):
        return table
    if not isinstance(table, str):
        raise TypeError(f"table: expected a cdcformats.Table or a dotted name, got {type(table).__name__}")
    parts = table.split(".")
    if len(parts) > 3 or not all(parts):
        raise ConfigurationError(f"table {table!r} is not name, schema.name or catalog.schema.name; give a "
                                 "cdcformats.Table for names with dots in them")
    return Table(parts[-1], *reversed(parts[:-1]))


def _is_table(column: SparkColumn, table: Table) -> SparkColumn:
    """Whether a ``TABLE`` struct is ``table``, part for part (a missing part is null on both sides)."""
    return (column.isNotNull() & (column["name"] == table.name) & column["schema"].eqNullSafe(F.lit(table.schema))
            & column["catalog"].eqNullSafe(F.lit(table.catalog)))


def _events(frame: DataFrame, column: str, table: Table) -> DataFrame:
    """The events of ``table`` in ``frame`` as ``e``, with ``_input_order``, the order they were read in."""
    event = F.col(column)
    return frame.where(event.isNotNull() & event["error"].isNull() & _is_table(event["table"], table)).select(
        event.alias("e"), F.monotonically_increasing_id().alias("_input_order"))


def _given_schema(schema: GivenSchema, table: Table) -> TableSchema:
    if isinstance(schema, SchemaSource):
        kept = schema.table_schema(table)
        if kept is None:
            raise ConfigurationError(f"no schema of table {table_name(table)} is kept in the schema source given "
                                     f"({type(schema).__name__}): give the schema, or none to derive it")
        return _given_schema(kept, table)
    if isinstance(schema, TableSchema):
        if schema.table is not None and schema.table != table:
            raise ConfigurationError(f"the schema given is table {table_name(schema.table)}'s, not "
                                     f"{table_name(table)}'s")
        return schema
    if isinstance(schema, Mapping):
        return TableSchema(table, tuple(TableColumn(name, ColumnType.parse(type_) if isinstance(type_, str) else type_)
                                        for name, type_ in schema.items()))
    raise TypeError(f"schema: expected a TableSchema, a mapping of column names to types or a SchemaSource, got "
                    f"{type(schema).__name__}")


def table_schema(frame: DataFrame, table: Table | str, column: str = "event") -> TableSchema:
    """The schema of ``table`` that its changes in ``frame`` show: what ``TableSchema.of_events`` gives for the same
    events in the order of their commit time, then source position, then input order (as ``latest_state`` applies
    them), derived in Spark by one job; a ``SchemaConflict`` (or, for a value no column type holds, such as a nested
    one of no one type, a ``ValueError``) where ``of_events`` has one. The columns are in the order they first
    appear in, as in ``of_events``. A table without changes has no columns.

    Spark aggregates, per column, source type name and class of value, the facts that ``cell_type`` reads: which
    member of the value is set; for an integer the narrowest of int8 .. int64 that holds it, for a double whether a
    float holds it, for a decimal its exponent, whether it is -0, and its fewest and most digits (as Python's
    ``Decimal`` counts them; a spelling other than ``str(Decimal)``'s is sent as its text), for a nested value its
    ``nested_type`` (found by a Python UDF, the one step that types values one by one); with one value of each
    class and where each first and last appears. The driver types those values with ``cell_type`` and folds them with
    ``widened``, in order, as ``of_events`` does, so it reaches the same types, source types, key and nullability. On a
    conflict it names the same table and column; the types it names are the column's type so far and the one that
    conflicts, where ``of_events`` may name two types of one change. Among several problems it raises the first in
    stream order, a change's cells before its key (``of_events`` checks a change's key before comparing its columns
    with the earlier changes': a change with both kinds of conflict is reported by the other one)."""
    target = as_table(table)
    return _derived(_events(frame, column, target), target)


def _derived(events: DataFrame, table: Table) -> TableSchema:
    facts = _facts(events).toArrow().to_pylist()
    return _folded(facts, table)


def _facts(events: DataFrame) -> DataFrame:
    """One row per (column, source type, class of value), and one per distinct key: see ``table_schema``."""
    e = F.col("e")
    order = F.struct(e["source"]["commit_time_us"].alias("commit_time_us"), e["source"]["position"].alias("position"),
                     F.col("_input_order").alias("input"))

    def in_images(name: SparkColumn) -> SparkColumn:
        return (F.coalesce(F.exists(e["before"], lambda cell: cell["name"] == name), F.lit(False))
                | F.coalesce(F.exists(e["after"], lambda cell: cell["name"] == name), F.lit(False)))

    def item(cell: SparkColumn, segment: SparkColumn, index: SparkColumn) -> SparkColumn:
        return F.struct(cell["name"].alias("name"), cell["type"].alias("type"), cell["value"].alias("value"),
                        segment.cast("int").alias("segment"), index.cast("int").alias("index"),
                        F.lit(None).cast("string").alias("keys"))

    # Each cell in the order TableSchema.of_event reads it: key cells that no image holds first (segment 0), then
    # the before image (1) and the after image (2), then the key cells again (3: the last word on a source type).
    # A key's names close the change (4).
    key = F.coalesce(e["key"], F.array())  # a struct built by hand may have none, which is an empty key
    key_items = F.transform(key, lambda cell, index: item(
        cell, F.when(in_images(cell["name"]), F.lit(3)).otherwise(F.lit(0)), index))
    before_items = F.transform(F.coalesce(e["before"], F.array()), lambda cell, index: item(cell, F.lit(1), index))
    after_items = F.transform(F.coalesce(e["after"], F.array()), lambda cell, index: item(cell, F.lit(2), index))
    key_names = F.transform(key, lambda cell: cell["name"])
    marker = F.struct(F.lit(None).cast("string").alias("name"), F.lit(None).cast("string").alias("type"),
                      F.lit(None).cast(_VALUE_TYPE).alias("value"), F.lit(4).alias("segment"), F.lit(0).alias("index"),
                      F.to_json(key_names).alias("keys"))
    key_marker = F.when(F.size(key) > 0, F.array(marker)).otherwise(F.array())
    items = events.select(order.alias("_order"), key_names.alias("_key_names"), F.explode(
        F.concat(key_items, before_items, after_items, key_marker)).alias("item"))

    # The classes are what ColumnType.fits tells apart (a range of integers, whether a float holds a double, a
    # decimal's exponent and digits): every value of a class fits the same types, so one or two of each stand for
    # them all. A new distinction there needs a class here.
    value = F.col("item.value")
    kind = _kind(value)
    decimal = _decimal_parts(value["decimal"])
    long = value["long"]
    integer_class = (F.when(long.between(-(2**7), 2**7 - 1), F.lit("int8"))
                     .when(long.between(-(2**15), 2**15 - 1), F.lit("int16"))
                     .when(long.between(-(2**31), 2**31 - 1), F.lit("int32")).otherwise(F.lit("int64")))
    single = value["double"].cast("float").cast("double") == value["double"]  # NaN = NaN in Spark, as in _is_single
    value_class = (
        F.when(F.col("item.keys").isNotNull(), F.concat(F.lit("key:"), F.col("item.keys")))
        .when(kind.isNull(), F.lit("null"))
        .when(kind == "long", F.concat(F.lit("long:"), integer_class))
        .when(kind == "double", F.when(single, F.lit("double:single")).otherwise(F.lit("double:wide")))
        .when((kind == "decimal") & decimal.canonical, F.concat(
            F.lit("decimal:"), decimal.exponent.cast("string"), F.lit(":"), decimal.negative_zero.cast("string")))
        .when(kind == "decimal", F.concat(F.lit("decimal-text:"), value["decimal"]))
        .otherwise(kind))
    # A nested value's class is its type, which a Python UDF finds; Spark would run a UDF for every row of an
    # expression, so only the nested values' rows go through it.
    nested = kind == "nested"
    classified = items.where(~F.coalesce(nested, F.lit(False))).withColumn("_class", value_class).unionByName(
        items.where(nested).withColumn("_class", F.concat(F.lit("nested:"), _nested_type_name(value["nested"]))))
    digits = F.when((kind == "decimal") & decimal.canonical, decimal.digits).otherwise(F.lit(0))
    cell_order = F.struct(F.col("_order"), F.col("item.segment"), F.col("item.index"))
    by_digits = F.struct(digits, cell_order)
    facts = classified.groupBy(F.col("item.name").alias("name"), F.col("item.type").alias("type"),
                               F.col("_class").alias("class")).agg(
        F.min(cell_order).alias("first"), F.max(cell_order).alias("last"),
        F.min_by(value, by_digits).alias("low"), F.max_by(value, by_digits).alias("high"),
        F.bool_or(kind.isNull() & F.array_contains(F.col("_key_names"), F.col("item.name"))).alias("null_in_key"))
    # Ranks, not the orders themselves: Spark orders positions (arrays of values) as Python cannot without copying
    # its rules. The facts are few, so one partition (a literal, which says so) ranks them all.
    everything = Window.partitionBy(F.lit(0))
    return facts.select(
        "name", "type", "class", "low", "high", "null_in_key",
        F.dense_rank().over(everything.orderBy("first")).alias("first_rank"),
        F.dense_rank().over(everything.orderBy("last")).alias("last_rank"))


def _nested_type_names(texts: pa.Array) -> pa.Array:
    """The ``nested_type`` of each nested value's text, or ``none`` for one without."""
    names = []
    for text in texts.to_pylist():
        try:
            found = None if text is None else nested_type(arrow.value_from_row({"nested": text}, "nested"))
        except CodecError:  # not a nested value's text: cell_type names it on the driver
            found = None
        names.append(None if text is None else str(found) if found is not None else "none")
    return pa.array(names, pa.string())


@lru_cache(maxsize=1)
def _nested_type_name_function() -> Any:
    return arrow_udf(_nested_type_names, StringType())  # type: ignore[call-overload]  # functionType inferred


def _nested_type_name(text: SparkColumn) -> SparkColumn:
    return _nested_type_name_function()(text)


@dataclass
class _Folding:
    """A column as the driver folds it: its type so far, where it first appeared, the source type last seen."""

    type: ColumnType | None = None
    first_rank: int = 0
    last_rank: int = -1
    source_type: str | None = None
    null_in_key: bool = False
    broken: bool = False


def _folded(facts: list[dict[str, Any]], table: Table) -> TableSchema:
    """The schema that the facts of ``_facts`` show, folded in stream order as ``TableSchema.of_events`` folds."""
    problems: list[tuple[int, Exception]] = []
    keys: list[tuple[str, ...]] = []
    columns: dict[str, _Folding] = {}
    for fact in sorted(facts, key=lambda fact: fact["first_rank"]):
        if fact["class"].startswith("key:"):
            names = tuple(json.loads(fact["class"][len("key:"):]))
            if len(keys) == 1:  # each key is one fact: the second is the first that differs
                problems.append((fact["first_rank"], SchemaConflict(table, "key", list(keys[0]), list(names))))
            keys.append(names)
            continue
        name = fact["name"]
        folding = columns.setdefault(name, _Folding(first_rank=fact["first_rank"]))
        if fact["last_rank"] > folding.last_rank:
            folding.last_rank, folding.source_type = fact["last_rank"], fact["type"]
        folding.null_in_key |= bool(fact["null_in_key"])
        for end in ("low", "high"):
            if folding.broken:
                break
            value = arrow.value_from_row(fact[end], name)
            try:
                observed = cell_type(value, fact["type"])
            except ValueError as error:  # a value no column type holds: of_events raises it bare
                problems.append((fact["first_rank"], ValueError(
                    f"table {table_name(table)}, column {name}: {error}")))
                folding.broken = True
                break
            merged = observed if folding.type is None else widened(folding.type, observed)
            if merged is None:
                problems.append((fact["first_rank"], SchemaConflict(table, name, folding.type, observed)))
                folding.broken = True
                break
            folding.type = merged
    if problems:
        raise min(problems, key=lambda problem: problem[0])[1]
    key = keys[0] if keys else ()
    return TableSchema(table, tuple(
        TableColumn(name, folding.type, folding.null_in_key if name in key else True, folding.source_type)
        for name, folding in columns.items() if folding.type is not None), key)


# -- values -----------------------------------------------------------------------------------------------------------

_MEMBERS = ("boolean", "long", "double", "string", "bytes", "decimal", "nested")
_SEVERAL = "several members"


def _kind(value: SparkColumn) -> SparkColumn:
    """Which member of a ``VALUE`` is set: its name; null for a null value; "several members" for a struct that is
    not a value (built by hand)."""
    count = reduce(operator.add, [value[member].isNotNull().cast("int") for member in _MEMBERS])
    kind = F.when(count == 0, F.lit(None).cast("string")).when(count > 1, F.lit(_SEVERAL))
    for member in _MEMBERS:
        kind = kind.when(value[member].isNotNull(), F.lit(member))
    return kind


@dataclass(frozen=True)
class _DecimalParts:
    """A decimal's text as Python's ``Decimal`` reads it: whether it is spelled as ``str(Decimal)`` spells a finite
    decimal, its exponent, its number of digits (leading zeros left out, at least 1) and whether it is -0."""

    canonical: SparkColumn
    exponent: SparkColumn
    digits: SparkColumn
    negative_zero: SparkColumn


# Sign, integer digits, fraction digits, exponent (bounded, so that it is a long): what str(Decimal) writes.
_DECIMAL_TEXT = r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,9}))?$"


def _decimal_parts(text: SparkColumn) -> _DecimalParts:
    def part(index: int) -> SparkColumn:
        return F.regexp_extract(text, _DECIMAL_TEXT, index)

    integer, fraction = part(2), part(3)
    canonical = text.rlike(_DECIMAL_TEXT) & (F.length(integer) + F.length(fraction) > 0)
    coefficient = F.regexp_replace(F.concat(integer, fraction), "^0+", "")
    exponent = F.coalesce(part(4).try_cast("bigint"), F.lit(0)) - F.length(fraction)
    return _DecimalParts(canonical, exponent, F.greatest(F.length(coefficient), F.lit(1)),
                         (part(1) == "-") & (F.length(coefficient) == 0))


@dataclass(frozen=True)
class _Typing:
    """How a column type's values become Spark values: its Spark type; the ``VALUE`` member its values are in (None:
    only null fits); what else a value of that member must be to fit; and the conversion."""

    spark_type: DataType
    member: str | None
    fits: Callable[[SparkColumn], SparkColumn] | None
    convert: Callable[[SparkColumn], SparkColumn]


def _same(value: SparkColumn) -> SparkColumn:
    return value


def _floor_micros(nanos: SparkColumn) -> SparkColumn:
    """Nanoseconds rounded down to microseconds, in integers (a double loses nanoseconds of today's timestamps)."""
    truncated = F.call_function("div", nanos, F.lit(1000))
    return truncated - F.when(nanos % 1000 < 0, F.lit(1)).otherwise(F.lit(0))


_INTEGER_TYPES: dict[str, tuple[DataType, int]] = {
    "int8": (ByteType(), 2**7), "int16": (ShortType(), 2**15), "int32": (IntegerType(), 2**31),
    "int64": (LongType(), 2**63)}


def _typing(column_type: ColumnType) -> _Typing:
    name = column_type.name
    if column_type.items is not None or column_type.fields:
        nested = _nested_spark_type(column_type)
        return _Typing(nested, "nested", None,
                       lambda value: F.from_json(value, nested, {"mode": "FAILFAST"}))
    if name in _INTEGER_TYPES:
        spark_type, bound = _INTEGER_TYPES[name]
        return _Typing(spark_type, "long", lambda value: value.between(-bound, bound - 1),
                       lambda value: value.cast(spark_type))
    if name == "date":
        return _Typing(DateType(), "long", lambda value: value.between(-(2**31), 2**31 - 1),
                       lambda value: F.date_from_unix_date(value.cast("int")))
    if name == "time":
        in_int32 = (lambda value: value.between(-(2**31), 2**31 - 1)) if column_type.precision == 3 else None
        return _Typing(LongType(), "long", in_int32, _same)
    if name == "timestamp":
        if column_type.precision == 3:  # Spark counts microseconds in a long: 1000 times fewer milliseconds fit
            return _Typing(TimestampType(), "long", lambda value: value.between(-(_LONG_MAX // 1000),
                                                                                 _LONG_MAX // 1000),
                           F.timestamp_millis)
        if column_type.precision == 6:
            return _Typing(TimestampType(), "long", None, F.timestamp_micros)
        return _Typing(TimestampType(), "long", None, lambda value: F.timestamp_micros(_floor_micros(value)))
    if name == "float":
        return _Typing(FloatType(), "double", lambda value: value.cast("float").cast("double") == value,
                       lambda value: value.cast("float"))
    if name == "decimal":
        return _decimal_typing(column_type)
    simple: dict[str, tuple[DataType, str]] = {
        "boolean": (BooleanType(), "boolean"), "double": (DoubleType(), "double"), "string": (StringType(), "string"),
        "json": (StringType(), "string"), "bytes": (BinaryType(), "bytes")}
    if name in simple:
        spark_type, member = simple[name]
        return _Typing(spark_type, member, None, _same)
    assert name == "null", name  # ColumnType allows no other name
    return _Typing(StringType(), None, None, _same)


def _nested_spark_type(column_type: ColumnType) -> ArrayType | StructType:
    if column_type.items is not None:
        return ArrayType(_typing(column_type.items).spark_type, containsNull=True)
    return StructType([StructField(name, _typing(field_type).spark_type, nullable=True)
                       for name, field_type in column_type.fields])


def _decimal_typing(column_type: ColumnType) -> _Typing:
    precision, scale = column_type.precision, column_type.scale

    def finite(value: SparkColumn) -> SparkColumn:
        parts = _decimal_parts(value)
        return parts.canonical & ~parts.negative_zero

    if scale is None:  # any scale: only text holds every value exactly
        return _Typing(StringType(), "decimal", finite, _same)
    digits = precision if precision is not None else MAX_DECIMAL_DIGITS
    in_spark = digits <= MAX_DECIMAL_DIGITS and scale <= MAX_DECIMAL_DIGITS

    def fits(value: SparkColumn) -> SparkColumn:
        parts = _decimal_parts(value)
        at_scale = parts.canonical & ~parts.negative_zero & (parts.exponent == -scale)
        return at_scale & (parts.digits <= digits) if in_spark or precision is not None else at_scale

    if not in_spark:
        return _Typing(StringType(), "decimal", fits, _same)
    decimal_type = DecimalType(digits, scale)
    return _Typing(decimal_type, "decimal", fits, lambda value: value.cast(decimal_type))


def spark_type(column_type: ColumnType | str) -> DataType:
    """The Spark type of a column type (see the module's docstring)."""
    return _typing(column_type if isinstance(column_type, ColumnType) else ColumnType.parse(column_type)).spark_type


def _shown(value: SparkColumn) -> SparkColumn:
    """A value as text, for an error message."""
    text = F.coalesce(value["boolean"].cast("string"), value["long"].cast("string"), value["double"].cast("string"),
                      value["string"], F.concat(F.lit("0x"), F.hex(value["bytes"])), value["decimal"], value["nested"])
    return F.substring(text, 1, 200)


def _typed(value: SparkColumn, kind: SparkColumn, column: TableColumn, table: Table, errors: str, caller: str
           ) -> SparkColumn:
    """The Spark value of a ``VALUE`` (whose ``_kind`` is ``kind``) in ``column``: null for null; the converted value
    where it fits; else an error that names the table, column and value (``errors="fail"``) or null."""
    typing = _typing(column.type)
    result = F.when(kind.isNull(), F.lit(None))
    if typing.member is not None:
        member = value[typing.member]
        fits = kind == typing.member
        if typing.fits is not None:
            fits = fits & typing.fits(member)
        result = result.when(fits, typing.convert(member))
    if errors == "fail":
        spark_name = typing.spark_type.simpleString()
        result = result.otherwise(F.raise_error(F.concat(
            F.lit(f"{caller}: table {table_name(table)}, column {column.name}: value "), _shown(value), F.lit(" ("),
            kind, F.lit(f") does not fit its type {column.type} (Spark {spark_name}); errors='null' makes it null"))))
    return result.cast(typing.spark_type).alias(column.name)


def _typed_rows(rows: DataFrame, values: Callable[[str], SparkColumn], schema: TableSchema, table: Table,
                errors: str, caller: str, after: list[SparkColumn]) -> DataFrame:
    """``rows`` as the typed columns of ``schema``, whose values ``values(name)`` finds, then the columns ``after``
    (of ``rows``). Three projections, so that each column's value is found once and its kind read once: typing reads
    them many times, and one expression would repeat them (Spark does not merge a projection into the next where
    that would repeat an expression that is not cheap)."""
    kept = [F.col(name) for name in rows.columns]
    names = [f"_value_{index}" for index in range(len(schema.columns))]
    staged = rows.select(*kept, *[values(column.name).alias(name) for column, name in zip(schema.columns, names)])
    staged = staged.select("*", *[_kind(F.col(name)).alias(f"{name}_kind") for name in names])
    return staged.select(*[_typed(F.col(name), F.col(f"{name}_kind"), column, table, errors, caller)
                           for column, name in zip(schema.columns, names)], *after)


def _value_in(cells: SparkColumn, name: str) -> SparkColumn:
    """The cell called ``name`` among ``cells`` (an array of cells or key entries), or null."""
    return F.try_element_at(F.filter(cells, lambda cell: cell["name"] == name), F.lit(1))


@dataclass(frozen=True)
class _Meta:
    op: str
    commit_time: str
    deleted: str


def _meta(schema: TableSchema, prefix: str) -> _Meta:
    meta = _Meta(f"{prefix}op", f"{prefix}commit_time", f"{prefix}deleted")
    taken = sorted({meta.op, meta.commit_time, meta.deleted} & set(schema.names))
    if taken:
        raise ConfigurationError(f"table {table_name(schema.table)} has columns named {', '.join(taken)}, which the "
                                 "typed rows add: give meta_prefix='_cdc_' (say) to name the added columns apart")
    return meta


def _schema_for(schema: GivenSchema | None, events: DataFrame, table: Table) -> TableSchema:
    return _derived(events, table) if schema is None else _given_schema(schema, table)


# -- the functions ----------------------------------------------------------------------------------------------------

def table_rows(frame: DataFrame, table: Table | str, schema: GivenSchema | None = None,
               column: str = "event", *, errors: str = "fail", meta_prefix: str = "") -> DataFrame:
    """Each change of ``table`` in ``frame`` (its ``column`` of decoded events) as a typed row: one Spark column per
    column of ``schema``, of its ``spark_type``, then ``op`` (text), ``commit_time`` (``TimestampType``, from the
    source's commit time) and ``deleted`` (op is DELETE). ``meta_prefix`` goes before the names of those three, for
    a table that has columns of those names.

    A DELETE's values are its before image's, any other change's its after image's; a column that the image leaves
    out (a key-only delete) takes its key cell's value, else null. Of several cells of one column in an image (the
    versions of a wide-column store) the row holds the PUT with the highest version; a cell that deletes a column or
    a version gives null. A TRUNCATE is a row of nulls.

    ``schema``: a ``TableSchema``, a mapping of column names to types (``{"id": "int64", "price":
    "decimal(10,2)"}``), or a ``SchemaSource`` that keeps the table's schema, such as a ``debezium-avro`` codec on
    the registry its writer registered the table in (the latest version); by default the schema the changes show,
    derived by ``table_schema`` (a Spark job of its own, which may raise ``SchemaConflict``). A value that does not
    fit its column fails the job, naming the table, column and value, or is null with ``errors="null"``. ``frame`` is
    read twice where the schema is derived: ``persist()`` a frame that is costly to compute, such as a decoded
    stream."""
    error_mode(errors, ROW_ERROR_MODES)
    target = as_table(table)
    events = _events(frame, column, target)
    typed_schema = _schema_for(schema, events, target)
    meta = _meta(typed_schema, meta_prefix)
    e = F.col("e")
    image = F.when(e["op"] == "DELETE", e["before"]).otherwise(e["after"])
    # Versions first, then places: array_max finds the PUT with the highest version, the last of equal ones.
    indexed = F.transform(image, lambda cell, index: F.struct(cell["version"].alias("version"), index.alias("index"),
                                                              cell.alias("cell")))
    rows = events.select(e["op"].alias("_op"), e["source"]["commit_time_us"].alias("_commit_time_us"),
                         e["key"].alias("_key"), indexed.alias("_image"))

    def value(name: str) -> SparkColumn:
        put = F.array_max(F.filter(F.col("_image"), lambda item: (item["cell"]["name"] == name) & (
            F.coalesce(item["cell"]["kind"], F.lit("PUT")) == "PUT")))  # a cell without a kind is a put
        return F.when(put.isNotNull(), put["cell"]["value"]).otherwise(_value_in(F.col("_key"), name)["value"])

    return _typed_rows(rows, value, typed_schema, target, errors, "table_rows", [
        F.col("_op").alias(meta.op), F.timestamp_micros(F.col("_commit_time_us")).alias(meta.commit_time),
        (F.col("_op") == "DELETE").alias(meta.deleted)])


def typed_state(state: DataFrame, frame: DataFrame, table: Table | str,
                schema: GivenSchema | None = None, column: str = "event", *,
                errors: str = "fail", meta_prefix: str = "") -> DataFrame:
    """The rows of ``table`` in ``state`` (what ``latest_state`` gives: ``table``, ``key``, ``cells``, ``deleted``,
    ``commit_time_us``) typed as ``table_rows`` types a change: each column's current cell, else its key entry (a
    deleted row keeps its key), then ``deleted`` and ``commit_time`` (the key's last commit time, a timestamp), then
    any further columns of ``state`` as they are.
    ``schema`` is derived from ``frame``'s changes of the table where it is not given. ``latest_state(...,
    typed=True, table=...)`` calls this."""
    error_mode(errors, ROW_ERROR_MODES)
    target = as_table(table)
    typed_schema = _schema_for(schema, _events(frame, column, target), target)
    meta = _meta(typed_schema, meta_prefix)
    rows = state.where(_is_table(F.col("table"), target))

    def value(name: str) -> SparkColumn:
        cell = _value_in(F.col("cells"), name)
        return F.when(cell.isNotNull(), cell["value"]).otherwise(_value_in(F.col("key"), name)["value"])

    further = [name for name in state.columns if name not in ("table", "key", "cells", "deleted", "commit_time_us")]
    return _typed_rows(rows.select("key", "cells", "deleted", "commit_time_us", *further), value, typed_schema,
                       target, errors, "latest_state", [
                           F.col("deleted").alias(meta.deleted),
                           F.timestamp_micros(F.col("commit_time_us")).alias(meta.commit_time),
                           *[F.col(name) for name in further]])


# -- merging into a Parquet table -------------------------------------------------------------------------------------

def _quoted(name: str) -> SparkColumn:
    """A column by its name as it is (dots and all)."""
    return F.col("`" + name.replace("`", "``") + "`")


def _sql_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _details(spark: SparkSession, table: str) -> dict[str, str]:
    """What ``DESCRIBE TABLE EXTENDED`` says of ``table`` below its columns: Provider, Location, Type..."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    return {row["col_name"]: row["data_type"] for row in rows if row["col_name"]}


def merge_into(spark: SparkSession, target_table: str, state: DataFrame, key: str | Iterable[str], *,
               deleted: str = "deleted") -> str:
    """Apply ``state`` (the rows of ``latest_state(..., typed=True)``: one per key) to the Parquet table
    ``target_table`` as ``MERGE INTO target USING state ON <key> WHEN MATCHED AND state.deleted THEN DELETE WHEN
    MATCHED THEN UPDATE SET * WHEN NOT MATCHED AND NOT state.deleted THEN INSERT *`` would, which open-source Spark
    runs only on tables of a catalog with row-level operations (Delta, Iceberg), not on Parquet tables.

    It writes the merged rows (the target's rows whose key is not in ``state``, then ``state``'s rows that are not
    ``deleted``, in the target's columns) to a new directory next to the table's, and only once that write has
    succeeded points the table at it (``ALTER TABLE ... SET LOCATION``, one catalog update): a reader sees the old
    rows or the new ones, never a half-written table, and a failed merge leaves the table as it was. Keys compare
    null-safely. Returns the old location, whose files stay for readers that began before the swap: delete it when
    none is left.

    ``state`` must hold each target column, of the target's type (columns it has besides are left out) and
    ``deleted``; a key twice in ``state`` fails the merge. The table must be an unpartitioned, unbucketed Parquet table
    of the session catalog. ``state`` is read twice: ``persist()`` it if it is costly."""
    keys = [key] if isinstance(key, str) else list(key)
    details = _details(spark, target_table)
    provider, location = details.get("Provider", ""), details.get("Location", "")
    if provider.lower() != "parquet" or not location:
        raise ConfigurationError(f"merge_into writes Parquet tables of the session catalog; {target_table} is "
                                 f"{provider or 'not one'}")
    laid_out = [column.name for column in spark.catalog.listColumns(target_table)
                if column.isPartition or column.isBucket]
    if laid_out:
        raise ConfigurationError(f"merge_into cannot swap the files of {target_table}: it is partitioned or bucketed "
                                 f"by {', '.join(laid_out)}")
    target = spark.table(target_table)
    state_types = {field.name: field.dataType for field in state.schema.fields}
    problems = [f"{name} is not a column of the target" for name in keys if name not in target.columns]
    problems += [f"state has no column {field.name}" if field.name not in state_types else
                 f"column {field.name} is {state_types[field.name].simpleString()} in the state and "
                 f"{field.dataType.simpleString()} in the target"
                 for field in target.schema.fields if state_types.get(field.name) != field.dataType]
    if deleted not in state_types:
        problems.append(f"state has no column {deleted} (say which with deleted=)")
    if problems:
        raise ConfigurationError(f"merge_into {target_table}: {'; '.join(problems)}")

    key_struct = F.to_json(F.struct(*[_quoted(name) for name in keys]))
    once = F.count(F.lit(1)).over(Window.partitionBy(*[_quoted(name) for name in keys]))
    checked = state.withColumn("_merge_once", F.when(once > 1, F.raise_error(F.concat(
        F.lit(f"merge_into {target_table}: the state holds key "), key_struct,
        F.lit(" more than once; it takes one row per key, as latest_state gives")))).otherwise(F.lit(True))).where(
        F.col("_merge_once")).drop("_merge_once")
    changed = checked.select(*[_quoted(name).alias(f"_merge_key_{index}") for index, name in enumerate(keys)])
    # changed holds only the renamed keys, so a name alone is the target's column.
    matches = reduce(operator.and_, [_quoted(name).eqNullSafe(F.col(f"_merge_key_{index}"))
                                     for index, name in enumerate(keys)])
    kept = target.join(changed, matches, "left_anti")
    written = checked.where(~F.coalesce(_quoted(deleted), F.lit(False))).select(
        *[_quoted(name) for name in target.columns])
    merged = kept.unionByName(written)
    new_location = re.sub(r"\.merge-[0-9a-f]{32}$", "", location.rstrip("/")) + f".merge-{uuid.uuid4().hex}"
    merged.write.parquet(new_location)  # a new directory: the table's own files are never written
    spark.sql(f"ALTER TABLE {target_table} SET LOCATION {_sql_text(new_location)}")
    spark.catalog.refreshTable(target_table)
    return location


__all__ = ["as_table", "merge_into", "spark_type", "table_rows", "table_schema", "typed_state"]
