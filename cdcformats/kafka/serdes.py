"""Serializers and deserializers for confluent-kafka producers and consumers, for every format.

    from confluent_kafka import SerializingProducer
    from cdcformats.kafka import ChangeEventKeySerializer, ChangeEventSerializer

    producer = SerializingProducer({
        "bootstrap.servers": "...",
        "key.serializer": ChangeEventKeySerializer(),
        "value.serializer": ChangeEventSerializer("avro", schema_registry="https://sr:8081"),
    })
    producer.produce("orders", key=event, value=event)

They are plain callables with confluent-kafka's ``(obj, ctx)`` signature, usable by hand too. A format whose
messages a schema registry describes (``Codec.writer_schema``: the canonical envelopes ``avro`` and ``protobuf``)
is written in Confluent's wire format (``0x00``, the schema id as 4 big-endian bytes, for a Protobuf schema the
message index, then the body), with its schema registered through ``cdcformats.schema_registry``: byte for byte
what confluent-kafka's ``AvroSerializer`` / ``ProtobufSerializer`` write, so each side reads the other. Other
formats write their native bytes; an event that takes several messages travels as one (``Codec.transport_payload``:
a Tablestore record's rows as ``ots-json`` lines). ``None`` is a tombstone both ways.

Formats whose record key is part of the format (``connect-json``, ``paimon-log``, ``debezium-avro``: their messages
are ``KafkaRecord(key, value)``) write their value with ``ChangeEventSerializer`` and their key with
``ChangeEventKeySerializer(format)``; a delete's value may be ``None``, a tombstone that means the delete. Reading
``connect-json`` or ``paimon-log`` needs the key and the value together, which confluent-kafka's deserializers never
see at once: decode ``KafkaRecord(message.key(), message.value())`` with the codec, or run ``cdcformats bridge``. A
format whose value holds the whole change (``Codec.reads_values_alone``: ``debezium-avro``) is read by
``ChangeEventDeserializer`` from the value alone, its key cells taken out of the row (``debezium-avro``: by the key
columns of the table's registered key schema, or the option ``key_columns``).

A format that registers a schema per table itself (``debezium-avro``) names its subjects as Confluent's serializers
do: with ``subject_name_strategy="topic"`` (TopicNameStrategy, the default), ``<topic>-value`` and ``<topic>-key``
for the topic of the SerializationContext they are called with, so that ``tpch.region`` is registered as
``tpch.region-value``; ``record`` and ``topic-record`` as Confluent's RecordNameStrategy and
TopicRecordNameStrategy. Given the format's option ``topic``, they name that topic; called without a context, they
name Debezium's per-table topic ``<topic_prefix>.<schema>.<table>``, as ``cdcformats convert`` and ``bridge`` do.
"""

from __future__ import annotations

import io
import struct
from typing import Any

import msgspec

from ..contract import REGISTRY_OPTION, Codec, JvmDecoder, KafkaRecord, WriterSchema, as_text
from ..envelopes.varint import read_varint, unzigzag
from ..errors import ConfigurationError, DecodeError, EncodeError
from ..model import Cell, ChangeEvent
from ..registry import codec, codec_class
from ..schema_registry.client import address, connect, jvm_settings
from ..schema_registry.subjects import ENVELOPE_RECORD_NAME, STRATEGIES, envelope_schema, subject_name

# The options of a format that registers schemas itself, which the serializers set as Confluent's would name them.
STRATEGY_OPTION, TOPIC_OPTION = "subject_name_strategy", "topic"
MAGIC = b"\x00"
PROTOBUF_FIRST_MESSAGE = b"\x00"  # the message index [0], as Confluent writes it for a Protobuf schema


def _context(ctx: Any) -> tuple[str | None, bool]:
    """The topic and whether the value is a key, from a confluent-kafka SerializationContext (or None)."""
    if ctx is None:
        return None, False
    return getattr(ctx, "topic", None), str(getattr(ctx, "field", "value")).lower().endswith("key")


class _Framing:
    """Confluent's wire framing of the canonical envelopes, with the schema registered or looked up per subject."""

    def __init__(self, schema_format: str, schema_registry: Any, strategy: str, auto_register: bool,
                 use_latest: bool) -> None:
        """``schema_format`` is a format whose messages a registry describes (``Codec.writer_schema``)."""
        if strategy not in STRATEGIES:
            raise ConfigurationError(f"subject_name_strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
        if auto_register and use_latest:
            raise ConfigurationError("auto_register and use_latest exclude each other, as in confluent-kafka")
        self.format = schema_format
        self.registry = connect(schema_registry)
        self.strategy = strategy
        self.auto_register = auto_register
        self.use_latest = use_latest
        self.schema = envelope_schema(schema_format)
        self.indexed = self.schema.schema_type == "PROTOBUF"  # Confluent puts a message index before the body
        self._ids: dict[str, int] = {}

    def schema_id(self, ctx: Any) -> int:
        topic, is_key = _context(ctx)
        subject = subject_name(self.strategy, topic, ENVELOPE_RECORD_NAME, is_key)
        if subject not in self._ids:
            try:
                if self.use_latest:
                    self._ids[subject] = self.registry.get_latest_version(subject).schema_id
                elif self.auto_register:
                    self._ids[subject] = self.registry.register_schema(subject, self.schema)
                else:
                    self._ids[subject] = self.registry.lookup_schema(subject, self.schema).schema_id
            except Exception as error:  # the registry's own errors: a refusal, an unknown subject, no registry
                raise EncodeError(self.format, f"{address(self.registry)} gave no schema id under subject {subject}: "
                                               f"{error}") from None
        return self._ids[subject]

    def frame(self, body: bytes, ctx: Any) -> bytes:
        index = PROTOBUF_FIRST_MESSAGE if self.indexed else b""
        return MAGIC + struct.pack(">I", self.schema_id(ctx)) + index + body

    def unframe(self, data: bytes) -> tuple[int, bytes]:
        """The schema id and the body of a framed message."""
        if len(data) < 5 or data[:1] != MAGIC:
            raise DecodeError(self.format, "not in Confluent's wire format (magic byte 0x00 and a 4-byte schema id)",
                              field="magic byte")
        schema_id = struct.unpack(">I", data[1:5])[0]
        body = data[5:]
        if self.indexed:
            body = self._skip_message_indexes(body)
        return schema_id, body

    def _skip_message_indexes(self, body: bytes) -> bytes:
        """The Protobuf body after Confluent's message-index path, which must point at the first message: [0]."""
        stream = io.BytesIO(body)
        count = self._index(stream)
        indexes = [self._index(stream) for _ in range(count)] if count else [0]
        if indexes != [0]:
            raise DecodeError(self.format, f"message index {indexes} is not the ChangeEvent envelope [0]",
                              field="message index")
        return body[stream.tell():]

    def _index(self, stream: io.BytesIO) -> int:
        try:
            number = read_varint(stream)
        except ValueError as error:
            raise DecodeError(self.format, f"the message index {error}", field="message index") from None
        if number is None:
            raise DecodeError(self.format, "the message index ends early", field="message index")
        return unzigzag(number)


class _CodecPerTopic:
    """A format's codec for each topic a SerializationContext names, where the format names its schemas' subjects
    after a topic (the option ``topic``: debezium-avro's per-table schemas), so that they are ``<topic>-value`` and
    ``<topic>-key`` as Confluent's serializers name them; the one codec otherwise, and where no topic is given (or
    the option is set)."""

    def __init__(self, format: str, options: dict[str, Any]) -> None:
        self.format = format
        self.options = options
        self.codec = codec(format, **options)
        self.by_topic = _takes(format, TOPIC_OPTION) and options.get(TOPIC_OPTION) is None
        self._codecs: dict[str, Codec] = {}

    def of(self, ctx: Any) -> Codec:
        topic, _ = _context(ctx)
        if topic is None or not self.by_topic:
            return self.codec
        if topic not in self._codecs:
            self._codecs[topic] = codec(self.format, **self.options, **{TOPIC_OPTION: topic})
        return self._codecs[topic]


class ChangeEventSerializer:
    """``(event, ctx) -> bytes``: a ChangeEvent in ``format`` (None stays None, a tombstone).

    For a format whose messages a registry describes (``avro``, ``protobuf``): ``schema_registry`` is a client, URL or
    file (default: the embedded registry);
    ``subject_name_strategy`` is topic (the default), record or topic-record; ``auto_register`` (default) registers
    the envelope,
    ``use_latest`` uses the subject's latest version instead; ``framing=False`` writes the bare envelope, with no
    registry. Other keywords are the format's options. A format that registers a schema per table itself
    (``debezium-avro``) takes ``schema_registry`` and ``subject_name_strategy`` as its own options, and names its
    subjects after the topic of ``ctx`` (see the module's docstring).
    """

    def __init__(self, format: str, schema_registry: Any = None, *, subject_name_strategy: str | None = None,
                 auto_register: bool = True, use_latest: bool = False, framing: bool = True, **options: Any) -> None:
        if subject_name_strategy is not None and _takes(format, STRATEGY_OPTION):  # else the format's own default
            options = {STRATEGY_OPTION: subject_name_strategy, **options}
        self.codecs = _CodecPerTopic(format, registry_options(format, schema_registry, options))
        self.codec = self.codecs.codec
        if self.codec.message_type not in (bytes, KafkaRecord):
            raise ConfigurationError(f"{format} writes {self.codec.message_type.__name__}s; Kafka carries bytes: "
                                     "use the format that writes the same messages as bytes")
        framed = self.codec.writer_schema() is not None and framing
        self.framing = _Framing(format, schema_registry, subject_name_strategy or "topic",
                                auto_register and not use_latest, use_latest) if framed else None

    def __call__(self, event: ChangeEvent | None, ctx: Any = None) -> bytes | None:
        if event is None:
            return None
        if self.codec.message_type is KafkaRecord:
            return self.record(event, ctx).value
        messages = self.codec.encode_messages(event)
        body = self.codec.transport_payload(messages)
        return body if self.framing is None else self.framing.frame(body, ctx)

    def record(self, event: ChangeEvent, ctx: Any = None) -> KafkaRecord:
        """Both parts of the record of a format whose key is its own (``connect-json``, ``debezium-avro``...): what
        this serializer and ``ChangeEventKeySerializer`` write, in one encoding of the event."""
        topic_codec = self.codecs.of(ctx)
        return _only_record(topic_codec, topic_codec.encode_messages(event))


class ChangeEventDeserializer:
    """``(bytes, ctx) -> ChangeEvent``: the inverse of ``ChangeEventSerializer`` (None stays None).

    A message written with another registered version of the format's schema is read through that version, fetched
    by id from the registry, where the format needs it (``Codec.resolves_writer_schemas``: Avro's schema resolution);
    bad input raises ``DecodeError``.
    ``framing=False`` reads the bare envelope, with no registry. A format whose messages are Kafka records is read
    from the value alone where its value holds the change (``Codec.reads_values_alone``), and refused otherwise.
    """

    def __init__(self, format: str, schema_registry: Any = None, *, framing: bool = True, **options: Any) -> None:
        self.codecs = _CodecPerTopic(format, registry_options(format, schema_registry, options))
        self.codec = self.codecs.codec
        if self.codec.message_type is KafkaRecord and not self.codec.reads_values_alone:
            raise ConfigurationError(
                f"{format} reads the record key and value together, which a value deserializer never sees: decode "
                f"KafkaRecord(message.key(), message.value()) with cdcformats.codec({format!r}), or run the bridge")
        if self.codec.message_type not in (bytes, KafkaRecord):
            raise ConfigurationError(f"{format} reads {self.codec.message_type.__name__}s; Kafka carries bytes: "
                                     "use the format that reads the same messages as bytes")
        self.framing = _Framing(format, schema_registry, "topic", False, False) \
            if self.codec.writer_schema() is not None and framing else None
        self._writers: dict[int, WriterSchema] = {}

    def __call__(self, data: bytes | None, ctx: Any = None) -> ChangeEvent | None:
        if data is None:
            return None
        events = self.events(data, ctx)
        if len(events) != 1:
            raise DecodeError(self.codec.name, f"a message holds one change, this one {len(events)}: read it with "
                                               "events(), as the bridge does")
        return events[0]

    def events(self, data: bytes, ctx: Any = None) -> list[ChangeEvent]:
        """Every change in one message: formats such as canal-json put several rows, or none (DDL), in one."""
        if self.codec.message_type is KafkaRecord:
            return self.codecs.of(ctx).decode_value(data)
        if self.framing is None:
            return list(self.codec.decode(self.codec.transport_messages(data)))
        schema_id, body = self.framing.unframe(data)
        if self.codec.resolves_writer_schemas:
            return [self.codec.decode_written_with(body, self._writer_schema(self.framing, schema_id))]
        return [self.codec.decode_message(body)]

    def jvm_decoder(self) -> JvmDecoder | None:
        """The JVM decoder that reads what this deserializer reads (``Codec.jvm_decoder``), or None where there is
        none. Framed messages are read by the codec's decoder with the setting ``framing=confluent``; where the
        format reads a body through the schema it was written with (``resolves_writer_schemas``), the decoder also
        takes how to find the writer schemas in the registry (``schema_registry.client.jvm_settings``; None where the
        JVM cannot ask the registry as this deserializer does) and the codec's own schema, ``reader_schema``, which
        the others are resolved into."""
        if self.codec.message_type is KafkaRecord:  # its JVM decoder reads a key and a value, never a value alone
            return None
        decoder = self.codec.jvm_decoder()
        if decoder is None or self.framing is None:
            return decoder
        framed = {"framing": "confluent"}
        if self.codec.resolves_writer_schemas:
            registry = jvm_settings(self.framing.registry)
            own_schema = self.codec.writer_schema()
            if registry is None or own_schema is None:
                return None
            framed |= {**registry, "reader_schema": own_schema.text}
        return JvmDecoder(decoder.class_name, {**decoder.settings, **framed})

    def _writer_schema(self, framing: _Framing, schema_id: int) -> WriterSchema:
        """The registered schema ``schema_id``, fetched once."""
        if schema_id not in self._writers:
            try:
                registered = framing.registry.get_schema(schema_id)
            except Exception as error:  # the registry's own errors: an unknown id, an unreachable registry
                raise DecodeError(self.codec.name, f"schema id {schema_id} cannot be fetched from "
                                                   f"{address(framing.registry)}: {error}", field="schema id") from None
            self._writers[schema_id] = WriterSchema(registered.schema_type or "AVRO", registered.schema_str)
        return self._writers[schema_id]


class ChangeEventKeySerializer:
    """``(event, ctx) -> bytes``: the event's primary key as a JSON object, ``{"id": 7}``, in key order.

    Equal keys give equal bytes, so a row's changes land in one partition and keep their order. Floats and decimals
    are written as their exact text, bytes as base64. An event without key cells has no key (None), which Kafka
    spreads over partitions. Given a format whose record key is part of the format (``connect-json``,
    ``paimon-log``) and its options, it writes that format's key instead.
    """

    def __init__(self, format: str | None = None, **options: Any) -> None:
        self.codecs: _CodecPerTopic | None = None
        if format is not None:
            self.codecs = _CodecPerTopic(format, options)
            if self.codecs.codec.message_type is not KafkaRecord:
                raise ConfigurationError(f"{format} has no key of its own; leave the format out for the JSON key")

    def __call__(self, event: ChangeEvent | None, ctx: Any = None) -> bytes | None:
        if event is None:
            return None
        if self.codecs is not None:
            topic_codec = self.codecs.of(ctx)
            return _only_record(topic_codec, topic_codec.encode_messages(event)).key
        if not event.key:
            return None
        return msgspec.json.encode({cell.name: _key_value(cell) for cell in event.key})


def registry_options(format: str, schema_registry: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options``, with the serializer's registry as the format's own where it registers schemas itself
    (debezium-avro: a schema per table)."""
    if schema_registry is not None and _takes(format, REGISTRY_OPTION):
        return {REGISTRY_OPTION: schema_registry, **options}
    return options


def _takes(format: str, option_name: str) -> bool:
    return any(option.name == option_name for option in codec_class(format).options)


def _only_record(record_codec: Codec, records: list[KafkaRecord]) -> KafkaRecord:
    if len(records) != 1:
        raise EncodeError(record_codec.name, f"this event takes {len(records)} records, and a serializer writes one: "
                                             "the bridge produces each of them")
    return records[0]


def _key_value(cell: Cell) -> Any:
    """A key cell's value as JSON holds it: strings, integers, booleans and null as they are, the rest as text."""
    value = cell.value
    return value if type(value) in (str, int, bool, type(None)) else as_text(value)


__all__ = ["ChangeEventDeserializer", "ChangeEventKeySerializer", "ChangeEventSerializer"]
