"""Helpers of the Kafka tests (test_kafka.py on librdkafka's mock cluster, test_kafka_broker.py on a real broker):
reading a topic to its end, Lindorm source messages, the bridge as a command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, DeserializingConsumer, KafkaError, TopicPartition
from confluent_kafka.error import ConsumeError


def consume_all(bootstrap: str, topic: str, value_deserializer: Any = None, isolation: str = "read_uncommitted"
                ) -> list:
    """Every message of ``topic`` as it stands: each partition read from its start to its end. Assigned, not
    subscribed, so the read neither waits for a group to form nor for a quiet spell to guess the topic's end; the end
    is the partition's EOF, which a ``read_committed`` reader also reaches (its last offset is a transaction marker,
    which no consumer is given)."""
    config = {"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4()}", "enable.auto.commit": False,
              "isolation.level": isolation, "enable.partition.eof": True, "log_level": 0}
    if value_deserializer is not None:
        consumer: Any = DeserializingConsumer({**config, "value.deserializer": value_deserializer})
    else:
        consumer = Consumer(config)
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {partition: consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
            for partition in partitions}
    unread = {partition for partition, end in ends.items() if end > 0}
    consumer.assign([TopicPartition(topic, partition, 0) for partition in unread])
    messages = []
    deadline = time.monotonic() + 60
    while unread:
        assert time.monotonic() < deadline, f"{topic}: partitions {sorted(unread)} not read to their end in 60 s"
        try:
            message = consumer.poll(0.5)
        except ConsumeError as error:  # a DeserializingConsumer raises what a Consumer returns
            message = error.kafka_message
        if message is None:
            continue
        if message.error() is not None and message.error().code() == KafkaError._PARTITION_EOF:
            unread.discard(message.partition())
            continue
        assert message.error() is None, message.error()
        messages.append(message)
    consumer.close()
    return messages


def lindorm_message(n: int) -> bytes:
    """A Lindorm change of row o-<n % 50>, numbered n: every 7th a delete."""
    return json.dumps({"op": "Put" if n % 7 else "DeleteFamily", "table": "orders", "ts": str(1700000000000 + n),
                       "keyOnly": "false", "data": [{"type": "VARCHAR", "name": "id", "value": f"o-{n % 50}"},
                                                    {"type": "BIGINT", "name": "n", "value": str(n)}]}).encode()


def topics_of_a_run() -> dict[str, str]:
    """Topics and a group of this test's own, so that tests share a broker without reading each other's."""
    run = uuid.uuid4().hex[:8]
    return {"source": f"in-{run}", "target": f"out-{run}", "dead": f"dead-{run}", "group": f"bridge-{run}"}


def run_bridge(bootstrap: str, registry: Path, topics: dict[str, str], *extra: str) -> subprocess.Popen:
    """``cdcformats bridge`` from lindorm to avro with a dead-letter topic, a progress line after every batch."""
    return subprocess.Popen(
        [sys.executable, "-m", "cdcformats.cli", "bridge", "--source-topic", topics["source"], "--source-format",
         "lindorm", "--target-topic", topics["target"], "--target-format", "avro", "--bootstrap-servers", bootstrap,
         "--group-id", topics["group"], "--dead-letter-topic", topics["dead"], "--schema-registry", str(registry),
         "--source-option", 'key_columns=["id"]', "--progress-interval", "0", *extra],
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
