"""The golden files of the JVM encoders (``tests/fixtures/jvm-golden-encode``, described in
``tests/jvm_golden_encode.py``) written through the Python codecs: each event is written as the line's message, or
refused with the line's error, strict refuses it as the line says, and each line names the encoder its codec's
``jvm_encoder()`` gives. ``tests/integration/test_jvm_golden_encode.py`` checks the Java encoders against the same
lines."""

from __future__ import annotations

from typing import Any

import pytest

import cdcformats as cf
from tests import jvm_golden, jvm_golden_encode

FORMATS = jvm_golden_encode.encoder_formats()


def test_every_format_with_a_jvm_encoder_has_a_golden_file() -> None:
    files = sorted(path.stem for path in jvm_golden_encode.GOLDEN.glob("*.jsonl"))
    assert files == sorted(FORMATS)
    assert "debezium-json" in FORMATS


def test_debezium_json_has_a_jvm_encoder_with_and_without_schemas() -> None:
    encoder = cf.codec("debezium-json", key_columns={"shop.orders": ["id"]}).jvm_encoder()
    assert encoder is not None and encoder.class_name == "cdcformats.jvm.encoders.DebeziumJsonEncoder"
    assert encoder.settings == {"schemas": "false", "key_columns": "[]",
                                "key_columns_per_table": '{"shop.orders":["id"]}'}
    with_schemas = cf.codec("debezium-json", schemas=True).jvm_encoder()
    assert with_schemas is not None and with_schemas.class_name == encoder.class_name
    assert with_schemas.settings["schemas"] == "true"
    lines = [line for _, line in jvm_golden_encode.read("debezium-json")]
    assert sum(line["options"].get("schemas") is True for line in lines) > len(lines) / 3


def test_the_formats_of_kafka_records_write_a_key_and_a_value() -> None:
    """A format whose messages are Kafka records has golden lines of a key and a value (its Java class a
    RecordEncoder), every other one of a message."""
    assert {"connect-json", "paimon-log"} <= set(FORMATS)
    for format_name in FORMATS:
        records = cf.codec(format_name).message_type is cf.KafkaRecord
        for _, line in jvm_golden_encode.read(format_name):
            if "error" not in line:
                assert ("key" in line and "value" in line) is records, line["where"]
                assert ("message" in line or "message_base64" in line) is not records, line["where"]
    tombstones = [line for _, line in jvm_golden_encode.read("paimon-log") if "value" in line and line["value"] is None]
    assert tombstones and all(line["key"] is not None for line in tombstones)


@pytest.mark.parametrize("format_name", FORMATS)
def test_the_python_codec_writes_each_golden_event_as_the_file_says(format_name: str) -> None:
    differences = []
    for number, line in jvm_golden_encode.read(format_name):
        expected: dict[str, Any] = {name: line[name] for name in ("message", "message_base64", "key", "value", "error")
                                    if name in line}
        event = jvm_golden_encode.event_from_json(line["event"])
        actual = jvm_golden_encode.encoded(format_name, line["options"], event)
        expected["strict"] = line["strict"]
        actual["strict"] = jvm_golden_encode.strict_refusal(format_name, line["options"], event)
        encoder = cf.codec(format_name, **line["options"]).jvm_encoder()
        assert encoder is not None
        if (actual != expected or jvm_golden.event_json(event) != line["event"]
                or line["encoder"] != {"class": encoder.class_name, "settings": encoder.settings}):
            differences.append(f"{format_name}.jsonl:{number} ({line['where']}): expected {expected}, got {actual}")
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("format_name", FORMATS)
def test_each_golden_file_holds_every_op_every_decoder_file_and_refusals(format_name: str) -> None:
    lines = [line for _, line in jvm_golden_encode.read(format_name)]
    assert {line["event"]["op"] for line in lines} == {"INSERT", "UPDATE", "DELETE", "UPSERT", "READ", "TRUNCATE"}
    decoded = {line["where"].split(":")[0] for line in lines if not line["where"].startswith("by hand")}
    assert decoded == {f"tests/fixtures/jvm-golden/{path.name}" for path in jvm_golden.GOLDEN.glob("*.jsonl")
                       if path.stem not in jvm_golden.READ_BACK}
    errors = [line["error"] for line in lines if "error" in line]
    assert all("\n" not in error and error.startswith(f"{format_name}: ") for error in errors)
    # strict refuses what a target drops (none of what an envelope writes, which is every event exactly)
    refused = [line["strict"] for line in lines if line["strict"] is not None]
    assert all("\n" not in error and error.startswith(f"{format_name}: ") for error in refused)
    assert bool(refused) == (format_name not in ("avro", "protobuf"))
    # A target with a normal form refuses some changes and has options that change what it writes; the envelopes
    # write every change as it is and take no option.
    writes_every_event = cf.codec(format_name)._writes_every_event()
    assert bool(errors) is not writes_every_event
    assert any(line["options"] for line in lines) is not writes_every_event


def test_a_format_built_on_another_inherits_no_java_codec() -> None:
    """A plugin that subclasses a format may write or read otherwise than its parent, which the parent's Java class
    would not: it has a Java codec only where it names one itself, so Spark runs it on the Arrow path."""
    from cdcformats.codecs.lindorm import LindormCodec
    from cdcformats.envelopes.avro import AvroCodec

    class AvroWithoutVersions(AvroCodec):
        name = "avro-without-versions-here"

    class LindormOfMine(LindormCodec):
        name = "lindorm-of-mine"

    assert cf.codec("avro").jvm_encoder() is not None and AvroWithoutVersions().jvm_encoder() is None
    assert cf.codec("lindorm").jvm_decoder() is not None and LindormOfMine().jvm_decoder() is None
