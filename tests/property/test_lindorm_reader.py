"""Lindorm reads a message in its documented layout with a typed msgspec reader, and any other message as any JSON:
both must give the same event, or the same error, for every message."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf

from .native import LINDORM_OPS, encode_json, garbage_bytes, json_values, lindorm_documents, text_values, version_fields
from .strategies import TYPE_NAMES, names

# Entries and messages in the documented layout whose values may still be refused: a ts that is no version, an
# integer beyond 64 bits, an op Lindorm does not have, a keyOnly that is neither true nor false.
_odd_versions = st.one_of(version_fields, st.text(max_size=3), st.integers(), st.booleans(), st.none())
_odd_entries = st.fixed_dictionaries(
    {"name": names},
    optional={"type": st.one_of(st.sampled_from(TYPE_NAMES), st.none()), "ts": _odd_versions,
              "value": st.one_of(text_values, st.none(), st.booleans(), st.integers(), st.floats(), json_values)})
_odd_documents = st.fixed_dictionaries(
    {"op": st.one_of(st.sampled_from(LINDORM_OPS), st.text(max_size=4), st.none())},
    optional={"data": st.one_of(st.lists(_odd_entries, max_size=4), json_values),
              "table": st.one_of(st.text(), st.none(), st.integers()), "ts": _odd_versions,
              "keyOnly": st.one_of(st.sampled_from(["true", "false", "yes", True, 0, 2]), st.none())})


def _outcome(codec: cf.Codec, message: Any) -> Any:
    try:
        return codec.decode_message(message)
    except cf.DecodeError as error:
        return str(error)


@given(message=st.one_of(lindorm_documents.map(encode_json), _odd_documents.map(encode_json), garbage_bytes),
       key_columns=st.sampled_from([[], ["id"], ["name", "id"]]))
def test_both_readers_give_the_same(message: bytes, key_columns: list[str]) -> None:
    codec = cf.codec("lindorm", key_columns=key_columns)
    # A bytearray is read as any JSON: the typed reader takes bytes only.
    assert _outcome(codec, message) == _outcome(codec, bytearray(message))
