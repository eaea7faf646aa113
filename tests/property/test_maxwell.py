"""maxwell-json beyond the properties every format has (test_formats.py): the events as Maxwell sees them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source
from cdcformats.codecs.maxwell import POSITION_FIELDS
from cdcformats.model import INT64_MAX

from .strategies import events, images, values


def maxwell_events(codec: cf.Codec) -> st.SearchStrategy[ChangeEvent]:
    """Events as Maxwell sees them, which ``events_for`` seldom draws: its position fields, whole-second commit
    times, updates whose before image changes some of the after image's columns and adds others, and a key whose
    cells are cells of the row."""
    # Built once for the codec, not in each draw: a new events() or values() is a new strategy tree for Hypothesis
    # to set up.
    shaped_events = st.sampled_from([events(codec.carries, shape, codec) for shape in codec.shapes])
    carried_values = values(codec.carries)
    carried_images = images(codec.carries)

    @st.composite
    def drawn(draw: st.DrawFn) -> ChangeEvent:
        event = draw(draw(shaped_events))
        position = [(name, draw(carried_values)) for name in POSITION_FIELDS if draw(st.booleans())]
        seconds = draw(st.none() | st.integers(-(2**63 // 10**6), INT64_MAX // 10**6))
        source = Source(position=position, commit_time_us=None if seconds is None else seconds * 10**6)
        before = event.before
        if event.op is Op.UPDATE:
            after_names = {cell.name for cell in event.after}
            before = (*(Cell(cell.name, draw(carried_values)) if draw(st.booleans()) else cell
                        for cell in event.after),
                      *draw(carried_images.map(lambda cells: [cell for cell in cells
                                                              if cell.name not in after_names])))
        row = before if event.op is Op.DELETE else event.after
        if codec.key_columns:
            key = codec.key_columns.key_of(event.table, row)
        else:  # Maxwell writes the key values out of the row
            key = tuple(draw(st.lists(st.sampled_from(row), unique_by=lambda cell: cell.name)) if row else ())
        return ChangeEvent(event.op, event.table, key, before, event.after, source)

    return drawn()


# Built once, not per example: a codec is immutable once configured, and so is a strategy.
CODECS = {"plain": cf.codec("maxwell-json"), "keys": cf.codec("maxwell-json", key_columns=["id"])}
MAXWELL_EVENTS = {name: maxwell_events(codec) for name, codec in CODECS.items()}


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_maxwell_positions_times_and_updates_survive(configuration: str, data: st.DataObject) -> None:
    codec = CODECS[configuration]
    event = data.draw(MAXWELL_EVENTS[configuration])
    assert codec.dropped(event) == []
    assert list(codec.decode(codec.encode([event]))) == [event]
