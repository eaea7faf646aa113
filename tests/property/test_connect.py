"""connect-json (with and without schemas, with key options) and debezium-json with its schema wrapper: lossless both
ways for what each declares it carries, and safe on garbage."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError, EncodeError
from cdcformats.codecs.base import KafkaRecord

from . import native, native_connect
from .strategies import events_for

CONFIGURATIONS: dict[str, dict[str, Any]] = {
    "connect-json": dict(),
    "connect-json+names": dict(value_schema_name="shop.items.Value", key_schema_name="shop.items.Key"),
    "connect-json+keys": dict(key_columns=["id", "name"]),
    "connect-json+schemaless": dict(schemas=False),
    "connect-json+schemaless+keys": dict(schemas=False, key_columns=["id"]),
    "debezium-json+schemas": dict(schemas=True),
    "debezium-json+schemas+keys": dict(schemas=True, key_columns=["id", "name"]),
}


def make(configuration: str) -> cf.Codec:
    return cf.codec(configuration.split("+")[0], **CONFIGURATIONS[configuration])


def native_messages(configuration: str) -> st.SearchStrategy[list[Any]]:
    if configuration.startswith("debezium-json"):
        return native_connect.messages_for("debezium-json+schemas")
    return native_connect.messages_for("connect-json+schemaless" if "schemaless" in configuration else "connect-json")


def normal_form(configuration: str, messages: list[Any]) -> list[Any]:
    if configuration.startswith("debezium-json"):
        return native_connect.normal_form_for("debezium-json+schemas", messages)
    options = CONFIGURATIONS[configuration]
    return native_connect.normal_form(messages, options.get("schemas", True), options.get("value_schema_name"),
                                      options.get("key_schema_name"), tuple(options.get("key_columns", ())))


def round_trip(codec: cf.Codec, event: cf.ChangeEvent) -> list[cf.ChangeEvent]:
    return list(codec.decode(codec.encode([event])))


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    event = data.draw(events_for(codec))
    assert round_trip(codec, event) == [event]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    messages = data.draw(native_messages(configuration))
    normal = list(codec.encode(codec.decode(messages)))
    assert native_connect.as_json(normal) == native_connect.as_json(normal_form(configuration, messages))
    assert list(codec.encode(codec.decode(normal))) == normal  # the normal form reads back as itself


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(data=st.data())
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        data: st.DataObject) -> None:
    codec = make(configuration)
    assert cf.loss(codec, envelope) == []
    messages = data.draw(native_messages(configuration))
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert native_connect.as_json(through_envelope) == native_connect.as_json(normal_form(configuration, messages))


json_garbage = st.one_of(
    native.json_values.map(msgspec.json.encode), native.lindorm_documents.map(msgspec.json.encode),
    native.arcion_realtime.map(msgspec.json.encode), native.debezium_documents.map(msgspec.json.encode),
    st.tuples(native.json_values, native.json_values).map(
        lambda parts: msgspec.json.encode({"schema": parts[0], "payload": parts[1]})),
    st.tuples(st.sampled_from(["int8", "float32", "bytes", "struct", "array", "boolean"]), native.json_values).map(
        lambda parts: msgspec.json.encode({"schema": {"type": "struct", "fields": [{"type": parts[0], "field": "a"}]},
                                           "payload": {"a": parts[1]}})),
    st.sampled_from([b"[" * 5000, b'{"schema": {"type": "struct", "fields": [], "parameters": 1}, "payload": {}}',
                     b'{"schema": {"type": "struct", "fields": [{"type": "bytes", "field": "d", "name": '
                     b'"org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "9999999999"}}]}, '
                     b'"payload": {"d": "AQ=="}}', b'"\\ud800"', b'{"a": 1e400}']))
garbage_parts = st.one_of(st.none(), st.binary(max_size=64), json_garbage,
                          json_garbage.map(lambda message: message[: len(message) // 2]))


def garbage(configuration: str) -> st.SearchStrategy[list[Any]]:
    if configuration.startswith("debezium-json"):
        return st.lists(garbage_parts.filter(lambda part: part is not None), max_size=5)
    return st.lists(st.one_of(st.builds(KafkaRecord, garbage_parts, garbage_parts), garbage_parts,
                              st.tuples(garbage_parts)), max_size=5)


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_garbage_raises_only_decode_error(configuration: str, data: st.DataObject) -> None:
    codec = make(configuration)
    errors: list[DecodeError] = []
    events = list(codec.decode(data.draw(garbage(configuration)), on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format == codec.name and error.position is not None and error.reason


SOURCES = {"lindorm": dict(key_columns=["id"]), "arcion": dict(), "ots": dict(primary_key=["pk1", "pk2"]),
           "debezium-json": dict()}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("target", CONFIGURATIONS)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(source: str, target: str, data: st.DataObject) -> None:
    """Events of other formats written here: when nothing is reported dropped, nothing is; when the codec refuses
    an event, it had reported a loss for it."""
    target_codec = make(target)
    event = data.draw(events_for(cf.codec(source, **SOURCES[source])))
    dropped = target_codec.dropped(event)
    try:
        converted = round_trip(target_codec, event)
    except EncodeError:
        assert dropped, "the target refused an event without reporting what it would lose"
        return
    if not dropped:
        assert converted == [event]
