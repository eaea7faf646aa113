"""Checks of a format's own attributes on events they no longer fit (the events changed as a conversion or a user
changes them), shared by the formats that keep some: debezium-json and connect-json."""

from __future__ import annotations

from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf
from cdcformats.losses import refused, without

ATTRIBUTE_CHANGES = ["attributes", "own", "shuffle"]


def attributes_changed(draw: st.DrawFn, event: cf.ChangeEvent, change: str, own_names: list[str],
                       own_values: st.SearchStrategy) -> cf.ChangeEvent:
    """``event`` with one of ``ATTRIBUTE_CHANGES``: an attribute taken away, one of the format's own put anywhere
    holding anything, or the attributes shuffled."""
    if change == "attributes" and event.attributes:
        taken = draw(st.integers(0, len(event.attributes) - 1))
        return replace(event, attributes=event.attributes[:taken] + event.attributes[taken + 1:])
    if change == "own":
        entry = (draw(st.sampled_from(own_names)), draw(own_values))
        at = draw(st.integers(0, len(event.attributes)))
        return replace(event, attributes=(*event.attributes[:at], entry, *event.attributes[at:]))
    if change == "shuffle":
        return replace(event, attributes=tuple(draw(st.permutations(event.attributes))))
    return event


def assert_each_writes_what_it_declares(codecs: dict[str, cf.Codec], event: cf.ChangeEvent) -> None:
    """Whatever each codec writes of ``event`` reads back as the event with what ``dropped()`` declares applied, and
    that form is one it carries exactly."""
    for name, codec in codecs.items():
        losses = codec.dropped(event)
        if refused(losses) is not None:
            continue
        expected = without(event, losses)
        assert list(codec.decode(codec.encode([event]))) == [expected], (name, losses)
        assert codec.dropped(expected) == [], f"{name} does not carry its own form"
