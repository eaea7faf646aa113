"""A topic-to-topic converter with at-least-once delivery.

It consumes a batch, converts each message, produces the results, waits until the broker has acknowledged every one of
them, and only then commits the consumed offsets. A crash at any point therefore replays, never skips: after a restart
every input message ends up in the target topic or in the dead-letter topic, and a replayed message converts to the same
bytes, with the same event id. Keys are kept as they are, and one producer writes in consumption order with idempotence
on, so the order per key is kept. Formats whose record key is part of the format (``connect-json``, ``paimon-log``) are
read from the key and value together and write their own keys; their tombstones are deletes, converted like any other
change. Every change of a message is converted (a Canal message holds several rows); a message that cannot be converted
goes to the dead-letter topic unchanged, with the error and its origin in headers (as the Tablestore sink connector's
``runtime.error.mode=kafka`` does).
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..contract import KafkaRecord
from ..errors import CdcFormatsError, CodecError
from ..model import Op
from ..registry import codec
from .serdes import ChangeEventDeserializer, ChangeEventSerializer, registry_options

ERROR_HEADER = "cdcformats.error"
ORIGIN_HEADER = "cdcformats.origin"
# librdkafka's own log lines (a refused connection every 50 ms while a broker is down) go to this logger, which
# shows them only where logging is configured: the bridge reports what stops it as one error.
CLIENT_LOG = logging.getLogger("cdcformats.kafka.client")
CLIENT_LOG.addHandler(logging.NullHandler())
# How long the bridge waits for the brokers to answer at start when it has no idle timeout to go by.
CONNECT_TIMEOUT = 30.0


class BridgeError(CdcFormatsError):
    """The brokers cannot be reached, refused what was produced, or reported a fatal error."""


@dataclass
class BridgeCounts:
    """``produced`` counts the records of converted changes (a delete that the target writes as a tombstone among
    them); ``tombstones`` the tombstones passed on from the source or added after deletes (``--tombstones``);
    ``skipped`` the source's tombstones that a target with keys of its own does not pass on, since their key is not
    in its form (the delete before them was converted)."""

    consumed: int = 0
    produced: int = 0
    tombstones: int = 0
    skipped: int = 0
    dead_lettered: int = 0
    committed_batches: int = 0

    def line(self) -> str:
        return (f"consumed {self.consumed}  produced {self.produced}  tombstones {self.tombstones}  "
                f"skipped {self.skipped}  dead-lettered {self.dead_lettered}")


@dataclass
class Bridge:
    source_topic: str
    source_format: str
    target_topic: str
    target_format: str
    bootstrap_servers: str
    group_id: str = "cdcformats-bridge"
    dead_letter_topic: str | None = None
    schema_registry: Any = None
    source_options: dict[str, Any] = field(default_factory=dict)
    target_options: dict[str, Any] = field(default_factory=dict)
    tombstones: bool = False  # a tombstone after each converted delete, as Debezium and Kafka Connect sinks expect
    batch_size: int = 500
    idle_timeout: float | None = None  # stop after this many seconds without input (None: run until stopped)
    progress: TextIO | None = None
    progress_interval: float = 1.0  # seconds between progress lines
    counts: BridgeCounts = field(default_factory=BridgeCounts)

    def __post_init__(self) -> None:
        self.source_options = registry_options(self.source_format, self.schema_registry, self.source_options)
        self.target_options = registry_options(self.target_format, self.schema_registry, self.target_options)
        self.source_codec = codec(self.source_format, **self.source_options)
        self.target_codec = codec(self.target_format, **self.target_options)
        if self.source_codec.message_type is not KafkaRecord:
            self.decode = ChangeEventDeserializer(self.source_format, self.schema_registry, **self.source_options)
        if self.target_codec.message_type is not KafkaRecord:
            self.encode = ChangeEventSerializer(self.target_format, self.schema_registry, **self.target_options)
        self._stopping = False

    def stop(self, *_: Any) -> None:
        """Finish the batch in flight, commit it, and return from ``run`` (the SIGINT/SIGTERM handler)."""
        self._stopping = True

    def run(self) -> BridgeCounts:
        from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

        fatal: list[Any] = []

        def client_error(error: Any) -> None:  # librdkafka retries the others (a broker down) on its own
            if error.fatal():
                fatal.append(error)

        # A short session lets a restarted bridge take over quickly from one that was killed.
        consumer = Consumer({"bootstrap.servers": self.bootstrap_servers, "group.id": self.group_id,
                             "enable.auto.commit": False, "auto.offset.reset": "earliest",
                             "isolation.level": "read_committed", "session.timeout.ms": 10000,
                             "error_cb": client_error, "logger": CLIENT_LOG})
        # Without an answer from the brokers the consumer would wait to join its group for ever, never idle.
        timeout = self.idle_timeout if self.idle_timeout is not None else CONNECT_TIMEOUT
        try:
            consumer.list_topics(timeout=timeout)
        except KafkaException as error:
            consumer.close()
            raise BridgeError(f"no answer from the Kafka brokers at {self.bootstrap_servers} within {timeout:g} s "
                              f"({error.args[0].str()}): check the bootstrap servers (-b, --bootstrap-server)"
                              ) from None
        producer = Producer({"bootstrap.servers": self.bootstrap_servers, "enable.idempotence": True, "acks": "all",
                             "linger.ms": 5, "error_cb": client_error, "logger": CLIENT_LOG})
        failures: list[Any] = []

        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                failures.append(error)

        consumer.subscribe([self.source_topic])
        last_input = time.monotonic()
        last_report = 0.0
        last_line = ""
        try:
            while not self._stopping:
                batch = consumer.consume(num_messages=self.batch_size, timeout=0.5)
                if fatal:
                    raise BridgeError(f"Kafka client: {fatal[0].str()}")
                messages = [message for message in batch if message.error() is None]
                if messages:
                    last_input = time.monotonic()
                    for message in messages:
                        self._convert(message, producer, delivered)
                    producer.flush()
                    if failures:
                        raise BridgeError(f"the broker refused {len(failures)} message(s), first: {failures[0]}; "
                                           "nothing of this batch was committed, so a restart replays it")
                    consumer.commit(offsets=[TopicPartition(message.topic(), message.partition(), message.offset() + 1)
                                             for message in _last_per_partition(messages)], asynchronous=False)
                    self.counts.committed_batches += 1
                elif not consumer.assignment():  # still joining the group: not idle yet
                    last_input = time.monotonic()
                elif self.idle_timeout is not None and time.monotonic() - last_input > self.idle_timeout:
                    break
                if self.progress is not None and time.monotonic() - last_report >= self.progress_interval and (
                        self.counts.line() != last_line):
                    last_line = self.counts.line()
                    print(last_line, file=self.progress, flush=True)
                    last_report = time.monotonic()
        finally:
            producer.flush()
            consumer.close()
        if self.progress is not None:
            print(self.counts.line(), file=self.progress, flush=True)
        return self.counts

    def _convert(self, message: Any, producer: Any, delivered: Callable[[Any, Any], None]) -> None:
        from confluent_kafka.serialization import MessageField, SerializationContext

        context = SerializationContext(self.target_topic, MessageField.VALUE)
        self.counts.consumed += 1
        key = message.key()
        value = message.value()
        keyed_source = self.source_codec.message_type is KafkaRecord
        if value is None and not keyed_source:  # a tombstone deletes the key downstream too, in the source's key form
            if self.target_codec.message_type is KafkaRecord:
                self.counts.skipped += 1
            else:
                producer.produce(self.target_topic, key=key, value=None, on_delivery=delivered)
                self.counts.tombstones += 1
            return
        try:
            if keyed_source:  # the key is part of the message, and a tombstone is a delete
                events = [self.source_codec.decode_message(KafkaRecord(key, value))]
            else:
                events = self.decode.events(value)
            records, added_tombstones = [], 0
            for event in events:
                if self.target_codec.message_type is KafkaRecord:
                    converted = self.target_codec.encode_messages(event)
                else:
                    converted = [KafkaRecord(key, self.encode(event, context))]
                records += converted
                if self.tombstones and event.op is Op.DELETE and converted[-1].value is not None:
                    added_tombstones += 1
                    records.append(KafkaRecord(converted[-1].key, None))
        except CodecError as error:
            if self.dead_letter_topic is None:
                raise
            origin = f"{message.topic()}/{message.partition()}/{message.offset()}"
            producer.produce(self.dead_letter_topic, key=key, value=value, on_delivery=delivered,
                             headers=[(ERROR_HEADER, str(error).encode()), (ORIGIN_HEADER, origin.encode())])
            self.counts.dead_lettered += 1
            return
        for record in records:
            producer.produce(self.target_topic, key=record.key, value=record.value, on_delivery=delivered)
        self.counts.produced += len(records) - added_tombstones
        self.counts.tombstones += added_tombstones


def _last_per_partition(messages: list[Any]) -> list[Any]:
    last: dict[tuple[str, int], Any] = {}
    for message in messages:
        last[(message.topic(), message.partition())] = message
    return list(last.values())


def run_until_signalled(bridge: Bridge) -> BridgeCounts:
    """Run ``bridge``, stopping cleanly on SIGINT or SIGTERM."""
    signal.signal(signal.SIGINT, bridge.stop)
    signal.signal(signal.SIGTERM, bridge.stop)
    return bridge.run()
