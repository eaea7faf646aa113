"""cdc_decode('lindorm', value) against Spark's own from_json on the same Lindorm messages, in one run.

Both read the same Parquet file (a binary ``value`` column) and write to the ``noop`` sink, so the figure is the cost
of decoding alone. from_json only parses, with the documented layout as its schema; cdc_decode also canonicalizes
(ops, versions as numbers, values typed by their column type, commit time in microseconds). ``ratio`` is our time
over from_json's (the target is at most 1.25 on two cores).

A third line separates what is ours from what any Python function returning the event costs: an ``arrow_udf`` that
decodes nothing and returns events decoded beforehand (the same struct, the same size) measures what Spark spends
moving the batches to Python and turning the returned Arrow struct back into rows.

    .venv/bin/python benchmarks/spark_decode.py [--messages 1000000] [--master local[2]] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from sample_streams import lindorm_messages

from cdcformats.registry import codec
from cdcformats.spark import EVENT_TYPE, register, session

LAYOUT_DDL = ("op string, table string, ts string, keyOnly string, "
              "data array<struct<type: string, name: string, ts: string, value: string>>")


def write_messages(path: Path, count: int) -> None:
    batch = 100_000
    with pq.ParquetWriter(path, pa.schema([("value", pa.binary())])) as writer:
        for start in range(0, count, batch):
            messages = lindorm_messages(min(batch, count - start), start)
            writer.write_table(pa.table({"value": pa.array(messages, pa.binary())}))


def timed(run: Callable[[], None], repeat: int) -> float:
    """The median wall time of ``repeat`` runs, after one warm-up run."""
    run()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def to_noop(frame: DataFrame) -> Callable[[], None]:
    return lambda: frame.write.format("noop").mode("overwrite").save()


def transfer_floor(frame: DataFrame) -> DataFrame:
    """The events of the first messages, decoded once beforehand and returned for every batch."""
    from pyspark.sql.functions import arrow_udf

    lindorm = codec("lindorm")
    decoded = lindorm.decode_arrow(pa.array(lindorm_messages(10_000), pa.binary()))[0]

    def already_decoded(values: pa.Array) -> pa.Array:
        repeats = -(-len(values) // len(decoded))
        return pa.concat_arrays([decoded] * repeats).slice(0, len(values))

    return frame.select(arrow_udf(already_decoded, EVENT_TYPE)("value").alias("event"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    spark = session(arguments.master, "cdcformats-benchmark")
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "lindorm.parquet"
        write_messages(path, arguments.messages)
        frame = spark.read.parquet(str(path))
        decoded = frame.select(F.expr("cdc_decode('lindorm', value)").alias("event"))
        errors = decoded.where("event.error IS NOT NULL").count()
        if errors:
            raise SystemExit(f"cdc_decode refused {errors} of the generated messages")
        native = timed(to_noop(frame.select(F.from_json(F.col("value").cast("string"), LAYOUT_DDL).alias("m"))),
                       arguments.repeat)
        ours = timed(to_noop(decoded), arguments.repeat)
        floor = timed(to_noop(transfer_floor(frame)), arguments.repeat)
    print(f"{arguments.messages:,} Lindorm messages on {arguments.master}, median of {arguments.repeat}:")
    print(f"  from_json                        {native:7.2f} s  {arguments.messages / native:>12,.0f} messages/s")
    print(f"  cdc_decode('lindorm')            {ours:7.2f} s  {arguments.messages / ours:>12,.0f} messages/s")
    print(f"  returning decoded events only    {floor:7.2f} s  {arguments.messages / floor:>12,.0f} messages/s")
    print(f"  ratio ours/from_json             {ours / native:7.2f}")
    print(f"  ratio returning-only/from_json   {floor / native:7.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
