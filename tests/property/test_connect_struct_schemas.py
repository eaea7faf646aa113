"""connect-json's own attributes (the key's and the value's struct schemas, ``connect-json.schema.*``) on events they
no longer fit: read from a record, then changed as a conversion or a user changes an event (the key or the row taken
away, the change made a delete, attributes taken away, reordered or replaced by anything). Whatever a configuration
writes reads back as the event with what ``dropped()`` declares applied, and that form is one it carries exactly."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf

from . import native_connect
from .own_attributes import ATTRIBUTE_CHANGES, assert_each_writes_what_it_declares, attributes_changed
from .strategies import values

CONFIGURATIONS = {"plain": {}, "names": {"key_schema_name": "shop.items.Key", "value_schema_name": "shop.items.Value"},
                  "keys": {"key_columns": ["id"]}, "schemaless": {"schemas": False}}
CODECS = {name: cf.codec("connect-json", **options) for name, options in CONFIGURATIONS.items()}
READER = cf.codec("connect-json")

OWN_NAMES = ["connect-json.schema.key", "connect-json.schema.value", "connect-json.schema.other"]
struct_headers = st.fixed_dictionaries(
    {"type": st.just("struct"), "fields": st.just([])},
    optional={"optional": st.booleans() | st.none(), "name": st.sampled_from(["pg.public.t.Key", "shop.items.Value"])
              | st.text(max_size=6), "version": st.integers(0, 3), "doc": st.text(max_size=4)})
own_values = st.one_of(
    struct_headers.map(lambda header: msgspec.json.encode(header).decode()),
    st.just('{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}]}'),
    st.just('{"type": "struct", "fields": [], "optional": false}'), st.text(max_size=8), values())


@st.composite
def changed(draw: st.DrawFn, event: cf.ChangeEvent) -> cf.ChangeEvent:
    """``event`` with some of what it says changed."""
    for _ in range(draw(st.integers(0, 3))):
        change = draw(st.sampled_from(["key", "delete", *ATTRIBUTE_CHANGES]))
        if change == "key":
            event = replace(event, key=())
        elif change == "delete":
            event = replace(event, op=cf.Op.DELETE, after=None)
        else:
            event = attributes_changed(draw, event, change, OWN_NAMES, own_values)
    return event


@given(data=st.data())
def test_what_each_configuration_writes_is_what_it_declares(data: st.DataObject) -> None:
    for event in READER.decode(data.draw(native_connect.messages), on_error=lambda _: None):
        assert_each_writes_what_it_declares(CODECS, data.draw(changed(event)))
