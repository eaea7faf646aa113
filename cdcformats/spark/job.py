"""``cdcformats spark-convert``: a batch job that converts files of change messages with Spark.

Input is JSON lines or text (one message per line) or Parquet with a ``value`` column (binary or string); output is
Parquet with a binary ``value`` column, or text lines with ``output_kind="text"`` for the JSON formats. Each partition
runs the conversion pipeline that ``convert()`` and the Kafka bridge run (``pipeline.py``), so errors and counts mean
what they mean there: every change of a message is converted (a Canal message holds several rows); a message that
cannot be read, and each event the target cannot write (or ``strict=true`` refuses), fails the job, is left out
(``skip``) or goes, with its error and the raw source message, to a dead-letter Parquet directory (``dead-letter``);
and the partitions' ``ConversionStats`` are added up into the job's. A null row, like a record that holds no change (a
tombstone after a delete), is a message skipped.

A format whose messages are Kafka records (``connect-json``, ``paimon-log``, ``debezium-avro``) reads Parquet with
``key`` and ``value`` columns (a Kafka topic's dump), or lines of its file form; it writes Parquet with ``key`` and
``value`` columns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, cast

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import StructType

from ..contract import DecodedUnit, KafkaRecord
from ..core.error_modes import error_mode
from ..envelopes import arrow
from ..errors import CodecError, ConfigurationError, DecodeError
from ..model import ChangeEvent
from ..pipeline import ConversionStats, converted, error_handler
from ..registry import codec_class
from .functions import pipeline_ends

INPUT_KINDS = ("auto", "jsonl", "text", "parquet")
OUTPUT_KINDS = ("parquet", "text")
JOB_ERROR_MODES = ("fail", "skip", "dead-letter")
# What each partition gives: a message written (its key, for a format of Kafka records, and value), a dead letter
# (error), and last its counts (as JSON).
RESULT = pa.struct([("key", pa.binary()), ("value", pa.binary()), ("error", arrow.ERROR), ("counts", pa.string())])
RESULT_TYPE = cast(StructType, from_arrow_type(RESULT))  # Spark's type of an Arrow struct is a StructType
ROWS_PER_BATCH = 10_000


def summary(counts: ConversionStats) -> str:
    """The job's counts in a line: rows read, messages written, errors dead-lettered or left out, and rows that
    hold no change (null rows among them)."""
    left_out = counts.failed - counts.dead_lettered
    return (f"{counts.messages_read:,} rows in: {counts.messages_written:,} written, "
            f"{counts.dead_lettered:,} dead-lettered" + (f", {left_out:,} left out" if left_out else "")
            + (f", {counts.messages_skipped:,} without a change" if counts.messages_skipped else ""))


def read_messages(spark: SparkSession, path: str, kind: str = "auto") -> DataFrame:
    """The messages of ``path`` as a DataFrame with a ``value`` column, and its ``key`` column where Parquet has
    one."""
    if kind not in INPUT_KINDS:
        raise ConfigurationError(f"input kind must be one of {', '.join(INPUT_KINDS)}, not {kind!r}")
    if kind == "auto":
        kind = "parquet" if path.rstrip("/").endswith(".parquet") else "text"
    if kind == "parquet":
        frame = spark.read.parquet(path)
        if "value" not in frame.columns:
            raise ConfigurationError(f"{path}: Parquet input needs a value column; it has {', '.join(frame.columns)}")
        return frame.select(*[name for name in ("key", "value") if name in frame.columns])
    return spark.read.text(path).select(F.col("value").cast("binary").alias("value"))


def convert_files(spark: SparkSession, input_path: str, source: str, output_path: str, target: str, *,
                  input_kind: str = "auto", output_kind: str = "parquet", errors: str = "dead-letter",
                  dead_letter: str | None = None, options: dict[str, Any] | None = None) -> ConversionStats:
    """Convert ``input_path`` from ``source`` to ``target`` into ``output_path``; returns the counts.

    ``errors``: ``dead-letter`` (to ``dead_letter``, which is then required), ``skip`` or ``fail``. ``options`` are
    the options of the formats and of the Spark functions (``strict``, ``schema_registry``, ``framing``, ...).
    """
    error_mode(errors, JOB_ERROR_MODES)
    if output_kind not in OUTPUT_KINDS:
        raise ConfigurationError(f"output kind must be one of {', '.join(OUTPUT_KINDS)}, not {output_kind!r}")
    if errors == "dead-letter" and not dead_letter:
        raise ConfigurationError("errors=dead-letter needs a dead-letter path (--dead-letter)")
    writes_records = codec_class(target).message_type is KafkaRecord
    if writes_records and output_kind == "text":
        raise ConfigurationError(f"{target} writes Kafka records, a key and a value: write them as Parquet "
                                 "(--output-kind parquet), which has a key and a value column")
    # The functions' options are text, as in a SQL map; codec options are JSON there.
    given = tuple((name, value if isinstance(value, str) else json.dumps(value))
                  for name, value in (options or {}).items())
    messages = read_messages(spark, input_path, input_kind)
    # A record format reads a record from its key and value, where the input has a key column.
    keyed = codec_class(source).message_type is KafkaRecord and "key" in messages.columns
    results = messages.select(*(["key"] if keyed else []), "value").mapInArrow(
        _partition_converter(source, target, given, errors, keyed), RESULT_TYPE)
    results = results.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        written = results.where("counts IS NULL AND error IS NULL").select(
            *(["key"] if writes_records else []), "value")
        if output_kind == "text":
            written.select(F.col("value").cast("string")).write.mode("errorifexists").text(output_path)
        else:
            written.write.mode("errorifexists").parquet(output_path)
        if errors == "dead-letter":
            assert dead_letter  # checked above: errors=dead-letter needs a dead-letter path
            results.where("error IS NOT NULL").select("error.*").write.mode("errorifexists").parquet(dead_letter)
        totals = ConversionStats()
        for row in results.where("counts IS NOT NULL").select("counts").collect():
            totals.add(ConversionStats(**json.loads(row.counts)))
    finally:
        results.unpersist()
    return totals


def _partition_converter(source: str, target: str, given: tuple[tuple[str, str], ...], errors: str, keyed: bool
                         ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function that converts one partition's messages, run by ``mapInArrow`` in the Python workers: its
    ``RESULT`` rows, the counts last."""
    def convert_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        read_all, write, refuse = pipeline_ends(source, target, given)
        counts = ConversionStats()
        rows: list[dict[str, Any]] = []

        def dead_letter(error: CodecError) -> None:
            rows.append(arrow.error_row(error))

        on_error = error_handler(dead_letter if errors == "dead-letter" else errors, counts, keep=False)

        def units() -> Iterator[DecodedUnit]:
            position = 0
            for batch in batches:
                for message in batch.to_pylist() if keyed else batch.column("value").to_pylist():
                    yield _unit(position, message, read_all)
                    position += 1

        def encode(event: ChangeEvent) -> list[Any]:
            return [write(event)]

        for written in converted(units(), encode, counts, on_error, refuse=refuse, place=_with_source_message):
            rows.extend({"key": message.key, "value": message.value} if isinstance(message, KafkaRecord)
                        else {"value": message} for message in written.messages)
            if len(rows) >= ROWS_PER_BATCH:
                yield pa.RecordBatch.from_struct_array(pa.array(rows, RESULT))
                rows.clear()
        rows.append({"counts": json.dumps(counts.counts())})
        yield pa.RecordBatch.from_struct_array(pa.array(rows, RESULT))
    return convert_partition


def _unit(position: int, message: Any, read_all: Callable[[Any], list[ChangeEvent]]) -> DecodedUnit:
    """What a row's message decoded to; a null row holds no change. A message that cannot be read is kept raw."""
    if message is None:
        return DecodedUnit(position, (message,), [])
    try:
        return DecodedUnit(position, (message,), read_all(message))
    except DecodeError as error:
        if error.raw is None:
            error.raw = message
        return DecodedUnit(position, (message,), [], error)


def _with_source_message(error: CodecError, unit: DecodedUnit, event: ChangeEvent, event_index: int) -> CodecError:
    """An event's error, keeping the source message it came from as its raw input where it has none: a dead letter
    that can be converted again."""
    if error.raw is None:
        error.raw = unit.messages[0]
    return error
