"""paimon-log: the Paimon / Flink Table Store Kafka log, in both changelog modes, and its file form."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source
from cdcformats.contract import KafkaRecord
from cdcformats.demo import EXAMPLES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "paimon"
SCOOTER = (Cell("id", 111), Cell("name", "scooter"), Cell("description", "Big 2-wheel scooter"))
OLD, NEW = (*SCOOTER, Cell("weight", 5.18)), (*SCOOTER, Cell("weight", 5.15))
KEY = (Cell("id", 111),)
# The value's fields, which have a null transaction: kept, so that the value is written back as it came.
NULL_TRANSACTION = ("debezium-json.fields.envelope", '["before","after","op","ts_ms","transaction"]')


def read(name: str, **options: object) -> list[ChangeEvent]:
    with open(FIXTURES / name, "rb") as file:
        return list(cf.codec("paimon-log", **options).read_file(file))


def test_the_all_log_keeps_every_change() -> None:
    assert read("products-all.jsonl") == [
        ChangeEvent(Op.INSERT, key=KEY, after=OLD),
        ChangeEvent(Op.UPDATE, key=KEY, before=OLD, after=NEW, source=Source(capture_time_us=1589362330904_000),
                    attributes=(NULL_TRANSACTION,)),
        ChangeEvent(Op.DELETE, key=KEY, before=NEW),
    ]


def test_the_upsert_log_holds_new_rows_and_tombstones() -> None:
    assert read("products-upsert.jsonl", changelog_mode="upsert") == [
        ChangeEvent(Op.UPSERT, key=KEY, after=OLD), ChangeEvent(Op.UPSERT, key=KEY, after=NEW),
        ChangeEvent(Op.DELETE, key=KEY)]


def test_the_all_log_written_in_upsert_mode_is_the_upsert_log() -> None:
    upsert = cf.codec("paimon-log", changelog_mode="upsert")
    records = list(upsert.encode(read("products-all.jsonl")))
    assert [record.value is None for record in records] == [False, False, True]
    assert list(upsert.decode(records)) == [
        ChangeEvent(Op.UPSERT, key=KEY, after=OLD),
        ChangeEvent(Op.UPSERT, key=KEY, after=NEW, source=Source(capture_time_us=1589362330904_000),
                    attributes=(NULL_TRANSACTION,)),
        ChangeEvent(Op.DELETE, key=KEY)]
    assert "op.UPDATE" in cf.loss("paimon-log", upsert) and "shape DELETE(before present; cells PUT)" in cf.loss(
        "lindorm", upsert)


def test_a_file_reads_back_what_was_written() -> None:
    codec = cf.codec("paimon-log")
    events = read("products-all.jsonl")
    file = io.BytesIO()
    assert sum(codec.write_file(file, events)) == 3
    assert file.getvalue().count(b"\n") == 3 and file.getvalue().startswith(b'{"key":{"id":111},"value":{')
    file.seek(0)
    assert list(codec.read_file(file)) == events


@pytest.mark.parametrize("options, record, field", [
    (dict(changelog_mode="upsert"), KafkaRecord(b'{"id": 1}', b'{"op": "u", "after": {"id": 1}}'), "value.op"),
    (dict(), KafkaRecord(b'{"id": [100000000000000000000]}', None), "key.id"),
    (dict(), KafkaRecord(b'{"id": 1}', b'{"op": "c", "after": 7}'), "value.after"),
    (dict(), KafkaRecord(b"[1]", None), "key"),
    (dict(), KafkaRecord(b'{"id": ', None), "key"),
    (dict(max_message_bytes=8), KafkaRecord(b'{"id": 123456}', None), "key"),
])
def test_what_is_refused_is_named(options: dict, record: KafkaRecord, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("paimon-log", **options).decode([record]))
    assert error.value.format == "paimon-log" and error.value.field == field and error.value.position == 0


def test_a_bad_line_of_a_file_is_named_and_skipped_on_request() -> None:
    lines = io.BytesIO(b'{"key": {"id": 1}, "value": null}\nnot json\n{"key": {"id": 2}, "value": null}\n')
    errors: list[cf.DecodeError] = []
    events = list(cf.codec("paimon-log").read_file(lines, on_error=errors.append))
    assert [event.key for event in events] == [(Cell("id", 1),), (Cell("id", 2),)]
    assert [str(error).split(":")[1] for error in errors] == [" line 2"] and errors[0].raw == b"not json"


def test_upsert_mode_refuses_to_write_a_change_without_a_key_and_reads_one() -> None:
    """An upsert log is keyed by the primary key (a compacted topic refuses a record without a key): a change of a
    table without one (a Lindorm Put without key_columns) has no record there, as cf.loss declares; a keyless record
    from elsewhere is still read."""
    codec = cf.codec("paimon-log", changelog_mode="upsert")
    assert "requires key" in cf.loss("lindorm", codec)
    errors: list[cf.EncodeError] = []
    assert list(codec.encode([ChangeEvent(Op.UPSERT, after=OLD)], on_error=errors.append)) == []
    assert errors[0].field == "key" and "primary key" in errors[0].reason
    keyless = cf.KafkaRecord(None, cf.codec("paimon-log").encode_event(ChangeEvent(Op.INSERT, after=OLD)).value)
    assert list(codec.decode([keyless])) == [ChangeEvent(Op.UPSERT, after=OLD)]


def test_lindorm_deletes_are_columns_set_to_null() -> None:
    """Issue 13: paimon-log stopped at the first Lindorm Delete or DeleteColumn; a deleted column is now the column
    set to null, in a ``u`` of the all log and in the new row of the upsert log."""
    twice, put, delete, delete_column, delete_family = cf.codec("lindorm", key_columns=["id"]).decode(
        EXAMPLES[0].messages())
    for mode, ops in (("all", ["c", "u", "u"]), ("upsert", ["c", "c", "c"])):
        codec = cf.codec("paimon-log", changelog_mode=mode)
        records = list(codec.encode([put, delete, delete_column]))
        values = [json.loads(record.value) for record in records]
        assert [value["op"] for value in values] == ops
        assert [json.loads(record.key) for record in records] == [{"id": "o-2"}, {"id": "o-1"}, {"id": "o-2"}]
        assert values[1]["after"] == {"id": "o-1", "status": None} and values[2]["after"] == {"id": "o-2", "gift": None}
        for event in (twice, put, delete, delete_column, delete_family):
            assert list(codec.decode(codec.encode([event]))) == [cf.without(event, codec.dropped(event))]
