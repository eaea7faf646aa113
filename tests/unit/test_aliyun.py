"""aliyun-json on published examples, and the choices its module docstring spells out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source, Table
from cdcformats.demo import EXAMPLES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "aliyun"
PAIMON_FIXTURES = ["paimon-event-insert.json", "paimon-event-update-in-one.json", "paimon-event-delete.json"]
PAIMON_TABLE = Table("sync_test_table", "bigdata_test")
KEPT = (("aliyun.field.version", '"0.0.1"'), ("aliyun.payload.ddl", "null"))


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes().strip()


def paimon_row(id: int, val: str) -> tuple[Cell, ...]:
    """A row of Paimon's test table, in the order of its schema.dataColumn."""
    return (Cell("id", id, "LONG"), Cell("val", val, "DOUBLE"), Cell("name", "a", "STRING"),
            Cell("create_time", 1731661114000, "DATE"))


def test_paimons_insert_example() -> None:
    event = cf.codec("aliyun-json").decode_message(fixture("paimon-event-insert.json"))
    assert event == ChangeEvent(
        Op.INSERT, PAIMON_TABLE, key=(Cell("id", 2, "LONG"),), after=paimon_row(2, "1.100000"),
        source=Source("MySQL", (("sequenceId", "-1"), ("checkpointTime", -1)), commit_time_us=None,
                      capture_time_us=1731661820245_000),
        attributes=KEPT)


def test_paimons_update_in_one_message_example() -> None:
    event = cf.codec("aliyun-json").decode_message(fixture("paimon-event-update-in-one.json"))
    assert event == ChangeEvent(
        Op.UPDATE, PAIMON_TABLE, key=(Cell("id", 2, "LONG"),), before=paimon_row(2, "1.100000"),
        after=paimon_row(2, "2.200000"),
        source=Source("MySQL", (("sequenceId", "1731663842292000001"), ("checkpointTime", 1731662097000)),
                      commit_time_us=1731662097000_000, capture_time_us=1731663848979_000),
        attributes=KEPT)


def test_paimons_delete_example() -> None:
    event = cf.codec("aliyun-json").decode_message(fixture("paimon-event-delete.json"))
    assert event == ChangeEvent(
        Op.DELETE, PAIMON_TABLE, key=(Cell("id", 1, "LONG"),), before=paimon_row(1, "1.100000"),
        source=Source("MySQL", (("sequenceId", "1731663842292000000"), ("checkpointTime", 1731662085000)),
                      commit_time_us=1731662085000_000, capture_time_us=1731663848953_000),
        attributes=KEPT)


def test_a_dataworks_message_with_a_schema_name_and_bytes() -> None:
    event = cf.codec("aliyun-json").decode_message(fixture("dataworks-update-oracle.json"))

    def row(name: str) -> tuple[Cell, ...]:
        return (Cell("id", 111, "LONG"), Cell("name", name, "STRING"), Cell("binData", b"hello", "BYTES"),
                Cell("ts", 1590315269000, "DATE"), Cell("rowid", "AAIUMPAAFAACxExAAE", "STRING"))

    assert event == ChangeEvent(
        Op.UPDATE, Table("tableName", "mySchema", "myDatabase"), key=(Cell("id", 111, "LONG"),),
        before=row("scooter"), after=row("scooter II"),
        source=Source("oracle", (("sequenceId", "1590315269000000001"), ("checkpointTime", 1590315269000)),
                      commit_time_us=1590315269000_000, capture_time_us=1590315270123_000),
        attributes=(("aliyun.field.version", '"1.0.0"'), ("aliyun.source.dbVersion", '"1.0.0"')))


@pytest.mark.parametrize("name", [*PAIMON_FIXTURES, "dataworks-update-oracle.json"])
def test_the_examples_written_back_are_the_same_json(name: str) -> None:
    codec = cf.codec("aliyun-json")
    [written] = codec.encode(codec.decode([fixture(name)]))
    assert json.loads(written) == json.loads(fixture(name))


def test_the_examples_through_avro_and_back_are_exact() -> None:
    messages = [fixture(name) for name in PAIMON_FIXTURES]
    avro = list(cf.convert(messages, "aliyun-json", "avro"))
    assert [json.loads(message) for message in cf.convert(avro, "avro", "aliyun-json")] == [
        json.loads(message) for message in messages]


def test_an_update_written_as_two_messages_reads_back_as_one_event() -> None:
    update = cf.codec("aliyun-json").decode_message(fixture("paimon-event-update-in-one.json"))
    split = cf.codec("aliyun-json", split_updates=True)
    update_before, update_after = (json.loads(message) for message in split.encode([update]))
    assert update_before["payload"]["op"] == "UPDATE_BEFORE" and update_before["payload"]["after"] is None
    assert update_after["payload"]["op"] == "UPDATE_AFTER" and update_after["payload"]["before"] is None
    assert list(split.decode(split.encode([update]))) == [update]
    assert list(cf.codec("aliyun-json").decode(split.encode([update]))) == [update]


def test_an_update_before_without_its_pair_stays_an_update_with_the_old_row_only() -> None:
    codec = cf.codec("aliyun-json", split_updates=True)
    update = codec.decode_message(fixture("paimon-event-update-in-one.json"))
    update_before, _ = codec.encode([update])
    insert = fixture("paimon-event-insert.json")
    alone, inserted = codec.decode([update_before, insert])
    assert alone.op is Op.UPDATE and alone.before == update.before and alone.after is None
    assert inserted.op is Op.INSERT
    assert json.loads(next(iter(codec.encode([alone]))))["payload"]["op"] == "UPDATE_BEFORE"


def test_base64_reads_as_bytes_only_where_it_would_be_written_back_the_same() -> None:
    message = json.loads(fixture("dataworks-update-oracle.json"))
    message["payload"]["after"]["dataColumn"]["binData"] = "aGVsbG8"  # no padding: not as it would be written
    event = cf.codec("aliyun-json").decode_message(json.dumps(message).encode())
    assert event.after[2] == Cell("binData", "aGVsbG8", "BYTES")
    assert event.before[2] == Cell("binData", b"hello", "BYTES")


def _message(**changes: object) -> bytes:
    message = json.loads(fixture("paimon-event-insert.json"))
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = message
        for parent in parents:
            target = target[parent]
        target[last] = value
    return json.dumps(message).encode()


@pytest.mark.parametrize("message, field", [
    (_message(payload__op="MHEARTBEAT"), "payload.op"),
    (_message(payload__after=None), "payload.after"),
    (_message(payload__after={"dataColumn": {"id": 2, "extra": 1}}), "payload.after.dataColumn.extra"),
    (_message(payload__after={"dataColumn": {"id": {"nested": 1}}}), "payload.after.dataColumn.id"),
    (_message(schema__primaryKey=["name", "nope"]), "schema.primaryKey[1]"),
    (_message(payload__timestamp={"eventTime": "soon"}), "payload.timestamp.eventTime"),
    (_message(schema__source={"tableName": 7}), "schema.source.tableName"),
    (_message(schema__dataColumn={"id": "LONG"}), "schema.dataColumn"),
    (b'{"payload": {"op": "INSERT"}}', "schema"),
])
def test_what_is_refused_is_named(message: bytes, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("aliyun-json").decode([message]))
    assert error.value.field == field


def test_lindorm_upserts_become_inserts_and_cell_deletes_are_refused() -> None:
    lindorm = cf.codec("lindorm", key_columns=["id"])
    aliyun = cf.codec("aliyun-json")
    twice, put, delete, *_ = lindorm.decode(EXAMPLES[0].messages())
    assert json.loads(aliyun.encode_messages(put)[0])["payload"]["op"] == "INSERT"
    assert "op.UPSERT" in cf.loss("lindorm", "aliyun-json")
    with pytest.raises(cf.EncodeError, match="column 'status' twice in one image"):
        aliyun.encode_messages(twice)
    with pytest.raises(cf.EncodeError, match="DELETE_VERSION cell has no form"):
        aliyun.encode_messages(delete)


def test_unknown_times_are_written_as_minus_one() -> None:
    event = ChangeEvent(Op.INSERT, Table("t"), after=(Cell("id", 1),))
    [message] = cf.codec("aliyun-json").encode([event])
    assert json.loads(message)["payload"]["timestamp"] == {"eventTime": -1, "systemTime": -1}
    assert cf.codec("aliyun-json").dropped(
        ChangeEvent(Op.INSERT, after=(), source=Source(commit_time_us=-1000))) == [
        ("source.commit_time", "source.commit_time_us (-1 ms means an unknown time)")]


def test_an_update_whose_old_row_lacks_the_key_stays_one_message_when_split() -> None:
    update = ChangeEvent(Op.UPDATE, Table("t"), key=(Cell("id", 1),), before=(Cell("name", "a"),),
                         after=(Cell("name", "b"), Cell("id", 1)))
    split = cf.codec("aliyun-json", split_updates=True)
    [message] = split.encode([update])
    assert json.loads(message)["payload"]["op"] == "UPDATE_AFTER"
    assert list(split.decode([message])) == [update]
