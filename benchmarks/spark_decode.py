"""cdc_decode against Spark's own from_json on Lindorm, Arcion, Debezium JSON and Aliyun DTS messages, and on
Confluent-framed Avro envelopes, in one run.

For each format, the messages ``sample_streams`` generates are written once to a Parquet file (a binary ``value``
column); every line reads that file and writes to the ``noop`` sink, so the figure is the cost of decoding alone:

* ``from_json`` of ``value`` cast to string, with the format's documented JSON layout as its schema (``LAYOUTS``):
  the floor. It only parses; cdc_decode also canonicalizes (ops, tables, positions, typed values, times in
  microseconds).
* ``cdc_decode('<format>', value)``: inside the JVM where the format has a JVM decoder (``jvm_formats()``), else
  the Arrow UDF; the line says which ("jvm" or "arrow").
* ``cdc_decode_arrow('<format>', value)``: the Arrow UDF, whatever the format.

``avro`` is the changes of the Debezium messages as the Avro envelope in Confluent's wire format, as
``ChangeEventSerializer`` writes them with a registry file of the run, and ``debezium-avro`` the same changes as
Debezium's Avro records (``key`` and ``value``, each framed, read as ``struct(key, value)``): the floor of each is
``from_json`` of the same changes as Debezium's JSON, beside them in the file (``json``), and cdc_decode fetches the
writer schema of each message by its id.

Each time is the median of ``--repeat`` runs after one warm-up run; ``ratio`` is that time over from_json's. The
target: cdc_decode on the JVM at most 1.25 x from_json on two cores (the default master, local[2]), and 1.0 x for the
Avro formats. The last lines give the verdict per format.

    .venv/bin/python benchmarks/spark_decode.py [--messages 1000000] [--master local[2]] [--repeat 3]
                                                [--formats lindorm,arcion,debezium-json,aliyun-json,avro,
                                                           debezium-avro]
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
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from sample_streams import aliyun_messages, arcion_messages, debezium_messages, lindorm_messages

import cdcformats as cf
from cdcformats.contract import KafkaRecord
from cdcformats.kafka import ChangeEventSerializer
from cdcformats.spark import JAR, arrow_name, jvm_formats, register, session

TARGET_RATIO = 1.25
# The Avro formats are read from bytes, not parsed from text: they are held to from_json of the same changes as JSON.
TARGET_RATIOS = {"avro": 1.0, "debezium-avro": 1.0}
ARROW_DECODE = arrow_name("cdc_decode")  # the Arrow UDF, forced

GENERATORS: dict[str, Callable[[int, int], list[bytes]]] = {
    "lindorm": lindorm_messages, "arcion": arcion_messages, "debezium-json": debezium_messages,
    "aliyun-json": aliyun_messages}
# Formats whose messages are the changes of another's, beside them in the file as ``json``: that format's name.
FLOORS = {"avro": "debezium-json", "debezium-avro": "debezium-json"}
# What cdc_decode reads of a format whose messages are Kafka records.
INPUTS = {"debezium-avro": "struct(key, value)"}

# The row images of the generated messages: Arcion sends every value as a string, Debezium as the JSON value it is.
_ARCION_ROW = "struct<o_orderkey: string, o_custkey: string, o_orderstatus: string, o_totalprice: string>"
_DEBEZIUM_ROW = "struct<id: bigint, customer: bigint, amount: double, status: string, gift: boolean, note: string>"

# Each format's documented JSON layout, as a DDL schema covering every field of the generated messages.
LAYOUTS = {
    "lindorm": "op string, table string, ts string, keyOnly string, "
               "data array<struct<type: string, name: string, ts: string, value: string>>",
    "arcion": "tableName struct<namespace: struct<catalog: string, schema: string, hash: bigint>, name: string, "
              "hash: bigint>, opType string, cursor struct<extractorId: int, timestamp: bigint, "
              "extractionTimestamp: bigint, log: string, position: bigint, logSeqNum: bigint, slaveServerId: bigint, "
              f"v: int>, before {_ARCION_ROW}, after {_ARCION_ROW}",
    "debezium-json": f"before {_DEBEZIUM_ROW}, after {_DEBEZIUM_ROW}, source struct<version: string, "
                     "connector: string, name: string, ts_ms: bigint, snapshot: string, db: string, table: string, "
                     "server_id: bigint, file: string, pos: bigint, row: int, thread: bigint>, op string, "
                     "ts_ms bigint, transaction struct<id: string, total_order: bigint, data_collection_order: bigint>",
    "aliyun-json": "schema struct<dataColumn: array<struct<name: string>>, primaryKey: array<string>, "
                   "source: struct<dbType: string, dbName: string, tableName: string>>, "
                   f"payload struct<before: struct<dataColumn: {_DEBEZIUM_ROW}>, "
                   f"after: struct<dataColumn: {_DEBEZIUM_ROW}>, timestamp: struct<eventTime: bigint, "
                   "systemTime: bigint, version: string, name: string, snapshot: string, server_id: bigint, "
                   "file: string, pos: bigint, row: int, thread: bigint>, op: string>",
}


def write_messages(path: Path, generate: Callable[[int, int], list[bytes]], count: int,
                   rewrite: Callable[[bytes], KafkaRecord] | None = None) -> int:
    """Write ``count`` generated messages to ``path``; the number of bytes they hold. With ``rewrite``, the messages
    are the records it makes of the generated ones (``key`` and ``value``), and the generated ones go beside them as
    ``json``."""
    batch = 100_000  # generated and written a batch at a time, so a million messages never sit in memory at once
    total_bytes = 0
    columns = [("value", pa.binary())] + ([("key", pa.binary()), ("json", pa.binary())] if rewrite else [])
    with pq.ParquetWriter(path, pa.schema(columns)) as writer:
        for start in range(0, count, batch):
            messages = generate(min(batch, count - start), start)
            table = {"value": pa.array(messages, pa.binary())}
            if rewrite is not None:
                written = [rewrite(message) for message in messages]
                table = {"value": pa.array([record.value for record in written], pa.binary()),
                         "key": pa.array([record.key for record in written], pa.binary()), "json": table["value"]}
            total_bytes += sum(len(part) for column in ("key", "value") if column in table
                               for part in table[column].to_pylist() if part is not None)
            writer.write_table(pa.table(table))
    return total_bytes


def check_decodes(frame: DataFrame, format: str) -> None:
    """Exit unless both decode paths read every message: a path that turns rows into dead letters is not timed
    on the same work as from_json."""
    for function in ("cdc_decode", ARROW_DECODE):
        call = f"{function}('{format}', {INPUTS.get(format, 'value')})"
        refused = frame.where(f"{call}.error IS NOT NULL").select(F.expr(f"{call}.error.message").alias("message"))
        count = refused.count()
        if count:
            raise SystemExit(f"{call} refused {count:,} of the generated {format} messages, the first with: "
                             f"{refused.first()['message']}")


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


def prepare(format: str, directory: Path, count: int, registry: Path) -> tuple[Path, int]:
    """The Parquet file of ``format``'s messages, and the number of bytes they hold."""
    path = directory / f"{format}.parquet"
    floor = FLOORS.get(format)
    if floor is None:
        return path, write_messages(path, GENERATORS[format], count)
    reader = cf.codec(floor)
    write = records_of(format, registry)
    return path, write_messages(path, GENERATORS[floor], count, lambda message: write(reader.decode_message(message)))


def records_of(format: str, registry: Path) -> Callable[[cf.ChangeEvent], KafkaRecord]:
    """How the changes are written as ``format``'s records, registering their schemas in ``registry``: an envelope
    as ``ChangeEventSerializer`` writes it, without a key, a format of records as its codec writes them."""
    if format in INPUTS:
        return cf.codec(format, schema_registry=str(registry)).encode_event
    serializer = ChangeEventSerializer(format, str(registry), subject_name_strategy="record")
    return lambda event: KafkaRecord(None, serializer(event))


def benchmark(spark: SparkSession, format: str, path: Path, total_bytes: int, count: int, repeat: int,
              on_jvm: bool) -> float:
    """Time the three lines of ``format`` and print them; the ratio of cdc_decode over from_json."""
    floor = FLOORS.get(format)
    frame = spark.read.parquet(str(path))
    check_decodes(frame, format)
    path_of_decode = "jvm" if on_jvm else "arrow"
    lines = {
        f"from_json ({floor or 'documented'} layout)": F.from_json(F.col("json" if floor else "value").cast("string"),
                                                                    LAYOUTS[floor or format]),
        f"cdc_decode('{format}') {path_of_decode}": F.expr(f"cdc_decode('{format}', {INPUTS.get(format, 'value')})"),
        f"{ARROW_DECODE}('{format}') arrow": F.expr(f"{ARROW_DECODE}('{format}', {INPUTS.get(format, 'value')})"),
    }
    print(f"{format} ({total_bytes / count:.0f} bytes per message on average):")
    seconds = timed_lines(frame, lines, count, repeat)
    return seconds[1] / seconds[0]


def timed_lines(frame: DataFrame, lines: dict[str, Column], count: int, repeat: int) -> list[float]:
    """Time each line's column over the ``count`` rows of ``frame`` into the noop sink and print it, with its
    throughput and its ratio to the first line's time (the floor); the times, in order."""
    seconds = [timed(to_noop(frame.select(column.alias("result"))), repeat) for column in lines.values()]
    width = max(map(len, lines))
    for label, taken in zip(lines, seconds):
        print(f"  {label:<{width}} {taken:7.2f} s  {count / taken:>12,.0f} messages/s  ratio {taken / seconds[0]:5.2f}",
              flush=True)
    return seconds


def verdict(format: str, ratio: float, on_jvm: bool) -> str:
    if not on_jvm:
        return f"no JVM decoder: cdc_decode runs as the Arrow UDF, {ratio:.2f} x from_json"
    target = TARGET_RATIOS.get(format, TARGET_RATIO)
    met = "meets" if ratio <= target else "misses"
    return f"cdc_decode on the JVM is {ratio:.2f} x from_json: {met} the target of {target}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages per format")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    known = [*GENERATORS, *FLOORS]
    parser.add_argument("--formats", default=",".join(known), help="comma-separated, of " + ", ".join(known))
    arguments = parser.parse_args()
    formats = arguments.formats.split(",")
    unknown = [name for name in formats if name not in known]
    if unknown:
        parser.error(f"no generated messages for {', '.join(unknown)}: choose among {', '.join(known)}")
    spark = session(arguments.master, "cdcformats-benchmark")
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as directory:
        registry = Path(directory) / "registry.sqlite"  # the envelopes' schemas, for this run alone
        # Every file is written first: the registry then holds the schemas the functions read the envelopes with.
        files = {format: prepare(format, Path(directory), arguments.messages, registry) for format in formats}
        register(spark, schema_registry=str(registry))
        # register() makes cdc_decode the JVM function only where the jar was built; without it every call is Arrow.
        on_jvm = set(jvm_formats(schema_registry=str(registry))) if JAR.exists() else set()
        print(f"{arguments.messages:,} messages per format on {arguments.master}, median of {arguments.repeat} "
              f"after a warm-up; ratio: time over from_json's", flush=True)
        ratios = {}
        for format in formats:
            ratios[format] = benchmark(spark, format, *files[format], arguments.messages, arguments.repeat,
                                       format in on_jvm)
    spark.stop()
    targets = ", ".join(f"{target} for {format}" for format, target in TARGET_RATIOS.items())
    print(f"target: cdc_decode on the JVM at most {TARGET_RATIO} x from_json ({targets})")
    for format, ratio in ratios.items():
        print(f"  {format:<14} {verdict(format, ratio, format in on_jvm)}")


if __name__ == "__main__":
    main()
