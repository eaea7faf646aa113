"""A Lindorm topic applied to a Delta table by ``stream_to_table``, next to a plain ``from_json`` stream written to a
Delta table, in one run, on a local Kafka broker (``cdcformats.kafka.broker``).

The topic holds ``cdcformats.samples.lindorm_orders`` (four changes per order: written, paid, shipped or a column or
version deleted, delivered or the row deleted). Both queries read it from the earliest offset with Spark's Kafka
source, ``--batch`` records a micro-batch, until it is read (``availableNow``):

* the floor: ``from_json`` of each value with Lindorm's documented JSON layout, its fields appended to a Delta table
  with Delta's own streaming sink: it parses and writes, and applies nothing;
* ``stream_to_table``: ``cdc_decode`` in the JVM, then per batch its changes merged per key and one Delta MERGE that
  upserts, deletes rows and nulls deleted columns, under Delta's transaction id.

Each figure is events per second over the query's whole run (from start to its end, every batch's planning
included), the median of ``--repeat`` runs, each into a fresh table and checkpoint; ``ratio`` is stream_to_table's
time over the floor's.

    .venv/bin/python benchmarks/streaming.py [--messages 200000] [--batch 50000] [--master local[2]] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdcformats import samples
from cdcformats.kafka.broker import local_broker
from cdcformats.spark.connectors import streaming_session
from cdcformats.spark.streaming import stream_to_table

LINDORM_LAYOUT = ("op string, table string, ts string, keyOnly string, "
                  "data array<struct<type: string, name: string, ts: string, value: string>>")


def produce(bootstrap: str, topic: str, messages: list[bytes]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until the topic is made: its handle does the work
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000})
    for index, message in enumerate(messages):
        # Keyed by order, as a producer keys its topic: each order's changes stay in one partition, in order.
        producer.produce(topic, key=message[message.index(b'"order-'):][:15], value=message)
        if index % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def plain_from_json(spark: SparkSession, bootstrap: str, topic: str, batch: int, root: Path) -> None:
    records = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
               .option("subscribe", topic).option("startingOffsets", "earliest")
               .option("maxOffsetsPerTrigger", batch).load())
    rows = records.select(F.from_json(F.col("value").cast("string"), LINDORM_LAYOUT).alias("m")).select("m.*")
    (rows.writeStream.format("delta").option("checkpointLocation", str(root / "checkpoint"))
     .trigger(availableNow=True).start(str(root / "table")).awaitTermination())


def applied(spark: SparkSession, bootstrap: str, topic: str, batch: int, root: Path) -> None:
    stream = stream_to_table(spark, "lindorm", bootstrap_servers=bootstrap, topic=topic, table=str(root / "table"),
                             checkpoint=str(root / "checkpoint"), options={"key_columns": ["id"]},
                             max_records_per_batch=batch, available_now=True)
    stream.query.awaitTermination()
    totals = stream.totals()
    assert totals.adds_up() and totals.dead_lettered == 0, totals


def timed(run: Callable[[Path], None], directory: Path) -> float:
    root = directory / uuid.uuid4().hex
    started = time.perf_counter()
    run(root)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=50_000, help="records per micro-batch")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    messages = samples.lindorm_orders(arguments.messages)
    with local_broker() as broker, tempfile.TemporaryDirectory(prefix="cdcformats-streaming-") as directory:
        print(f"broker {broker.bootstrap_servers} started in {broker.started_seconds:.1f} s", flush=True)
        topic = f"orders-{uuid.uuid4().hex[:8]}"
        produce(broker.bootstrap_servers, topic, messages)
        spark = streaming_session(arguments.master, "cdcformats streaming benchmark")
        spark.sparkContext.setLogLevel("ERROR")
        lines = {"from_json -> Delta append (floor)": plain_from_json, "stream_to_table -> Delta MERGE": applied}
        times: dict[str, list[float]] = {name: [] for name in lines}
        timed(lambda root: plain_from_json(spark, broker.bootstrap_servers, topic, arguments.batch, root),
              Path(directory))  # warm-up: the JVM compiles Spark's, Kafka's and Delta's code
        for _ in range(arguments.repeat):
            for name, run in lines.items():
                times[name].append(timed(lambda root, run=run: run(spark, broker.bootstrap_servers, topic,
                                                                    arguments.batch, root), Path(directory)))
        spark.stop()
    print(f"{arguments.messages:,} Lindorm messages, {arguments.batch:,} a micro-batch, {arguments.master}, median of "
          f"{arguments.repeat}")
    floor = statistics.median(times["from_json -> Delta append (floor)"])
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{name:38} {arguments.messages / median:>10,.0f} events/s  {median:7.1f} s  ratio {median / floor:5.2f}"
              f"  (runs: {', '.join(f'{s:.1f}' for s in seconds)})")


if __name__ == "__main__":
    main()
