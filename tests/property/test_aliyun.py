"""aliyun-json: lossless both ways for what it declares it carries, in both ways of writing updates, and safe on
garbage."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError, EncodeError

from . import native_aliyun
from .strategies import events_for

# The configurations users run: an update as one message (the default) or as an UPDATE_BEFORE / UPDATE_AFTER pair.
CODECS = {"aliyun-json": {}, "aliyun-json+split": {"split_updates": True}}
SOURCES = {"lindorm": {"key_columns": ["id"]}, "arcion": {}, "ots": {"primary_key": ["pk1", "pk2"]},
           "debezium-json": {}}


def make(configuration: str) -> cf.Codec:
    return cf.codec("aliyun-json", **CODECS[configuration])


def as_json(messages: list[bytes]) -> list[object]:
    return [msgspec.json.decode(message) for message in messages]


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(events_for(codec))
    assert list(codec.decode(codec.encode([event]))) == [event]


@pytest.mark.parametrize("configuration", CODECS)
@given(messages=native_aliyun.messages)
def test_encode_of_decode_is_the_normal_form(configuration: str, messages: list[bytes]) -> None:
    codec = make(configuration)
    assert as_json(list(codec.encode(codec.decode(messages)))) == as_json(
        native_aliyun.normal_form(messages, split_updates=configuration.endswith("+split")))


@pytest.mark.parametrize("configuration", CODECS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(messages=native_aliyun.messages)
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        messages: list[bytes]) -> None:
    codec = make(configuration)
    assert cf.loss(codec, envelope) == []
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert as_json(through_envelope) == as_json(
        native_aliyun.normal_form(messages, split_updates=configuration.endswith("+split")))


@pytest.mark.parametrize("configuration", CODECS)
@given(messages=native_aliyun.garbage)
def test_garbage_raises_only_decode_error(configuration: str, messages: list[bytes]) -> None:
    codec = make(configuration)
    errors: list[DecodeError] = []
    events = list(codec.decode(messages, on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format == codec.name and error.position is not None and error.reason


@pytest.mark.parametrize("configuration", CODECS)
@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(configuration: str, source: str, data: st.DataObject) -> None:
    """Events of other formats written here: when nothing is reported dropped, nothing is; when the event is
    refused, a loss had been reported for it."""
    codec = make(configuration)
    event = data.draw(events_for(cf.codec(source, **SOURCES[source])))
    dropped = codec.dropped(event)
    try:
        converted = list(codec.decode(codec.encode([event])))
    except EncodeError:
        assert dropped, "the codec refused an event without reporting what it would lose"
        return
    if not dropped:
        assert converted == [event]
