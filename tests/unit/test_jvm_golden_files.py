"""The golden files of the JVM decoders (``tests/fixtures/jvm-golden``, described in ``tests/jvm_golden.py``) read
through the Python codecs: each message decodes to the line's event, or is refused with the line's error, and each
line names the decoder Spark runs for it (``ChangeEventDeserializer.jvm_decoder()``: its codec's ``jvm_decoder()``,
with Confluent's framing and the registry's writer schemas for a framed envelope).
``tests/integration/test_jvm_golden.py`` checks the Java decoders against the same lines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import jvm_golden

FORMATS = jvm_golden.jvm_formats()
RECORD_FORMATS = jvm_golden.record_formats()


def test_every_format_with_a_jvm_decoder_has_a_golden_file() -> None:
    files = sorted(path.stem for path in jvm_golden.GOLDEN.glob("*.jsonl"))
    assert files == sorted(FORMATS + RECORD_FORMATS)
    assert {"debezium-json", "canal-json", "maxwell-json", "lindorm", "lindorm-subscription", "arcion"} <= set(FORMATS)
    assert RECORD_FORMATS == ["debezium-avro"]


@pytest.mark.parametrize("format_name", FORMATS)
def test_the_python_codec_decodes_each_golden_message_as_the_file_says(format_name: str) -> None:
    jvm_golden.golden_registry()  # the registry the lines of Confluent-framed messages name
    differences = []
    for number, line in jvm_golden.read(format_name):
        expected: dict[str, Any] = {name: line[name] for name in ("event", "error") if name in line}
        actual = jvm_golden.decoded(format_name, line["options"], jvm_golden.message_of(line))
        if actual != expected or line["decoder"] != jvm_golden.jvm_decoder(format_name, line["options"]):
            differences.append(f"{format_name}.jsonl:{number} ({line['where']}): expected {expected}, got {actual}")
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("format_name", FORMATS)
def test_each_golden_file_holds_every_op_its_format_reads_and_refusals(format_name: str) -> None:
    ops = {line["event"]["op"] for _, line in jvm_golden.read(format_name) if "event" in line}
    errors = [line["error"] for _, line in jvm_golden.read(format_name) if "error" in line]
    assert {"INSERT", "DELETE"} <= ops or {"UPSERT", "DELETE"} <= ops, ops
    assert "UPDATE" in ops
    assert errors and all("\n" not in error and error.startswith(f"{format_name}: ") for error in errors)


def test_the_golden_files_hold_every_kind_of_value() -> None:
    kinds = set()
    for format_name in FORMATS:
        for _, line in jvm_golden.read(format_name):
            event = line.get("event") or {}
            for cell in [*event.get("key", ()), *(event.get("before") or ()), *(event.get("after") or ())]:
                kinds.add(None if cell["value"] is None else next(iter(cell["value"])))
    assert kinds == {None, "boolean", "long", "double", "string", "bytes", "decimal", "nested"}


# -- the formats whose messages are Kafka records (RecordDecoder) --------------------------------------------------

@pytest.mark.parametrize("format_name", RECORD_FORMATS)
def test_the_python_codec_decodes_each_golden_record_as_the_file_says(format_name: str) -> None:
    """Each record read from a registry that holds exactly the writer schemas its line names, and the decoder the
    codec's ``jvm_decoder()`` gives over that registry."""
    differences = []
    for number, line in jvm_golden.read(format_name):
        expected: dict[str, Any] = {name: line[name] for name in ("event", "error") if name in line}
        decoder, actual = jvm_golden.record_decoded(
            format_name, line["options"], json.loads(line["decoder"]["settings"]["writer_schemas"]),
            line["key_base64"], line["value_base64"])
        if actual != expected or line["decoder"] != decoder:
            differences.append(f"{format_name}.jsonl:{number} ({line['where']}): expected {expected}, got {actual}")
    assert not differences, "\n".join(differences[:20])


@pytest.mark.parametrize("format_name", RECORD_FORMATS)
def test_each_golden_record_file_holds_every_op_no_change_and_refusals(format_name: str) -> None:
    lines = [line for _, line in jvm_golden.read(format_name)]
    ops = {line["event"]["op"] for line in lines if line.get("event")}
    assert ops == {"INSERT", "UPDATE", "DELETE", "READ", "TRUNCATE"}, ops
    assert any("event" in line and line["event"] is None for line in lines)  # a tombstone holds no change
    errors = [line["error"] for line in lines if "error" in line]
    assert errors and all("\n" not in error and error.startswith(f"{format_name}: ") for error in errors)
    for field in ("value", "key", "op", "source.at"):
        assert any(error.startswith(f"{format_name}: field {field}: ") for error in errors), field
    assert {line["decoder"]["settings"]["registry_address"] for line in lines} == {jvm_golden.GIVEN_REGISTRY_ADDRESS}
