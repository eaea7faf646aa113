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
    (_message(schema__primaryKey=["name", 7]), "schema.primaryKey"),
    (_message(payload__timestamp={"eventTime": "soon"}), "payload.timestamp.eventTime"),
    # The position's values are checked by the model, and named once it refuses one.
    (_message(payload__timestamp={"eventTime": 1, "checkpointTime": [1]}), "payload.timestamp.checkpointTime"),
    (_message(payload__timestamp={"eventTime": 1, "checkpointTime": 2 ** 70}), "payload"),
    (_message(payload__sequenceId={"a": 1}), "payload.sequenceId"),
    (_message(schema__source={"tableName": 7}), "schema.source.tableName"),
    (_message(schema__dataColumn={"id": "LONG"}), "schema.dataColumn"),
    (b'{"payload": {"op": "INSERT"}}', "schema"),
])
def test_what_is_refused_is_named(message: bytes, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("aliyun-json").decode([message]))
    assert error.value.field == field


def written(event: ChangeEvent, **options: object) -> tuple[list[dict], ChangeEvent]:
    """The messages aliyun-json writes for ``event``, and the event they read back, which is the event with what
    ``dropped()`` reports applied."""
    codec = cf.codec("aliyun-json", **options)
    messages = list(codec.encode([event]))
    [back] = codec.decode(messages)
    assert back == cf.without(event, codec.dropped(event)) and codec.dropped(back) == []
    return [json.loads(message) for message in messages], back


def test_lindorm_upserts_become_inserts_and_cell_deletes_are_columns_set_to_null() -> None:
    """Issue 13: aliyun-json stopped at the first Lindorm Delete or DeleteColumn (an UPDATE whose after image holds
    deleted cells): a deleted column in a relational image is the column set to null in an UPDATE."""
    lindorm = cf.codec("lindorm", key_columns=["id"])
    twice, put, delete, *_ = lindorm.decode(EXAMPLES[0].messages())
    assert written(put)[0][0]["payload"]["op"] == "INSERT"
    assert "op.UPSERT" in cf.loss("lindorm", "aliyun-json")
    [message], back = written(twice)
    assert list(message["payload"]["after"]["dataColumn"]).count("status") == 1  # a column once: its first cell
    assert delete.op is Op.UPDATE and any(cell.kind is not cf.CellKind.PUT for cell in delete.after)
    [message], back = written(delete)
    assert message["payload"]["op"] == "UPDATE_AFTER"
    assert all(cell.kind is cf.CellKind.PUT and cell.version is None for cell in back.after)
    assert [cell.value for cell, given in zip(back.after, delete.after) if given.kind is not cf.CellKind.PUT] == [
        None] * sum(given.kind is not cf.CellKind.PUT for given in delete.after)


def test_unknown_times_are_written_as_minus_one() -> None:
    event = ChangeEvent(Op.INSERT, Table("t"), after=(Cell("id", 1),))
    [message] = cf.codec("aliyun-json").encode([event])
    assert json.loads(message)["payload"]["timestamp"] == {"eventTime": -1, "systemTime": -1}
    assert cf.codec("aliyun-json").dropped(
        ChangeEvent(Op.INSERT, after=(), source=Source(commit_time_us=-1000))) == [
        cf.Loss("source.commit_time", "source.commit_time_us", None, "not written")]


@pytest.mark.parametrize("event, code, row", [
    (ChangeEvent(Op.READ, Table("t"), key=(Cell("id", 1),)), "INSERT", {"after": {"dataColumn": {"id": 1}}}),
    (ChangeEvent(Op.UPSERT, Table("t"), after=(Cell("id", 1),)), "INSERT", {"after": {"dataColumn": {"id": 1}}}),
    (ChangeEvent(Op.DELETE, Table("t"), after=(Cell("id", 1),)), "DELETE", {"before": {"dataColumn": {}}}),
    (ChangeEvent(Op.INSERT, Table("t"), key=(Cell("id", 1),), before=(Cell("id", 1),)), "INSERT",
     {"after": {"dataColumn": {"id": 1}}}),
])
def test_a_change_without_the_row_its_op_reads(event: ChangeEvent, code: str, row: dict) -> None:
    """An UPSERT or READ is an INSERT; a missing row is the key cells (none: an empty row)."""
    [message], _ = written(event)
    assert message["payload"]["op"] == code
    assert {name: image for name, image in message["payload"].items() if name in ("before", "after") and image} == row


def test_key_cells_outside_the_row_go_into_the_row() -> None:
    """A Tablestore primary key is not in the row image: schema.primaryKey reads the key out of the row."""
    event = ChangeEvent(Op.UPDATE, key=(Cell("id", "k1"),), after=(Cell("name", "x", version=1441803688001),))
    [message], back = written(event)
    assert message["schema"]["primaryKey"] == ["id"] and message["payload"]["after"]["dataColumn"] == {
        "id": "k1", "name": "x"}
    assert back.key == (Cell("id", "k1"),)


def test_what_has_no_form_is_refused_and_declared() -> None:
    codec = cf.codec("aliyun-json")
    with pytest.raises(cf.EncodeError, match="no op for a TRUNCATE"):
        list(codec.encode([ChangeEvent(Op.TRUNCATE, Table("t"))]))
    assert "op.TRUNCATE" in cf.loss("canal-json", "aliyun-json")
    with pytest.raises(cf.EncodeError, match="has neither"):
        list(codec.encode([ChangeEvent(Op.UPDATE, Table("t"), key=(Cell("id", 1),))]))
    assert any(item.startswith("shapes other than") for item in cf.loss("avro", "aliyun-json"))


def test_an_update_whose_old_row_lacks_the_key_stays_one_message_when_split() -> None:
    update = ChangeEvent(Op.UPDATE, Table("t"), key=(Cell("id", 1),), before=(Cell("name", "a"),),
                         after=(Cell("name", "b"), Cell("id", 1)))
    split = cf.codec("aliyun-json", split_updates=True)
    [message] = split.encode([update])
    assert json.loads(message)["payload"]["op"] == "UPDATE_AFTER"
    assert list(split.decode([message])) == [update]


def test_an_update_pair_is_a_pair_whatever_columns_without_values_its_schemas_list() -> None:
    """Found by the normal-form property: the schemas of an UPDATE_BEFORE and its UPDATE_AFTER differed only in a
    column neither image held; read as two events, they were written as a pair (a message lists only the columns it
    has), so the normal form did not read back as itself."""
    update_before = {"schema": {"dataColumn": [{"name": "id", "type": "LONG"}], "primaryKey": []},
                     "payload": {"before": {"dataColumn": {}}, "op": "UPDATE_BEFORE"}}
    update_after = {"schema": {"dataColumn": [], "primaryKey": []},
                    "payload": {"after": {"dataColumn": {}}, "op": "UPDATE_AFTER"}}
    codec = cf.codec("aliyun-json")
    events = list(codec.decode([json.dumps(update_before).encode(), json.dumps(update_after).encode()]))
    assert [(event.op, event.before, event.after) for event in events] == [(cf.Op.UPDATE, (), ())]
    normal = list(codec.encode(events))
    assert list(codec.encode(codec.decode(normal))) == normal


def test_a_key_column_the_row_lacks_is_kept_and_written_back() -> None:
    """Issue 14: a primaryKey naming a column that the row does not hold was refused. The key holds the cells that are
    there; aliyun.primaryKey keeps the list, so the message is written back as it came, and through the envelopes."""
    message = _message(schema__primaryKey=["region", "id"])
    codec = cf.codec("aliyun-json")
    [event] = codec.decode([message])
    assert event.key == (Cell("id", 2, "LONG"),)
    assert event.attributes == (("aliyun.primaryKey", '["region","id"]'), *KEPT)
    assert [json.loads(written) for written in codec.encode([event])] == [json.loads(message)]
    avro = list(cf.convert([message], codec, "avro"))
    assert [json.loads(written) for written in cf.convert(avro, "avro", codec)] == [json.loads(message)]


def test_other_formats_lose_the_names_of_key_columns_the_row_lacks_and_say_so() -> None:
    [event] = cf.codec("aliyun-json").decode([_message(schema__primaryKey=["region", "id"])])
    assert "attributes.aliyun.primaryKey" in cf.loss("aliyun-json", "debezium-json")
    assert cf.Loss("attributes", "attributes[0]", None, "no place for aliyun.primaryKey") in (
        cf.codec("debezium-json").dropped(event))


@pytest.mark.parametrize("value", [
    '["id"]',  # names no column the row lacks: the key says it all
    '["region"]',  # leaves out the key column id
    '["id","id","region"]',  # would read the key back twice
    '["region", 1]', "not json", 1,
])
def test_an_aliyun_primary_key_that_is_not_the_key_read_back_is_dropped(value: object) -> None:
    event = ChangeEvent(Op.INSERT, Table("t"), key=(Cell("id", 1),), after=(Cell("id", 1),),
                        attributes=(("aliyun.primaryKey", value),))
    [message], back = written(event)
    assert message["schema"]["primaryKey"] == ["id"] and back.attributes == ()
    assert cf.codec("aliyun-json").dropped(event) == [cf.Loss(
        "attributes", "attributes[0]", None, "no place for aliyun.primaryKey")]


def test_an_aliyun_primary_key_in_another_form_is_written_as_json_text() -> None:
    event = ChangeEvent(Op.INSERT, Table("t"), key=(Cell("id", 1),), after=(Cell("id", 1),),
                        attributes=(("aliyun.primaryKey", '[ "id", "region" ]'),))
    [message], back = written(event)
    assert message["schema"]["primaryKey"] == ["id", "region"]
    assert back.attributes == (("aliyun.primaryKey", '["id","region"]'),)


def test_the_key_cells_put_into_the_row_count_as_in_the_row() -> None:
    """A key kept outside the row goes into it, so aliyun.primaryKey may name it among the columns the row has."""
    event = ChangeEvent(Op.INSERT, Table("t"), key=(Cell("id", 1),), after=(Cell("name", "a"),),
                        attributes=(("aliyun.primaryKey", '["region","id"]'),))
    [message], back = written(event)
    assert message["schema"]["primaryKey"] == ["region", "id"]
    assert message["payload"]["after"]["dataColumn"] == {"id": 1, "name": "a"}
    assert back.key == (Cell("id", 1),) and back.attributes == event.attributes
