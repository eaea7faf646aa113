"""The Arrow form of the canonical event, and the batch decoders: the Spark functions are only as exact as these."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import cdcformats as cf  # noqa: E402
from cdcformats.envelopes import arrow  # noqa: E402

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


# A line of a batch, drawn as one message (not as the first of a list of them): a documented message or an empty
# object, garbage or an empty line, or a null.
_documented = native.lindorm_documents.map(native.encode_json)
_lines = st.one_of(_documented | st.just(b"{}"), native.garbage_bytes | st.just(b""), st.none())
lindorm_batches = st.lists(st.one_of(_lines, _documented.flatmap(_mangled), _lines), max_size=12)


@pytest.mark.parametrize("configuration", ["lindorm", "lindorm+keys"])
@given(messages=lindorm_batches)
def test_the_lindorm_batch_decoder_agrees_with_the_reference(configuration: str, messages: list[bytes | None]) -> None:
    codec = cf.codec("lindorm", **({"key_columns": ["id", "name"]} if configuration == "lindorm+keys" else {}))
    values = pa.array(messages, pa.binary())
    batch = arrow.decode_array(values, codec.decode_message, "dead-letter", codec.decode_arrow)
    assert comparable(batch) == reference(codec, values)


@pytest.mark.parametrize("key_columns", [[], ["id", "name"]])
@given(messages=st.lists(native.lindorm_documents.map(native.encode_json), min_size=1, max_size=8))
def test_the_lindorm_batch_decoder_decides_plain_messages_itself(key_columns: list[str], messages: list[bytes]
                                                                  ) -> None:
    """The fast path is not a pass-through to the reference: documented messages are decided in Arrow, except for
    the shapes the module docstring lists; with a few others in the batch, which the reference decoder takes."""
    codec = cf.codec("lindorm", key_columns=key_columns)
    plain = [message for message in messages if is_plain(native.decode_json(message), key_columns)]
    _, undecided = codec.decode_arrow(pa.array(plain + messages[:2], pa.binary()))
    assert not any(undecided.to_pylist()[:len(plain)])


def is_plain(document: dict, key_columns: list[str]) -> bool:
    return (set(document) <= {"op", "table", "ts", "keyOnly", "data"} and document["op"] != "DeleteFamilyVersion"
            and all(type(document.get(name, "")) is str for name in ("ts", "keyOnly"))
            and "keyOnly" in document
            and all(type(entry.get(field, "")) is str and len(str(entry.get("ts", ""))) < 19
                    for entry in document["data"] for field in ("ts", "value"))
            and not (document["op"] == "DeleteColumn" and all(entry["name"] in key_columns
                                                               for entry in document["data"]))
            and len(document.get("ts", "")) < 19)


def test_a_batch_with_many_bad_messages_still_agrees_with_the_reference() -> None:
    """Past its budget of failed attempts the fast path hands the rest of the batch to the reference decoder."""
    codec = cf.codec("lindorm")
    good = b'{"op":"Put","table":"t","ts":"5","keyOnly":"false","data":[{"name":"a","value":"1","type":"INT"}]}'
    messages = [good if n % 3 else [b"{bad", good + b" " + good, b'{"op": 7}'][n % 9 // 3] for n in range(3000)]
    values = pa.array(messages, pa.binary())
    batch = arrow.decode_array(values, codec.decode_message, "dead-letter", codec.decode_arrow)
    assert comparable(batch) == reference(codec, values)
    assert sum(row["error"] is not None for row in batch.to_pylist()) == 1000
