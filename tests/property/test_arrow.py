"""The Arrow form of the canonical event, and the batch decoders: the Spark functions are only as exact as these."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import cdcformats as cf  # noqa: E402
from cdcformats import arrow  # noqa: E402

from . import native  # noqa: E402
from .strategies import events  # noqa: E402


@given(st.lists(events(), max_size=4))
def test_events_survive_the_arrow_form(batch: list[cf.ChangeEvent]) -> None:
    rows = arrow.to_arrow(batch)
    assert rows.type == arrow.EVENT
    assert [arrow.event_from_row(row) for row in rows.to_pylist()] == batch


def comparable(rows: pa.StructArray) -> list:
    """Rows as events where they are events (the model's equality holds NaN equal to NaN), else as they are."""
    return [arrow.event_from_row(row) if row is not None and row["error"] is None else row for row in rows.to_pylist()]


def reference(codec: cf.Codec, values: pa.Array) -> list:
    return comparable(arrow.decode_array(values, codec.decode_message, "dead-letter"))


# Ways a line of a batch can go wrong that a JSON-lines reader sees differently from a one-message parser.
def _mangled(message: bytes) -> st.SearchStrategy[bytes]:
    return st.sampled_from([
        message.replace(b",", b",\n", 1), message + b"\n" + message, message + b" " + message, b" \t" + message,
        message[:-1] + b', "extra": 1}', message.replace(b'"', b"'", 1), message + b"\xff", b"\r\n",
        message.replace(b"{", b'{"op": "Put", ', 1), message.replace(b'"', b'"\\ud800', 1),
    ])


def lindorm_batches(configuration: str) -> st.SearchStrategy[list[bytes | None]]:
    valid = native.messages_for(configuration).flatmap(lambda messages: st.just(messages))
    one = st.one_of(valid.map(lambda messages: messages[0] if messages else b"{}"), native.garbage_for(
        configuration).map(lambda messages: messages[0] if messages else b""), st.none())
    mangled = valid.filter(bool).flatmap(lambda messages: _mangled(messages[0]))
    return st.lists(st.one_of(one, mangled, one), max_size=12)


@pytest.mark.parametrize("configuration", ["lindorm", "lindorm+keys"])
@given(data=st.data())
def test_the_lindorm_batch_decoder_agrees_with_the_reference(configuration: str, data: st.DataObject) -> None:
    codec = cf.codec("lindorm", **({"key_columns": ["id", "name"]} if configuration == "lindorm+keys" else {}))
    messages = data.draw(lindorm_batches(configuration))
    values = pa.array(messages, pa.binary())
    batch = arrow.decode_array(values, codec.decode_message, "dead-letter", codec.decode_arrow)
    assert comparable(batch) == reference(codec, values)


@pytest.mark.parametrize("key_columns", [[], ["id", "name"]])
@given(messages=st.lists(native.lindorm_documents.map(native.encode_json), min_size=1, max_size=8))
def test_the_lindorm_batch_decoder_decides_plain_messages_itself(key_columns: list[str], messages: list[bytes]
                                                                  ) -> None:
    """The fast path is not a pass-through to the reference: a batch of documented messages is decided in Arrow
    except for the shapes the module docstring lists."""
    codec = cf.codec("lindorm", key_columns=key_columns)
    values = pa.array(messages, pa.binary())
    events, undecided = codec.decode_arrow(values)
    for message, left in zip(messages, undecided.to_pylist()):
        document = native.decode_json(message)
        plain = (set(document) <= {"op", "table", "ts", "keyOnly", "data"} and document["op"] != "DeleteFamilyVersion"
                 and all(type(document.get(name, "")) is str for name in ("ts", "keyOnly"))
                 and "keyOnly" in document
                 and all(type(entry.get(field, "")) is str and len(str(entry.get("ts", ""))) < 19
                         for entry in document["data"] for field in ("ts", "value"))
                 and not (document["op"] == "DeleteColumn"
                          and all(entry["name"] in key_columns for entry in document["data"]))
                 and len(document.get("ts", "")) < 19)
        if plain:
            assert not left, message
