"""debezium-json's own attributes (the order of the envelope's and the source's fields, the envelope schema, the
schemaless wrapper) on events they no longer fit: read from a real-shaped message, then changed as a conversion or a
user changes an event (rows, position, times, transaction, attributes taken away, reordered or replaced by anything).
Whatever a configuration writes reads back as the event with what ``dropped()`` declares applied, and that form is
one it carries exactly (issue 28, problem 9: the schema attributes were written away undeclared)."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf
from cdcformats.codecs._kit.json_message import encode_as_jackson, with_jackson_floats

from . import native, native_connect
from .own_attributes import ATTRIBUTE_CHANGES, assert_each_writes_what_it_declares, attributes_changed
from .strategies import cells, entries, int64s, names, values

CONFIGURATIONS = {"plain": {}, "schemas": {"schemas": True}, "keys": {"key_columns": ["id"]},
                  "schemas+keys": {"schemas": True, "key_columns": ["id"]}}
CODECS = {name: cf.codec("debezium-json", **options) for name, options in CONFIGURATIONS.items()}
READER = cf.codec("debezium-json", schemas=True)

OWN_NAMES = ["debezium-json.fields.envelope", "debezium-json.fields.source", "debezium-json.schema.envelope",
             "debezium-json.schemaless_wrapper", "debezium.transaction.id", "debezium.field.ts_ns"]
field_names = st.lists(st.sampled_from(["before", "after", "source", "op", "ts_ms", "ts_us", "transaction",
                                        "ts_ns", "version", "connector", "name", "db", "schema", "table", "pos"])
                       | names, max_size=8)
own_values = st.one_of(
    field_names.map(lambda listed: msgspec.json.encode(listed).decode()), st.booleans(), st.text(max_size=8),
    native_connect.debezium_real_wrapped().map(lambda message: msgspec.json.encode(message["schema"]).decode()),
    st.just('{"type":"struct","fields":[{"type":"string","optional":false,"field":"op"}]}'), values())


# What changed() draws, built once, not in each draw: a new cells() or entries() is a new strategy tree for
# Hypothesis to set up.
_rows = st.none() | st.lists(cells(), max_size=3).map(tuple)
_positions = entries()
_times = st.none() | int64s
_tables = st.none() | st.builds(cf.Table, st.text(max_size=5), st.none() | st.text(max_size=5),
                                st.none() | st.text(max_size=5))


@st.composite
def changed(draw: st.DrawFn, event: cf.ChangeEvent) -> cf.ChangeEvent:
    """``event`` with some of what it says changed."""
    for _ in range(draw(st.integers(0, 3))):
        change = draw(st.sampled_from(["rows", "position", "times", "table", *ATTRIBUTE_CHANGES]))
        if change == "rows":
            image = draw(st.sampled_from(["before", "after"]))
            event = replace(event, **{image: draw(_rows)})
        elif change == "position":
            event = replace(event, source=replace(event.source, position=draw(_positions)))
        elif change == "times":
            event = replace(event, source=replace(event.source, commit_time_us=draw(_times),
                                                  capture_time_us=draw(_times)))
        elif change == "table":
            event = replace(event, table=draw(_tables))
        else:
            event = attributes_changed(draw, event, change, OWN_NAMES, own_values)
    return event


messages = st.one_of(native.debezium_documents, native_connect.debezium_real_wrapped(),
                     native_connect.debezium_wrapped(),
                     native.debezium_documents.map(lambda document: {"schema": None, "payload": document}))


def decoded(message: dict[str, Any]) -> list[cf.ChangeEvent]:
    return list(READER.decode([msgspec.json.encode(message)], on_error=lambda _: None))


@given(data=st.data())
def test_what_each_configuration_writes_is_what_it_declares(data: st.DataObject) -> None:
    for event in decoded(data.draw(messages)):
        assert_each_writes_what_it_declares(CODECS, data.draw(changed(event)))


@given(message=native_connect.debezium_real_wrapped())
def test_a_real_message_with_schemas_is_written_back_byte_for_byte(message: dict[str, Any]) -> None:
    """Compact JSON comes back byte for byte, directly and through the canonical envelopes: as it was, but for
    column values of another spelling than JsonConverter's (an integer in a double column is written 5.0), and
    spelt as JsonConverter's Jackson writes JSON (``1.0E7``, a character beyond the BMP escaped)."""
    data = msgspec.json.encode(message)
    normal_form = native_connect.debezium_wrapped_normal_form(message)
    normal = encode_as_jackson({**normal_form, "payload": with_jackson_floats(normal_form["payload"])})
    assert msgspec.json.decode(normal)["schema"] == message["schema"]
    events = list(READER.decode([data]))
    assert list(READER.encode(events)) == [normal]
    for envelope in ("avro", "protobuf"):
        assert list(cf.convert(cf.convert([data], READER, envelope, strict=True), envelope, READER,
                               strict=True)) == [normal]
