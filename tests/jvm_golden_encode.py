"""The golden files of the JVM encoders (``tests/fixtures/jvm-golden-encode/<format>.jsonl``): what each line holds.

A line is one JSON object: ``where`` the event came from (a line of a decoder golden file, ``tests/jvm_golden.py``,
or the case written by hand), ``options`` the codec's options, ``encoder`` what its ``jvm_encoder()`` gives
(``class``, ``settings``), ``event`` the event in the JSON form of ``tests/jvm_golden.py``, and then either
``message``, the text of the one message ``encode_messages`` writes for it (``message_base64``, its bytes in base64,
where they are not UTF-8 text), or, for a format whose messages are Kafka records, ``key`` and ``value``, the text
of each part of the one record (null for no key, or a tombstone), or ``error``, the one-line error that
refuses it (as ``EncodeError`` renders it with no position and no input: ``<format>: field <field>: <reason>``);
last ``strict``, the one-line error the option ``strict`` refuses it with (``convert.refusal``: the first thing the
target would drop), or null where it drops nothing.
``tests/jvm/EncodeGoldenCheck.java`` encodes each line's event with the Java encoder and compares; the unit test
``tests/unit/test_jvm_golden_encode_files.py`` does the same through the Python codec.
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import cdcformats as cf
from cdcformats import ChangeEvent, EncodeError, KafkaRecord
from cdcformats.convert import refusal
from cdcformats.envelopes import arrow
from cdcformats.model import Cell, CellKind, Op, Source, Table, Value

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "jvm-golden-encode"


def encoder_formats() -> list[str]:
    """Every format whose codec, with its default options, has a JVM encoder."""
    return [name for name in cf.formats() if _has_jvm_encoder(name)]


def _has_jvm_encoder(name: str) -> bool:
    try:
        return cf.codec(name).jvm_encoder() is not None
    except cf.ConfigurationError:  # a required option (ots's primary_key): no default encoder to test
        return False


def value_from_json(value: dict[str, Any] | None) -> Value:
    """The inverse of ``jvm_golden.value_json``."""
    if value is None:
        return None
    (kind, member), = value.items()
    if kind == "double":
        return float(member)
    if kind == "bytes":
        return base64.b64decode(member)
    if kind == "decimal":
        return Decimal(member)
    if kind == "nested":
        return arrow.value_from_row({"nested": json.dumps(member)}, "value")
    return member


def _cells(cells: list[dict[str, Any]] | None) -> tuple[Cell, ...] | None:
    return None if cells is None else tuple(
        Cell(cell["name"], value_from_json(cell["value"]), cell["type"], cell["version"], CellKind(cell["kind"]))
        for cell in cells)


def _entries(entries: list[dict[str, Any]]) -> tuple[tuple[str, Value], ...]:
    return tuple((entry["name"], value_from_json(entry["value"])) for entry in entries)


def event_from_json(event: dict[str, Any]) -> ChangeEvent:
    """The inverse of ``jvm_golden.event_json``."""
    table, source = event["table"], event["source"]
    return ChangeEvent(
        Op(event["op"]), None if table is None else Table(table["name"], table["schema"], table["catalog"]),
        _cells(event["key"]) or (), _cells(event["before"]), _cells(event["after"]),
        Source(source["system"], _entries(source["position"]), source["commit_time_us"], source["capture_time_us"]),
        key_only=event["key_only"], attributes=_entries(event["attributes"]))


def encoded(format_name: str, options: dict[str, Any], event: ChangeEvent) -> dict[str, Any]:
    """``{"message": ...}``, ``{"key": ..., "value": ...}`` or ``{"error": ...}``: what the Python codec writes for
    one event."""
    try:
        messages = cf.codec(format_name, **options).encode_messages(event)
    except EncodeError as error:
        return {"error": str(EncodeError(error.format, error.reason, field=error.field))}
    assert len(messages) == 1, f"{format_name} wrote {len(messages)} messages for one event"
    if isinstance(messages[0], KafkaRecord):
        return {part: None if data is None else data.decode("utf-8") for part, data in messages[0]._asdict().items()}
    try:
        return {"message": messages[0].decode("utf-8")}
    except UnicodeDecodeError:  # a binary message (an envelope's)
        return {"message_base64": base64.b64encode(messages[0]).decode("ascii")}


def strict_refusal(format_name: str, options: dict[str, Any], event: ChangeEvent) -> str | None:
    """The one-line error ``strict`` refuses ``event`` with, or None."""
    try:
        error: EncodeError | None = refusal(cf.codec(format_name, **options), event)
    except EncodeError as refused:  # not a loss: an event the target cannot write at all
        error = refused
    return None if error is None else str(EncodeError(error.format, error.reason, field=error.field))


def line(where: str, format_name: str, options: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """One golden line: the event in its JSON form, where it came from, what it is written as, and what strict says."""
    encoder = cf.codec(format_name, **options).jvm_encoder()
    assert encoder is not None, f"{format_name} {options}: no JVM encoder"
    read = event_from_json(event)
    return {"where": where, "options": options, "encoder": {"class": encoder.class_name, "settings": encoder.settings},
            "event": event, **encoded(format_name, options, read), "strict": strict_refusal(format_name, options, read)}


def read(format_name: str) -> list[tuple[int, dict[str, Any]]]:
    """The lines of one golden file, each with its number (from 1)."""
    path = GOLDEN / f"{format_name}.jsonl"
    return [(number, json.loads(text)) for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
