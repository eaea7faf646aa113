"""connect-json on published examples, and the choices its module docstring spells out."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import Cell, CellKind, ChangeEvent, Op, Struct, Table
from cdcformats.codecs._kit.connect_schema import DECIMAL, SOURCE_TYPE, TIMESTAMP
from cdcformats.contract import KafkaRecord
from cdcformats.demo import EXAMPLES
from cdcformats.losses import refused

FIXTURES = Path(__file__).parent.parent / "fixtures" / "connect"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_the_tutorial_tombstone_is_a_delete_of_the_key() -> None:
    record = KafkaRecord(fixture("debezium-tutorial-key.json"), None)
    event = cf.codec("connect-json").decode_message(record)
    assert event == ChangeEvent(Op.DELETE, key=(Cell("id", 1004, "int32"),), attributes=(
        ("connect-json.schema.key",
         '{"type":"struct","fields":[],"optional":false,"name":"dbserver1.inventory.customers.Key"}'),))
    written = cf.codec("connect-json").encode_event(event)
    assert written.value is None and json.loads(written.key) == json.loads(record.key)
    renamed = cf.codec("connect-json", key_schema_name="customers.Key").encode_event(event)
    assert json.loads(renamed.key)["schema"]["name"] == "customers.Key"


def test_a_value_with_logical_timestamps() -> None:
    """Fields whose schema says more than their type (here: optional, though they hold values) keep all of it."""
    event = cf.codec("connect-json").decode_message(KafkaRecord(None, fixture("kip-timestamp-value.json")))
    assert event == ChangeEvent(Op.UPSERT, after=(
        Cell("c1", 10000, '{"type":"int32","optional":true}'), Cell("c2", "bar", '{"type":"string","optional":true}'),
        Cell("create_ts", 1501834166000, TIMESTAMP), Cell("update_ts", 1501834166000, TIMESTAMP)),
        attributes=(("connect-json.schema.value", '{"type":"struct","fields":[],"optional":false,"name":"foobar"}'),))
    written = json.loads(cf.codec("connect-json").encode_event(event).value)
    assert written == json.loads(fixture("kip-timestamp-value.json"))


def test_a_value_written_back_is_the_same_json() -> None:
    message = fixture("streamkap-value.json")
    event = cf.codec("connect-json", key_columns=["id"]).decode_message(KafkaRecord(None, message))
    assert event == ChangeEvent(Op.UPSERT, key=(Cell("id", 1),),
                                after=(Cell("id", 1), Cell("customer_id", 1234), Cell("customer_name", "John Doe")))
    written = cf.codec("connect-json").encode_event(event)
    assert json.loads(written.value) == json.loads(message)
    assert json.loads(written.key)["payload"] == {"id": 1}


def test_a_decimal_reads_exactly() -> None:
    event = cf.codec("connect-json").decode_message(KafkaRecord(None, fixture("decimal-value.json")))
    """The Decimal's precision parameter is kept with its schema (issue 13), so it is written back."""
    event = cf.codec("connect-json").decode_message(KafkaRecord(None, fixture("decimal-value.json")))
    schema = json.loads(fixture("decimal-value.json"))["schema"]["fields"][1]
    assert event.after == (Cell("id", 1), Cell("amount", Decimal("12.3400"), json.dumps(
        {name: part for name, part in schema.items() if name != "field"}, separators=(",", ":"))))
    field = json.loads(cf.codec("connect-json").encode_event(event).value)["schema"]["fields"][1]
    assert field == schema and field["parameters"]["connect.decimal.precision"] == "38"


def test_a_schemaless_value() -> None:
    codec = cf.codec("connect-json", schemas=False)
    event = codec.decode_message(KafkaRecord(None, fixture("dalelane-schemaless.json")))
    assert event.after == (Cell("id", 12345678), Cell("message", "Hello World"), Cell("isDemo", True))
    assert json.loads(codec.encode_event(event).value) == json.loads(fixture("dalelane-schemaless.json"))
    with pytest.raises(cf.DecodeError, match="exactly the fields schema and payload"):
        cf.codec("connect-json").decode_message(KafkaRecord(None, fixture("dalelane-schemaless.json")))


def test_type_names_are_narrowed_and_kept() -> None:
    codec = cf.codec("connect-json")
    event = ChangeEvent(Op.UPSERT, after=(Cell("small", 7, "TINYINT"), Cell("big", 300, "TINYINT"),
                                          Cell("ratio", 0.5, "FLOAT"), Cell("third", 0.1, "FLOAT"),
                                          Cell("precise", 0.1234567891, "FLOAT"),
                                          Cell("gone", None, "BIGINT"), Cell("n", 5)))
    fields = json.loads(codec.encode_event(event).value)["schema"]["fields"]
    assert [(field["type"], field.get("parameters")) for field in fields] == [
        ("int8", {SOURCE_TYPE: "TINYINT"}), ("int64", {SOURCE_TYPE: "TINYINT"}),
        ("float", {SOURCE_TYPE: "FLOAT"}), ("float", {SOURCE_TYPE: "FLOAT"}),
        ("double", {SOURCE_TYPE: "FLOAT"}), ("int64", {SOURCE_TYPE: "BIGINT"}), ("int64", None)]
    assert fields[5]["optional"] is True
    assert list(codec.decode(codec.encode([event]))) == [event]


def test_a_float_reads_as_connect_holds_it_and_java_prints_it() -> None:
    """JsonConverter names Connect's FLOAT32 and FLOAT64 "float" and "double"; a float is a single, printed short."""
    value = (b'{"schema": {"type": "struct", "fields": [{"type": "float", "optional": false, "field": "f"}, '
             b'{"type": "float", "optional": false, "field": "g"}, {"type": "double", "optional": false, '
             b'"field": "d"}]}, "payload": {"f": 5.18, "g": 0.1234567891, "d": 0.1234567891}}')
    event = cf.codec("connect-json").decode_message(KafkaRecord(None, value))
    assert event.after == (Cell("f", 5.18, "float"), Cell("g", 0.12345679, "float"), Cell("d", 0.1234567891))


def test_lindorm_to_the_tablestore_sink() -> None:
    """Puts become rows, a deleted column a null field (the sink's column delete), a row delete a tombstone. Issue
    13: a Lindorm Delete (one version of a column) was refused; it is the column set to null too."""
    _twice, put, delete_version, delete_column, delete_row = cf.codec("lindorm", key_columns=["id"]).decode(
        EXAMPLES[0].messages())
    codec = cf.codec("connect-json")
    record = codec.encode_event(put)
    assert json.loads(record.key)["payload"] == {"id": "o-2"}
    assert json.loads(record.value)["payload"] == {"id": "o-2", "amount": "AfQ=", "status": "NEW", "gift": True}
    assert json.loads(codec.encode_event(codec.written(delete_column)).value)["payload"] == {"id": "o-2", "gift": None}
    assert codec.encode_event(delete_row) == KafkaRecord(record.key, None)
    assert json.loads(next(codec.encode([delete_version])).value)["payload"] == {"id": "o-1", "status": None}
    assert ("cell.kind.DELETE_VERSION", "after[1].kind", CellKind.PUT) in [
        loss[:3] for loss in codec.dropped(delete_version)]
    assert "op.UPSERT" not in cf.loss("lindorm", "connect-json") and "before" in cf.loss("arcion", "connect-json")


@pytest.mark.parametrize("event, written", [
    (ChangeEvent(Op.INSERT, Table("t"), after=(Cell("a", 1),)), ChangeEvent(Op.UPSERT, after=(Cell("a", 1),))),
    (ChangeEvent(Op.UPDATE, key=(Cell("a", 1),), before=(Cell("a", 0),), after=(Cell("a", 1),)),
     ChangeEvent(Op.UPSERT, key=(Cell("a", 1),), after=(Cell("a", 1),))),
    (ChangeEvent(Op.DELETE, key=(Cell("a", 1),), before=(Cell("a", 1),)), ChangeEvent(Op.DELETE, key=(Cell("a", 1),))),
    (ChangeEvent(Op.DELETE, after=(Cell("a", 1),)), ChangeEvent(Op.DELETE)),
    (ChangeEvent(Op.UPSERT, after=(Cell("a", 1), Cell("a", 2))), ChangeEvent(Op.UPSERT, after=(Cell("a", 1),))),
    (ChangeEvent(Op.UPSERT, after=(Cell("d", Decimal("NaN")),)), ChangeEvent(Op.UPSERT, after=(Cell("d", "NaN"),))),
])
def test_changes_from_other_formats_are_written_in_their_closest_form(event: ChangeEvent,
                                                                       written: ChangeEvent) -> None:
    """Issue 13: an INSERT or UPDATE is the row put, a DELETE a tombstone of its key, whatever images they have."""
    codec = cf.codec("connect-json")
    assert codec.written(event) == written and list(codec.decode(codec.encode([event]))) == [written]
    assert codec.dropped(event) and codec.dropped(written) == []


@pytest.mark.parametrize("event", [ChangeEvent(Op.TRUNCATE), ChangeEvent(Op.UPDATE, before=(Cell("a", 1),)),
                                   ChangeEvent(Op.INSERT)])
def test_a_change_without_a_row_is_refused(event: ChangeEvent) -> None:
    """A TRUNCATE, or a change whose row is not known, has no record: neither a row put nor a tombstone."""
    with pytest.raises(cf.EncodeError) as error:
        list(cf.codec("connect-json").encode([event]))
    assert error.value.field == "op" and refused(cf.codec("connect-json").dropped(event))
    assert any(item.startswith("shapes other than") for item in cf.loss("debezium-json", "connect-json"))


def _value(fields: str, payload: str) -> bytes:
    return f'{{"schema": {{"type": "struct", "fields": [{fields}]}}, "payload": {payload}}}'.encode()


@pytest.mark.parametrize("record, field", [
    (KafkaRecord(None, b'{"schema": null, "payload": {}, "x": 1}'), "value"),
    (KafkaRecord(b"[1]", None), "key"),
    (KafkaRecord(None, _value('{"type": "int8", "field": "a"}, {"type": "int8", "field": "a"}', "{}")),
     "value.schema.fields[1]"),
])
def test_what_is_refused_is_named(record: KafkaRecord, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("connect-json").decode([record]))
    assert error.value.field == field and error.value.position == 0


@pytest.mark.parametrize("fields, payload, value", [
    ('{"type": "int8", "field": "a"}', '{"a": 300}', 300),
    ('{"type": "int32", "field": "a"}', '{"a": "0"}', "0"),
    (f'{{"type": "bytes", "name": "{DECIMAL}", "parameters": {{"scale": "2"}}, "field": "a"}}', '{"a": 1.5}', 1.5),
    (f'{{"type": "bytes", "name": "{DECIMAL}", "field": "a"}}', '{"a": "AQ=="}', "AQ=="),
    ('{"type": "bytes", "field": "a"}', '{"a": "not base64!"}', "not base64!"),
    ('{"type": "geometry", "field": "a"}', '{"a": {"x": 1}}', Struct((("x", 1),))),
])
def test_a_value_that_disagrees_with_its_schema_is_kept_as_sent_with_its_schema(fields: str, payload: str,
                                                                                value: object) -> None:
    codec = cf.codec("connect-json")
    event, = codec.decode([KafkaRecord(None, _value(fields, payload))])
    cell, = event.after
    schema = {name: part for name, part in json.loads(fields).items() if name != "field"}
    assert cell == cf.Cell("a", value, json.dumps(schema, separators=(",", ":")))
    written, = codec.encode([event])
    assert json.loads(written.value)["payload"] == json.loads(payload)
    assert list(codec.decode([written])) == [event]


@pytest.mark.parametrize("fields, payload, value", [
    ('{"type": "struct", "fields": [{"type": "int32", "field": "x"}, {"type": "string", "field": "y"}], '
     '"field": "a"}', '{"a": {"x": 1, "y": "b"}}', Struct((("x", 1), ("y", "b")))),
    ('{"type": "array", "items": {"type": "bytes"}, "field": "a"}', '{"a": ["AQ==", null]}', (b"\x01", None)),
    ('{"type": "map", "keys": {"type": "string"}, "values": {"type": "int64"}, "field": "a"}', '{"a": {"k": 2}}',
     Struct((("k", 2),))),
    ('{"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}, "field": "a"}', '{"a": [[1, "v"]]}',
     ((1, "v"),)),
])
def test_struct_array_and_map_columns_are_nested_values_written_back_as_they_came(fields: str, payload: str,
                                                                                  value: object) -> None:
    codec = cf.codec("connect-json")
    event, = codec.decode([KafkaRecord(None, _value(fields, payload))])
    assert event.after[0].value == value
    written, = codec.encode([event])
    assert json.loads(written.value)["payload"] == json.loads(payload)
    assert list(codec.decode([written])) == [event]


def test_a_payload_field_the_schema_does_not_declare_is_read_without_a_schema() -> None:
    codec = cf.codec("connect-json")
    event, = codec.decode([KafkaRecord(None, _value('{"type": "int8", "field": "a"}', '{"b": [1], "a": 2}'))])
    assert event.after == (Cell("a", 2, '{"type":"int8"}'), Cell("b", (1,)))  # int8 without "optional": kept whole
    assert list(codec.decode(codec.encode([event]))) == [event]


def test_a_null_schema_reads_the_payload_without_one() -> None:
    event, = cf.codec("connect-json").decode([KafkaRecord(None, b'{"schema": null, "payload": {"a": [1]}}')])
    assert event.after == (cf.Cell("a", (1,)),)
