"""Typed Spark rows of change events (cdcformats.spark.tables) on local[2], against the same results folded in plain
Python from the events, typed by cdcformats.tables."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import (  # noqa: E402
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.errors import ConfigurationError, DecodeError  # noqa: E402
from cdcformats.model import Cell, ChangeEvent, Op, Source, Struct, Table  # noqa: E402
from cdcformats.tables import ColumnType, SchemaConflict, TableSchema  # noqa: E402

pytestmark = pytest.mark.slow

ORDERS = Table("orders", "shop")
MIXED = Table("mixed", "shop")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ABSENT = object()


def order(id_: int, qty: int | None, price: str | None, payload: bytes | None, note: str | None,
          created: int | None, seen: int | None, *, qty_type: str = "INT", status: object = ABSENT
          ) -> tuple[Cell, ...]:
    """A full row image of shop.orders; ``status`` is the column added halfway."""
    cells = [Cell("id", id_, "BIGINT"), Cell("qty", qty, qty_type),
             Cell("price", None if price is None else Decimal(price), "DECIMAL(10,2)"),
             Cell("payload", payload, "BLOB"), Cell("note", note, "VARCHAR(20)"),
             Cell("created", created, "io.debezium.time.MicroTimestamp"),
             Cell("seen", seen, "io.debezium.time.NanoTimestamp"),
             Cell("paid", None if qty is None else qty > 5, "BOOLEAN"),
             Cell("weight", None if qty is None else qty / 4, "FLOAT"),
             Cell("shipped", None if qty is None else 19_700 + qty % 1000, "DATE"),
             Cell("ratio", None if qty is None else 0.1 * qty, None)]
    if status is not ABSENT:
        cells.append(Cell("status", status, "VARCHAR(10)"))
    return tuple(cells)


def change(op: Op, commit_ms: int, before: tuple[Cell, ...] | None, after: tuple[Cell, ...] | None,
           table: Table = ORDERS) -> ChangeEvent:
    image = after if after is not None else before
    assert image is not None
    return ChangeEvent(op, table, (image[0],), before, after, Source("test", (), commit_ms * 1000))


ONE = order(1, 5, "12.50", b"\x00\x01", "first", 1_700_000_000_000_001, 1_700_000_000_123_456_789)
ONE_AGAIN = order(1, 6, "13.00", b"\x02", "second", 1_700_000_100_000_000, -1)
TWO = order(2, None, None, None, None, None, None)
FIVE = order(5, 2, "0.10", b"", "five", 1_600_000_000_000_000, 1_600_000_000_000_000_999)
FIRST_HALF = [
    change(Op.INSERT, 1, None, ONE),
    change(Op.INSERT, 2, None, TWO),
    change(Op.INSERT, 3, None, FIVE),
    change(Op.UPDATE, 4, ONE, ONE_AGAIN),
    change(Op.DELETE, 5, TWO, None),
]
SECOND_HALF = [
    # status is added; qty is declared BIGINT from here on and holds a value no int32 holds.
    change(Op.INSERT, 6, None, order(3, 3_000_000_000, "99999999.99", b"\xff" * 3, "third", 0, 0,
                                     qty_type="BIGINT", status="new")),
    change(Op.UPDATE, 7, ONE_AGAIN, order(1, 7, "14.25", b"\x03", "third time", 1_700_000_200_000_000,
                                          -1_000_000_001, qty_type="BIGINT", status="shipped")),
    change(Op.DELETE, 8, FIVE, None),
    change(Op.INSERT, 9, None, order(4, None, None, None, None, None, None, qty_type="BIGINT", status=None)),
]
EVENTS = FIRST_HALF + SECOND_HALF

# Cases of cell_type and widened that a summary of the values could get wrong, and a key cell no image holds.
MIXED_EVENTS = [
    ChangeEvent(Op.INSERT, MIXED, (Cell("k", "a", "VARCHAR"),), None, (
        Cell("k", "a", "VARCHAR"), Cell("n", 5, "INT"), Cell("f", 0.5, "FLOAT"),
        Cell("d", Decimal("1.25"), "DECIMAL(5,2)"),
        Cell("v", Decimal("1.5"), "io.debezium.data.VariableScaleDecimal"),
        Cell("c", Decimal("1.50"), '{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal",'
                                   '"parameters":{"scale":"2"}}'),
        Cell("t", 1_000_000_123, "io.debezium.time.NanoTime"), Cell("empty", None, "VARCHAR")),
        Source(commit_time_us=10)),
    ChangeEvent(Op.INSERT, MIXED, (Cell("k", "b", "VARCHAR"),), None, (
        Cell("k", "b", "VARCHAR"), Cell("n", 2**40, "INT"), Cell("f", 0.1, "FLOAT"),
        Cell("d", Decimal("100.00"), "DECIMAL(5,2)"),
        Cell("v", Decimal("1E+3"), "io.debezium.data.VariableScaleDecimal"),
        Cell("c", Decimal("123456789012345678901234567.89"), '{"type":"bytes","name":'
                                                             '"org.apache.kafka.connect.data.Decimal","parameters":'
                                                             '{"scale":"2"}}')), Source(commit_time_us=20)),
    ChangeEvent(Op.INSERT, MIXED, (Cell("k", None, "VARCHAR"),), None, (Cell("n", -7, "INTEGER"),),
                Source(commit_time_us=30)),
    ChangeEvent(Op.DELETE, MIXED, (Cell("k", "b", "VARCHAR"),), None, None, Source(commit_time_us=40)),
]


def bad_stream(name: str, images: list[tuple[Cell, ...]], keys: list[tuple[str, ...]] | None = None
               ) -> list[ChangeEvent]:
    table = Table(name, "bad")
    keys = keys or [("id",)] * len(images)
    return [ChangeEvent(Op.INSERT, table, tuple(cell for cell in image if cell.name in key), None, image,
                        Source(commit_time_us=index)) for index, (image, key) in enumerate(zip(images, keys))]


CONFLICTS = {
    "retyped": (bad_stream("retyped", [(Cell("id", 1), Cell("qty", 5, "INT")),
                                       (Cell("id", 2), Cell("qty", "five", "VARCHAR"))]), "qty"),
    # A date column whose middle value fits and whose smallest and largest do not.
    "dates": (bad_stream("dates", [(Cell("id", 1), Cell("day", -(2**40), "DATE")),
                                   (Cell("id", 2), Cell("day", 5, "DATE")),
                                   (Cell("id", 3), Cell("day", 2**40, "DATE"))]), "day"),
    "precision": (bad_stream("precision", [(Cell("id", 1), Cell("p", Decimal("1.25"), "DECIMAL(5,2)")),
                                           (Cell("id", 2), Cell("p", Decimal("1234.56"), "DECIMAL(5,2)"))]), "p"),
    "key": (bad_stream("key", [(Cell("id", 1), Cell("k", 1)), (Cell("id", 2), Cell("k", 2))], [("id",), ("id", "k")]),
            "key"),
}
NESTED = bad_stream("nested", [(Cell("id", 1), Cell("doc", (1, "a"), "JSON"))])
DOCS = Table("docs", "shop")
DOCS_EVENTS = [
    ChangeEvent(Op.INSERT, DOCS, (Cell("id", 1),), None, (
        Cell("id", 1), Cell("tags", ("a", "b")), Cell("address", Struct((("city", "Oslo"), ("geo", (59.9, 10.7))))),
        Cell("scores", ((1, 2), (3,))), Cell("doc", Struct((("a", 1),)), "JSON")), Source(commit_time_us=1)),
    ChangeEvent(Op.INSERT, DOCS, (Cell("id", 2),), None, (
        Cell("id", 2), Cell("tags", ()), Cell("address", Struct((("zip", "0150"), ("city", None)))),
        Cell("scores", ()), Cell("doc", None)), Source(commit_time_us=2)),
    ChangeEvent(Op.UPDATE, DOCS, (Cell("id", 1),), None, (
        Cell("id", 1), Cell("tags", None), Cell("address", Struct((("city", "Bergen"),)))), Source(commit_time_us=3)),
]
OTHER = [ChangeEvent(Op.INSERT, Table("orders"), (Cell("id", 1),), None, (Cell("id", "not this table"),))]


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory):
    from cdcformats.spark import session

    spark = session("local[2]", "cdcformats-table-tests", **{
        "spark.sql.shuffle.partitions": "4", "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse"))})
    spark.sparkContext.setLogLevel("OFF")  # the failures these tests cause on purpose log Java stack traces
    yield spark
    spark.stop()


def events_frame(spark, events: list[ChangeEvent]):
    """The events, shuffled (commit times order them), among an event of another table, a dead letter and a null."""
    rows: list = [*events, *OTHER, DecodeError("lindorm", "broken"), None]
    random.Random(7).shuffle(rows)
    return spark.createDataFrame(pa.table({"event": arrow.to_arrow(rows)}))


@pytest.fixture(scope="module")
def frame(spark):
    bad = [event for stream, _ in CONFLICTS.values() for event in stream]
    return events_frame(spark, EVENTS + MIXED_EVENTS + bad + NESTED + DOCS_EVENTS).persist()


# -- the Python reference ---------------------------------------------------------------------------------------------

def typed(value, column_type: ColumnType):
    """A value as Spark holds it in a column of ``column_type`` (see cdcformats.spark.tables)."""
    if value is None:
        return None
    if column_type.name == "timestamp":
        return EPOCH + timedelta(microseconds=value * 10**6 // 10**column_type.precision)
    if column_type.name == "date":
        return date(1970, 1, 1) + timedelta(days=value)
    if column_type.name == "decimal" and column_type.scale is None:
        return str(value)
    if column_type.items is not None:
        return [typed(item, column_type.items) for item in value]
    if column_type.fields:
        fields = dict(value.fields)
        return {name: typed(fields.get(name), field_type) for name, field_type in column_type.fields}
    return value


def typed_row(schema: TableSchema, values: dict) -> dict:
    return {column.name: typed(values.get(column.name), column.type) for column in schema.columns}


def reference_rows(events: list[ChangeEvent], schema: TableSchema) -> list[dict]:
    rows = []
    for event in events:
        image = event.before if event.op is Op.DELETE else event.after
        values = {cell.name: cell.value for cell in event.key}
        values.update({cell.name: cell.value for cell in image or ()})
        rows.append({**typed_row(schema, values), "op": event.op.value,
                     "commit_time": EPOCH + timedelta(microseconds=event.source.commit_time_us),
                     "deleted": event.op is Op.DELETE})
    return rows


def reference_state(events: list[ChangeEvent], schema: TableSchema) -> dict:
    """Each key's current row: changes applied in commit order, cell by cell; a delete empties the row."""
    state: dict = {}
    for event in sorted(events, key=lambda event: event.source.commit_time_us):
        key = tuple(cell.value for cell in event.key)
        cells, _, commit = state.get(key, ({}, None, 0))
        if event.op is Op.DELETE:
            cells = {}
        else:
            cells = {**cells, **{cell.name: cell.value for cell in event.after or ()}}
        state[key] = (cells, event.op, max(commit, event.source.commit_time_us))
    rows = {}
    for key, (cells, last_op, commit) in state.items():
        values = dict(cells)
        values.setdefault(schema.key[0], key[0])  # a deleted row keeps its key
        rows[key[0]] = {**typed_row(schema, values), "deleted": not cells and last_op is Op.DELETE,
                        "commit_time": EPOCH + timedelta(microseconds=commit)}
    return rows


def by_id(rows: list[dict]) -> dict:
    return {row["id"]: row for row in rows}


# -- tests ------------------------------------------------------------------------------------------------------------

def test_the_schema_derived_in_spark_is_of_events(frame) -> None:
    from cdcformats.spark import table_schema

    expected = TableSchema.of_events(EVENTS)[ORDERS]
    assert table_schema(frame, "shop.orders") == expected
    # The reference's premises: the column added halfway, the widened one, the typed ones.
    assert expected.names[-1] == "status" and expected.key == ("id",)
    assert {column.name: str(column.type) for column in expected.columns} == {
        "id": "int64", "qty": "int64", "price": "decimal(10,2)", "payload": "bytes", "note": "string",
        "created": "timestamp(6)", "seen": "timestamp(9)", "paid": "boolean", "weight": "float", "shipped": "date",
        "ratio": "double", "status": "string"}
    mixed = TableSchema.of_events(MIXED_EVENTS)[MIXED]
    assert table_schema(frame, MIXED) == mixed
    assert {column.name: str(column.type) for column in mixed.columns} == {
        "k": "string", "n": "int64", "f": "double", "d": "decimal(5,2)", "v": "decimal", "c": "decimal(*,2)",
        "t": "time(9)", "empty": "null"}
    assert mixed.column("k").nullable and mixed.column("n").source_type == "INTEGER"


@pytest.mark.parametrize("name", CONFLICTS)
def test_a_conflicting_stream_raises_what_of_events_raises(frame, name: str) -> None:
    from cdcformats.spark import table_schema

    events, column = CONFLICTS[name]
    with pytest.raises(SchemaConflict) as python:
        TableSchema.of_events(events)
    with pytest.raises(SchemaConflict, match=f"table bad.{name}, column {column}:") as spark_error:
        table_schema(frame, f"bad.{name}")
    assert (spark_error.value.table, spark_error.value.column) == (python.value.table, python.value.column)
    assert str(spark_error.value) == str(python.value)


def test_a_value_no_column_type_holds_is_named(frame) -> None:
    from cdcformats.spark import table_schema

    message = "a nested value of members no one type holds, or that JSON has no form for, has no column type"
    with pytest.raises(ValueError, match=message):
        TableSchema.of_events(NESTED)
    with pytest.raises(ValueError, match=f"table bad.nested, column doc: {message}"):
        table_schema(frame, "bad.nested")


def test_nested_values_are_typed_arrays_and_structs(frame) -> None:
    from cdcformats.spark import latest_state, table_rows, table_schema

    schema = TableSchema.of_events(DOCS_EVENTS)[DOCS]
    assert {column.name: str(column.type) for column in schema.columns} == {
        "id": "int64", "tags": "array<string>", "address": "struct<city:string,geo:array<double>,zip:string>",
        "scores": "array<array<int64>>", "doc": "struct<a:int64>"}
    assert table_schema(frame, DOCS) == schema
    rows = table_rows(frame, DOCS)
    types = {field.name: field.dataType for field in rows.schema.fields}
    assert types["scores"] == ArrayType(ArrayType(LongType()))
    assert types["address"] == StructType([StructField("city", StringType()),
                                           StructField("geo", ArrayType(DoubleType())),
                                           StructField("zip", StringType())])
    got = sorted(rows.toArrow().to_pylist(), key=lambda row: row["commit_time"])
    assert got == reference_rows(DOCS_EVENTS, schema)
    assert got[1]["address"] == {"city": None, "geo": None, "zip": "0150"}
    state = latest_state(frame, typed=True, table=DOCS)
    assert by_id(state.toArrow().to_pylist()) == reference_state(DOCS_EVENTS, schema)
    # A nested value that does not fit the column given fails the job, in either mode (from_json in FAILFAST mode).
    for errors in ("fail", "null"):
        with pytest.raises(Exception, match="FAILFAST|Malformed"):
            table_rows(frame, DOCS, {"id": "int64", "tags": "array<int64>"}, errors=errors).collect()


def test_table_rows_are_the_changes_typed(frame) -> None:
    from cdcformats.spark import table_rows

    schema = TableSchema.of_events(EVENTS)[ORDERS]
    rows = table_rows(frame, ORDERS)
    assert [(field.name, field.dataType) for field in rows.schema.fields] == [
        ("id", LongType()), ("qty", LongType()), ("price", DecimalType(10, 2)), ("payload", BinaryType()),
        ("note", StringType()), ("created", TimestampType()), ("seen", TimestampType()), ("paid", BooleanType()),
        ("weight", FloatType()), ("shipped", DateType()), ("ratio", DoubleType()), ("status", StringType()),
        ("op", StringType()), ("commit_time", TimestampType()), ("deleted", BooleanType())]
    got = sorted(rows.toArrow().to_pylist(), key=lambda row: row["commit_time"])
    assert got == reference_rows(EVENTS, schema)
    # Nanoseconds rounded down to the microsecond, before the epoch too.
    assert [row["seen"] for row in got if row["id"] == 1] == [
        EPOCH + timedelta(microseconds=1_700_000_000_123_456), EPOCH - timedelta(microseconds=1),
        EPOCH - timedelta(microseconds=1_000_001)]


def test_table_rows_keep_decimals_of_any_scale_as_their_text(frame) -> None:
    from cdcformats.spark import table_rows

    rows = table_rows(frame, "shop.mixed")
    types = {field.name: field.dataType for field in rows.schema.fields}
    assert (types["v"], types["c"], types["t"], types["empty"]) == (StringType(), DecimalType(38, 2), LongType(),
                                                                    StringType())
    got = sorted(rows.toArrow().to_pylist(), key=lambda row: row["commit_time"])
    assert got == reference_rows(MIXED_EVENTS, TableSchema.of_events(MIXED_EVENTS)[MIXED])
    assert [row["v"] for row in got[:2]] == ["1.5", "1E+3"]
    assert got[3]["k"] == "b"  # a delete without a before image: its key is its row


def test_a_value_that_does_not_fit_the_schema_given_fails_or_is_null(frame) -> None:
    from cdcformats.spark import table_rows

    schema = {"id": "int64", "qty": "int32", "price": ColumnType("decimal", 10, 2)}
    with pytest.raises(Exception, match="table_rows: table shop.orders, column qty: value 3000000000 \\(long\\) does "
                                        "not fit its type int32 \\(Spark int\\)"):
        table_rows(frame, ORDERS, schema).collect()
    rows = table_rows(frame, ORDERS, schema, errors="null").toArrow().to_pylist()
    got = [(row["id"], row["qty"], row["price"]) for row in sorted(rows, key=lambda row: row["commit_time"])]
    values = [{cell.name: cell.value for cell in (event.before if event.op is Op.DELETE else event.after)}
              for event in EVENTS]
    assert got == [(row["id"], None if row["qty"] == 3_000_000_000 else row["qty"], row["price"]) for row in values]
    assert (3, None, Decimal("99999999.99")) in got


def test_the_added_columns_can_be_named_apart_and_arguments_are_checked(frame) -> None:
    from cdcformats.spark import latest_state, table_rows

    schema = {"id": "int64", "deleted": "boolean"}
    with pytest.raises(ConfigurationError, match="has columns named deleted, which the typed rows add"):
        table_rows(frame, ORDERS, schema)
    assert table_rows(frame, ORDERS, schema, meta_prefix="_cdc_").columns == [
        "id", "deleted", "_cdc_op", "_cdc_commit_time", "_cdc_deleted"]
    with pytest.raises(ConfigurationError, match="typed=True takes a table"):
        latest_state(frame, typed=True)
    with pytest.raises(ConfigurationError, match="not name, schema.name or catalog.schema.name"):
        table_rows(frame, "a..b", schema)
    with pytest.raises(ConfigurationError, match="the schema given is table shop.mixed's, not shop.orders's"):
        table_rows(frame, ORDERS, TableSchema.of_events(MIXED_EVENTS)[MIXED])
    with pytest.raises(ConfigurationError, match="errors must be one of fail, null"):
        table_rows(frame, ORDERS, schema, errors="dead-letter")


def test_typed_latest_state_is_the_applied_changes_typed(frame) -> None:
    from cdcformats.spark import latest_state

    schema = TableSchema.of_events(EVENTS)[ORDERS]
    state = latest_state(frame, typed=True, table="shop.orders")
    assert state.columns == [*schema.names, "deleted", "commit_time"]
    got = by_id(state.toArrow().to_pylist())
    assert got == reference_state(EVENTS, schema)
    assert got[2]["deleted"] and got[2]["id"] == 2 and got[2]["note"] is None
    # Both modes agree: the untyped state's cells, typed in Python, are the typed state.
    untyped = latest_state(frame).where(F.col("table.name") == "orders").where(F.col("table.schema") == "shop")
    for row in untyped.toArrow().to_pylist():
        values = {cell["name"]: arrow.event_from_row({"op": "UPSERT", "after": [cell]}).after[0].value
                  for cell in row["cells"]}
        id_ = row["key"][0]["value"]["long"]
        assert {**typed_row(schema, values), "id": id_} == {name: got[id_][name] for name in schema.names}


def test_merge_into_statement_needs_a_table_format_spark_does_not_have(spark, tmp_path: Path) -> None:
    spark.sql(f"CREATE TABLE merge_probe (id BIGINT, v STRING) USING parquet LOCATION '{tmp_path / 'probe'}'")
    spark.createDataFrame([(1, "a", False)], "id bigint, v string, deleted boolean").createOrReplaceTempView("s")
    with pytest.raises(Exception, match="does not support MERGE INTO TABLE"):
        spark.sql("MERGE INTO merge_probe USING s ON merge_probe.id = s.id WHEN MATCHED AND s.deleted THEN DELETE "
                  "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED AND NOT s.deleted THEN INSERT *")


def test_merge_into_applies_the_typed_state_to_a_parquet_table(spark, tmp_path: Path) -> None:
    from cdcformats.spark import latest_state, merge_into

    schema = TableSchema.of_events(EVENTS)[ORDERS]
    first = latest_state(events_frame(spark, FIRST_HALF), typed=True, table=ORDERS, schema=schema)
    first.where(~F.col("deleted")).drop("deleted", "commit_time").write.format("parquet").option(
        "path", str(tmp_path / "orders")).saveAsTable("orders")
    second = latest_state(events_frame(spark, SECOND_HALF), typed=True, table=ORDERS, schema=schema).persist()

    old = merge_into(spark, "orders", second, "id")
    assert old == f"file:{tmp_path / 'orders'}"
    expected = {id_: {name: row[name] for name in schema.names}
                for id_, row in reference_state(EVENTS, schema).items() if not row["deleted"]}
    assert by_id(spark.table("orders").toArrow().to_pylist()) == expected
    assert sorted(expected) == [1, 3, 4]

    # A state that holds a key twice is refused by the write, before the table is pointed anywhere.
    with pytest.raises(Exception, match="holds key \\{\"id\":1\\} more than once"):
        merge_into(spark, "orders", second.unionByName(second.where("id = 1")), "id")
    assert by_id(spark.table("orders").toArrow().to_pylist()) == expected
    with pytest.raises(ConfigurationError, match="column qty is int in the state and bigint in the target"):
        merge_into(spark, "orders", second.withColumn("qty", F.col("qty").cast("int")), "id")


def test_the_schema_can_come_from_the_registry_the_changes_were_written_to(frame) -> None:
    """``debezium-avro`` registers each table's schema as it writes; the typed rows take the latest version."""
    import cdcformats as cf
    from cdcformats.spark import latest_state, table_rows
    from cdcformats.spark.tables import spark_type

    registry = cf.codec("debezium-avro", schema_registry="mock://spark-tables")
    written = list(registry.encode(EVENTS))
    assert len(written) == len(EVENTS)
    registered = registry.table_schema(ORDERS)  # type: ignore[attr-defined]  # a debezium-avro codec's
    assert registered is not None and registered.names == TableSchema.of_events(EVENTS)[ORDERS].names
    rows = table_rows(frame, ORDERS, schema=registry)
    assert [(field.name, field.dataType) for field in rows.schema.fields][:len(registered.columns)] == [
        (column.name, spark_type(column.type)) for column in registered.columns]
    got = sorted(rows.toArrow().to_pylist(), key=lambda row: row["commit_time"])
    assert got == reference_rows(EVENTS, registered)
    state = latest_state(frame, typed=True, table=ORDERS, schema=registry)
    assert by_id(state.toArrow().to_pylist()) == reference_state(EVENTS, registered)
    with pytest.raises(ConfigurationError, match="no schema of table shop.mixed is kept in the schema source given "
                                                 r"\(DebeziumAvroCodec\)"):
        table_rows(frame, MIXED, schema=registry)
