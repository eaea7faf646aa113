"""cf.without(): what a target writes back, from the losses it reports."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

import cdcformats as cf
from cdcformats import Cell, CellKind, ChangeEvent, Loss, Op, Source, Table
from cdcformats.losses import differences

EVENT = ChangeEvent(
    Op.INSERT, Table("orders", "shop", "main"), key=(Cell("id", 1, "BIGINT", 5),),
    after=(Cell("id", 1, "BIGINT", 5), Cell("name", "a", version=7), Cell("name", "b"),
           Cell("gone", None, kind=CellKind.DELETE_ALL_VERSIONS)),
    source=Source("mysql", (("file", "binlog.1"), ("pos", 4)), 1_000_001, 2_000_000),
    key_only=True, attributes=(("x", 1), ("y", "two")))


def test_no_losses_is_the_event_itself() -> None:
    assert cf.without(EVENT, []) is EVENT


def test_fields_take_what_was_written() -> None:
    written = cf.without(EVENT, [
        Loss("op.INSERT", "op", Op.UPSERT), Loss("table.schema", "table.schema"), Loss("key_only", "key_only", False),
        Loss("source.time.sub_ms", "source.commit_time_us", 1_000_000), Loss("source.system", "source.system"),
        Loss("before", "before", ())])
    assert written == ChangeEvent(Op.UPSERT, Table("orders", None, "main"), EVENT.key, (), EVENT.after,
                                  Source(None, EVENT.source.position, 1_000_000, 2_000_000), False, EVENT.attributes)


def test_elements_are_counted_as_given_whatever_was_taken_before_them() -> None:
    written = cf.without(EVENT, [
        Loss("cell.repeated", "after[2]"), Loss("cell.version", "after[1].version"),
        Loss("cell.kind.DELETE_ALL_VERSIONS", "after[3].kind", CellKind.PUT), Loss("attributes", "attributes[0]"),
        Loss("value.int", "source.position[1].value", "4")])
    assert written.after == (Cell("id", 1, "BIGINT", 5), Cell("name", "a"), Cell("gone", None))
    assert written.attributes == (("y", "two"),)
    assert written.source.position == (("file", "binlog.1"), ("pos", "4"))


def test_a_sequence_replaced_whole_is_counted_anew() -> None:
    key_first = (Cell("pk", "k"), *EVENT.after)
    written = cf.without(EVENT, [Loss("key", "after", key_first), Loss("cell.type", "after[1].type")])
    assert written.after[0] == Cell("pk", "k") and written.after[1] == Cell("id", 1, None, 5)


def test_a_refused_change_and_a_path_that_names_nothing_are_errors() -> None:
    with pytest.raises(ValueError, match="no form"):
        cf.without(EVENT, [Loss("op.TRUNCATE", "op", cf.REFUSED)])
    with pytest.raises(ValueError, match="not a path"):
        cf.without(EVENT, [Loss("cell.type", "after.type")])
    with pytest.raises(ValueError, match="has no before"):
        cf.without(EVENT, [Loss("cell.type", "before[0].type")])
    with pytest.raises(ValueError, match="has no after\\[2\\]"):
        cf.without(EVENT, [Loss("cell.repeated", "after[2]"), Loss("cell.type", "after[2].type")])


def test_encode_writes_the_closest_form_and_strict_refuses_it() -> None:
    versioned = ChangeEvent(Op.UPDATE, Table("t"), after=(Cell("c", "v", version=3),), before=(Cell("c", "u"),))
    canal = cf.codec("canal-json")
    losses = canal.dropped(versioned)
    assert [loss.feature for loss in losses] == ["cell.version"]
    assert list(canal.decode(canal.encode([versioned]))) == [cf.without(versioned, losses)]
    with pytest.raises(cf.LossyConversionError, match="cell.version"):
        list(cf.convert(cf.codec("avro").encode([versioned]), "avro", "canal-json", strict=True))


def test_losses_count_the_elements_of_the_event_as_given() -> None:
    """A Tablestore PutRow from an event whose row repeats the key column: the key cells leave the row, and so does
    the deleted column a PutRow does not write; the others are dated. Every path counts the event as given."""
    after = (Cell("id", None, kind=CellKind.DELETE_ALL_VERSIONS), Cell("id", False), Cell("name", None),
             Cell("gone", None, kind=CellKind.DELETE_ALL_VERSIONS), Cell("name", 1))
    event = ChangeEvent(Op.INSERT, after=after, source=Source(commit_time_us=0))
    ots = cf.codec("ots", primary_key=["id"])
    losses = ots.dropped(event)
    assert [loss.path for loss in losses if loss.path.startswith("after[")] == [
        "after[0]", "after[1]", "after[2].version", "after[3]", "after[4].version"]
    assert list(ots.decode(ots.encode([event]))) == [cf.without(event, losses)] == [ots.normal_form(event)]


def test_differences_name_each_place_and_what_is_written_there() -> None:
    """The comparison behind dropped(): an element taken away, a part of a cell changed, an image replaced whole
    where its cells are not those of the event in order, and fields; without() applies what it finds."""
    written = ChangeEvent(
        Op.UPSERT, Table("orders", None, "main"), key=(Cell("id", 1, "BIGINT", 5),),
        after=(Cell("id", "1", "BIGINT", 5), Cell("name", "a"), Cell("gone", None)),
        before=(Cell("pk", "k"),), source=Source("mysql", (("file", "binlog.1"), ("pos", "4")), 1_000_000, None),
        attributes=(("y", "two"),))
    losses = differences(EVENT, written, frozenset({"cell.type"}))
    assert [loss[:3] for loss in losses] == [
        ("op.INSERT", "op", Op.UPSERT), ("table.schema", "table.schema", None), ("before", "before", written.before),
        ("value.int", "after[0].value", "1"), ("cell.version", "after[1].version", None),
        ("cell.repeated", "after[2]", None), ("cell.kind.DELETE_ALL_VERSIONS", "after[3].kind", CellKind.PUT),
        ("value.int", "source.position[1].value", "4"), ("source.time.sub_ms", "source.commit_time_us", 1_000_000),
        ("source.capture_time", "source.capture_time_us", None), ("key_only", "key_only", False),
        ("attributes", "attributes[0]", None)]
    assert cf.without(EVENT, losses) == written
    reordered = replace(EVENT, after=EVENT.after[::-1])
    assert [loss[:3] for loss in differences(EVENT, reordered, frozenset())] == [
        ("image.columns", "after", reordered.after)]
