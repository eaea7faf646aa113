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
ENCODERS = list(CONFIGURATIONS)
CARRIED_EVENTS = {name: events_for(CODECS[name]) for name in ENCODERS}


@pytest.mark.parametrize("configuration", ENCODERS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = CODECS[configuration]
    event = data.draw(CARRIED_EVENTS[configuration])
    assert round_trip(codec, event) == [event]


# One draw of native messages serves the three checks on them, which generating the messages (and their normal form)
# once for each would triple. Each still runs on every example: a loss in either envelope shows in the last one.
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form_directly_and_through_both_envelopes(configuration: str,
                                                                                 data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = CODECS[configuration]
    messages = data.draw(described.messages)
    normal_form = described.normal_form(messages)
    normal = list(codec.encode(codec.decode(messages)))
    assert described.same(normal, normal_form)
    assert described.same(list(codec.encode(codec.decode(normal))), normal)  # the normal form reads back as itself
    assert cf.loss(codec, "avro") == [] and cf.loss("avro", "protobuf") == [] and cf.loss(codec, "protobuf") == []
    through_envelopes = cf.convert(cf.convert(cf.convert(messages, codec, "avro"), "avro", "protobuf"),
                                   "protobuf", codec)
    assert described.same(list(through_envelopes), normal_form), "avro, then protobuf, lost something"


# split_updates and the Connect schema names change only what encode writes: aliyun-json+split and connect-json+names
# would read garbage along aliyun-json's and connect-json's code path.
DECODERS = [name for name in CONFIGURATIONS if name not in ("aliyun-json+split", "connect-json+names")]


@pytest.mark.parametrize("configuration", DECODERS)
@given(data=st.data())
def test_garbage_raises_only_decode_error(configuration: str, data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = CODECS[configuration]
    errors: list[DecodeError] = []
    events = list(codec.decode(data.draw(described.garbage), on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format in (codec.name, "ots-json") and error.position is not None and error.reason
