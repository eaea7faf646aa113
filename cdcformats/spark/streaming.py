"""A change stream on Kafka applied to a Delta Lake table by Spark Structured Streaming, each change once.

    from cdcformats.spark import stream_to_table, streaming_session
    spark = streaming_session()          # Spark's Kafka source and Delta Lake on the classpath
    stream = stream_to_table(spark, "lindorm", bootstrap_servers="127.0.0.1:9092", topic="orders",
                             table="/data/orders", checkpoint="/data/orders.checkpoint",
                             options={"key_columns": ["id"]}, dead_letters="/data/orders.dead-letters")
    stream.query.awaitTermination()      # or stream.stop(), which stops it between two micro-batches

Each micro-batch of Kafka records is decoded by ``cdc_decode`` in the streaming plan (inside the JVM where the format
has a JVM decoder), then ``foreachBatch`` applies it:

* records that cannot be read go to the dead-letter Delta table (``dead_letters``: the record's topic, partition,
  offset, timestamp, key and value as they came, and the error), are counted and left out (``errors="skip"``), or
  stop the query before anything of the batch is written (``errors="fail"``);
* the batch's changes of the table are merged per key as ``latest_state`` merges them (in the order of commit time,
  then source position, then offset; column by column), typed as ``typed_state`` types them, and applied with one
  Delta ``MERGE``: a row delete deletes the row, a column delete (Lindorm ``DeleteColumn``, Tablestore ``DA``) nulls
  the column, a put sets it, and a column the batch did not touch keeps its value; a TRUNCATE deletes every row the
  batch did not write after it. The table gains a column ``_cdc_commit_time``, the last commit time of each row.

**Exactly once.** The Kafka offsets of a batch are in the checkpoint before the batch runs, and a batch replayed after
a crash holds the same records. Its MERGE and its dead-letter append carry Delta's transaction id (the checkpoint
and the batch id: ``txnAppId``, ``txnVersion``), which Delta records in the same commit, so a replayed batch whose
writes were committed is skipped and one whose writes were not is applied in full. Batches apply in stream order, so a
key's changes must come in order, as producers keep them by keying their topics.

**Schema.** By default each batch's columns are derived from its changes (``table_schema``): the first batch with
changes creates the table, and a later batch adds the columns it brings (a column that has held only nulls waits for
a value). A value narrower than its column (an int32 in a bigint column) is widened; a wider one or another kind fails
the batch, naming the column: give ``schema`` then. The key is ``key_columns``, else the schema's key.

Limits: a DELETE_VERSION (Lindorm ``Delete``, Tablestore ``DO``) of a version that an earlier batch wrote leaves the
column as it is, since the table keeps one value per column, not its versions.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import (
    ByteType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StructField,
)

from ..contract import KafkaRecord
from ..core.error_modes import error_mode
from ..errors import CdcFormatsError, ConfigurationError
from ..model import Table
from ..registry import codec_class
from ..tables import table_name
from .frames import changed_rows
from .functions import decode, register
from .tables import GivenSchema, _given_schema, _is_table, _sql_text, as_table, table_schema, typed_state

ERROR_MODES = ("fail", "skip", "dead-letter")
# How long a new query waits for the brokers to answer before it fails.
CONNECT_TIMEOUT = 30.0
# librdkafka's lines about a broker it cannot reach, which the error above says once.
_CLIENT_LOG = logging.getLogger("cdcformats.spark.streaming.client")
_CLIENT_LOG.addHandler(logging.NullHandler())
COMMIT_TIME = "_cdc_commit_time"
# Integral and floating types by width, for the widening a batch's narrower value gets into a wider column.
_WIDTHS: dict[type, tuple[str, int]] = {ByteType: ("integral", 1), ShortType: ("integral", 2),
                                        IntegerType: ("integral", 3), LongType: ("integral", 4),
                                        FloatType: ("floating", 1), DoubleType: ("floating", 2)}


class StreamError(CdcFormatsError):
    """A batch could not be applied: a record that cannot be read under ``errors="fail"``, or a column whose type
    the table cannot take."""


@dataclass
class BatchCounts:
    """What one micro-batch held: ``records`` read from Kafka = ``changes`` (of the table, applied) +
    ``other_tables`` (changes of other tables, left out) + ``dead_lettered`` (records that could not be read: to the
    dead-letter table, or skipped) + ``empty`` (records that hold no change, such as a tombstone). ``rows`` is how
    many rows of the table the changes touched."""

    batch_id: int
    records: int = 0
    changes: int = 0
    other_tables: int = 0
    dead_lettered: int = 0
    empty: int = 0
    rows: int = 0

    def adds_up(self) -> bool:
        return self.records == self.changes + self.other_tables + self.dead_lettered + self.empty

    def line(self) -> str:
        return (f"batch {self.batch_id}: records {self.records}  changes {self.changes}  rows {self.rows}  "
                f"dead-lettered {self.dead_lettered}  other tables {self.other_tables}  empty {self.empty}")


@dataclass
class TableStream:
    """A running ``stream_to_table`` query and the counts of the batches this process applied."""

    query: StreamingQuery
    batches: list[BatchCounts]
    between_batches: threading.Event  # set while no batch is being applied

    def stop(self, timeout: float = 300.0) -> None:
        """Stop the query between two micro-batches: once the batch being applied, if any, is done (for at most
        ``timeout`` seconds). ``query.stop()`` interrupts a batch where it is, which a restart applies again (once),
        but an interrupted Delta MERGE or Python call fills the log with the JVM's errors."""
        self.between_batches.wait(timeout)
        self.query.stop()

    def totals(self) -> BatchCounts:
        total = BatchCounts(batch_id=-1)
        for batch in self.batches:
            for counted in fields(BatchCounts)[1:]:
                setattr(total, counted.name, getattr(total, counted.name) + getattr(batch, counted.name))
        return total


def _table(row: Any) -> Table:
    """A ``Table`` of a ``TABLE`` struct as Spark returns it."""
    return Table(row["name"], row["schema"], row["catalog"])


def _location(path: str) -> str:
    """A path as Delta and the checkpoint keep it: absolute, so that a restart from elsewhere finds the same one."""
    return path if "://" in path else str(Path(path).absolute())


def _table_reference(path: str) -> str:
    """The Delta table at ``path`` as SQL names it."""
    return "delta.`" + _location(path).replace("`", "``") + "`"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _widens(source: DataType, target: DataType) -> bool:
    """Whether a value of ``source`` goes into a column of ``target`` unchanged (the same type, or a narrower one)."""
    if source == target:
        return True
    if isinstance(source, DecimalType) and isinstance(target, DecimalType):
        return source.scale == target.scale and source.precision <= target.precision
    widths = _WIDTHS.get(type(source)), _WIDTHS.get(type(target))
    return None not in widths and widths[0][0] == widths[1][0] and widths[0][1] <= widths[1][1]  # type: ignore[index]


class _Applier:
    """The ``foreachBatch`` function of one query: see the module's docstring."""

    def __init__(self, *, table: str, source_table: Table | None, schema: GivenSchema | None,
                 key_columns: list[str] | None, errors: str, dead_letters: str | None, app_id: str,
                 progress: Callable[[BatchCounts], None] | None) -> None:
        self.table, self.source_table, self.schema = table, source_table, schema
        self.key_columns, self.errors, self.dead_letters, self.app_id = key_columns, errors, dead_letters, app_id
        self.progress = progress
        self.batches: list[BatchCounts] = []
        self.between_batches = threading.Event()
        self.between_batches.set()

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        # Read once and kept for the several jobs below, as a plan of its own: Spark plans a DataFrame that derives
        # from a streaming one without adaptive execution, and the merge's joins then shuffle what they could
        # broadcast (a batch took half again as long).
        # Its blocks go when the JVM's cleaner finds the checkpoint unreferenced, as a batch's cache would.
        self.between_batches.clear()
        try:
            counts = self.apply(batch.localCheckpoint(eager=True), batch_id)
        finally:
            self.between_batches.set()
        self.batches.append(counts)
        if self.progress is not None:
            self.progress(counts)

    def apply(self, batch: DataFrame, batch_id: int) -> BatchCounts:
        event = F.col("event")
        failed = event.isNotNull() & event["error"].isNotNull()
        kind = F.when(event.isNull(), "empty").when(failed, "failed").otherwise("change")
        groups = batch.groupBy(kind.alias("kind"), F.when(~failed, event["table"]).alias("table")).agg(
            F.count(F.lit(1)).alias("records"), F.count_if(event["op"] == "TRUNCATE").alias("truncates"),
            F.first(F.when(failed, event["error"]["message"]), ignorenulls=True).alias("first_error")).collect()
        counts = BatchCounts(batch_id, records=sum(group["records"] for group in groups))
        changes_of = {_table(group["table"]): group for group in groups if group["kind"] == "change"}
        counts.empty = sum(group["records"] for group in groups if group["kind"] == "empty")
        counts.dead_lettered = sum(group["records"] for group in groups if group["kind"] == "failed")
        if counts.dead_lettered and self.errors == "fail":
            first = next(group["first_error"] for group in groups if group["kind"] == "failed")
            raise StreamError(f"batch {batch_id}: {counts.dead_lettered} record(s) could not be read, first: {first}; "
                              "nothing of the batch was written (errors='fail')")
        if counts.dead_lettered and self.errors == "dead-letter":
            self._dead_letter(batch.where(failed), batch_id)
        source_table = self._source_table(list(changes_of))
        applied = changes_of.get(source_table) if source_table is not None else None
        counts.changes = applied["records"] if applied is not None else 0
        counts.other_tables = counts.records - counts.changes - counts.dead_lettered - counts.empty
        if applied is not None:
            assert source_table is not None
            changes = batch.where(~failed & event.isNotNull() & _is_table(event["table"], source_table))
            counts.rows = self._merge(changes, batch_id, source_table, truncated=applied["truncates"] > 0)
        return counts

    def _source_table(self, seen: list[Table]) -> Table | None:
        """The table whose changes apply: the one given, else the only one the stream has shown."""
        if self.source_table is not None:
            return self.source_table
        if len(seen) > 1:
            raise StreamError(f"the stream holds changes of {len(seen)} tables ("
                              f"{', '.join(sorted(table_name(table) for table in seen))}): say which one to apply "
                              "(source_table, --source-table)")
        if seen:
            self.source_table = seen[0]
        return self.source_table

    def _dead_letter(self, failed: DataFrame, batch_id: int) -> None:
        assert self.dead_letters is not None
        rows = failed.select(F.lit(batch_id).alias("batch_id"), "topic", "partition", "offset", "timestamp", "key",
                             "value", F.col("event.error.message").alias("error"),
                             F.col("event.error.format").alias("format"), F.col("event.error.field").alias("field"))
        writer = rows.write.format("delta").mode("append").option("txnAppId", self.app_id + "/dead-letters").option(
            "txnVersion", batch_id)
        writer.save(_location(self.dead_letters))

    def _merge(self, changes: DataFrame, batch_id: int, source_table: Table, truncated: bool) -> int:
        """Apply the batch's changes of the table with one MERGE; how many rows it touched."""
        spark = changes.sparkSession
        schema = (table_schema(changes, source_table) if self.schema is None
                  else _given_schema(self.schema, source_table))
        keys = self.key_columns or list(schema.key)
        if not keys:
            raise StreamError(f"table {table_name(source_table)}: its changes name no key columns; give key_columns")
        state = changed_rows(changes, key_columns=self.key_columns).withColumnRenamed(
            "reset", "_cdc_reset").withColumnRenamed("written", "_cdc_written")
        typed = typed_state(state, changes, source_table, schema, meta_prefix="_cdc_")
        # A column that has held only nulls in the batch takes the table's type, or waits for a value to give one.
        fields = typed.schema.fields[:len(schema.columns)]
        typed_columns = [field for field, column in zip(fields, schema.columns) if column.type.name != "null"]
        target = _table_reference(self.table)
        target_types = self._prepare(spark, target, typed_columns)
        columns = [field for field in fields if field in typed_columns or field.name in target_types]
        problems = [f"column {column.name} is {column.dataType.simpleString()} in batch {batch_id} and "
                    f"{target_types[column.name].simpleString()} in the table"
                    for column in typed_columns if not _widens(column.dataType, target_types[column.name])]
        if problems:
            raise StreamError(f"{self.table}: {'; '.join(problems)}: give the table's schema (schema=, --schema)")
        written = [column.name for column in columns]
        source = typed.select(*[F.col(_quoted(name)).cast(target_types[name]).alias(name) for name in written],
                              "_cdc_deleted", COMMIT_TIME, "_cdc_reset", "_cdc_written")
        view = f"_cdc_batch_{uuid.uuid4().hex}"
        source.createOrReplaceTempView(view)
        untouched = [name for name in target_types if name not in written]
        try:
            result = self._run_merge(spark, _merge_statement(target, view, keys, written, untouched, truncated),
                                     batch_id)
        finally:
            spark.catalog.dropTempView(view)
        return result

    @staticmethod
    def _prepare(spark: SparkSession, target: str, columns: list[StructField]) -> dict[str, DataType]:
        """Create the table, or add the columns this batch brings; its columns' types. Both are idempotent: a
        replayed batch finds them done."""
        def ddl(fields: list[StructField]) -> str:
            return ", ".join(f"{_quoted(field.name)} {field.dataType.simpleString()}" for field in fields)

        spark.sql(f"CREATE TABLE IF NOT EXISTS {target} ({ddl(columns)}, {COMMIT_TIME} timestamp) USING delta")
        types = {field.name: field.dataType for field in spark.sql(f"SELECT * FROM {target} LIMIT 0").schema.fields}
        new = [column for column in columns if column.name not in types]
        if new:
            spark.sql(f"ALTER TABLE {target} ADD COLUMNS ({ddl(new)})")
            types.update({column.name: column.dataType for column in new})
        types.pop(COMMIT_TIME, None)
        return types

    def _run_merge(self, spark: SparkSession, statement: str, batch_id: int) -> int:
        """Run the MERGE under Delta's transaction id for this batch, which skips it where a replay finds it
        committed; the rows it touched (none when skipped)."""
        spark.conf.set("spark.databricks.delta.write.txnAppId", self.app_id)
        spark.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
        try:
            metrics = spark.sql(statement).first()
            return int(metrics["num_affected_rows"]) if metrics is not None else 0
        finally:
            spark.conf.unset("spark.databricks.delta.write.txnAppId")
            spark.conf.unset("spark.databricks.delta.write.txnVersion")


def reach_brokers(bootstrap_servers: str, kafka_options: dict[str, str] | None = None) -> None:
    """Fail at once where no broker at ``bootstrap_servers`` answers: Spark's Kafka source would wait for one for
    ever. ``kafka_options`` are the Kafka source's (``kafka.security.protocol``, ...)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    # The source's own client settings (security, say), as librdkafka names them.
    settings: dict[str, Any] = {name.removeprefix("kafka."): value for name, value in (kafka_options or {}).items()
                                if name.startswith("kafka.")}
    try:
        settings |= {"bootstrap.servers": bootstrap_servers, "logger": _CLIENT_LOG}
        AdminClient(settings).list_topics(timeout=CONNECT_TIMEOUT)
    except KafkaException as error:
        raise StreamError(f"no answer from the Kafka brokers at {bootstrap_servers} within {CONNECT_TIMEOUT:g} s "
                          f"({error.args[0].str()}): check the bootstrap servers (-b, --bootstrap-server)") from None


def _merge_statement(target: str, view: str, keys: list[str], written: list[str], untouched: list[str],
                     truncated: bool) -> str:
    """The MERGE of a batch's rows (``view``): ``written`` are its columns, ``untouched`` the table's others."""
    def assigned(name: str) -> str:
        return (f"{_quoted(name)} = CASE WHEN s._cdc_reset OR array_contains(s._cdc_written, {_sql_text(name)}) "
                f"THEN s.{_quoted(name)} ELSE t.{_quoted(name)} END")

    updates = [assigned(name) for name in written if name not in keys]
    updates += [f"{_quoted(name)} = CASE WHEN s._cdc_reset THEN NULL ELSE t.{_quoted(name)} END" for name in untouched]
    updates.append(f"{COMMIT_TIME} = s.{COMMIT_TIME}")
    inserted = [*written, COMMIT_TIME]
    statement = (f"MERGE INTO {target} t USING {view} s "
                 f"ON {' AND '.join(f't.{_quoted(name)} <=> s.{_quoted(name)}' for name in keys)} "
                 "WHEN MATCHED AND s._cdc_deleted THEN DELETE "
                 f"WHEN MATCHED THEN UPDATE SET {', '.join(updates)} "
                 f"WHEN NOT MATCHED AND NOT s._cdc_deleted THEN INSERT ({', '.join(map(_quoted, inserted))}) "
                 f"VALUES ({', '.join('s.' + _quoted(name) for name in inserted)})")
    if truncated:  # a row the batch did not write after the TRUNCATE is gone
        statement += " WHEN NOT MATCHED BY SOURCE THEN DELETE"
    return statement


def stream_to_table(spark: SparkSession, format: str, *, bootstrap_servers: str, topic: str, table: str,
                    checkpoint: str, source_table: Table | str | None = None, key_columns: Iterable[str] | None = None,
                    schema: GivenSchema | None = None, options: Mapping[str, Any] | None = None,
                    dead_letters: str | None = None, errors: str | None = None, starting_offsets: str = "earliest",
                    max_records_per_batch: int | None = None, available_now: bool = False,
                    kafka_options: Mapping[str, str] | None = None,
                    progress: Callable[[BatchCounts], None] | None = None) -> TableStream:
    """Start a query that applies the ``format`` changes on Kafka ``topic`` to the Delta table at the path ``table``
    (``/data/orders``, ``s3a://...``; a relative path is the working directory's), with its checkpoint at the path
    ``checkpoint``: see the module's docstring. (To name the table in a catalog, ``CREATE TABLE orders USING delta
    LOCATION '<table>'``.)

    ``source_table``: whose changes apply (a ``Table`` or dotted name), where the topic holds several tables' (the
    others are counted and left out); by default the table of the first batch's changes (a first batch of several
    tables' changes stops the query, naming them). ``schema``: the table's columns and types (a ``TableSchema``, or a
    mapping of names to type names such as ``{"id": "string", "amount": "decimal(10,2)"}``), else each batch's are
    derived from its changes. ``options`` are the format's (as for
    ``cdc_decode``). ``dead_letters``: the path of a Delta table for the records that cannot be read; ``errors``
    is ``dead-letter`` where it is given, else ``fail``; ``skip`` counts them only. ``available_now`` reads what the
    topic holds when the query starts and stops; else the query runs until stopped. ``progress`` is called with the
    counts of each batch (``BatchCounts``), which the returned ``TableStream`` also keeps."""
    mode = error_mode(errors or ("dead-letter" if dead_letters else "fail"), ERROR_MODES)
    if mode == "dead-letter" and not dead_letters:
        raise ConfigurationError("errors=dead-letter needs a dead-letter table (dead_letters, --dead-letters)")
    reach_brokers(bootstrap_servers, dict(kafka_options or {}))
    register(spark)
    reader = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap_servers)
              .option("subscribe", topic).option("startingOffsets", starting_offsets))
    if max_records_per_batch is not None:
        reader = reader.option("maxOffsetsPerTrigger", max_records_per_batch)
    for name, value in (kafka_options or {}).items():
        reader = reader.option(name, value)
    records = reader.load()
    message: SparkColumn | str = (F.struct("key", "value") if codec_class(format).message_type is KafkaRecord
                                  else "value")
    decoded = records.select("topic", "partition", "offset", "timestamp", "key", "value",
                             decode(format, message, **dict(options or {})).alias("event"))
    checkpoint_path = _location(checkpoint)
    applier = _Applier(table=table, source_table=None if source_table is None else as_table(source_table),
                       schema=schema, key_columns=list(key_columns) if key_columns else None, errors=mode,
                       dead_letters=dead_letters, app_id=f"cdcformats:{checkpoint_path}", progress=progress)
    writer = decoded.writeStream.foreachBatch(applier).option("checkpointLocation", checkpoint_path).queryName(
        f"cdcformats {format} {topic} -> {table}")
    if available_now:
        writer = writer.trigger(availableNow=True)
    return TableStream(writer.start(), applier.batches, applier.between_batches)


def quiet_query_failures(spark: SparkSession) -> None:
    """Leave out the JVM's log of a query that stopped on an error (Spark logs it with every stack of the Python
    traceback around it), for a program that reports the error itself (``query_failure``)."""
    jvm = spark._jvm
    assert jvm is not None  # a classic session
    log4j = jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel("org.apache.spark.sql.execution.streaming", log4j.Level.OFF)


def query_failure(error: Exception) -> str:
    """What stopped a query, in one line: the error a batch raised (its last line of Python's traceback, where
    Spark wraps one), else the first line of Spark's."""
    lines = [line.strip() for line in str(getattr(error, "desc", None) or error).splitlines() if line.strip()]
    raised = [line for line in lines if line.startswith(("cdcformats.", "pyspark.errors."))]
    return (raised[-1].split(": ", 1)[-1] if raised else lines[0]) if lines else type(error).__name__


__all__ = ["BatchCounts", "StreamError", "TableStream", "query_failure", "quiet_query_failures", "reach_brokers",
           "stream_to_table"]
