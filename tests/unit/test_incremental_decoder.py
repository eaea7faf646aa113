"""The incremental decoder: what ``feed`` gives back as messages come, and what ``flush`` gives at the end."""

from __future__ import annotations

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Table


def test_the_default_decoder_gives_each_message_as_it_comes() -> None:
    decoder = cf.codec("canal-json").incremental_decoder()
    message = b'{"data":[{"id":"1"}],"table":"t","type":"INSERT"}'
    [unit] = decoder.feed(7, message)
    assert (unit.position, unit.messages, unit.error) == (7, (message,), None) and len(unit.events) == 1
    [refused] = decoder.feed(8, b"{")
    assert refused.events == [] and refused.error is not None and refused.error.position == 8
    assert decoder.flush() == []


def test_a_tablestore_record_is_given_when_the_next_one_opens_or_at_the_end() -> None:
    decoder = cf.codec("ots", primary_key=["id"]).incremental_decoder()
    assert decoder.feed(0, ("k", None, None, None, "DR")) == []
    assert decoder.feed(1, ("k", "a", 1, "x", "U")) == []
    [put] = decoder.feed(2, ("j", None, None, None, "DR"))
    assert put.position == 0 and len(put.messages) == 2 and put.events[0].op is Op.UPSERT
    [delete] = decoder.flush()
    assert delete.position == 2 and delete.events == [ChangeEvent(Op.DELETE, key=(Cell("id", "j"),))]
    assert decoder.flush() == []


def test_an_aliyun_update_before_waits_for_its_update_after() -> None:
    codec = cf.codec("aliyun-json", split_updates=True)
    update = ChangeEvent(Op.UPDATE, Table("t", "db"), (Cell("id", 1),), (Cell("id", 1), Cell("v", "a")),
                         (Cell("id", 1), Cell("v", "b")))
    before, after = codec.encode_exact(update)
    decoder = codec.incremental_decoder()
    assert decoder.feed(0, before) == []
    [joined] = decoder.feed(1, after)
    assert joined.position == 0 and joined.messages == (before, after) and joined.events == [update]
    assert decoder.feed(2, before) == []
    [alone] = decoder.flush()
    assert alone.position == 2 and alone.events[0].after is None
