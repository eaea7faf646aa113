"""``cdcformats spark-convert``: a batch job that converts files of change messages with Spark.

Input is JSON lines or text (one message per line) or Parquet with a ``value`` column (binary or string); output is
Parquet with a binary ``value`` column, or text lines with ``output_kind="text"`` for the JSON formats. Messages that
cannot be converted go, with their error and raw bytes, to a dead-letter Parquet directory (or fail the job, or are
dropped, by ``errors``), and the counts add up: rows in = written + dead letters + records that hold no change (a
tombstone) + null input rows.

A format whose messages are Kafka records (``connect-json``, ``paimon-log``, ``debezium-avro``) reads Parquet with
``key`` and ``value`` columns (a Kafka topic's dump), or lines of its file form; it writes Parquet with ``key`` and
``value`` columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..contract import KafkaRecord
from ..errors import ConfigurationError
from ..registry import codec_class

INPUT_KINDS = ("auto", "jsonl", "text", "parquet")
OUTPUT_KINDS = ("parquet", "text")


@dataclass(frozen=True)
class JobCounts:
    rows_in: int
    written: int
    dead_letters: int
    null_input: int
    no_change: int = 0  # records that hold no change: Debezium's tombstones after a delete

    def __str__(self) -> str:
        return (f"{self.rows_in:,} rows in: {self.written:,} written, {self.dead_letters:,} dead-lettered"
                + (f", {self.no_change:,} without a change" if self.no_change else "")
                + (f", {self.null_input:,} null" if self.null_input else ""))


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
                  dead_letter: str | None = None, options: dict[str, Any] | None = None) -> JobCounts:
    """Convert ``input_path`` from ``source`` to ``target`` into ``output_path``; returns the counts.

    Expects the ``cdc_*`` functions registered in ``spark``. ``errors``: ``dead-letter`` (to ``dead_letter``, which
    is then required), ``null`` (dropped, counted) or ``fail``.
    """
    if output_kind not in OUTPUT_KINDS:
        raise ConfigurationError(f"output kind must be one of {', '.join(OUTPUT_KINDS)}, not {output_kind!r}")
    if errors == "dead-letter" and not dead_letter:
        raise ConfigurationError("errors=dead-letter needs a dead-letter path (--dead-letter)")
    writes_records = codec_class(target).message_type is KafkaRecord
    if writes_records and output_kind == "text":
        raise ConfigurationError(f"{target} writes Kafka records, a key and a value: write them as Parquet "
                                 "(--output-kind parquet), which has a key and a value column")
    call_options = {**(options or {}), "errors": "fail" if errors == "fail" else "dead-letter"}
    option_map = F.create_map(*[F.lit(part) for name, value in call_options.items()
                                for part in (name, value if isinstance(value, str) else json.dumps(value))])
    messages = read_messages(spark, input_path, input_kind)
    # A record format reads a record from its key and value, where the input has a key column.
    message = F.struct("key", "value") if codec_class(source).message_type is KafkaRecord and \
        "key" in messages.columns else F.col("value")
    results = messages.select(message.isNull().alias("null_input"), F.call_function(
        "cdc_convert_or_error", message, F.lit(source), F.lit(target), option_map).alias("result"))
    results = results.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        written = results.where("result IS NOT NULL AND result.error IS NULL").select(
            *(["result.key"] if writes_records else []), "result.value")
        if output_kind == "text":
            written.select(F.col("value").cast("string")).write.mode("errorifexists").text(output_path)
        else:
            written.write.mode("errorifexists").parquet(output_path)
        if errors == "dead-letter":
            assert dead_letter  # checked above: errors=dead-letter needs a dead-letter path
            results.where("result.error IS NOT NULL").select("result.error.*").write.mode("errorifexists").parquet(
                dead_letter)
        totals = results.agg(F.count(F.lit(1)).alias("rows"),
                             F.count_if(F.col("result").isNotNull() & F.col("result.error").isNull()).alias("written"),
                             F.count_if(F.col("result.error").isNotNull()).alias("failed"),
                             F.count_if(F.col("null_input")).alias("null_input"),
                             F.count_if(F.col("result").isNull() & ~F.col("null_input")).alias("no_change")
                             ).collect()[0]
    finally:
        results.unpersist()
    return JobCounts(totals.rows, totals.written, totals.failed, totals.null_input, totals.no_change)
