"""A dead letter of the Arrow path names its input in its message, as the JVM's does: a Confluent-framed message
that cannot be read (a bad magic byte, an id the registry lacks) was refused by the deserializer, which does not keep
the message, and the row's message ended at the reason."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from cdcformats.envelopes.arrow import decode_array
from cdcformats.kafka import ChangeEventDeserializer


def test_framed_messages_that_cannot_be_read_name_their_input(tmp_path: Path) -> None:
    read = ChangeEventDeserializer("avro", str(tmp_path / "registry.sqlite"))
    messages = [b"\x01\x00\x00\x00\x07body", b"\x00\x00\x00\x03\xe7body"]
    rows = decode_array(pa.array(messages, pa.binary()), read, "dead-letter").to_pylist()
    errors = [row["error"] for row in rows]
    assert [error["format"] for error in errors] == ["avro", "avro"]
    assert errors[0]["message"].endswith("(input: \\x01\\x00\\x00\\x00\\x07body)"), errors[0]["message"]
    assert errors[1]["message"].endswith("(input: \\x00\\x00\\x00\\x03\\xe7body)"), errors[1]["message"]
    assert all(error["raw"] == message for error, message in zip(errors, messages))
