"""lindorm-subscription on the published example, and the choices its module docstring spells out."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from pathlib import Path

import pytest
from msgspec.structs import replace

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source, Table
from cdcformats.demo import EXAMPLES
from cdcformats.losses import Loss

FIXTURES = Path(__file__).parent.parent / "fixtures" / "lindorm-subscription"
NAME = "lindorm-subscription"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def row(**values: object) -> tuple[Cell, ...]:
    return tuple(Cell(name, value) for name, value in values.items())


# The schema declares id an int32, which is not the Connect type an int gets by default: the cell keeps it.
DOCUMENTED_UPDATE = ChangeEvent(
    Op.UPDATE, Table("customers", "default", "ld-xxxx"), key=(Cell("id", 1004, "int32"),),
    before=(Cell("id", 1004, "int32"), Cell("name", "Jane")), after=(Cell("id", 1004, "int32"), Cell("name", "Anne")),
    source=Source(position=(("version", "v1.0"),), commit_time_us=1465491411807_000,
                  capture_time_us=1465491411815_000))


def test_the_documented_update_record() -> None:
    assert cf.codec(NAME, key_columns=["id"]).decode_message(fixture("update.json")) == DOCUMENTED_UPDATE


def test_without_key_columns_there_is_no_key() -> None:
    event = cf.codec(NAME).decode_message(fixture("update.json"))
    assert event.key == () and event.after == DOCUMENTED_UPDATE.after


def ordered(value: object) -> object:
    """A JSON value with its objects' key order made part of equality."""
    if isinstance(value, dict):
        return [(name, ordered(item)) for name, item in value.items()]
    return [ordered(item) for item in value] if isinstance(value, list) else value


def test_written_back_it_is_the_documented_record_schema_included() -> None:
    codec = cf.codec(NAME, key_columns=["id"])
    written = codec.encode_event(codec.decode_message(fixture("update.json")))
    assert ordered(json.loads(written)) == ordered(json.loads(fixture("update.json")))


def test_without_schemas_it_writes_the_payload_alone_which_reads_back_untyped() -> None:
    codec = cf.codec(NAME, key_columns=["id"], schemas=False)
    written = codec.encode_event(codec.decode_message(fixture("update.json")))
    assert ordered(json.loads(written)) == ordered(json.loads(fixture("update.json"))["payload"])
    assert codec.decode_message(written) == replace(
        DOCUMENTED_UPDATE, key=row(id=1004), before=row(id=1004, name="Jane"), after=row(id=1004, name="Anne"))
    assert codec.dropped(DOCUMENTED_UPDATE)[0][:3] == ("cell.type", "key[0].type", None)


def test_insert_and_delete_records() -> None:
    codec = cf.codec(NAME, key_columns=["id"])
    source = {"version": "v1.0", "db": "ld-xxxx", "namespace": "default", "table": "customers", "ts_ms": 1}
    insert, delete = codec.decode([
        json.dumps({"payload": {"op": "c", "ts_ms": 2, "before": None, "after": {"id": 1005, "name": "Sam"},
                                "source": source}, "schema": {"type": "struct", "fields": []}}).encode(),
        json.dumps({"payload": {"op": "d", "ts_ms": 2, "before": {"id": 1005, "name": "Sam"}, "after": None,
                                "source": source}, "schema": {"type": "struct", "fields": []}}).encode()])
    assert insert.op is Op.INSERT and insert.before is None and insert.key == (Cell("id", 1005),)
    assert delete.op is Op.DELETE and delete.after is None and delete.key == (Cell("id", 1005),)
    assert delete.table == Table("customers", "default", "ld-xxxx")


def test_typed_columns_of_the_wrapper_read_exactly() -> None:
    unscaled = -(10**37) - 1  # 38 digits: more than the 28 the default decimal context keeps
    data = unscaled.to_bytes(16, "big", signed=True)
    message = json.dumps({
        "payload": {"op": "c", "after": {"price": base64.b64encode(data).decode(), "photo": "iVBORw=="}},
        "schema": {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": [
            {"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
             "parameters": {"scale": "4"}},
            {"field": "photo", "type": "bytes"}]}]}}).encode()
    codec = cf.codec(NAME)
    event = codec.decode_message(message)
    assert event.after == (Cell("price", Decimal("-1000000000000000000000000000000000.0001"),
                                '{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":'
                                '{"scale":"4"}}'), Cell("photo", b"\x89PNG", '{"type":"bytes"}'))
    assert codec.decode_message(codec.encode_event(event)) == event


def test_a_missing_namespace_is_written_as_null() -> None:
    codec = cf.codec(NAME)
    event = codec.decode_message(b'{"op": "r", "after": {"id": 1}, "source": {"db": "ld-1", "table": "t"}}')
    assert event.table == Table("t", None, "ld-1") and event.op is Op.READ
    assert json.loads(codec.encode_event(event))["payload"]["source"] == {"db": "ld-1", "namespace": None, "table": "t"}


def test_without_a_table_db_and_namespace_stay_in_the_position() -> None:
    event = cf.codec(NAME).decode_message(b'{"op": "c", "source": {"db": "ld-1", "namespace": "ns"}}')
    assert event.table is None and event.source.position == (("db", "ld-1"), ("namespace", "ns"))


WRAPPER = b', "schema": {"type": "struct", "fields": []}}'


@pytest.mark.parametrize("message, field", [
    (b'{"op": "t"}', "op"),
    (b'{"op": "m", "message": {}}', "op"),
    (b'{"payload": {"op": "x"}' + WRAPPER, "payload.op"),
    (b'{"payload": []' + WRAPPER, "payload"),
    (b'{"payload": {"op": "c"}, "schema": {}}', "schema"),
    (b'{"payload": {"op": "c", "source": {"table": "t", "namespace": 7}}' + WRAPPER, "payload.source.namespace"),
    (b'{"op": "c", "source": {"table": null}}', "source.table"),
    (b'{"op": "c", "source": {"ts_ms": "soon"}}', "source.ts_ms"),
    (b'{"op": "c", "ts_ms": 1.5}', "ts_ms"),
])
def test_what_is_refused_is_named(message: bytes, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec(NAME).decode([message]))
    assert error.value.format == NAME and error.value.field == field and error.value.position == 0


def test_upserts_become_creates_and_truncates_are_refused() -> None:
    codec = cf.codec(NAME)
    upsert = ChangeEvent(Op.UPSERT, Table("t"), after=row(id=1))
    assert json.loads(codec.encode_event(upsert))["payload"]["op"] == "c"
    assert codec.dropped(upsert) == [Loss("op.UPSERT", "op", Op.INSERT, "written as INSERT")]
    with pytest.raises(cf.EncodeError) as error:
        list(codec.encode([ChangeEvent(Op.TRUNCATE, Table("t"))]))
    assert error.value.format == NAME and error.value.field == "op"
    assert "op.TRUNCATE" in cf.loss("debezium-json", NAME)


def test_lindorm_deletes_are_columns_set_to_null_in_an_update() -> None:
    """Issue 13: lindorm-subscription stopped at the first Lindorm Delete or DeleteColumn; a deleted column is now
    the column set to null, a column twice keeps its first cell."""
    twice, put, delete, delete_column, delete_family = cf.codec("lindorm", key_columns=["id"]).decode(
        EXAMPLES[0].messages())
    codec = cf.codec(NAME, key_columns=["id"])
    payloads = [json.loads(message)["payload"] for message in codec.encode([twice, put, delete, delete_column])]
    assert [payload["op"] for payload in payloads] == ["c", "c", "u", "u"]
    assert payloads[0]["after"] == {"id": "o-1", "amount": "B8Y=", "status": "NEW", "items": 3}  # Decimal("19.90")
    assert payloads[2]["after"] == {"id": "o-1", "status": None}
    assert payloads[3]["after"] == {"id": "o-2", "gift": None}
    for event in (twice, put, delete, delete_column, delete_family):
        assert list(codec.decode(codec.encode([event]))) == [cf.without(event, codec.dropped(event))]


def test_the_payload_alone_hands_debezium_json_everything_it_carries() -> None:
    bare = cf.codec(NAME, schemas=False)
    # But for a position or a field that Debezium reads as its own (the table's schema, the transaction).
    assert cf.loss(bare, "debezium-json") == ["source.position", "attributes.debezium.field.*"]
    assert cf.loss(bare, "avro") == [] and cf.loss(bare, "protobuf") == []
    assert cf.loss(NAME, "avro") == [] and cf.loss(NAME, "protobuf") == []
    assert "cell.type" in cf.loss(NAME, "debezium-json")  # the wrapper keeps Connect types, debezium-json does not
    payload = json.dumps(json.loads(fixture("update.json"))["payload"]).encode()  # untyped: no schema
    debezium = list(cf.convert([payload], bare, "debezium-json", strict=True))
    assert json.loads(debezium[0])["source"] == {"ts_ms": 1465491411807, "db": "ld-xxxx", "schema": "default",
                                                 "table": "customers", "version": "v1.0"}
    assert list(cf.convert(debezium, "debezium-json", bare)) == list(bare.encode(bare.decode([payload])))
