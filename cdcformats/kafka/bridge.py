"""A topic-to-topic converter, at least once or exactly once.

At least once (the default), it consumes a batch, converts each message, produces the results, waits until the broker
has acknowledged every one of them, and only then commits the consumed offsets. A crash at any point therefore replays,
never skips: after a restart every input message ends up in the target topic or in the dead-letter topic, and a
replayed message converts to the same bytes, with the same event id; a reader may see it twice.

Exactly once (``exactly_once=True``, ``--exactly-once``), each batch is one Kafka transaction of a transactional
producer (``transactional.id``: the one given, or ``<group id>/<source topic>``): the converted records, the dead
letters and the consumed offsets (``send_offsets_to_transaction`` with the consumer's group metadata) are committed
together or not at all. A crash before the commit leaves the transaction to be aborted, by the broker or by the next
bridge with the same transactional id, whose ``init_transactions`` fences the one before (a bridge still running
with that id stops with a ``BridgeError`` saying so); that bridge then starts again from the committed offsets. So a
``read_committed`` consumer of the target and dead-letter topics sees each source message's results exactly once,
however often the bridge is killed; a ``read_uncommitted`` one may also see the aborted attempts. A failure inside a
transaction (a refused record, a conversion error under ``errors="fail"``) aborts it and stops the bridge: nothing of
that batch is visible, and a restart converts it again.

Either way, keys are kept as they are, and one producer writes in consumption order with idempotence on, so the order
per key is kept. Formats whose record key is part of the format (``connect-json``, ``paimon-log``) are
read from the key and value together and write their own keys; their tombstones are deletes, converted like any other
change. Each record runs through the conversion pipeline that ``convert()`` runs (``pipeline.py``), so errors and counts
mean what they mean there: every change of a record is converted (a Canal message holds several rows); a record that
cannot be read, and a record for each of its changes that the target cannot write (or ``strict`` refuses), goes to the
dead-letter topic unchanged, with the error and its origin in headers (as the Tablestore sink connector's
``runtime.error.mode=kafka`` does), while its other changes are written; without a dead-letter topic it stops the
bridge, unless ``errors="skip"`` leaves it out.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..contract import DecodedUnit, KafkaRecord
from ..convert import refusal
from ..core.error_modes import error_mode
from ..errors import CdcFormatsError, CodecError, ConfigurationError, DecodeError
from ..model import ChangeEvent, Op
from ..pipeline import ConversionStats, converted, error_handler
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
ERROR_MODES = ("fail", "skip", "dead-letter")
# How long the exactly-once bridge waits for the transaction coordinator to commit or abort a batch.
TRANSACTION_TIMEOUT = 60.0
NOTHING_VISIBLE = ("nothing of the batch is visible to read_committed consumers and its offsets were not committed, so "
                   "a restart converts it again")


class BridgeError(CdcFormatsError):
    """The brokers cannot be reached, refused what was produced, or reported a fatal error."""


def progress_line(counts: ConversionStats) -> str:
    """The bridge's progress line: Kafka records consumed, records produced for converted changes (a delete that the
    target writes as a tombstone among them), tombstones passed on from the source or added after deletes, records
    that hold no change (a source tombstone among them, passed on or not) and errors sent to the dead-letter topic."""
    return (f"consumed {counts.messages_read}  produced {counts.messages_written}  tombstones {counts.tombstones}  "
            f"skipped {counts.messages_skipped}  dead-lettered {counts.dead_lettered}")


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
    strict: bool = False  # refuse an event the target would write only by dropping something, as an error
    # What an error does: "fail" (stop the bridge), "skip" or "dead-letter" (to dead_letter_topic); by default
    # "dead-letter" where there is a dead-letter topic, else "fail".
    errors: str | None = None
    # One Kafka transaction per batch: converted records, dead letters and consumed offsets commit together (see the
    # module's docstring); transactional_id defaults to "<group_id>/<source_topic>".
    exactly_once: bool = False
    transactional_id: str | None = None
    counts: ConversionStats = field(default_factory=ConversionStats)

    def __post_init__(self) -> None:
        self.source_options = registry_options(self.source_format, self.schema_registry, self.source_options)
        self.target_options = registry_options(self.target_format, self.schema_registry, self.target_options)
        self.source_codec = codec(self.source_format, **self.source_options)
        self.target_codec = codec(self.target_format, **self.target_options)
        # A format whose record key is part of the format reads and writes whole records; the others, a value.
        self.keyed_source = self.source_codec.message_type is KafkaRecord
        self.keyed_target = self.target_codec.message_type is KafkaRecord
        if not self.keyed_source:
            self.decode = ChangeEventDeserializer(self.source_format, self.schema_registry, **self.source_options)
        if not self.keyed_target:
            self.encode = ChangeEventSerializer(self.target_format, self.schema_registry, **self.target_options)
        self.refuse = (lambda event: refusal(self.target_codec, event)) if self.strict else None
        if self.errors is None:
            self.errors = "dead-letter" if self.dead_letter_topic else "fail"
        if error_mode(self.errors, ERROR_MODES) == "dead-letter" and not self.dead_letter_topic:
            raise ConfigurationError("errors=dead-letter needs a dead-letter topic (--dead-letter-topic)")
        if self.transactional_id is not None and not self.exactly_once:
            raise ConfigurationError("a transactional id is for the exactly-once bridge: add exactly_once "
                                     "(--exactly-once)")
        if self.exactly_once and self.transactional_id is None:
            # stable across restarts, so that a restarted bridge fences the one before it and aborts its transaction
            # ("/" appears in no topic name, so no other group and topic give the same id)
            self.transactional_id = f"{self.group_id}/{self.source_topic}"
        self._stopping = False

    def stop(self, *_: Any) -> None:
        """Finish the batch in flight, commit it, and return from ``run`` (the SIGINT/SIGTERM handler)."""
        self._stopping = True

    def run(self) -> ConversionStats:
        from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

        fatal: list[Any] = []
        brokers_down: list[Any] = []

        def client_error(error: Any) -> None:  # librdkafka retries the others (a broker down) on its own
            if error.fatal():
                fatal.append(error)
            elif error.code() == KafkaError._ALL_BROKERS_DOWN:
                brokers_down.append(error)

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
        producer_config = {"bootstrap.servers": self.bootstrap_servers, "enable.idempotence": True, "acks": "all",
                           "linger.ms": 5, "error_cb": client_error, "logger": CLIENT_LOG}
        if self.exactly_once:
            producer_config["transactional.id"] = self.transactional_id
        producer = Producer(producer_config)
        if self.exactly_once:
            try:
                producer.init_transactions(timeout)
            except KafkaException as error:
                consumer.close()
                raise BridgeError(f"the transactional producer {self.transactional_id!r} could not start within "
                                  f"{timeout:g} s: {error.args[0].str()}") from None
        failures: list[Any] = []

        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                failures.append(error)

        consumer.subscribe([self.source_topic])
        last_input = time.monotonic()
        last_report = 0.0
        last_line = ""
        outage = False
        try:
            while not self._stopping:
                batch = consumer.consume(num_messages=self.batch_size, timeout=0.5)
                if fatal:
                    raise BridgeError(f"Kafka client: {fatal[0].str()}")
                messages = [message for message in batch if message.error() is None]
                outage = self._say_whether_the_brokers_answer(outage, brokers_down, bool(messages))
                if messages and self.exactly_once:
                    last_input = time.monotonic()
                    self._transact(messages, consumer, producer, delivered, failures)
                elif messages:
                    last_input = time.monotonic()
                    self.convert(messages, producer, delivered)
                    producer.flush()
                    if failures:
                        raise BridgeError(f"the broker refused {len(failures)} message(s), first: {failures[0]}; "
                                           "nothing of this batch was committed, so a restart replays it")
                    consumer.commit(offsets=[TopicPartition(message.topic(), message.partition(), message.offset() + 1)
                                             for message in _last_per_partition(messages)], asynchronous=False)
                elif not consumer.assignment():  # still joining the group: not idle yet
                    last_input = time.monotonic()
                elif self.idle_timeout is not None and time.monotonic() - last_input > self.idle_timeout:
                    break
                if self.progress is not None and time.monotonic() - last_report >= self.progress_interval and (
                        progress_line(self.counts) != last_line):
                    last_line = progress_line(self.counts)
                    print(last_line, file=self.progress, flush=True)
                    last_report = time.monotonic()
        except BaseException:
            # The error that stops the bridge says what happened: a producer that was fenced, or hit another fatal
            # error, raises it again from flush, which would hide it (and leave the consumer open).
            with contextlib.suppress(KafkaException):
                producer.flush()
            consumer.close()
            raise
        producer.flush()
        consumer.close()
        if self.progress is not None:
            print(progress_line(self.counts), file=self.progress, flush=True)
        return self.counts

    def _say_whether_the_brokers_answer(self, outage: bool, brokers_down: list[Any], consumed: bool) -> bool:
        """Say on the progress stream when no broker answers any more, once, and when input comes again after that:
        librdkafka waits for the brokers on its own, and a bridge waiting in silence looks like one with no input.
        Whether an outage is going on, now."""
        if brokers_down and not outage:
            if self.progress is not None:
                print(f"no Kafka broker at {self.bootstrap_servers} answers ({brokers_down[-1].str()}): waiting for "
                      "one, as long as it takes (Ctrl-C stops)", file=self.progress, flush=True)
            outage = True
        elif consumed and outage:
            if self.progress is not None:
                print(f"the Kafka brokers at {self.bootstrap_servers} answer again", file=self.progress, flush=True)
            outage = False
        brokers_down.clear()
        return outage

    def _transact(self, messages: list[Any], consumer: Any, producer: Any, delivered: Callable[[Any, Any], None],
                  failures: list[Any]) -> None:
        """Convert a batch in one transaction with the consumer's position, or abort it and stop the bridge."""
        from confluent_kafka import KafkaException

        try:
            producer.begin_transaction()
            self.convert(messages, producer, delivered)
            producer.flush()  # the delivery reports, so that a refused record is named rather than only aborting
            if failures:
                raise BridgeError(f"the broker refused {len(failures)} message(s), first: {failures[0]}")
            # The next offset to read of every assigned partition; one that nothing was read from yet has none
            # (OFFSET_INVALID) and nothing to commit.
            positions = [partition for partition in consumer.position(consumer.assignment()) if partition.offset >= 0]
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), TRANSACTION_TIMEOUT)
            _commit(producer)
        except KafkaException as exception:
            error = exception.args[0]
            if not (error.fatal() or _fenced(error)):
                # A producer fenced while it commits may first hear an error that says less (Kafka 4.4 answered one
                # EndTxn with a code librdkafka does not know); the abort then names the fencing.
                refused = _abort(producer)
                if refused is None or not (refused.fatal() or _fenced(refused)):
                    aborted = "was aborted" if refused is None else f"could not be aborted ({_said(refused)})"
                    raise BridgeError(f"a transaction of the exactly-once bridge failed and {aborted}: "
                                      f"{_said(error)}; {NOTHING_VISIBLE}") from None
                error = refused
            raise BridgeError(_fenced_or_fatal(self.transactional_id, error)) from None
        except BridgeError as error:
            refused = _abort(producer)
            if refused is not None and (refused.fatal() or _fenced(refused)):  # the cause of the refusal
                raise BridgeError(_fenced_or_fatal(self.transactional_id, refused)) from None
            raise BridgeError(f"{error}; the transaction was aborted: {NOTHING_VISIBLE}") from None
        except BaseException:  # a conversion error under errors="fail": it stops the bridge, as it says
            _abort(producer)
            raise

    def convert(self, messages: list[Any], producer: Any, delivered: Callable[[Any, Any], None]) -> None:
        """Convert a batch of consumed records (confluent-kafka's ``Message``) and produce what they give, in order,
        with ``producer``'s ``produce``; an error does what ``errors`` says. The errors are counted, not kept: the
        bridge runs for ever."""
        on_error = error_handler(self._dead_letter_sink(producer, delivered) if self.errors == "dead-letter"
                                 else str(self.errors), self.counts, keep=False)
        for message in messages:
            self._convert(message, producer, delivered, on_error)

    def _convert(self, message: Any, producer: Any, delivered: Callable[[Any, Any], None],
                 on_error: Callable[[CodecError], None] | None) -> None:
        """Convert one consumed record through the pipeline and produce what it gives, in order."""
        from confluent_kafka.serialization import MessageField, SerializationContext

        key, value = message.key(), message.value()
        if self.keyed_target:  # under strict an event found to lose nothing is its own normal form: written as it is
            encode = self.target_codec.encode_exact if self.strict else self.target_codec.encode_messages
        else:  # the value in the target's form, under the source's key
            context = SerializationContext(self.target_topic, MessageField.VALUE)

            def encode(event: ChangeEvent) -> list[KafkaRecord]:
                return [KafkaRecord(key, self.encode(event, context))]
        for written in converted((self._unit(message),), encode, self.counts, on_error, refuse=self.refuse):
            for record in written.messages:
                producer.produce(self.target_topic, key=record.key, value=record.value, on_delivery=delivered)
            last = written.messages[-1]
            if self.tombstones and written.event.op is Op.DELETE and last.value is not None:
                producer.produce(self.target_topic, key=last.key, value=None, on_delivery=delivered)
                self.counts.tombstones += 1
        if value is None and not self.keyed_source and not self.keyed_target:
            # A tombstone deletes the key downstream too, in the source's key form. A target with keys of its own does
            # not pass it on: its key is not in that form (the delete before it was converted).
            producer.produce(self.target_topic, key=key, value=None, on_delivery=delivered)
            self.counts.tombstones += 1

    def _unit(self, message: Any) -> DecodedUnit:
        """What a consumed record decoded to: every change it holds (a Canal message holds several rows), none for a
        tombstone of a format whose key is not part of it, or the error that refused it."""
        key, value = message.key(), message.value()
        try:
            if self.keyed_source:  # the key is part of the message, and a tombstone is a delete
                events = self.source_codec.decode_messages(KafkaRecord(key, value))
            else:
                events = [] if value is None else self.decode.events(value)
        except DecodeError as error:
            return DecodedUnit(message.offset(), (message,), [], error)
        return DecodedUnit(message.offset(), (message,), events)

    def _dead_letter_sink(self, producer: Any, delivered: Callable[[Any, Any], None]) -> Callable[[CodecError], None]:
        """Send the record an error is about to the dead-letter topic unchanged, with the error and the record's
        origin in headers."""
        def send(error: CodecError) -> None:
            message: Any = error.messages[0]  # a consumed record: the bridge's units hold one each
            origin = f"{message.topic()}/{message.partition()}/{message.offset()}"
            producer.produce(self.dead_letter_topic, key=message.key(), value=message.value(), on_delivery=delivered,
                             headers=[(ERROR_HEADER, str(error).encode()), (ORIGIN_HEADER, origin.encode())])
        return send


def _commit(producer: Any) -> None:
    """Commit the producer's transaction, again while the error says it may pass if retried (librdkafka's rule for
    commit_transaction), within TRANSACTION_TIMEOUT."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + TRANSACTION_TIMEOUT
    while True:
        try:
            producer.commit_transaction(max(deadline - time.monotonic(), 1.0))
            return
        except KafkaException as exception:
            if not exception.args[0].retriable() or time.monotonic() > deadline:
                raise


def _abort(producer: Any) -> Any:
    """Abort the open transaction; None, or the error that kept the producer from it (a fatal one, or fencing: the
    broker then aborts the transaction after its timeout, or the next bridge with its id at once)."""
    from confluent_kafka import KafkaException

    try:
        producer.abort_transaction(TRANSACTION_TIMEOUT)
    except KafkaException as exception:
        return exception.args[0]
    return None


def _said(error: Any) -> str:
    """A Kafka error's text, with its code where the text is only that librdkafka does not know it."""
    text = str(error.str())
    return f"{text} (error code {error.code()})" if "Unknown broker error" in text else text


def _fenced(error: Any) -> bool:
    """Whether a Kafka error says that another producer with this transactional id has taken over."""
    from confluent_kafka import KafkaError

    return bool(error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH))


def _fenced_or_fatal(transactional_id: str | None, error: Any) -> str:
    if _fenced(error):
        return (f"another producer with the transactional id {transactional_id!r} started (another bridge of the "
                f"same group and source topic?), and fenced this one: {_said(error)}; this bridge's open transaction "
                "is aborted, and the other goes on from the last committed batch")
    return f"the transactional producer {transactional_id!r} cannot go on: {_said(error)}; {NOTHING_VISIBLE}"


def _last_per_partition(messages: list[Any]) -> list[Any]:
    last: dict[tuple[str, int], Any] = {}
    for message in messages:
        last[(message.topic(), message.partition())] = message
    return list(last.values())


def run_until_signalled(bridge: Bridge) -> ConversionStats:
    """Run ``bridge``, stopping cleanly on SIGINT or SIGTERM."""
    signal.signal(signal.SIGINT, bridge.stop)
    signal.signal(signal.SIGTERM, bridge.stop)
    return bridge.run()
