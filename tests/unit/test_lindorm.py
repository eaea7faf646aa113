"""Lindorm Streams JSON: an entry's blank ``ts`` (issue 14), the choices its module docstring spells out."""

from __future__ import annotations

import json

import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source, Table

# The message shape of Lindorm's own example: every entry with a blank ts, a cell of the default version.
SEED = (b'{"op": "Put", "table": "orders", "ts": "1677165953000", "keyOnly": "false", "data": ['
        b'{"type": "VARCHAR", "name": "id", "ts": "", "value": "o-1"}, '
        b'{"type": "BIGINT", "name": "amount", "ts": "", "value": "42"}]}')
SEED_EVENT = ChangeEvent(
    Op.UPSERT, Table("orders"), after=(Cell("id", "o-1", "VARCHAR"), Cell("amount", 42, "BIGINT")),
    source=Source(commit_time_us=1677165953000_000), attributes=(("lindorm.blank_ts", "[0,1]"),))


def test_the_seed_shape_keeps_its_blank_entry_ts() -> None:
    codec = cf.codec("lindorm")
    [event] = codec.decode([SEED])
    assert event == SEED_EVENT  # blank is the default version: no version of the cell's own
    [written] = codec.encode([event])
    assert json.loads(written) == json.loads(SEED)


def test_the_seed_shape_through_both_envelopes_is_exact() -> None:
    through = cf.convert(cf.convert(cf.convert([SEED], "lindorm", "avro"), "avro", "protobuf"), "protobuf", "lindorm")
    assert [json.loads(message) for message in through] == [json.loads(SEED)]


def test_blank_and_absent_entry_ts_stay_apart_even_in_one_column() -> None:
    message = {"op": "Put", "keyOnly": "false", "data": [
        {"name": "a", "value": "1"}, {"name": "a", "ts": "", "value": "2"}, {"name": "a", "ts": "5", "value": "3"},
        {"name": "b", "ts": ""}]}
    codec = cf.codec("lindorm")
    [event] = codec.decode([json.dumps(message).encode()])
    assert [cell.version for cell in event.after] == [None, None, 5, None]
    assert event.attributes == (("lindorm.blank_ts", "[1,3]"),)
    assert json.loads(codec.encode_event(event)) == message


def test_the_batch_decoder_reads_blank_entry_ts_itself() -> None:
    pa = pytest.importorskip("pyarrow")
    from cdcformats.envelopes import arrow

    events, undecided = cf.codec("lindorm").decode_arrow(pa.array([SEED, SEED.replace(b'"ts": "", ', b"")]))
    assert undecided.to_pylist() == [False, False]
    assert [arrow.event_from_row(row) for row in events.to_pylist()] == [
        SEED_EVENT, ChangeEvent(SEED_EVENT.op, SEED_EVENT.table, after=SEED_EVENT.after, source=SEED_EVENT.source)]


def test_an_event_of_another_format_is_written_without_entry_ts_and_loses_nothing_there() -> None:
    event = ChangeEvent(Op.UPSERT, Table("orders"), after=(Cell("id", "o-1", "VARCHAR"), Cell("n", 1, "BIGINT", 7)))
    codec = cf.codec("lindorm")
    assert codec.dropped(event) == []
    assert json.loads(codec.encode_event(event))["data"] == [
        {"type": "VARCHAR", "name": "id", "value": "o-1"}, {"type": "BIGINT", "name": "n", "ts": "7", "value": "1"}]


def test_other_formats_lose_which_entry_ts_were_blank_and_say_so() -> None:
    assert "attributes.lindorm.blank_ts" in cf.loss("lindorm", "debezium-json")
    assert "attributes.lindorm.blank_ts" not in cf.loss("lindorm", "avro")
    debezium = cf.codec("debezium-json")
    assert cf.Loss("attributes", "attributes[0]", None, "no place for lindorm.blank_ts") in (
        debezium.dropped(SEED_EVENT))


@pytest.mark.parametrize("value, written", [
    ("[1,0,1]", "[0,1]"),  # each entry once, in order
    ("[0,2,-1]", "[0]"),  # positions that are no entry
    ("[true,1.0,1]", "[1]"),  # only integers are positions
    ("[]", None), ("0", None), ("not json", None), (1, None),  # no entry at all: left out
])
def test_a_blank_ts_attribute_is_written_as_what_it_reads_back_as(value: object, written: str | None) -> None:
    event = ChangeEvent(SEED_EVENT.op, SEED_EVENT.table, after=SEED_EVENT.after, source=SEED_EVENT.source,
                        attributes=(("lindorm.blank_ts", value),))
    codec = cf.codec("lindorm")
    losses = codec.dropped(event)
    assert [loss[:3] for loss in losses] == [
        ("attributes", "attributes[0]", None) if written is None else ("attributes", "attributes[0].value", written)]
    [message] = codec.encode([event])
    assert list(codec.decode([message])) == [cf.without(event, losses)]


def test_an_entry_with_a_version_is_never_written_blank() -> None:
    event = ChangeEvent(Op.UPSERT, after=(Cell("a", "1", version=3), Cell("b", "2")),
                        attributes=(("lindorm.blank_ts", "[0,1]"),))
    codec = cf.codec("lindorm")
    [message] = codec.encode([event])
    assert json.loads(message)["data"] == [
        {"name": "a", "ts": "3", "value": "1"}, {"name": "b", "ts": "", "value": "2"}]
    assert list(codec.decode([message])) == [cf.without(event, codec.dropped(event))]
    assert codec.dropped(event)[0][1:3] == ("attributes[0].value", "[1]")


def test_key_cells_written_in_front_of_the_row_move_the_blank_entries() -> None:
    """A key kept outside the row (Tablestore's) is written in front of it: the entries named keep their blank ts."""
    event = ChangeEvent(Op.UPSERT, key=(Cell("id", "k"),), after=(Cell("a", "1"), Cell("b", "2")),
                        attributes=(("lindorm.blank_ts", "[1]"),))
    codec = cf.codec("lindorm", key_columns=["id"])
    [message] = codec.encode([event])
    assert json.loads(message)["data"] == [
        {"name": "id", "value": "k"}, {"name": "a", "value": "1"}, {"name": "b", "ts": "", "value": "2"}]
    [back] = codec.decode([message])
    assert back == cf.without(event, codec.dropped(event)) and back.attributes == (("lindorm.blank_ts", "[2]"),)
