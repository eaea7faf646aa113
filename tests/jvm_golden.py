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
import json
import math
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import cdcformats as cf
from cdcformats import ChangeEvent, DecodeError
from cdcformats.envelopes import arrow
from cdcformats.kafka import ChangeEventDeserializer
from cdcformats.model import Cell, Value

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "jvm-golden"


# The formats whose golden files read back what the encoders' golden files hold (the canonical envelopes: each event
# of those files, written by Python, then cases of their own): their events are no new events for the encoders.
READ_BACK = ("avro", "protobuf")


def jvm_formats() -> list[str]:
    """Every format whose codec, with its default options, has a JVM decoder."""
    return [name for name in cf.formats() if _has_jvm_decoder(name)]


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
