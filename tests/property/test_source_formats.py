"""Lindorm, Arcion and Tablestore: lossless both ways for what each declares it carries, and safe on garbage."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError, EncodeError
from cdcformats.codecs.ots import SINGLE_VERSION

from . import native
from .strategies import events_for

# Each format in the configurations users run: with and without key options.
CODECS = {
    "lindorm": dict(),
    "lindorm+keys": dict(key_columns=["id", "name"]),
    "arcion": dict(),
    "arcion+keys": dict(key_columns={"region": ["id"]}, table="tpch.region"),
    "debezium-json": dict(),
    "debezium-json+keys": dict(key_columns=["id", "name"]),
    "ots": dict(primary_key=["pk1", "pk2"]),
    "ots-json": dict(primary_key=["id"]),
    "ots+single": dict(primary_key=["id"], mode=SINGLE_VERSION, columns=["id", "name", "col_a", "x"]),
    "paimon-log": dict(),
    "paimon-log+upsert": dict(changelog_mode="upsert"),
}


def make(configuration: str) -> cf.Codec:
    return cf.codec(configuration.split("+")[0], **CODECS[configuration])


def round_trip(codec: cf.Codec, event: cf.ChangeEvent) -> list[cf.ChangeEvent]:
    return list(codec.decode(codec.encode([event])))


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(events_for(codec))
    assert round_trip(codec, event) == [event]


@pytest.mark.parametrize("configuration", CODECS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(data=st.data())
def test_source_to_envelope_and_back_is_the_identity(configuration: str, envelope: str, data: st.DataObject) -> None:
    codec = make(configuration)
    assert cf.loss(codec, envelope) == []
    messages = data.draw(native.messages_for(configuration))
    normal = list(codec.encode(codec.decode(messages)))
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert native.same(configuration, through_envelope, normal)


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    messages = data.draw(native.messages_for(configuration))
    assert native.same(configuration, list(codec.encode(codec.decode(messages))),
                       native.normal_form(configuration, messages))


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_garbage_raises_only_decode_error(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    messages = data.draw(native.garbage_for(configuration))
    errors: list[DecodeError] = []
    events = list(codec.decode(messages, on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format in (codec.name, "ots-json") and error.position is not None and error.reason


TARGETS = {"lindorm": dict(), "arcion": dict(), "ots": dict(primary_key=["pk1", "pk2"]), "debezium-json": dict(),
           "avro": dict()}
# The formats that carry converted events on to other systems, from the source formats.
INTEROP_TARGETS = {"paimon-log": dict(), "paimon-log+upsert": dict(changelog_mode="upsert")}
PAIRS = [(source, target) for source in CODECS for target in TARGETS if source.split("+")[0] != target] + [
    (source, target) for source in ("lindorm+keys", "arcion", "ots", "debezium-json") for target in INTEROP_TARGETS]


@pytest.mark.parametrize("source, target", PAIRS)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(source: str, target: str, data: st.DataObject) -> None:
    """For events of one format written by another: when the target reports nothing dropped, nothing is; when it
    refuses an event, it had reported a loss for it."""
    source_codec = make(source)
    target_codec = cf.codec(target.split("+")[0], **{**TARGETS, **INTEROP_TARGETS}[target])
    event = data.draw(events_for(source_codec))
    dropped = target_codec.dropped(event)
    try:
        converted = round_trip(target_codec, event)
    except EncodeError:
        assert dropped, "the target refused an event without reporting what it would lose"
        return
    if not dropped:
        assert converted == [event]
