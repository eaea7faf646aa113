"""Every format, in every configuration users run: lossless both ways for what it declares it carries, exact through
the canonical envelopes, and safe on garbage. What it does with other formats' events is test_matrix.py's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError

from .configurations import CONFIGURATIONS
from .strategies import events_for


def round_trip(codec: cf.Codec, event: cf.ChangeEvent) -> list[cf.ChangeEvent]:
    return list(codec.decode(codec.encode([event])))


# Built once, not per example: a codec is immutable once configured, and so is a strategy.
CODECS = {name: configuration.codec() for name, configuration in CONFIGURATIONS.items()}
CARRIED_EVENTS = {name: events_for(codec) for name, codec in CODECS.items()}


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = CODECS[configuration]
    event = data.draw(CARRIED_EVENTS[configuration])
    assert round_trip(codec, event) == [event]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form(configuration: str, data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = described.codec()
    messages = data.draw(described.messages)
    normal = list(codec.encode(codec.decode(messages)))
    assert described.same(normal, described.normal_form(messages))
    assert described.same(list(codec.encode(codec.decode(normal))), normal)  # the normal form reads back as itself


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(data=st.data())
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = described.codec()
    assert cf.loss(codec, envelope) == []
    messages = data.draw(described.messages)
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert described.same(through_envelope, described.normal_form(messages))


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_garbage_raises_only_decode_error(configuration: str, data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = described.codec()
    errors: list[DecodeError] = []
    events = list(codec.decode(data.draw(described.garbage), on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format in (codec.name, "ots-json") and error.position is not None and error.reason
