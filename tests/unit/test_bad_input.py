"""Bad and hostile input: a DecodeError that names the format, the message index and the field, and nothing else;
never a crash, a hang or unbounded memory."""

from __future__ import annotations

import pytest

import cdcformats as cf
from cdcformats import DecodeError

JSON_FORMATS = {"lindorm": {}, "arcion": {}, "ots-json": {"primary_key": ["id"]}}

HOSTILE = {
    "deeply nested": b"[" * 200_000 + b"]" * 200_000,
    "enormous integer": b'{"op": "Put", "ts": "1' + b"0" * 5000 + b'", "opType": "I", "cursor": {"p": 1' + b"0" * 5000
                        + b'}}',
    "number beyond a double": b'{"a": 1e400}',
    "lone surrogate": b'{"op": "\\ud800"}',
    "not JSON": b"\xff\xfe{",
    "invalid UTF-8 inside a string": b'{"op": "Put\xff"}',
}


@pytest.mark.parametrize("name", JSON_FORMATS)
@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_json_is_a_decode_error(name: str, hostile: str) -> None:
    good = {"lindorm": b'{"op": "Put", "data": []}', "arcion": b'{"a": "1"}',
            "ots-json": b'["k", null, null, null, "DR"]'}
    errors: list[DecodeError] = []
    events = list(cf.codec(name, **JSON_FORMATS[name]).decode([good[name], HOSTILE[hostile], good[name]],
                                                                on_error=errors.append))
    assert len(events) == 2
    [error] = errors
    assert error.format == name and error.position == 1 and str(error).startswith(f"{name}: message 2: ")


@pytest.mark.parametrize("name", JSON_FORMATS)
def test_a_message_over_the_size_limit_is_refused_unparsed(name: str) -> None:
    huge = b'{"op": "Put", "data": [{"name": "x", "value": "' + b"a" * 3_000_000 + b'"}]}'
    codec = cf.codec(name, max_message_bytes=1_000_000, **JSON_FORMATS[name])
    errors: list[DecodeError] = []
    assert list(codec.decode([huge], on_error=errors.append)) == []
    assert f"message 1: message of {len(huge)} bytes is over the limit of 1000000 (option max_message_bytes)" \
        in str(errors[0])
    assert errors[0].raw == huge  # whole, for a dead-letter sink; only the message text is shortened


def test_a_multi_megabyte_value_under_the_limit_decodes() -> None:
    big = "a" * 5_000_000
    [event] = cf.codec("lindorm").decode([b'{"op": "Put", "data": [{"name": "x", "value": "' + big.encode() + b'"}]}'])
    assert event.after[0].value == big


def test_an_integer_text_too_long_to_convert_stays_text() -> None:
    digits = "9" * 10_000
    [event] = cf.codec("lindorm").decode([f'{{"op": "Put", "data": [{{"type": "BIGINT", "name": "n", '
                                          f'"value": "{digits}"}}]}}'.encode()])
    assert event.after[0].value == digits


@pytest.mark.parametrize("name, options, message, field", [
    ("lindorm", {}, b'{"op": "Put", "data": [{"name": "a"}, {"name": 7}]}', "data[1].name"),
    ("lindorm", {}, b'{"op": "Put", "data": [{"name": "a", "ts": "soon"}]}', "data[0].ts"),
    ("lindorm", {}, b'{"op": "Put", "keyOnly": "maybe"}', "keyOnly"),
    ("lindorm", {}, b'{"op": "Put", "data": [{"name": "a", "colour": "red"}]}', "data[0].colour"),
    ("lindorm", {}, b'{"op": "Put", "data": [{"name": "a", "value": {"x": 1}}]}', "data[0].value"),
    ("lindorm", {}, b'{"op": "Put", "data": [{"name": "a", "value": 18446744073709551615}]}', "data[0].value"),
    ("arcion", {}, b'{"opType": "X", "tableName": {"name": "t"}}', "opType"),
    ("arcion", {}, b'{"opType": "I", "tableName": {"name": 5}}', "tableName.name"),
    ("arcion", {}, b'{"opType": "I", "tableName": {"name": "t"}, "after": {"c": [100000000000000000000]}}', "after.c"),
    ("arcion", {}, b'{"opType": "I", "tableName": {"name": "t", "hash": "h"}}', "tableName.hash"),
    ("ots", {"primary_key": ["id"]}, ("k", "c", None, "v", "U"), "timestamp"),
    ("ots", {"primary_key": ["id"]}, ("k", None, None, None, "XX"), "opType"),
    ("ots", {"primary_key": ["id"]}, (None, None, None, None, "DR"), "id"),
    ("ots", {"primary_key": ["id"]}, ("k", None, None, None, "DR", "no-sequence"), "sequenceInfo"),
    ("ots", {"primary_key": ["id"]}, ("k", "c", 1, "v", "DO"), "columnValue"),
])
def test_decode_errors_name_the_field(name: str, options: dict, message: object, field: str) -> None:
    with pytest.raises(DecodeError) as raised:
        list(cf.codec(name, **options).decode([message]))
    assert raised.value.format == name and raised.value.position == 0 and raised.value.field == field
    assert f"field {field}: " in str(raised.value)


def test_an_ots_record_with_a_bad_row_is_reported_and_the_stream_goes_on() -> None:
    rows = [("k1", None, None, None, "DR"), ("k1", "a", 5, "x", "U"), ("k2", "a", None, "x", "U"),
            ("k3", "b", 6, 1.5, "U")]
    errors: list[DecodeError] = []
    events = list(cf.codec("ots", primary_key=["id"]).decode(rows, on_error=errors.append))
    assert [error.position for error in errors] == [2]
    assert [event.key[0].value for event in events] == ["k1", "k3"]


@pytest.mark.parametrize("name, options, message", [
    ("lindorm", {}, b'{"op": ["Put"]}'),
    ("lindorm", {}, b'{"op": "Put", "ts": "1' + b"0" * 5000 + b'"}'),
    ("arcion", {}, b'{"opType": {"I": 1}, "tableName": {"name": "t"}}'),
    ("arcion", {}, b'{"opType": "I", "tableName": {"name": "t", "hash": 99999999999999999999}}'),
    ("ots", {"primary_key": ["id"]}, (2**70, None, None, None, "DR")),
    ("ots", {"primary_key": ["id"]}, ("k", None, None, None, "DR", "1" * 5000 + "_1_1_s:0")),
])
def test_odd_types_and_sizes_are_decode_errors_too(name: str, options: dict, message: object) -> None:
    errors: list[DecodeError] = []
    assert list(cf.codec(name, **options).decode([message], on_error=errors.append)) == []
    assert len(errors) == 1 and errors[0].position == 0


def test_an_ots_record_delivered_twice_in_a_row_stays_two_records() -> None:
    sequence = "0000000001_00000000000000000005_0000000001_s"
    record = [("k", "a", 1, "x", "U", f"{sequence}:0000000000"), ("k", "b", 1, "y", "U", f"{sequence}:0000000001")]
    events = list(cf.codec("ots", primary_key=["id"]).decode(record + record))
    assert len(events) == 2 and events[0] == events[1] and len(events[0].after) == 2


def test_own_attributes_that_would_not_come_back_are_reported_and_dropped() -> None:
    from cdcformats import Cell, CellKind, ChangeEvent, EncodeError, Loss, Op
    lindorm = cf.codec("lindorm")
    delete = ChangeEvent(Op.DELETE, before=(Cell("id", "1"),), attributes=(("lindorm.op", "Put"),))
    # lindorm.op names the op only where the event's own does not: a contradicting one is not written
    assert [loss[:3] for loss in lindorm.dropped(delete)] == [("attributes", "attributes[0]", None)]
    assert list(lindorm.decode(lindorm.encode([delete]))) == [ChangeEvent(Op.DELETE, before=(Cell("id", "1"),))]
    with pytest.raises(EncodeError, match="no mutation"):  # a direct caller of encode_event is still guarded
        lindorm.encode_event(delete)
    family_version = ChangeEvent(Op.UPDATE, after=(Cell("a", kind=CellKind.DELETE_VERSION),),
                                 attributes=(("lindorm.op", "DeleteFamilyVersion"),))
    assert lindorm.dropped(family_version) == []
    assert lindorm.decode_message(lindorm.encode_event(family_version)) == family_version
    arcion = cf.codec("arcion")
    hashed = ChangeEvent(Op.INSERT, cf.Table("t"), after=(), attributes=(("arcion.table_hash", "zz"),))
    assert arcion.dropped(hashed) == [Loss("attributes", "attributes[0]", None,
                                           "no place for arcion.table_hash")]
    assert list(arcion.decode(arcion.encode([hashed]))) == [ChangeEvent(Op.INSERT, cf.Table("t"), after=())]
