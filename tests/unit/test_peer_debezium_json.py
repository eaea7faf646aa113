"""debezium-json against what Debezium really emits (tests/fixtures/peers): every record reads, and a row change is
written back byte for byte, with schemas and without; JSON is spelt as JsonConverter's Jackson spells it."""

from __future__ import annotations

import pytest

import cdcformats as cf
from cdcformats.codecs._kit.json_message import encode_as_jackson, jackson_float
from tests.peers import recorded

RECORDS = recorded.postgres()
CHANGES = [record for record in RECORDS if record.is_change]
CODECS = {True: cf.codec("debezium-json", schemas=True), False: cf.codec("debezium-json")}


def test_the_recordings_hold_what_the_workload_made() -> None:
    """Every operation, tombstones, heartbeats and transaction records, so the tests below see them all."""
    operations = {cf.codec("debezium-json").decode_message(record.value_plain).op for record in CHANGES}
    assert operations == {cf.Op.READ, cf.Op.INSERT, cf.Op.UPDATE, cf.Op.DELETE, cf.Op.TRUNCATE}
    assert any(record.value is None for record in RECORDS)  # tombstones
    assert any(record.topic.startswith("__debezium-heartbeat") for record in RECORDS)
    assert any(record.topic.endswith(".transaction") for record in RECORDS)


@pytest.mark.parametrize("schemas", [True, False], ids=["schemas", "plain"])
def test_every_row_change_is_written_back_as_debezium_sent_it(schemas: bool) -> None:
    codec = CODECS[schemas]
    for record in CHANGES:
        sent = record.value if schemas else record.value_plain
        assert sent is not None
        events = codec.decode_messages(sent)
        written = [message for event in events for message in codec.encode_messages(event)]
        assert [message.decode() for message in written] == [sent], record.where


@pytest.mark.parametrize("schemas", [True, False], ids=["schemas", "plain"])
def test_what_is_no_row_change_is_refused_saying_what_it_is_or_skipped(schemas: bool) -> None:
    """Heartbeats and transaction BEGIN/END records: a one-line refusal, or with skip_control no event."""
    skipping = cf.codec("debezium-json", schemas=schemas, skip_control=True)
    controls = [record for record in RECORDS if record.value is not None and not record.is_change]
    assert controls
    for record in controls:
        sent = record.value if schemas else record.value_plain
        with pytest.raises(cf.DecodeError, match=r"field op: a (heartbeat|transaction's (BEGIN|END) record) "
                                                 r"changes no row \(option skip_control skips it\)"):
            CODECS[schemas].decode_message(sent)
        assert skipping.decode_messages(sent) == [], record.where


@pytest.mark.parametrize(("value", "java"), [
    (1e7, "1.0E7"), (1e-4, "1.0E-4"), (0.001, "0.001"), (100.0, "100.0"), (9999999.5, "9999999.5"),
    (123456789.0, "1.23456789E8"), (-3.4e38, "-3.4E38"), (1.7e308, "1.7E308"), (0.0, "0.0"), (-0.0, "-0.0"),
    (2.25, "2.25"), (0.0009, "9.0E-4"),
])
def test_a_float_is_spelt_as_java_spells_a_double(value: float, java: str) -> None:
    assert bytes(jackson_float(value)).decode() == java


def test_strings_are_escaped_as_jackson_escapes_them() -> None:
    """Control characters with upper-case hex, characters beyond the BMP as their surrogate pair, the rest as is; a
    backslash before "u00" is no escape of its own."""
    assert encode_as_jackson(["\x1f\b\U0001F600é\x7f\u2028", "\\u001f"]) == \
        '["\\u001F\\b\\uD83D\\uDE00é\x7f\u2028","\\\\u001f"]'.encode()
