"""cdc_convert against Spark parsing and writing the same rows itself, for Lindorm, Arcion and Debezium JSON sources
and Debezium JSON, Avro and Canal JSON targets, in one run.

For each source, the messages ``sample_streams`` generates are written once to a Parquet file (a binary ``value``
column); every line reads that file and writes to the ``noop`` sink, so the figure is the cost of converting alone:

* ``to_json(from_json(value, layout))``, with the source's documented JSON layout (``spark_decode.LAYOUTS``): the
  floor, which parses and writes the same rows inside the JVM. cdc_convert also canonicalizes and writes the target's
  own form.
* ``cdc_convert(value, '<source>', '<target>')``: inside the JVM where the source has a JVM decoder and the target a
  JVM encoder (``jvm_formats()``, ``jvm_encoders()``), else the Arrow UDF; the line says which ("jvm" or "arrow").
* ``cdc_convert_arrow(value, '<source>', '<target>')``: the Arrow UDF, whatever the formats.

Each time is the median of ``--repeat`` runs after one warm-up run; ``ratio`` is that time over the floor's. The
target: every pair on the JVM at most 1.25 x the floor on two cores (the default master, local[2]). The last lines
give the verdict per pair.

    .venv/bin/python benchmarks/spark_convert.py [--messages 1000000] [--master local[2]] [--repeat 3]
                                                 [--sources lindorm,arcion,debezium-json]
                                                 [--targets debezium-json,avro,canal-json]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from spark_decode import GENERATORS, LAYOUTS, timed_lines, write_messages

from cdcformats.spark import JAR, arrow_name, jvm_encoders, jvm_formats, register, session

TARGET_RATIO = 1.25
SOURCES = ("lindorm", "arcion", "debezium-json")
TARGETS = ("debezium-json", "avro", "canal-json")
# Registered as the defaults of the functions for a source: Lindorm's messages name no key, and a column delete
# without one names no row in most targets. Given to register, not in a call's options map, it keeps the JVM path.
SOURCE_OPTIONS = {"lindorm": {"key_columns": ["id"]}}
ARROW_CONVERT = arrow_name("cdc_convert_or_error")


def check_converts(frame: DataFrame, source: str, target: str) -> None:
    """Exit unless the Arrow path writes every message: a conversion that turns rows into errors is not timed on the
    same work as the floor."""
    written = F.expr(f"{ARROW_CONVERT}(value, '{source}', '{target}')")
    refused = frame.select(written.alias("written")).where("written.error IS NOT NULL")
    count = refused.count()
    if count:
        raise SystemExit(f"{source} -> {target} refused {count:,} of the generated messages, the first with: "
                         f"{refused.first()['written']['error']['message']}")


def benchmark(frame: DataFrame, count: int, source: str, target: str, repeat: int, on_jvm: bool
              ) -> tuple[float, float]:
    """Time the three lines of one pair over the ``count`` messages of ``frame`` and print them; the ratios of
    cdc_convert and of the Arrow UDF over the floor."""
    check_converts(frame, source, target)
    path = "jvm" if on_jvm else "arrow"
    lines = {
        "to_json(from_json(value))": F.to_json(F.from_json(F.col("value").cast("string"), LAYOUTS[source])),
        f"cdc_convert {path}": F.expr(f"cdc_convert(value, '{source}', '{target}')"),
        "cdc_convert_arrow": F.expr(f"{arrow_name('cdc_convert')}(value, '{source}', '{target}')"),
    }
    print(f"{source} -> {target}:")
    seconds = timed_lines(frame, lines, count, repeat)
    return seconds[1] / seconds[0], seconds[2] / seconds[0]


def verdict(ratio: float, on_jvm: bool) -> str:
    if not on_jvm:
        return f"not on the JVM: cdc_convert runs as the Arrow UDF, {ratio:.2f} x the floor"
    met = "meets" if ratio <= TARGET_RATIO else "misses"
    return f"cdc_convert on the JVM is {ratio:.2f} x the floor: {met} the target"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages per source")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sources", default=",".join(SOURCES), help="comma-separated, of " + ", ".join(SOURCES))
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated formats")
    arguments = parser.parse_args()
    sources, targets = arguments.sources.split(","), arguments.targets.split(",")
    unknown = [name for name in sources if name not in SOURCES]
    if unknown:
        parser.error(f"no generated messages for {', '.join(unknown)}: choose among {', '.join(SOURCES)}")
    spark = session(arguments.master, "cdcformats-benchmark")
    spark.sparkContext.setLogLevel("ERROR")
    print(f"{arguments.messages:,} messages per source on {arguments.master}, median of {arguments.repeat} after a "
          f"warm-up; ratio: time over the floor's", flush=True)
    ratios = {}
    with tempfile.TemporaryDirectory() as directory:
        for source in sources:
            path = Path(directory) / f"{source}.parquet"
            write_messages(path, GENERATORS[source], arguments.messages)
            frame = spark.read.parquet(str(path))
            options = SOURCE_OPTIONS.get(source, {})
            register(spark, **options)
            # The functions are the JVM ones only where the jar was built; without it every call is Arrow.
            decoders, encoders = (set(jvm_formats(**options)), set(jvm_encoders(**options))) if JAR.exists() \
                else (set(), set())
            for target in targets:
                on_jvm = source in decoders and target in encoders
                ratios[source, target] = (
                    *benchmark(frame, arguments.messages, source, target, arguments.repeat, on_jvm), on_jvm)
    spark.stop()
    print(f"target: cdc_convert on the JVM at most {TARGET_RATIO} x the floor")
    for (source, target), (ratio, arrow_ratio, on_jvm) in ratios.items():
        print(f"  {source + ' -> ' + target:<30} {verdict(ratio, on_jvm)} (the Arrow UDF: {arrow_ratio:.2f} x)")


if __name__ == "__main__":
    main()
