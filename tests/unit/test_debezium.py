"""debezium-json on published examples, and the choices its module docstring spells out."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from msgspec.structs import replace

import cdcformats as cf
from cdcformats import Cell, CellKind, ChangeEvent, Op, Source, Table
from cdcformats.demo import EXAMPLES
from cdcformats.losses import Loss

FIXTURES = Path(__file__).parent.parent / "fixtures" / "debezium"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def row(**values: object) -> tuple[Cell, ...]:
    return tuple(Cell(name, value) for name, value in values.items())


def test_the_tutorial_update_event_with_its_schema() -> None:
    event = cf.codec("debezium-json", key_columns=["id"]).decode_message(fixture("mysql-tutorial-update.json"))
    # id is an int32, which is not the Connect type an int gets by default: the cell keeps it.
    before = (Cell("id", 1004, "int32"), *row(first_name="Anne", last_name="Kretchmar", email="annek@noanswer.org"))
    after = (Cell("id", 1004, "int32"),
             *row(first_name="Anne Marie", last_name="Kretchmar", email="annek@noanswer.org"))
    assert replace(event, attributes=()) == ChangeEvent(
        Op.UPDATE, Table("customers", "inventory"), key=(Cell("id", 1004, "int32"),), before=before, after=after,
        source=Source("mysql", (("version", "1.4.2.Final"), ("name", "dbserver1"), ("snapshot", "false"),
                                ("server_id", 223344), ("gtid", None), ("file", "mysql-bin.000003"), ("pos", 364),
                                ("row", 0), ("thread", 2), ("query", None)),
                      commit_time_us=1617879658000_000, capture_time_us=1617879658595_000))
    # What the message says beyond the event, so that it is written back as it came: its null transaction, the
    # order of its source's fields, and its envelope schema (the rows' columns are in the cells' types).
    assert event.attributes[:2] == (
        ("debezium-json.fields.envelope", '["before","after","source","op","ts_ms","transaction"]'),
        ("debezium-json.fields.source", '["version","connector","name","ts_ms","snapshot","db","table","server_id",'
                                        '"gtid","file","pos","row","thread","query"]'))
    schema = json.loads(fixture("mysql-tutorial-update.json"))["schema"]
    assert json.loads(event.attribute("debezium-json.schema.envelope")) == {**schema, "fields": [
        {**field, "fields": []} if field["field"] in ("before", "after") else field for field in schema["fields"]]}


def test_a_snapshot_read_written_back_is_the_same_json() -> None:
    codec = cf.codec("debezium-json")
    message = fixture("snapshot-read.json")
    event = codec.decode_message(message)
    assert event.op is Op.READ and event.table == Table("orders_new", "mydb")
    assert event.after[3] == Cell("O_TOTALPRICE", "46929.18") and event.after[7] == Cell("O_SHIPPRIORITY", 0)
    written = codec.encode_event(event)
    assert written == json.dumps(json.loads(message), separators=(",", ":")).encode()  # its null transaction too


def test_typed_columns_of_the_schema_wrapper() -> None:
    event = cf.codec("debezium-json").decode_message(fixture("types-wrapped.json"))
    assert [(cell.name, cell.value) for cell in event.after] == [("id", 7), ("photo", b"\x89PNG"),
                                                                 ("price", Decimal("3.13"))]
    assert event.table == Table("items", "public", "shop")
    assert event.source.position == (("lsn", 24023128),)


def test_debezium_json_to_avro_and_back_is_exact() -> None:
    messages = [fixture(name) for name in ("mysql-tutorial-update.json", "snapshot-read.json")]
    avro = list(cf.convert(messages, "debezium-json", "avro"))
    assert list(cf.convert(avro, "avro", "debezium-json")) == list(cf.codec("debezium-json").encode(
        cf.codec("debezium-json").decode(messages)))


@pytest.mark.parametrize("message, field", [
    (b'{"op": "m", "message": {}}', "op"),
    (b'{"op": "c", "source": {"table": 7}}', "source.table"),
    (b'{"op": "c", "ts_ms": "soon"}', "ts_ms"),
    (b'{"schema": {}, "payload": {"op": "c"}}', "schema"),
    (b'{"op": "c", "transaction": {"id": 100000000000000000000}}', "transaction.id"),
    # Images and times are read without a call where they are as most messages have them; what is not, is named.
    (b'{"op": "d", "before": "x"}', "before"),
    (b'{"op": "c", "after": {"a": 123456789012345678901234567890}}', "after.a"),
    (b'{"op": "c", "source": {"table": "t", "ts_ms": 100000000000000000000}}', "source.ts_ms"),
    (b'{"op": "c", "ts_ms": 100000000000000000000}', "ts_ms"),
])
def test_what_is_refused_is_named(message: bytes, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("debezium-json").decode([message]))
    assert error.value.field == field


def test_lindorm_puts_become_creates_and_deleted_columns_nulls_in_an_update() -> None:
    """Issue 13: debezium-json stopped at the first Lindorm Delete or DeleteColumn; a deleted column is now the
    column set to null in a ``u`` (what Debezium's users read), and a column twice keeps its first cell."""
    lindorm = cf.codec("lindorm", key_columns=["id"])
    twice, put, delete, delete_column, delete_family = lindorm.decode(EXAMPLES[0].messages())
    codec = cf.codec("debezium-json")
    written = [json.loads(message) for message in codec.encode([twice, put, delete, delete_column, delete_family])]
    assert [document["op"] for document in written] == ["c", "c", "u", "u", "d"]
    assert written[0]["after"] == {"id": "o-1", "amount": "19.90", "status": "NEW", "items": 3}
    assert written[2]["after"] == {"id": "o-1", "status": None}
    assert written[3]["after"] == {"id": "o-2", "gift": None}
    assert ("cell.kind.DELETE_VERSION", "after[1].kind", CellKind.PUT) in [loss[:3] for loss in codec.dropped(delete)]
    assert ("cell.repeated", "after[3]", None) in [loss[:3] for loss in codec.dropped(twice)]
    assert Loss("op.UPSERT", "op", Op.INSERT, "written as INSERT") in codec.dropped(put)
    assert "op.UPSERT" in cf.loss("lindorm", "debezium-json")
    for event in (twice, put, delete, delete_column, delete_family):
        assert list(codec.decode(codec.encode([event]))) == [cf.without(event, codec.dropped(event))]


def test_schemas_writes_debeziums_envelope_schema() -> None:
    """The schema generated for an event that keeps none (converted from another format, say)."""
    event = cf.codec("debezium-json").decode_message(fixture("mysql-tutorial-update.json"))
    event = replace(event, attributes=())
    written = json.loads(cf.codec("debezium-json", schemas=True).encode_event(event))
    schema = written["schema"]
    assert schema["name"] == "dbserver1.inventory.customers.Envelope" and schema["optional"] is False
    assert [field["field"] for field in schema["fields"]] == ["before", "after", "source", "op", "ts_ms"]
    before, after, source, op, ts_ms = schema["fields"]
    assert before["name"] == after["name"] == "dbserver1.inventory.customers.Value" and before["optional"] is True
    assert after["fields"][:2] == [{"type": "int32", "optional": False, "field": "id"},
                                   {"type": "string", "optional": False, "field": "first_name"}]
    assert source["name"] == "io.debezium.connector.mysql.Source"
    assert {"type": "int64", "optional": False, "field": "server_id"} in source["fields"]
    assert {"type": "string", "optional": True, "field": "gtid"} in source["fields"]
    assert op == {"type": "string", "optional": False, "field": "op"}
    assert ts_ms == {"type": "int64", "optional": True, "field": "ts_ms"}
    assert written["payload"] == json.loads(cf.codec("debezium-json").encode_event(event))


def test_schemas_carry_bytes_and_decimals() -> None:
    codec = cf.codec("debezium-json", schemas=True)
    event = codec.decode_message(fixture("types-wrapped.json"))
    written = json.loads(codec.encode_event(event))
    assert written == json.loads(fixture("types-wrapped.json"))  # its schema describes only after
    assert written["payload"]["after"] == {"id": 7, "photo": "iVBORw==", "price": "ATk="}
    price = written["schema"]["fields"][0]["fields"][2]
    assert price["name"] == "org.apache.kafka.connect.data.Decimal"
    assert price["parameters"] == {"scale": "2", "connect.decimal.precision": "10"}
    assert list(codec.decode(codec.encode([event]))) == [event]
    # With schemas, a position's array is written as its JSON text (Connect's source struct has no array field).
    assert "value.bytes" in cf.loss(codec, "debezium-json") and cf.loss(cf.codec("debezium-json"), codec) == [
        "value.nested"]


def test_without_schemas_decimals_are_text_and_with_them_exact() -> None:
    event = ChangeEvent(Op.INSERT, after=row(amount=Decimal("12345678901234567890123456789.0123456789")))
    plain = cf.codec("debezium-json")
    assert json.loads(plain.encode_event(event))["after"]["amount"] == "12345678901234567890123456789.0123456789"
    assert plain.dropped(event)
    wrapped = cf.codec("debezium-json", schemas=True)
    assert not wrapped.dropped(event) and list(wrapped.decode(wrapped.encode([event]))) == [event]
    not_a_number = ChangeEvent(Op.INSERT, after=row(amount=Decimal("NaN")))
    assert wrapped.dropped(not_a_number) == [Loss("value.decimal", "after[0].value", "NaN",
                                                  "written as 'NaN'")]
    assert json.loads(wrapped.encode_event(wrapped.written(not_a_number)))["payload"]["after"] == {"amount": "NaN"}


def test_a_double_and_a_float_column_of_the_schema_wrapper() -> None:
    """JsonConverter names Connect's FLOAT64 "double" and FLOAT32 "float" (Debezium's products.weight is a double)."""
    message = (b'{"schema": {"type": "struct", "fields": [{"type": "struct", "fields": ['
               b'{"type": "int32", "optional": false, "field": "id"}, {"type": "double", "optional": true, '
               b'"field": "weight"}, {"type": "float", "optional": true, "field": "ratio"}], "optional": true, '
               b'"field": "after"}]}, "payload": {"before": null, "after": {"id": 111, "weight": 5.18, '
               b'"ratio": 0.1}, "op": "c"}}')
    event = cf.codec("debezium-json").decode_message(message)
    assert [(cell.name, cell.value) for cell in event.after] == [("id", 111), ("weight", 5.18), ("ratio", 0.1)]


PRODUCT_FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "name"},
    {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
     "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "price"},
    {"type": "int16", "optional": True, "field": "stock"}]
ISSUE_13_MESSAGE = {
    "schema": {"type": "struct", "fields": [
        *({"type": "struct", "fields": PRODUCT_FIELDS, "optional": True, "name": "dbserver1.inventory.products.Value",
           "field": image} for image in ("before", "after")),
        {"type": "struct", "fields": [{"type": "string", "optional": False, "field": "connector"},
                                      {"type": "int64", "optional": False, "field": "ts_ms"},
                                      {"type": "string", "optional": False, "field": "db"},
                                      {"type": "string", "optional": False, "field": "table"},
                                      {"type": "string", "optional": False, "field": "name"}],
         "optional": False, "name": "io.debezium.connector.mysql.Source", "field": "source"},
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"}],
        "optional": False, "name": "dbserver1.inventory.products.Envelope", "version": 1},
    "payload": {"before": None, "after": {"id": 101, "name": "scooter", "price": "AU8=", "stock": 7},
                "source": {"connector": "mysql", "ts_ms": 1700000000000, "db": "inventory", "table": "products",
                           "name": "dbserver1"},
                "op": "c", "ts_ms": 1700000000123}}


@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
def test_a_schema_wrapped_message_through_an_envelope_and_back_is_the_same_message(envelope: str) -> None:
    """Issue 13: through avro or protobuf, int32 came back int64, optional flags, the Decimal's precision and the
    envelope's name were lost. Column schemas are kept in the cells' types, the envelope's and the rows' own schemas
    in debezium-json.schema.* attributes."""
    message = json.dumps(ISSUE_13_MESSAGE).encode()
    codec = cf.codec("debezium-json", schemas=True)
    event = codec.decode_message(message)
    assert event.after[0] == Cell("id", 101, "int32") and event.after[2].value == Decimal("3.35")
    schema = ISSUE_13_MESSAGE["schema"]
    assert json.loads(event.attribute("debezium-json.schema.envelope")) == {**schema, "fields": [
        {**field, "fields": []} if field["field"] in ("before", "after") else field for field in schema["fields"]]}
    back = list(cf.convert(cf.convert([message], codec, envelope, strict=True), envelope, codec, strict=True))
    assert [json.loads(written) for written in back] == [ISSUE_13_MESSAGE]


def test_an_array_whose_items_differ_is_read_under_the_wrapper_and_written_as_its_json_text() -> None:
    """Connect has no schema for it: the envelope's schema describes it as the text it is written as (this raised an
    AssertionError, found by the JVM decoder's property)."""
    codec = cf.codec("debezium-json", schemas=True)
    message = (b'{"schema":{"type":"struct","fields":[]},'
               b'"payload":{"op":"c","after":{"a":[1,"x"]},"source":{"p":[1,"x"]}}}')
    event, = codec.decode([message])
    assert event.after == (cf.Cell("a", (1, "x")),) and event.source.position == (("p", (1, "x")),)
    written = json.loads(next(iter(codec.encode([event]))))
    assert written["payload"]["after"] == {"a": '[1,"x"]'} and written["payload"]["source"]["p"] == '[1,"x"]'


def test_a_wrapper_without_a_schema_is_written_back_in_one() -> None:
    """JsonConverter's form of a record that has no schema, as Paimon's tests have it: both configurations write it
    back as it came (with ``schemas``, its rows as without)."""
    message = (b'{"schema":null,"payload":{"before":null,"after":{"id":101,"name":"scooter","weight":3.14},'
               b'"op":"c","ts_ms":1596684883000}}')
    for codec in (cf.codec("debezium-json"), cf.codec("debezium-json", schemas=True)):
        event = codec.decode_message(message)
        assert event.attribute("debezium-json.schemaless_wrapper") is True
        assert codec.dropped(event) == [] and codec.encode_event(event) == message


def test_without_schemas_the_envelope_schema_is_declared_dropped() -> None:
    """Issue 28, problem 9: the schema was written away, undeclared."""
    event = cf.codec("debezium-json").decode_message(json.dumps(ISSUE_13_MESSAGE).encode())
    index = [name for name, _ in event.attributes].index("debezium-json.schema.envelope")
    plain = cf.codec("debezium-json")
    assert Loss("attributes", f"attributes[{index}]",
                why="no place for debezium-json.schema.envelope") in plain.dropped(event)
    assert list(plain.decode(plain.encode([event]))) == [cf.without(event, plain.dropped(event))]
    assert "attributes.debezium-json.schema.*" in cf.loss(cf.codec("debezium-json", schemas=True), plain)


def test_a_transaction_field_holding_an_array_is_written_as_its_json_text() -> None:
    """The transaction block holds scalars: an array there would not read back (and its loss crashed dropped())."""
    event = ChangeEvent(Op.INSERT, after=row(id=1), attributes=(("debezium.transaction.id", (1, "x")),))
    codec = cf.codec("debezium-json")
    assert json.loads(codec.encode_event(codec.written(event)))["transaction"] == {"id": '[1,"x"]'}
    assert list(codec.decode(codec.encode([event]))) == [cf.without(event, codec.dropped(event))]


def test_the_order_of_an_empty_source_is_declared_dropped_where_the_source_is_not_written() -> None:
    # found by the envelope property: {"source": {"connector": null}} keeps the source's order, and an event without
    # the envelope's order leaves the empty source out, and its order with it
    event = cf.ChangeEvent(cf.Op.INSERT, attributes=(("debezium-json.fields.source", '["connector"]'),))
    codec = cf.codec("debezium-json")
    assert [loss.path for loss in codec.dropped(event)] == ["attributes[0]"]
    assert list(codec.decode(codec.encode([event]))) == [cf.without(event, codec.dropped(event))]
