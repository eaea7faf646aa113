"""canal-json: lossless both ways for what it declares it carries, its normal form, envelopes, garbage, and what it
reports dropped when other formats' events are written in it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError, EncodeError

from . import native, native_canal
from .strategies import events_for

# With and without skipping the messages that change no row.
CODECS = {"canal-json": dict(), "canal-json+skip_ddl": dict(skip_ddl=True)}
NATIVE = {"canal-json": native_canal.messages, "canal-json+skip_ddl": native_canal.messages_with_ddl}


def make(configuration: str) -> cf.Codec:
    return cf.codec("canal-json", **CODECS[configuration])


# events_for draws key cells and positions at random and filters out those Canal cannot read back (the key is read
# out of the row by pkNames, the position is id then gtid): most draws are filtered, none is narrowed by hand.
@pytest.mark.parametrize("configuration", CODECS)
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(events_for(codec))
    assert list(codec.decode(codec.encode([event]))) == [event]


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    messages = data.draw(NATIVE[configuration])
    assert list(codec.encode(codec.decode(messages))) == native_canal.normal_form(messages)


@pytest.mark.parametrize("configuration", CODECS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(data=st.data())
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        data: st.DataObject) -> None:
    codec = make(configuration)
    assert cf.loss(codec, envelope) == []
    messages = data.draw(NATIVE[configuration])
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert through_envelope == native_canal.normal_form(messages)


@st.composite
def damaged_documents(draw: st.DrawFn) -> bytes:
    """A canal message with one field replaced by any JSON value."""
    document = draw(native_canal.documents(with_ddl=True))
    field = draw(st.sampled_from([*native_canal.CANAL_FIELDS, "data.0", "old.0"]))
    value = draw(native.json_values)
    if field.endswith(".0"):
        rows = document.get(field[:-2])
        if rows:
            rows[0] = value if draw(st.booleans()) else {"x": value}
    else:
        document[field] = value
    return native.encode_json(document)


truncated_documents = damaged_documents().map(lambda message: message[: len(message) // 2])
canal_garbage = st.lists(st.one_of(damaged_documents(), truncated_documents,
                                   st.sampled_from([b'{"type": "INSERT", "data": ' + b"[" * 2000,
                                                    b'{"type": "INSERT", "es": 1' + b"0" * 400 + b"}",
                                                    b'{"type": "INSERT", "id": 1' + b"0" * 30 + b"}",
                                                    b'{"type": "UPDATE", "data": [{}], "old": []}'])), max_size=5)
# Random bytes, truncated and deeply nested JSON, other formats' messages, and canal messages with a field damaged.
garbage = native.garbage_for("debezium-json") | canal_garbage


@pytest.mark.parametrize("configuration", CODECS)
@given(messages=garbage)
def test_garbage_raises_only_decode_error(configuration: str, messages: list[bytes]) -> None:
    codec = make(configuration)
    errors: list[DecodeError] = []
    events = list(codec.decode(messages, on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format == codec.name and error.position is not None and error.reason


SOURCES = {"lindorm": dict(key_columns=["id"]), "arcion": dict(), "ots": dict(primary_key=["pk1", "pk2"]),
           "debezium-json": dict()}


@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(source: str, data: st.DataObject) -> None:
    """Events of other formats written as canal-json: when nothing is reported dropped, nothing is; when the codec
    refuses an event, it had reported a loss for it."""
    canal = cf.codec("canal-json")
    event = data.draw(events_for(cf.codec(source, **SOURCES[source])))
    dropped = canal.dropped(event)
    try:
        converted = list(canal.decode(canal.encode([event])))
    except EncodeError:
        assert dropped, "canal-json refused an event without reporting what it would lose"
        return
    if not dropped:
        assert converted == [event]
