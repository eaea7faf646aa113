"""What a canonical envelope is registered as: its schema (``envelope_schema``, as confluent-kafka's serializers
register it) under a subject named as Confluent's subject name strategies name it (``subject_name``)."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigurationError
from ..registry import codec_class, schema_formats
from ..schemas import AVRO_SCHEMA_NAME

STRATEGIES = ("topic", "record", "topic-record")
ENVELOPE_RECORD_NAME = AVRO_SCHEMA_NAME  # the Avro record and the Protobuf message share one full name


def subject_name(strategy: str, topic: str | None, record_name: str, is_key: bool = False) -> str:
    """The subject of a schema, as Confluent's subject name strategies spell it: ``topic`` gives
    ``<topic>-value`` (or ``-key``), ``record`` the record's full name, ``topic-record`` ``<topic>-<record name>``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown subject name strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    if strategy == "record":
        return record_name
    if not topic:
        raise ValueError(f"the {strategy} subject name strategy needs a topic")
    return f"{topic}-{'key' if is_key else 'value'}" if strategy == "topic" else f"{topic}-{record_name}"


def envelope_schema(schema_format: str) -> Any:
    """The schema of a format whose messages a registry describes (a canonical envelope), as a confluent-kafka
    ``Schema`` in the form its serializers register it (``Codec.writer_schema``), so that registering it here or
    through a serializer is one id."""
    from confluent_kafka.schema_registry import Schema

    schema = codec_class(schema_format).writer_schema()
    if schema is None:
        raise ConfigurationError(f"{schema_format} messages have no registered schema; the formats that do are "
                                 f"{', '.join(schema_formats())}")
    return Schema(schema.text, schema.schema_type)


def register_envelope(registry: Any, schema_format: str, topic: str | None = None, strategy: str = "topic",
                      is_key: bool = False) -> tuple[str, int]:
    """Register the schema of ``schema_format``, a canonical envelope (``schema_formats()``); its subject and id."""
    subject = subject_name(strategy, topic, ENVELOPE_RECORD_NAME, is_key)
    return subject, registry.register_schema(subject, envelope_schema(schema_format))
