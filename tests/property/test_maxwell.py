"""maxwell-json: lossless both ways for what it declares it carries, exact through the envelopes, safe on garbage, and
honest about what it drops from the other formats' events."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, DecodeError, EncodeError, Op, Source
from cdcformats.codecs.maxwell import POSITION_FIELDS
from cdcformats.model import INT64_MAX

from . import native_maxwell
from .strategies import events, events_for, images, values

# With and without the option for messages that do not name their key columns.
KEY_COLUMNS = {"maxwell-json": (), "maxwell-json+keys": ("id",)}
SOURCES = {"lindorm": dict(key_columns=["id"]), "arcion": dict(), "ots": dict(primary_key=["pk1", "pk2"]),
           "debezium-json": dict()}


def make(configuration: str) -> cf.Codec:
    key_columns = KEY_COLUMNS[configuration]
    return cf.codec("maxwell-json", **({"key_columns": list(key_columns)} if key_columns else {}))


@pytest.mark.parametrize("configuration", KEY_COLUMNS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(events_for(codec))
    assert list(codec.decode(codec.encode([event]))) == [event]


@st.composite
def maxwell_events(draw: st.DrawFn, codec: cf.Codec) -> ChangeEvent:
    """Events as Maxwell sees them, which ``events_for`` seldom draws: its position fields, whole-second commit
    times, and updates whose before image changes some of the after image's columns and adds others."""
    event = draw(events(codec.carries, draw(st.sampled_from(codec.shapes)), codec))
    position = [(name, draw(values(codec.carries))) for name in POSITION_FIELDS if draw(st.booleans())]
    seconds = draw(st.none() | st.integers(-(2**63 // 10**6), INT64_MAX // 10**6))
    source = Source(position=position, commit_time_us=None if seconds is None else seconds * 10**6)
    before = event.before
    if event.op is Op.UPDATE:
        after_names = {cell.name for cell in event.after}
        before = (*(Cell(cell.name, draw(values(codec.carries))) if draw(st.booleans()) else cell
                    for cell in event.after),
                  *draw(images(codec.carries).map(lambda cells: [cell for cell in cells
                                                                  if cell.name not in after_names])))
    drawn = ChangeEvent(event.op, event.table, event.key, before, event.after, source)
    if codec.key_columns and not drawn.key:
        drawn = ChangeEvent(drawn.op, drawn.table, codec.key_columns.key_of(drawn.table, drawn.before if drawn.op
                                                                            is Op.DELETE else drawn.after),
                            drawn.before, drawn.after, source)
    return drawn


@pytest.mark.parametrize("configuration", KEY_COLUMNS)
@given(data=st.data())
def test_maxwell_positions_times_and_updates_survive(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(maxwell_events(codec))
    assert codec.dropped(event) == []
    assert list(codec.decode(codec.encode([event]))) == [event]


@pytest.mark.parametrize("configuration", KEY_COLUMNS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    key_columns = KEY_COLUMNS[configuration]
    messages = data.draw(native_maxwell.messages_for(key_columns))
    assert native_maxwell.same(list(codec.encode(codec.decode(messages))),
                               native_maxwell.normal_form(messages, key_columns))


@pytest.mark.parametrize("configuration", KEY_COLUMNS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(data=st.data())
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        data: st.DataObject) -> None:
    codec = make(configuration)
    assert cf.loss(codec, envelope) == []
    key_columns = KEY_COLUMNS[configuration]
    messages = data.draw(native_maxwell.messages_for(key_columns))
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert native_maxwell.same(through_envelope, native_maxwell.normal_form(messages, key_columns))


@pytest.mark.parametrize("configuration", KEY_COLUMNS)
@given(data=st.data())
def test_garbage_raises_only_decode_error(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    messages = data.draw(native_maxwell.garbage)
    errors: list[DecodeError] = []
    events = list(codec.decode(messages, on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format == codec.name and error.position is not None and error.reason


@pytest.mark.parametrize("configuration", KEY_COLUMNS)
@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(configuration: str, source: str, data: st.DataObject) -> None:
    """Events of the other formats written as Maxwell JSON: when nothing is reported dropped, nothing is; when the
    codec refuses an event, it had reported a loss for it."""
    codec = make(configuration)
    event = data.draw(events_for(cf.codec(source, **SOURCES[source])))
    dropped = codec.dropped(event)
    try:
        converted = list(codec.decode(codec.encode([event])))
    except EncodeError:
        assert dropped, "maxwell-json refused an event without reporting what it would lose"
        return
    if not dropped:
        assert converted == [event]
