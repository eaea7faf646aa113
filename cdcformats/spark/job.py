"""``cdcformats spark-convert``: a batch job that converts files of change messages with Spark.

Input is JSON lines or text (one message per line) or Parquet with a ``value`` column (binary or string); output is
Parquet with a binary ``value`` column, or text lines with ``output_kind="text"`` for the JSON formats. Messages that
cannot be converted go, with their error and raw bytes, to a dead-letter Parquet directory (or fail the job, or are
dropped, by ``errors``), and the counts add up: rows in = written + dead letters (+ null input rows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..errors import ConfigurationError

INPUT_KINDS = ("auto", "jsonl", "text", "parquet")
OUTPUT_KINDS = ("parquet", "text")


@dataclass(frozen=True)
class JobCounts:
    rows_in: int
    written: int
    dead_letters: int
    null_input: int

    def __str__(self) -> str:
        return (f"{self.rows_in:,} rows in: {self.written:,} written, {self.dead_letters:,} dead-lettered"
                + (f", {self.null_input:,} null" if self.null_input else ""))


def read_messages(spark: SparkSession, path: str, kind: str = "auto") -> DataFrame:
    """The messages of ``path`` as a DataFrame with one ``value`` column."""
    if kind not in INPUT_KINDS:
        raise ConfigurationError(f"input kind must be one of {', '.join(INPUT_KINDS)}, not {kind!r}")
    if kind == "auto":
        kind = "parquet" if path.rstrip("/").endswith(".parquet") else "text"
    if kind == "parquet":
        frame = spark.read.parquet(path)
        if "value" not in frame.columns:
            raise ConfigurationError(f"{path}: Parquet input needs a value column; it has {', '.join(frame.columns)}")
        return frame.select("value")
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
    call_options = {**(options or {}), "errors": "fail" if errors == "fail" else "dead-letter"}
    option_map = F.create_map(*[F.lit(part) for name, value in call_options.items()
                                for part in (name, value if isinstance(value, str) else json.dumps(value))])
    messages = read_messages(spark, input_path, input_kind)
    results = messages.select(F.col("value").isNull().alias("null_input"), F.call_function(
        "cdc_convert_or_error", F.col("value"), F.lit(source), F.lit(target), option_map).alias("result"))
    results = results.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        written = results.where("result.value IS NOT NULL").select("result.value")
        if output_kind == "text":
            written.select(F.col("value").cast("string")).write.mode("errorifexists").text(output_path)
        else:
            written.write.mode("errorifexists").parquet(output_path)
        if errors == "dead-letter":
            assert dead_letter  # checked above: errors=dead-letter needs a dead-letter path
            results.where("result.error IS NOT NULL").select("result.error.*").write.mode("errorifexists").parquet(
                dead_letter)
        totals = results.agg(F.count(F.lit(1)).alias("rows"),
                             F.count_if(F.col("result.value").isNotNull()).alias("written"),
                             F.count_if(F.col("result.error").isNotNull()).alias("failed"),
                             F.count_if(F.col("null_input")).alias("null_input")).collect()[0]
    finally:
        results.unpersist()
    return JobCounts(totals.rows, totals.written, totals.failed, totals.null_input)
