"""DataFrame helpers for decoded change events: ``dedupe`` (at-least-once duplicates dropped by event id),
``latest_state`` (the current row of each key, ready for ``MERGE INTO``) and ``tuple_events`` (tuple rows grouped back
into records)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..core.error_modes import error_mode
from ..envelopes import arrow
from ..errors import ConfigurationError
from ..model import ChangeEvent, Table
from ..registry import codec
from .functions import EVENT_TYPE, event_id
from .tables import GivenSchema, typed_state


def dedupe(frame: DataFrame, column: str = "event") -> DataFrame:
    """``frame`` without at-least-once duplicates: rows whose ``column`` holds the same change (the same event id)
    are kept once. Rows without an event (null, or dead letters) are kept as they are."""
    with_id = frame.withColumn("_cdc_event_id", event_id(F.col(column)))
    unique = with_id.where(F.col("_cdc_event_id").isNotNull()).dropDuplicates(["_cdc_event_id"])
    return unique.unionByName(with_id.where(F.col("_cdc_event_id").isNull())).drop("_cdc_event_id")


def _key_of(event: Column, key_columns: list[str] | None) -> Column:
    """The key of each event as (name, value) entries: its own key cells, or the cells named by ``key_columns`` in its
    image. A cell's type, version and kind say what a change did to the column, not which row it is (a Lindorm
    Delete's entries are deletions, its key's among them), so they are left out."""
    if key_columns:
        image = F.coalesce(event["after"], event["before"], F.array())
        names = F.array(*[F.lit(name) for name in key_columns])
        first_cells = F.transform(names, lambda name: F.element_at(F.filter(image, lambda cell: cell["name"] == name),
                                                                     1))
        cells = F.filter(first_cells, lambda cell: cell.isNotNull())
    else:
        cells = event["key"]
    return F.transform(cells, lambda cell: F.struct(cell["name"].alias("name"), cell["value"].alias("value")))


def latest_state(frame: DataFrame, column: str = "event", key_columns: list[str] | None = None, typed: bool = False,
                 table: Table | str | None = None, schema: GivenSchema | None = None,
                 *, errors: str = "fail", meta_prefix: str = "") -> DataFrame:
    """The current row of each key after applying a change stream: one row per (table, key) (``key``: the key cells'
    names and values) with ``cells`` (the current value of each column, in column-name order) and ``deleted`` (the
    row was deleted and not written since),
    ready for ``MERGE INTO target USING state ... WHEN MATCHED AND deleted THEN DELETE``.

    Changes apply in the order of their commit time, then source position, then input order. Cells merge column by
    column, as in a wide-column store: a column holds its put with the highest version (a cell without a version
    has its change's commit time) that no later row delete, column delete (DELETE_ALL_VERSIONS) or delete of that
    version (DELETE_VERSION) removed; a TRUNCATE removes every earlier change of its table. The key is each event's
    own, or, with ``key_columns``, read out of its image; an event with neither fails the job, naming its table.
    It reads ``frame`` several times: ``persist()`` a frame that is costly to compute, such as a decoded stream.

    With ``typed=True``, the rows of one ``table`` (a ``cdcformats.Table`` or a dotted name) typed by
    ``cdcformats.spark.tables.typed_state``: one Spark column per table column (from the merged ``cells``, a deleted
    row's key from its key), then ``deleted`` and ``commit_time`` (a timestamp), ready for ``MERGE INTO target USING
    state ON target.id = state.id WHEN MATCHED AND state.deleted THEN DELETE WHEN MATCHED THEN UPDATE SET * WHEN NOT
    MATCHED AND NOT state.deleted THEN INSERT *`` (or ``merge_into`` for a Parquet table). ``schema``, ``errors`` and
    ``meta_prefix`` are as in ``table_rows``; the schema is derived from ``frame``'s changes of the table by default.
    """
    if typed == (table is None) or (not typed and schema is not None):
        raise ConfigurationError("latest_state: typed=True takes a table (and a schema, or derives it), and only "
                                 "typed=True does")
    merged = _merged(frame, column, key_columns)
    untyped = merged.last.join(merged.rows, "_row", "left").select(
        "table", "key", F.coalesce(F.col("cells"), _no_cells()).alias("cells"),
        (F.col("cells").isNull() & (F.col("_last_op") == "DELETE")).alias("deleted"), "commit_time_us")
    if not typed:
        return untyped
    assert table is not None  # checked above
    return typed_state(untyped, frame, table, schema, column, errors=errors, meta_prefix=meta_prefix)


def _no_cells() -> Column:
    return F.array().cast(EVENT_TYPE["after"].dataType)


@dataclass(frozen=True)
class _Merged:
    """The parts of ``latest_state``, each by (``table``, ``key``): ``last`` (every changed key, with ``_last_op``
    and ``commit_time_us``), ``rows`` (their standing ``cells``), ``standing`` (each standing cell's ``_name``),
    ``row_deletes`` (``_row_deleted``: the order of the last row delete), ``column_deletes`` (``_column_deleted``
    by ``_name``) and, by ``table`` alone, ``truncates`` (``_truncated``)."""

    last: DataFrame
    rows: DataFrame
    standing: DataFrame
    row_deletes: DataFrame
    column_deletes: DataFrame
    truncates: DataFrame


def _merged(frame: DataFrame, column: str, key_columns: list[str] | None) -> _Merged:
    events = frame.where(F.col(column).isNotNull() & F.col(column)["error"].isNull()).select(
        F.col(column).alias("e"), F.monotonically_increasing_id().alias("_input_order"))
    events = events.select(
        F.col("e"), F.col("e.table").alias("table"),
        F.struct(F.col("e.source.commit_time_us"), F.col("e.source.position"), F.col("_input_order")).alias("_order"))
    truncates = events.where(F.col("e.op") == "TRUNCATE").groupBy("table").agg(F.max("_order").alias("_truncated"))
    changes = _left_join(events.where(F.col("e.op") != "TRUNCATE"), truncates, ["table"]).where(
        F.col("_truncated").isNull() | (F.col("_order") > F.col("_truncated"))).drop("_truncated")
    key = _key_of(F.col("e"), key_columns)
    changes = changes.withColumn("key", F.when(F.size(key) > 0, key).otherwise(F.raise_error(F.concat(
        F.lit("latest_state: a change of table "), F.coalesce(F.col("table.name"), F.lit("(none)")),
        F.lit(" has no key; give key_columns")))))
    # A row's identity as one text: grouping and joining on it is one hash of a string, not of a struct and an array
    # of structs, compared null-safely.
    changes = changes.withColumn("_row", F.to_json(F.struct("table", "key")))
    row = ["_row"]
    row_deletes = changes.where(F.col("e.op") == "DELETE").groupBy(*row).agg(F.max("_order").alias("_row_deleted"))
    cells = changes.select(*row, "_order", F.col("e.source.commit_time_us").alias("_commit_us"),
                           F.explode(F.col("e.after")).alias("cell"))
    column_key: list[Column | str] = [*row, F.col("cell.name").alias("_name")]
    whole_column = cells.where(F.col("cell.kind") == "DELETE_ALL_VERSIONS").groupBy(*column_key).agg(
        F.max("_order").alias("_column_deleted"))
    one_version = cells.where(F.col("cell.kind") == "DELETE_VERSION").groupBy(
        *column_key, F.col("cell.version").alias("_version")).agg(F.max("_order").alias("_version_deleted"))
    puts = cells.where(F.col("cell.kind") == "PUT").select(
        "*", F.col("cell.name").alias("_name"), F.col("cell.version").alias("_version"))
    puts = _left_join(_left_join(_left_join(puts, row_deletes, row), whole_column, [*row, "_name"]),
                      one_version, [*row, "_name", "_version"])
    later = [F.col(deleted).isNull() | (F.col("_order") > F.col(deleted))
             for deleted in ("_row_deleted", "_column_deleted", "_version_deleted")]
    surviving = puts.where(later[0] & later[1] & later[2])
    current = surviving.groupBy(*row, "_name").agg(F.max_by("cell", F.struct(
        F.coalesce(F.col("_version") * 1000, F.col("_commit_us")), F.col("_order"))).alias("cell"))
    rows = current.groupBy(*row).agg(F.array_sort(F.collect_list("cell"), lambda left, right: F.when(
        left["name"] < right["name"], -1).when(left["name"] > right["name"], 1).otherwise(0)).alias("cells"))
    last = changes.groupBy(*row).agg(F.first("table").alias("table"), F.first("key").alias("key"),
                                     F.max_by(F.col("e.op"), F.col("_order")).alias("_last_op"),
                                     F.max(F.col("e.source.commit_time_us")).alias("commit_time_us"))
    return _Merged(last, rows, current.select(*row, "_name"), row_deletes, whole_column, truncates)


def changed_rows(frame: DataFrame, column: str = "event", key_columns: list[str] | None = None) -> DataFrame:
    """``latest_state`` (untyped) with what the changes did to each row as it stood before them, for applying the
    changes of a stream one part after another: ``reset`` (a row delete or a TRUNCATE came, so that a column no later
    change wrote is null) and ``written`` (the names of the columns the changes set: a put that stands, or a column
    delete that came after the row's last reset and that no put undid)."""
    merged = _merged(frame, column, key_columns)
    standing = merged.standing.withColumn("_put", F.lit(True))
    cleared = merged.column_deletes.join(standing, ["_row", "_name"], "left").join(
        merged.row_deletes, "_row", "left").where(F.col("_put").isNull() & (
            F.col("_row_deleted").isNull() | (F.col("_column_deleted") > F.col("_row_deleted"))))
    cleared = cleared.groupBy("_row").agg(F.collect_list("_name").alias("_cleared"))
    state = _left_join(merged.last.join(merged.rows, "_row", "left").join(cleared, "_row", "left").join(
        merged.row_deletes, "_row", "left"), merged.truncates, ["table"])
    cells = F.coalesce(F.col("cells"), _no_cells())
    return state.select("table", "key", cells.alias("cells"),
                        (F.col("cells").isNull() & (F.col("_last_op") == "DELETE")).alias("deleted"),
                        "commit_time_us",
                        (F.col("_row_deleted").isNotNull() | F.col("_truncated").isNotNull()).alias("reset"),
                        F.array_union(F.transform(cells, lambda cell: cell["name"]),
                                      F.coalesce(F.col("_cleared"), F.array().cast("array<string>"))).alias("written"))


def _left_join(left: DataFrame, right: DataFrame, on: list[str]) -> DataFrame:
    """``left`` LEFT JOIN ``right`` on the columns ``on``, where null equals null: a change without a table, or a
    cell without a version, is matched like any other."""
    renamed = right.select(*[F.col(name).alias(f"_right_{name}") for name in on],
                           *[name for name in right.columns if name not in on])
    condition = reduce(operator.and_, [left[name].eqNullSafe(renamed[f"_right_{name}"]) for name in on])
    return left.join(renamed, condition, "left").drop(*[f"_right_{name}" for name in on])


def tuple_events(frame: DataFrame, format: str, *, order_by: str | None = None, errors: str = "dead-letter",
                 **options: Any) -> DataFrame:
    """Rows of a format whose messages are tuples and whose records span several of them (``Codec.row_key_width``:
    Tablestore's DataX otsstreamreader rows, with the key columns, columnName, timestamp, columnValue, opType and
    maybe sequenceInfo, in that column order), each DataFrame row one message, grouped back into records: a
    DataFrame with one ``event`` column.

    A record never spans two rows of the table, so messages are spread by their leading key values and, within a
    key, kept in ``order_by`` (a column name; default: the order they were read in), which is all the grouping
    needs; with sequence info it is exact. ``errors`` is fail, null or dead-letter; ``options`` are the format's.
    """
    error_mode(errors, arrow.COLUMN_ERROR_MODES)
    width = codec(format, **options).row_key_width()  # a bad option fails here, on the driver
    if width is None:
        raise ConfigurationError(f"{format} messages are not tuples grouped into records by a key; decode them with "
                                 "cdc_decode")
    key_columns = frame.columns[:width]
    order = F.col(order_by) if order_by else F.monotonically_increasing_id()
    ordered = (frame.withColumn("_cdc_order", order).repartition(*[F.col(name) for name in key_columns])
               .sortWithinPartitions(*key_columns, "_cdc_order").drop("_cdc_order"))

    def decode_partition(batches: Any) -> Any:
        decoder = codec(format, **options)
        rows: list[Any] = []
        messages = (tuple(row.values()) for batch in batches for row in batch.to_pylist())
        events = decoder.decode(messages, on_error=None if errors == "fail" else rows.append)
        chunk: list[Any] = []
        for event in events:
            chunk.extend(rows)
            rows.clear()
            chunk.append(event)
            if len(chunk) >= 10_000:
                yield pa.RecordBatch.from_arrays([_dead_letters_or_nulls(chunk, errors)], names=["event"])
                chunk = []
        chunk.extend(rows)
        if chunk:
            yield pa.RecordBatch.from_arrays([_dead_letters_or_nulls(chunk, errors)], names=["event"])

    return ordered.mapInArrow(decode_partition, StructType().add("event", EVENT_TYPE))


def _dead_letters_or_nulls(rows: list[Any], errors: str) -> pa.Array:
    """Events and errors as ``EVENT`` rows; under "null" an error is a null row."""
    return arrow.to_arrow([None if errors == "null" and not isinstance(row, ChangeEvent) else row for row in rows])
