"""The golden files of the JVM decoders (``tests/fixtures/jvm-golden/<format>.jsonl``): what each line holds, and
the JSON form of the canonical event that both the Python test and the plain Java run (``tests/jvm/GoldenCheck.java``)
compare with.

A line is one JSON object: ``where`` the message came from (a fixture file and line, or the case written by hand),
``options`` the codec's options (and the deserializer's: ``framing``, ``schema_registry``), ``decoder`` what its
``ChangeEventDeserializer.jvm_decoder()`` gives for them (``class``, ``settings``), ``message`` the message as text
(``message_base64``: a binary message, the canonical envelopes', in base64), and then either ``event``, the one event
it decodes to, or ``error``, the one-line error that refuses it (as ``DecodeError`` renders it with no position:
``<format>: field <field>: <reason> (input: <excerpt>)``). The lines of Confluent-framed envelopes name the
registry of ``golden_registry()``, and their decoders hold the schemas it holds, so that no registry is asked.
A message that gives no event or several is refused: the JVM decoders decode a message to exactly one event, as
Spark's Arrow path (``ChangeEventDeserializer``) does.

The event's JSON form mirrors ``cdcformats/model.py`` and the Spark row of ``envelopes/arrow.py``::

    EVENT  = {"op", "table": TABLE | null, "key": [CELL], "before": [CELL] | null, "after": [CELL] | null,
              "source": SOURCE, "key_only", "attributes": [ENTRY]}
    TABLE  = {"catalog", "schema", "name"}      SOURCE = {"system", "position": [ENTRY], "commit_time_us",
                                                          "capture_time_us"}
    CELL   = {"name", "value": VALUE, "type", "version", "kind"}       ENTRY = {"name", "value": VALUE}
    VALUE  = null | {"boolean": b} | {"long": n} | {"double": x | "NaN" | "Infinity" | "-Infinity"}
           | {"string": s} | {"bytes": base64} | {"decimal": text} | {"nested": tagged}

``tagged`` is the nested value as the ``nested`` member of a Spark row holds it (``arrow._tagged``), as JSON rather
than as its text, so that it is compared by value.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import math
import os
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import cdcformats as cf
from cdcformats import ChangeEvent, DecodeError, KafkaRecord
from cdcformats.envelopes import arrow
from cdcformats.kafka import ChangeEventDeserializer
from cdcformats.model import Cell, Value
from cdcformats.registry import codec_class
from cdcformats.schema_registry.client import address
from cdcformats.schema_registry.embedded import EmbeddedSchemaRegistryClient

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "jvm-golden"


# The formats whose golden files read back what the encoders' golden files hold (the canonical envelopes and
# debezium-avro: each event of those files, written by Python, then cases of their own, and for debezium-avro drawn
# events and the peers' records in Avro form, whose events debezium-json's file holds): their events are no new events
# for the encoders, whose files would otherwise hold each of them again for every target.
READ_BACK = ("avro", "protobuf", "debezium-avro")


def jvm_formats() -> list[str]:
    """Every format whose codec, with its default options, has a JVM decoder of messages (``MessageDecoder``)."""
    return [name for name in cf.formats() if _has_jvm_decoder(name) and not _reads_records(name)]


def record_formats() -> list[str]:
    """Every format whose codec, with its default options, has a JVM decoder of Kafka records (``RecordDecoder``)."""
    return [name for name in cf.formats() if _has_jvm_decoder(name) and _reads_records(name)]


def _reads_records(name: str) -> bool:
    return codec_class(name).message_type is KafkaRecord


def _has_jvm_decoder(name: str) -> bool:
    try:
        return cf.codec(name).jvm_decoder() is not None
    except cf.ConfigurationError:  # a required option (ots's primary_key): no default decoder to test
        return False


def value_json(value: Value) -> dict[str, Any] | None:
    if value is None:
        return None
    if type(value) is bool:
        return {"boolean": value}
    if type(value) is int:
        return {"long": value}
    if type(value) is float:
        return {"double": value if math.isfinite(value) else "NaN" if math.isnan(value)
                else "Infinity" if value > 0 else "-Infinity"}
    if type(value) is str:
        return {"string": value}
    if type(value) is bytes:
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if type(value) is Decimal:
        return {"decimal": str(value)}
    return {"nested": json.loads(arrow.value_row(value)["nested"])}


def _cells(cells: tuple[Cell, ...] | None) -> list[dict[str, Any]] | None:
    return None if cells is None else [
        {"name": cell.name, "value": value_json(cell.value), "type": cell.type, "version": cell.version,
         "kind": cell.kind.value} for cell in cells]


def _entries(entries: tuple[tuple[str, Value], ...]) -> list[dict[str, Any]]:
    return [{"name": name, "value": value_json(value)} for name, value in entries]


def event_json(event: ChangeEvent) -> dict[str, Any]:
    table = event.table
    return {
        "op": event.op.value,
        "table": None if table is None else {"catalog": table.catalog, "schema": table.schema, "name": table.name},
        "key": _cells(event.key), "before": _cells(event.before), "after": _cells(event.after),
        "source": {"system": event.source.system, "position": _entries(event.source.position),
                   "commit_time_us": event.source.commit_time_us, "capture_time_us": event.source.capture_time_us},
        "key_only": event.key_only, "attributes": _entries(event.attributes)}


def decoded(format_name: str, options: dict[str, Any], message: str | bytes) -> dict[str, Any]:
    """``{"event": ...}`` or ``{"error": ...}``: what the Python codec makes of one message (read as Spark reads it,
    by ``ChangeEventDeserializer``, whose options ``framing`` and ``schema_registry`` the options may hold)."""
    data = message.encode("utf-8") if isinstance(message, str) else message
    try:
        event = ChangeEventDeserializer(format_name, **options)(data)
    except DecodeError as error:
        return {"error": str(DecodeError(error.format, error.reason, field=error.field, raw=data))}
    assert event is not None  # only a null message (a tombstone) gives None, and a line holds a message
    return {"event": event_json(event)}


def jvm_decoder(format_name: str, options: dict[str, Any]) -> dict[str, Any]:
    """What the line's ``decoder`` holds: the JVM decoder Spark runs for the deserializer of these options."""
    decoder = ChangeEventDeserializer(format_name, **options).jvm_decoder()
    assert decoder is not None, f"{format_name} {options}: no JVM decoder"
    return {"class": decoder.class_name, "settings": decoder.settings}


def message_of(line: dict[str, Any]) -> str | bytes:
    """The message of a line: its text, or its bytes."""
    return line["message"] if "message" in line else base64.b64decode(line["message_base64"])


def line(where: str, format_name: str, options: dict[str, Any], message: str | bytes) -> dict[str, Any]:
    """One golden line: the message, where it came from, and what it decodes to."""
    held = {"message": message} if isinstance(message, str) else {
        "message_base64": base64.b64encode(message).decode("ascii")}
    return {"where": where, "options": options, "decoder": jvm_decoder(format_name, options), **held,
            **decoded(format_name, options, message)}


def spark_jars() -> str:
    """PySpark's jars, which the JVM has wherever the Java codecs run (the Avro envelope's decoder resolves bodies
    written with other versions of its schema with Apache Avro's): the class path the golden checks compile and run
    with."""
    import pyspark

    return str(Path(pyspark.__file__).parent / "jars" / "*")


def classpath(classes: Path) -> str:
    """The class path of a golden check: its compiled classes and PySpark's jars."""
    return f"{classes}{os.pathsep}{spark_jars()}"


# -- the registry of the framed envelopes' lines ----------------------------------------------------------------------

# An embedded registry at a path of its own, the same wherever the tests run, since errors name it: the lines of
# Confluent-framed messages name it as their schema_registry, and their decoders hold the schemas it gives them.
GOLDEN_REGISTRY = Path("/tmp/cdcformats-jvm-golden/registry.sqlite")
# Its schemas, registered in this order, so that each has this id.
AVRO_VERSION_1, AVRO_CANONICAL, PROTOBUF_CANONICAL = 1, 2, 3
UNKNOWN_ID = 99
_FIRST_VERSIONS = Path(__file__).resolve().parent / "fixtures" / "envelopes"


def golden_registry() -> Path:
    """The registry file of the framed lines, made (or made again) with its schemas, each under its id."""
    from cdcformats.schema_registry.store import SchemaStore

    avro, protobuf = cf.codec("avro").writer_schema(), cf.codec("protobuf").writer_schema()
    assert avro is not None and protobuf is not None  # the envelopes' schemas
    wanted = {AVRO_VERSION_1: ("AVRO", (_FIRST_VERSIONS / "change_event.v1.avsc").read_text(encoding="utf-8")),
              AVRO_CANONICAL: ("AVRO", avro.text), PROTOBUF_CANONICAL: ("PROTOBUF", protobuf.text)}
    if GOLDEN_REGISTRY.exists():
        store = SchemaStore(GOLDEN_REGISTRY)
        held = {schema_id: (schema.get("schemaType", "AVRO"), schema["schema"])
                for schema_id, schema in store.schemas().items()}
        store.close()
        if held == wanted:
            return GOLDEN_REGISTRY
    GOLDEN_REGISTRY.parent.mkdir(parents=True, exist_ok=True)
    partial = GOLDEN_REGISTRY.with_name(f"partial-{os.getpid()}.sqlite")
    partial.unlink(missing_ok=True)
    store = SchemaStore(partial)
    for schema_id, (schema_type, text) in sorted(wanted.items()):
        subject = "golden-protobuf-value" if schema_type == "PROTOBUF" else "golden-avro-value"
        assert store.register(subject, text, schema_type)["id"] == schema_id
    store.close()
    partial.replace(GOLDEN_REGISTRY)  # never a half-made registry for another process to read
    return GOLDEN_REGISTRY


def golden_line(line: dict[str, Any]) -> str:
    """A line of a golden file: its JSON with the characters that Python's ``str.splitlines`` breaks lines at, which
    JSON leaves as they are, escaped (``\\u0085``, ``\\u2028``, ``\\u2029``), so that every reader sees one line."""
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).translate(
        {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"})


def read(format_name: str) -> list[tuple[int, dict[str, Any]]]:
    """The lines of one golden file, each with its number (from 1)."""
    path = GOLDEN / f"{format_name}.jsonl"
    return [(number, json.loads(text)) for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]


# -- the formats whose messages are Kafka records (``RecordDecoder``): debezium-avro ---------------------------------
#
# A line of their golden files holds ``key_base64`` and ``value_base64`` (either null) instead of ``message``, and
# ``event`` is null for a record that holds no change (a tombstone). Its decoder's settings name the writer schemas of
# its key and value (``writer_schemas``, as ``schema_registry.client.jvm_settings`` gives them for the embedded
# registry), so that neither Java nor Python needs the registry that wrote them: Python reads the record from a new
# embedded registry holding exactly those schemas under their ids, whose address, a temporary file, errors and
# settings name as ``GIVEN_REGISTRY_ADDRESS``. An error renders the record's line in the format's file form as its
# input, as Spark's dead letters keep a record that cannot be read.

GIVEN_REGISTRY_ADDRESS = "the schema registry file registry.sqlite"


class GivenRegistry:
    """An embedded registry, in a temporary file (removed with this object), holding exactly ``writer_schemas`` (id
    to ``{"type", "text"}``, as ``jvm_settings`` gives them) under their ids."""

    def __init__(self, writer_schemas: dict[str, dict[str, str]]) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="golden-registry-")
        self.client = EmbeddedSchemaRegistryClient(Path(self._directory.name) / "registry.sqlite")
        store = self.client.store
        store.set_mode("IMPORT")  # schemas under ids given, and the file exists, even for no schema
        for schema_id, schema in sorted(writer_schemas.items(), key=lambda item: int(item[0])):
            store.register(f"golden-{schema_id}", schema["text"], schema["type"], schema_id=int(schema_id))
        self.address = address(self.client)

    def golden(self, text: str) -> str:
        """``text`` with this registry's address as the golden files name it."""
        return text.replace(self.address, GIVEN_REGISTRY_ADDRESS)


def framed_writer_schemas(registry: Any, *parts: bytes | None) -> dict[str, dict[str, str]]:
    """The schemas of the embedded ``registry`` that the Confluent frames of ``parts`` name, by id, as
    ``jvm_settings`` gives them (none for an id the registry lacks, or a part too short to name one)."""
    known = registry.store.schemas()
    ids = sorted({int.from_bytes(part[1:5], "big") for part in parts if part is not None and len(part) >= 5})
    return {str(schema_id): {"type": known[schema_id].get("schemaType", "AVRO"), "text": known[schema_id]["schema"]}
            for schema_id in ids if schema_id in known}


def _part(data: str | None) -> bytes | None:
    return None if data is None else base64.b64decode(data)


def record_decoded(format_name: str, options: dict[str, Any], writer_schemas: dict[str, dict[str, str]],
                   key_base64: str | None, value_base64: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The decoder (``class``, ``settings``) that the codec's ``jvm_decoder()`` gives over a registry holding
    ``writer_schemas``, and ``{"event": ...}`` (null for no change) or ``{"error": ...}``: what the Python codec
    makes of one record, as Spark's functions read one (``decode_messages``)."""
    registry = _given_registry(json.dumps(writer_schemas, sort_keys=True))
    codec = cf.codec(format_name, schema_registry=registry.client, **options)
    decoder = codec.jvm_decoder()
    assert decoder is not None, f"{format_name} {options}: no JVM decoder"
    settings = {name: registry.golden(value) for name, value in decoder.settings.items()}
    outcome = record_outcome(codec, _part(key_base64), _part(value_base64))
    if "error" in outcome:
        outcome["error"] = registry.golden(outcome["error"])
    return {"class": decoder.class_name, "settings": settings}, outcome


def record_outcome(codec: cf.Codec, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """``{"event": ...}`` (null for no change) or ``{"error": ...}``: what ``codec`` makes of one record, as Spark's
    functions read one (``decode_messages``); an error names the record's line in the file form as its input."""
    record = KafkaRecord(key, value)
    try:
        events = codec.decode_messages(record)
    except DecodeError as error:
        line = io.BytesIO()
        codec.file_writer(line).write([record])
        raw = line.getvalue().rstrip(b"\n")
        return {"error": str(DecodeError(error.format, error.reason, field=error.field, raw=raw))}
    assert len(events) <= 1, f"{codec.name}: a record of {len(events)} changes"
    return {"event": event_json(events[0]) if events else None}


@functools.lru_cache(maxsize=64)
def _given_registry(writer_schemas: str) -> GivenRegistry:
    """One registry for each set of writer schemas (its JSON), which the lines of one change share."""
    return GivenRegistry(json.loads(writer_schemas))


def record_line(where: str, format_name: str, options: dict[str, Any], writer_schemas: dict[str, dict[str, str]],
                key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """One golden line of a record: its key and value, where it came from, and what it decodes to."""
    key_base64, value_base64 = (None if part is None else base64.b64encode(part).decode("ascii")
                                for part in (key, value))
    decoder, outcome = record_decoded(format_name, options, writer_schemas, key_base64, value_base64)
    return {"where": where, "options": options, "decoder": decoder, "key_base64": key_base64,
            "value_base64": value_base64, **outcome}
