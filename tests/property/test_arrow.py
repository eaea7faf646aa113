"""The Arrow form of the canonical event, and the batch decoders: the Spark functions are only as exact as these."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa  # noqa: E402
from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import cdcformats as cf  # noqa: E402
from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.model import Cell, CellKind, ChangeEvent, Op, Source, Struct, Table  # noqa: E402

from . import native  # noqa: E402
from .strategies import events  # noqa: E402


@given(st.lists(events(), max_size=4))
def test_events_survive_the_arrow_form(batch: list[cf.ChangeEvent]) -> None:
    rows = arrow.to_arrow(batch)
    assert rows.type == arrow.EVENT
    assert [arrow.event_from_row(row) for row in rows.to_pylist()] == batch


decode_errors = st.builds(cf.DecodeError, st.text(max_size=8), st.text(max_size=20),
                          field=st.none() | st.text(max_size=8),
                          raw=st.none() | st.binary(max_size=8) | st.text(max_size=8) | st.integers())
# Rows of every kind: events, null rows and dead letters.
mixed_batches = st.lists(st.one_of(events(), st.none(), decode_errors), max_size=6)

# An event with every corner the columnar builder treats on its own: no image, an empty one, a cell of each kind,
# values of each member (NaN, a decimal, bytes, nested values with tags), null versions and types.
CORNERS = ChangeEvent(
    Op.UPDATE, Table("t", catalog="c"), key=(Cell("id", Decimal("-0E-3"), "DECIMAL"),), before=(),
    after=(Cell("a", float("nan")), Cell("b", b"\x00\xff", version=-1, kind=CellKind.DELETE_VERSION),
           Cell("c", (1, (), Struct((("$binary", b"x"),)), float("-inf"), Decimal("1.10"))),
           Cell("d", None, kind=CellKind.DELETE_ALL_VERSIONS), Cell("e", True), Cell("f", -0.0), Cell("", "")),
    source=Source("s", (("p", Struct()), ("q", None)), 1, None), key_only=True, attributes=(("x", 7), ("x", "7")))


def reference_array(rows: list) -> pa.StructArray:
    """The EVENT array as to_arrow made it before it was columnar: pa.array of each row's dict."""
    return pa.array([None if row is None else arrow.error_row(row) if isinstance(row, cf.CodecError)
                     else arrow.event_row(row) for row in rows], type=arrow.EVENT)


def plain(item: Any) -> Any:
    """``item`` (a to_pylist() row) with floats as their repr, so that NaN equals NaN and -0.0 differs from 0.0."""
    if type(item) is float:
        return ("float", repr(item))
    if type(item) is list:
        return [plain(member) for member in item]
    if type(item) is dict:
        return {name: plain(member) for name, member in item.items()}
    return item


def has_nan(item: Any) -> bool:
    if type(item) is float:
        return math.isnan(item)
    members = item if type(item) is list else item.values() if type(item) is dict else ()
    return any(has_nan(member) for member in members)


@given(mixed_batches)
@example([])
@example([None])
@example([CORNERS])
@example([cf.DecodeError("f", "r", raw="text")])
@example([CORNERS, None, cf.DecodeError("f", "r", field="x", raw=b"\xff"), ChangeEvent(Op.DELETE), None])
def test_to_arrow_gives_the_array_of_the_event_rows(batch: list) -> None:
    built = arrow.to_arrow(batch)
    built.validate(full=True)
    reference = reference_array(batch)
    assert built.type == arrow.EVENT
    rows = reference.to_pylist()
    assert plain(built.to_pylist()) == plain(rows)
    assert built.equals(reference) or has_nan(rows)  # Arrow's equals holds NaN unequal to itself


def encode_by_rows(events: pa.Array, write: Callable[[ChangeEvent], Any], format_name: str, errors: str
                   ) -> list[Any]:
    """encode_array as it was before it read columns: every row through event_from_row, the reference."""
    results: list[Any] = []
    for row in events.to_pylist():
        if row is None:
            results.append(None)
            continue
        if row.get("error") is not None:
            results.append(arrow._handled(arrow.error_from_row(row["error"]), errors))
            continue
        try:
            results.append(write(arrow.event_from_row(row)))
        except cf.CodecError as error:
            if error.format == "arrow":
                error.relabeled(format_name)
            if error.raw is None:
                error.raw = repr(row)
            results.append(arrow._handled(error, errors))
    return results


def outcome(encode: Callable[..., list[Any]], *arguments: Any) -> list[Any] | tuple:
    """What ``encode(*arguments)`` gives, errors as what they say (an error object equals only itself)."""
    def said(error: Exception) -> tuple:
        return (type(error), str(error), *(getattr(error, name, None) for name in ("format", "reason", "field", "raw")))
    try:
        return [said(result) if isinstance(result, Exception) else result for result in encode(*arguments)]
    except cf.CodecError as error:
        return said(error)


def refuse_key_only(event: ChangeEvent) -> ChangeEvent:
    """A writer that refuses some events, leaving ``raw`` for encode_array to fill with the row."""
    if event.key_only:
        raise cf.EncodeError("target", "no key-only events", field="key_only")
    return event


def by_rows(array: pa.Array) -> list[ChangeEvent | None]:
    """Each row's event as event_from_row reads it, None where it raises or the row is null or a dead letter."""
    read: list[ChangeEvent | None] = []
    for row in array.to_pylist():
        try:
            read.append(None if row is None or row.get("error") is not None else arrow.event_from_row(row))
        except cf.EncodeError:
            read.append(None)
    return read


def assert_read_as_by_rows(array: pa.Array, columnar: bool) -> None:
    """The columnar reader reads what event_from_row reads (all of it, when ``columnar``: else it reads nothing),
    and encode_array gives what it gave row by row."""
    read = arrow.events_from_array(array)
    assert read == (by_rows(array) if columnar else [None] * len(array))
    for errors in arrow.COLUMN_ERROR_MODES:
        for write in (lambda event: event, refuse_key_only):
            assert (outcome(arrow.encode_array, array, write, "target", errors)
                    == outcome(encode_by_rows, array, write, "target", errors))


@given(mixed_batches, st.integers(0, 2))
@example([CORNERS, None, cf.DecodeError("f", "r", raw=7)], 1)
def test_the_columnar_reader_reads_what_event_from_row_reads(batch: list, start: int) -> None:
    assert_read_as_by_rows(arrow.to_arrow(batch).slice(start), columnar=True)


# Values that event_from_row refuses, each for its own reason.
BAD_VALUES = [{"long": 1, "string": "x"}, {"boolean": False, "bytes": b"", "nested": "[]"}, {"decimal": "ten"},
              {"nested": "[1"}, {"nested": "7"}, {"nested": "[18446744073709551616]"},
              {"nested": '{"a": 18446744073709551616}'}, {"nested": '{"$binary": "!"}'},
              {"nested": "[" * 40 + "]" * 40}]
# Values it reads, some of them in ways of its own.
OTHER_VALUES = [{}, {"decimal": " 1_0 "}, {"nested": '{"$struct": {"$decimal": "1"}}'}, {"nested": '{"a": -9e99999}'},
                None]


def _cells(row: dict) -> list[dict]:
    return [cell for image in ("key", "before", "after") for cell in row[image] or ()]


def _entries(row: dict) -> list[dict]:
    position = (row["source"] or {}).get("position")
    return [*(position or ()), *(row["attributes"] or ())]


Mangling = Callable[[dict, Callable[[list], dict]], None]


def _set(field: str, value: Any) -> Mangling:
    return lambda row, pick: row.__setitem__(field, value)


def _on_item(items: Callable[[dict], list[dict]], member: str, value: Any) -> Mangling:
    """Set ``member`` of the item ``pick`` chooses of the row's ``items``, if it has any."""
    def mangle(row: dict, pick: Callable[[list], dict]) -> None:
        if items(row):
            pick(items(row))[member] = value
    return mangle


def _value(members: dict | None) -> dict | None:
    return None if members is None else {**dict.fromkeys(arrow.VALUE.names), **members}


# Changes to an event row, most of them ones event_from_row refuses, each for its own reason.
MANGLINGS: dict[str, Mangling] = {
    "unknown op": _set("op", "BOGUS"), "op in lower case": _set("op", "insert"), "null op": _set("op", None),
    "table without a name": _set("table", {"catalog": "c", "schema": None, "name": None}),
    "dead letter with an op": _set("error", {"format": "f", "reason": "r", "field": None, "message": "m",
                                             "raw": None}),
    **{f"null {field}": _set(field, None) for field in ("key", "before", "after", "source", "key_only", "attributes")},
    "cell without a name": _on_item(_cells, "name", None),
    **{f"cell kind {kind!r}": _on_item(_cells, "kind", kind) for kind in (None, "", "NOPE", "put")},
    "entry without a name": _on_item(_entries, "name", None),
    **{f"cell value {index}": _on_item(_cells, "value", _value(members))
       for index, members in enumerate(BAD_VALUES + OTHER_VALUES)},
    **{f"entry value {index}": _on_item(_entries, "value", _value(members))
       for index, members in enumerate(BAD_VALUES + OTHER_VALUES)},
}


@pytest.mark.parametrize("pick", [lambda items: items[0], lambda items: items[-1]], ids=["first", "last"])
@pytest.mark.parametrize("mangling", MANGLINGS.values(), ids=MANGLINGS.keys())
def test_the_columnar_reader_leaves_each_row_it_cannot_read_to_event_from_row(mangling: Mangling,
                                                                              pick: Callable[[list], dict]) -> None:
    row = copy.deepcopy(arrow.event_row(CORNERS))
    mangling(row, pick)
    assert_read_as_by_rows(pa.array([arrow.event_row(CORNERS), row, None, row], type=arrow.EVENT), columnar=True)


# Built once, not in each draw of mangled_rows: a new events() is a new strategy tree for Hypothesis to set up.
_events_or_none = st.none() | events()
_mangling_lists = st.lists(st.sampled_from(list(MANGLINGS.values())), max_size=3)


@st.composite
def mangled_rows(draw: st.DrawFn) -> dict | None:
    event = draw(_events_or_none)
    if event is None:
        return None
    row = copy.deepcopy(arrow.event_row(event))
    for mangling in draw(_mangling_lists):
        mangling(row, lambda items: draw(st.sampled_from(items)))
    return row


@given(st.lists(mangled_rows(), max_size=5), st.integers(0, 1))
def test_the_columnar_reader_leaves_what_it_cannot_read_to_event_from_row(rows: list, start: int) -> None:
    assert_read_as_by_rows(pa.array(rows, type=arrow.EVENT).slice(start), columnar=True)


def _spark_named(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with its list items named ``element``, as Spark names them."""
    if pa.types.is_struct(data_type):
        return pa.struct([pa.field(member.name, _spark_named(member.type)) for member in data_type])
    if pa.types.is_list(data_type):
        return pa.list_(pa.field("element", _spark_named(data_type.value_type)))
    return data_type


@given(st.lists(events(), max_size=3))
def test_the_columnar_reader_reads_lists_by_any_name(batch: list[ChangeEvent]) -> None:
    assert_read_as_by_rows(arrow.to_arrow(batch).cast(_spark_named(arrow.EVENT)), columnar=True)


@given(st.lists(mangled_rows(), max_size=4), st.sets(st.sampled_from(arrow.EVENT.names), min_size=1))
def test_structs_built_by_hand_without_some_fields_are_read_row_by_row(rows: list, left_out: set[str]) -> None:
    """A struct that lacks fields is not of EVENT's type: the columnar reader leaves all of it to event_from_row."""
    shape = pa.struct([member for member in arrow.EVENT if member.name not in left_out])
    kept = [None if row is None else {name: row[name] for name in shape.names} for row in rows]
    assert_read_as_by_rows(pa.array(kept, type=shape), columnar=False)


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
