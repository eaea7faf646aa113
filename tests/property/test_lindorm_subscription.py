"""lindorm-subscription: lossless both ways for what it declares it carries, and safe on garbage."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError, EncodeError

from . import native, native_lindorm_subscription
from .strategies import events_for

NAME = "lindorm-subscription"
# The configurations users run: the documented wrapper or the payload alone, without and with the key columns (the
# key is in the Kafka record key).
CONFIGURATIONS = {"plain": dict(), "keys": dict(key_columns=["id", "name"]), "bare": dict(schemas=False),
                  "bare+keys": dict(schemas=False, key_columns=["id"])}
# Other formats' events converted into this one, each source as users configure it.
SOURCES = {
    "lindorm": dict(key_columns=["id"]),
    "arcion": dict(),
    "ots": dict(primary_key=["pk1", "pk2"]),
    "debezium-json": dict(),
}


def make(configuration: str) -> cf.Codec:
    return cf.codec(NAME, **CONFIGURATIONS[configuration])


def normal_form(configuration: str, messages: list[bytes]) -> list[bytes]:
    return native_lindorm_subscription.normal_form(messages, schemas=not configuration.startswith("bare"))


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(events_for(codec))
    assert list(codec.decode(codec.encode([event]))) == [event]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(messages=native_lindorm_subscription.messages)
def test_encode_of_decode_is_the_normal_form(configuration: str, messages: list[bytes]) -> None:
    codec = make(configuration)
    assert native_lindorm_subscription.same(list(codec.encode(codec.decode(messages))),
                                            normal_form(configuration, messages))


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(messages=native_lindorm_subscription.messages)
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        messages: list[bytes]) -> None:
    codec = make(configuration)
    assert cf.loss(codec, envelope) == []
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert native_lindorm_subscription.same(through_envelope, normal_form(configuration, messages))


def wrapped_after(value: bytes, column: bytes) -> bytes:
    """A wrapped insert whose ``after`` has the one column ``p``, with this value and this column schema."""
    return (b'{"payload": {"op": "c", "after": {"p": ' + value + b'}}, "schema": {"type": "struct", "fields": '
            b'[{"field": "after", "type": "struct", "fields": [{"field": "p", ' + column + b'}]}]}}')


BAD_MESSAGES = [
    b'{"payload": ' + b"[" * 5000 + b', "schema": {}}', b'{"op": "c", "after": ' + b'{"a": ' * 5000 + b"}",
    b'{"payload": {"op": "c"}, "schema": {"type": "struct", "fields": [{"field": "after", "fields": 7}]}}',
    b'{"payload": {"op": "u", "source": {"table": null}}, "schema": {"type": "struct", "fields": []}}',
    b'{"op": "c", "source": {"table": "t", "db": 5}}', b'{"op": "t"}', b'{"op": "c", "ts_ms": 1e3}',
    wrapped_after(b'"%%%"', b'"type": "bytes"'), wrapped_after(b"2147483648", b'"type": "int32"'),
    wrapped_after(b'"x"', b'"type": "map"'),
    *(wrapped_after(b'"AQ=="', b'"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", '
                                b'"parameters": {"scale": "' + scale + b'"}') for scale in (b"--2", "²".encode(),
                                                                                           b"9" * 5000)),
]
garbage = st.lists(st.one_of(
    native.garbage_for("lindorm"),
    native_lindorm_subscription.messages.map(lambda messages: [message[: len(message) // 2] for message in messages]),
    st.lists(st.sampled_from(BAD_MESSAGES), max_size=3)), max_size=3).map(
    lambda lists: [message for messages in lists for message in messages])


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(messages=garbage)
def test_garbage_raises_only_decode_error(configuration: str, messages: list[bytes]) -> None:
    codec = make(configuration)
    errors: list[DecodeError] = []
    events = list(codec.decode(messages, on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    assert len(events) + len(errors) == len(messages)
    for error in errors:
        assert error.format == NAME and error.position is not None and error.reason


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(configuration: str, source: str, data: st.DataObject) -> None:
    """Other formats' events written here: when dropped() reports nothing, they read back unchanged; when encode
    refuses one, dropped() had reported a loss for it."""
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
