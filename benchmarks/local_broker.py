"""What the local Kafka broker (cdcformats.kafka.broker) costs: seconds from launching Java until it answers (the
storage format included; the jars already fetched), its resident memory (RSS of the Java process) once started and
after a load, and seconds to stop. The load is what the tests ask of it: 20,000 messages of 200 bytes produced in
transactions of 500, then read back by a read_committed consumer group. Each figure is the median of ``--runs``
brokers started one after another.

    .venv/bin/python benchmarks/local_broker.py [--runs 3] [--heap 256m]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from confluent_kafka import Consumer, Producer

from cdcformats.kafka import broker as local
from cdcformats.kafka.broker import fetch_jars, start_broker

MESSAGES = 20_000
TRANSACTION = 500


def load(bootstrap: str) -> None:
    topic = f"load-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic, "linger.ms": 5})
    producer.init_transactions(30)
    for start in range(0, MESSAGES, TRANSACTION):
        producer.begin_transaction()
        for n in range(start, start + TRANSACTION):
            producer.produce(topic, key=str(n % 50).encode(), value=b"x" * 200)
        producer.commit_transaction(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    read = 0
    deadline = time.monotonic() + 60
    while read < MESSAGES and time.monotonic() < deadline:
        read += sum(message.error() is None for message in consumer.consume(1000, timeout=0.5))
    consumer.close()
    assert read == MESSAGES, f"read {read} of {MESSAGES}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--heap", default=local.DEFAULT_HEAP)
    arguments = parser.parse_args()
    fetch_jars()  # a cold cache is not part of the start
    figures: dict[str, list[float]] = {"start s": [], "RSS started MiB": [], "RSS loaded MiB": [], "load s": [],
                                       "stop s": []}
    for _ in range(arguments.runs):
        broker = start_broker(heap=arguments.heap)
        try:
            figures["start s"].append(broker.started_seconds)
            figures["RSS started MiB"].append(broker.resident_bytes() / 2**20)
            began = time.monotonic()
            load(broker.bootstrap_servers)
            figures["load s"].append(time.monotonic() - began)
            figures["RSS loaded MiB"].append(broker.resident_bytes() / 2**20)
        finally:
            began = time.monotonic()
            code = broker.stop()
            figures["stop s"].append(time.monotonic() - began)
            assert code in (0, 143), f"the broker exited with {code}"
    print(f"Apache Kafka {local.KAFKA_VERSION}, -Xmx{arguments.heap} {' '.join(local.JVM_OPTIONS)}, "
          f"median of {arguments.runs}:")
    for name, values in figures.items():
        print(f"  {name:16} {statistics.median(values):7.2f}   (runs: {', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
