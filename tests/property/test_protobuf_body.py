"""The hand-written Protobuf body (``cdcformats.envelopes.protobuf_body``) against upb, its reference.

``write_event`` must write the bytes upb serializes, for every event. ``read_event`` reads only what it expects and
leaves everything else to upb, so for any input the envelope must give what upb and ``event_from_proto`` alone give:
the same event, or a DecodeError saying the same. The messages here are valid ones, garbage, and valid ones taken
apart field by field and put back together otherwise (reordered, repeated, with unknown fields, overlong varints).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError
from cdcformats.envelopes.protobuf import parse_event, proto_from_event
from cdcformats.envelopes.protobuf_body import Unhandled, read_event, write_event
from cdcformats.envelopes.varint import varint
from cdcformats.model import INT64_MAX, INT64_MIN, MAX_NESTING, Cell, CellKind, ChangeEvent, Op, Source, Struct, Table

from .strategies import events

CODEC = cf.codec("protobuf")


# -- the wire format, by hand, for taking messages apart ---------------------------------------------------------------

def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    number = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        number |= (byte & 0x7F) << shift
        if byte < 0x80:
            return number, pos
        shift += 7


# A field as (number, wire type, payload): the varint's bytes, the fixed bytes, or the length-delimited content.
Field = tuple[int, int, bytes]


def split(data: bytes) -> list[Field]:
    """The fields of a well-formed message, in order."""
    fields = []
    pos = 0
    while pos < len(data):
        tag, pos = read_varint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            _, end = read_varint(data, pos)
        elif wire_type == 1:
            end = pos + 8
        elif wire_type == 5:
            end = pos + 4
        else:
            assert wire_type == 2
            length, pos = read_varint(data, pos)
            end = pos + length
        fields.append((number, wire_type, data[pos:end]))
        pos = end
    return fields


def join(fields: list[Field]) -> bytes:
    out = bytearray()
    for number, wire_type, payload in fields:
        out += varint(number << 3 | wire_type)
        if wire_type == 2:
            out += varint(len(payload))
        out += payload
    return bytes(out)


# The message fields of each message of the schema, and its highest field number.
MESSAGE_FIELDS = {
    "ChangeEvent": {2: "Table", 3: "Cell", 4: "Image", 5: "Image", 6: "Source", 8: "Entry"},
    "Cell": {2: "Value"}, "Image": {1: "Cell"}, "Source": {2: "Entry"}, "Entry": {2: "Value"},
    "Value": {7: "Array", 8: "Struct"}, "Array": {1: "Value"}, "Struct": {1: "Entry"}, "Table": {},
}
KNOWN = {"ChangeEvent": 8, "Cell": 5, "Image": 1, "Source": 4, "Entry": 2, "Value": 8, "Array": 1, "Struct": 1,
         "Table": 3}


def unknown_fields(message: str) -> st.SearchStrategy[bytes]:
    """A field ``message`` does not know, of any wire type (an empty group too)."""
    def field(number: int, kind: str, raw: bytes, number_value: int) -> bytes:
        if kind == "varint":
            return varint(number << 3) + varint(number_value)
        if kind == "fixed64":
            return varint(number << 3 | 1) + raw[:8].ljust(8, b"\x00")
        if kind == "fixed32":
            return varint(number << 3 | 5) + raw[:4].ljust(4, b"\x00")
        if kind == "group":
            return varint(number << 3 | 3) + varint(number << 3 | 4)
        return varint(number << 3 | 2) + varint(len(raw)) + raw

    numbers = st.integers(KNOWN[message] + 1, 40) | st.integers(KNOWN[message] + 1, 2**29 - 1)
    return st.builds(field, numbers, st.sampled_from(["varint", "fixed64", "fixed32", "len", "group"]),
                     st.binary(max_size=10), st.integers(0, 2**64 - 1))


def reordered(message: str, payload: bytes, data: st.DataObject, depth: int = 0) -> bytes:
    """``payload`` with its fields (and, now and then, those of its parts) in another order that means the same, and
    unknown fields here and there: the elements of a repeated field keep their order among themselves, but other
    fields may come between them."""
    fields = split(payload)
    rewritten = []
    for number, wire_type, content in fields:
        part = MESSAGE_FIELDS[message].get(number)
        if part is not None and depth < 6 and data.draw(st.booleans()):
            content = reordered(part, content, data, depth + 1)
        rewritten.append(join([(number, wire_type, content)]))
    keys = [data.draw(st.integers(0, 20)) for _ in fields]
    for number in {number for number, _, _ in fields}:  # the keys of one field number, sorted, in field order
        indexes = [index for index, field in enumerate(fields) if field[0] == number]
        for index, key in zip(indexes, sorted(keys[index] for index in indexes)):
            keys[index] = key
    out = [rewritten[index] for index in sorted(range(len(fields)), key=keys.__getitem__)]
    for _ in range(data.draw(st.integers(0, 2))):
        out.insert(data.draw(st.integers(0, len(out))), data.draw(unknown_fields(message)))
    return b"".join(out)


def mutated_fields(message: str, payload: bytes, data: st.DataObject) -> bytes:
    """``payload`` with one change made by hand to its fields or to those of one of its parts: a field repeated,
    dropped, moved, given another wire type or an overlong varint, or an unknown field added."""
    fields = split(payload)
    parts = [index for index, (number, _, _) in enumerate(fields) if number in MESSAGE_FIELDS[message]]
    changes = ["repeat", "drop", "move", "unknown", "wire type", "overlong"] + ["descend"] * bool(parts)
    change = data.draw(st.sampled_from(changes))
    if change == "descend":
        index = data.draw(st.sampled_from(parts))
        number, wire_type, content = fields[index]
        fields[index] = (number, wire_type, mutated_fields(MESSAGE_FIELDS[message][number], content, data))
        return join(fields)
    if change == "unknown" or not fields:
        unknown = data.draw(unknown_fields(message))
        cut = len(join(fields[:data.draw(st.integers(0, len(fields)))]))
        whole = join(fields)
        return whole[:cut] + unknown + whole[cut:]
    index = data.draw(st.integers(0, len(fields) - 1))
    number, wire_type, content = fields[index]
    if change == "repeat":
        fields.insert(data.draw(st.integers(0, len(fields))), fields[index])
    elif change == "drop":
        del fields[index]
    elif change == "move":
        field = fields.pop(index)
        fields.insert(data.draw(st.integers(0, len(fields))), field)
    elif change == "wire type":
        fields[index] = (number, data.draw(st.sampled_from([0, 1, 2, 5])), content)
        return join(fields)  # possibly not well-formed any more, which is the point
    else:  # an overlong encoding of the tag, or of a varint field's value
        padding = data.draw(st.integers(1, 4))
        tag = bytearray(varint(number << 3 | wire_type))
        tag[-1] |= 0x80
        tag += b"\x80" * (padding - 1) + b"\x00"
        rest = join([(number, wire_type, content)])[len(varint(number << 3 | wire_type)):]
        if wire_type == 0 and data.draw(st.booleans()):
            tag = bytearray(varint(number << 3))
            value = bytearray(content)
            value[-1] |= 0x80
            rest = bytes(value) + b"\x80" * (padding - 1) + b"\x00"
        whole = [join([field]) for field in fields]
        whole[index] = bytes(tag) + rest
        return b"".join(whole)
    return join(fields)


def bytes_mutated(message: bytes, data: st.DataObject) -> bytes:
    """``message`` with bytes changed, inserted or cut."""
    buffer = bytearray(message)
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(buffer)))
        change = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if change == "insert" or not buffer:
            buffer[index:index] = data.draw(st.binary(min_size=1, max_size=3))
        elif change == "set":
            buffer[min(index, len(buffer) - 1)] = data.draw(st.integers(0, 255))
        else:
            del buffer[min(index, len(buffer) - 1)]
    return bytes(buffer[: data.draw(st.integers(0, len(buffer)))]) if data.draw(st.booleans()) else bytes(buffer)


# -- how the envelope and the reference answer -------------------------------------------------------------------------

def outcome(decode: Callable[[bytes], ChangeEvent], message: bytes) -> tuple:
    """What ``decode`` makes of ``message``: the event (with its bytes, which also tell NaN payloads and types
    apart), or the DecodeError's text."""
    try:
        event = decode(message)
    except DecodeError as error:
        return ("error", str(error), error.field)
    return ("event", event, write_event(event), event.event_id)


def assert_as_the_reference(message: bytes, given: bytes | bytearray | memoryview | None = None) -> None:
    """The envelope decodes ``message`` (or the same bytes in another buffer, ``given``) as the reference does."""
    assert outcome(CODEC.decode_message, message if given is None else given) == outcome(parse_event, message)


# -- the writer --------------------------------------------------------------------------------------------------------

@given(events())
def test_write_event_writes_what_upb_serializes_and_read_event_reads_it(event: ChangeEvent) -> None:
    message = write_event(event)
    assert message == proto_from_event(event).SerializeToString()
    decoded = read_event(message)  # never Unhandled for what the writer writes
    assert decoded == event and decoded.event_id == event.event_id


SCALAR_EDGES = [False, True, 0, -1, 1, 63, -64, 64, INT64_MIN, INT64_MAX, 0.0, -0.0, math.inf, -math.inf,
                math.nan, struct.unpack("<d", bytes.fromhex("010000000000f07f"))[0],  # a signalling NaN, payload 1
                5e-324, "", "é" * 200, b"", b"\x00" * 300, Decimal("-0E-7"), Decimal("sNaN")]


@pytest.mark.parametrize("value", SCALAR_EDGES + [(), (None,), (None, False, ()), Struct(()),
                                                  Struct((("", None), ("a", Struct((("", 0),))))),
                                                  tuple(range(100))], ids=repr)
def test_edge_values_are_written_as_upb_writes_them(value: object) -> None:
    """Oneof members are written at their default (``bool_value`` false is two bytes, not a null); a null array item
    is an empty Value; NaN payloads and signed zeros survive."""
    event = ChangeEvent(Op.DELETE, table=Table("", "", ""), key=(Cell("", value, "", 0),),
                        before=(Cell("c" * 200, value, None, -1),), after=(),
                        source=Source("", (("", value),), INT64_MIN, INT64_MAX), key_only=True,
                        attributes=(("a", value), ("", None)))
    message = write_event(event)
    assert message == proto_from_event(event).SerializeToString()
    assert outcome(read_event, message) == outcome(parse_event, message)


def test_a_false_value_is_written_and_a_null_item_is_an_empty_value() -> None:
    assert write_event(ChangeEvent(Op.INSERT, after=(Cell("", False),))) == (
        b"\x08\x01\x2a\x06\x0a\x04\x12\x02\x08\x00\x32\x00")
    assert write_event(ChangeEvent(Op.INSERT, after=(Cell("", None),))) == b"\x08\x01\x2a\x02\x0a\x00\x32\x00"
    assert write_event(ChangeEvent(Op.INSERT, after=(Cell("", (None,)),))) == (
        b"\x08\x01\x2a\x08\x0a\x06\x12\x04\x3a\x02\x0a\x00\x32\x00")


@pytest.mark.parametrize("where", ["name", "value", "type", "table", "attribute", "array"])
def test_a_lone_surrogate_is_the_encode_error_upb_gives(where: str) -> None:
    bad = "ok\ud800"
    cell = {"name": Cell(bad), "value": Cell("c", bad), "type": Cell("c", 1, bad), "array": Cell("c", (1, bad))}
    event = ChangeEvent(Op.INSERT, table=Table(bad) if where == "table" else None, after=(cell.get(where, Cell("c")),),
                        attributes=((bad, 1),) if where == "attribute" else ())
    with pytest.raises(UnicodeEncodeError) as upb_error:
        proto_from_event(event).SerializeToString()
    with pytest.raises(cf.EncodeError) as error:
        CODEC.encode_event(event)
    assert error.value.reason == str(upb_error.value)


# -- the reader: whatever the input, what the reference says --------------------------------------------------------

# Built once, not per example: a new events() is a new strategy tree for Hypothesis to set up.
_events = events()
_written_events = _events.map(write_event)


@given(data=st.data())
def test_any_input_decodes_as_the_reference_decodes_it(data: st.DataObject) -> None:
    valid = data.draw(_written_events)
    message = data.draw(st.one_of(
        st.binary(max_size=200),
        st.just(valid).map(lambda message: bytes_mutated(message, data)),
        st.just(valid).map(lambda message: mutated_fields("ChangeEvent", message, data)),
    ))
    assert_as_the_reference(message)


@given(data=st.data())
def test_reordered_fields_and_unknown_fields_decode_to_the_same_event(data: st.DataObject) -> None:
    event = data.draw(_events)
    message = reordered("ChangeEvent", proto_from_event(event).SerializeToString(), data)
    assert CODEC.decode_message(message) == event
    assert_as_the_reference(message)


INVALID_UTF8 = [b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xf0\x80\x80\x80",
                b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xff", b"\x80", b"\xe2\x82",
                b"\xef\xbf\xbe", b"\xf4\x8f\xbf\xbf", b"\x00", b"\xc2\x80", b"\xe2\x82\xac"]


@given(raw=st.one_of(st.binary(max_size=8), st.sampled_from(INVALID_UTF8)),
       where=st.sampled_from(["name", "string", "decimal", "type", "table", "entry"]))
def test_text_is_refused_exactly_where_upb_refuses_it(raw: bytes, where: str) -> None:
    """Python's UTF-8 decoder and upb's validator must agree on every byte sequence (surrogates, overlong forms,
    code points beyond U+10FFFF, noncharacters, truncated sequences)."""
    text = bytes([0x0A, len(raw)]) + raw
    value = bytes([0x22 if where == "string" else 0x32, len(raw)]) + raw
    if where == "table":
        message = b"\x08\x01\x12" + bytes([len(text)]) + text
    elif where == "entry":
        message = b"\x08\x01\x42" + bytes([len(text)]) + text
    else:
        cell = {"name": text, "type": b"\x1a" + text[1:], "string": b"\x12" + bytes([len(value)]) + value,
                "decimal": b"\x12" + bytes([len(value)]) + value}[where]
        message = b"\x08\x01\x1a" + bytes([len(cell)]) + cell
    assert_as_the_reference(message)


def nested(depth: int, kind: str) -> bytes:
    """The body of a Value holding ``depth`` arrays or structs, one inside the other, around the number 1."""
    value = b"\x10\x02"
    for _ in range(depth):
        if kind == "array":
            value = b"\x3a" + varint(len(value) + len(varint(len(value))) + 1) + b"\x0a" + varint(len(value)) + value
        else:
            entry = b"\x0a\x01a\x12" + varint(len(value)) + value
            value = b"\x42" + varint(len(entry) + len(varint(len(entry))) + 1) + b"\x0a" + varint(len(entry)) + entry
    return value


@pytest.mark.parametrize("kind", ["array", "struct"])
@pytest.mark.parametrize("depth", [MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 40, 60, 2000])
def test_deep_values_decode_or_fail_as_in_the_reference(depth: int, kind: str) -> None:
    value = nested(depth, kind)
    cell = b"\x0a\x01c\x12" + varint(len(value)) + value
    image = b"\x0a" + varint(len(cell)) + cell
    message = b"\x08\x01\x2a" + varint(len(image)) + image
    assert_as_the_reference(message)
    if depth <= MAX_NESTING:
        assert read_event(message) == parse_event(message)
    else:
        with pytest.raises(DecodeError):
            CODEC.decode_message(message)


@pytest.mark.parametrize("message", [
    b"", b"\x08", b"\x08\x00", b"\x08\x07", b"\x08\x84\x00", b"\x08\x84\x80\x80\x80\x10",  # op missing, 0, 7, overlong
    b"\x08\x01\x08\x02", b"\x10\x01\x08\x01",  # op twice, op after another field
    b"\x08\x01\x38\x02", b"\x08\x01\x38\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02",  # key_only 2, and 2**64
    b"\x08\x01\x1a\x02\x28\x03", b"\x08\x01\x1a\x03\x28\x81\x00",  # a cell kind out of range, overlong
    b"\x08\x01\x1a\x03\x12\x01\x08", b"\x08\x01\x1a\x04\x12\x02\x08\x02",  # bool_value cut short, or 2
    b"\x08\x01\x1a\x04\x12\x02\x10\x80", b"\x08\x01\x1a\x04\x12\x02\x10\x7f",  # int_value cut short, -64
    b"\x08\x01\x1a\x0d\x12\x0b\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # the smallest int64
    b"\x08\x01\x1a\x0d\x12\x0b\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f",  # bits past the 64th, which upb drops
    b"\x08\x01\x1a\x0e\x12\x0c\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # an eleventh byte
    b"\x08\x01\x1a\x0b\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # version -1
    b"\x08\x01\x1a\x06\x12\x04\x08\x01\x10\x02",  # two oneof members: the last wins
    b"\x08\x01\x1a\x06\x12\x02\x08\x01\x12\x00",  # a message field twice: merged
    b"\x08\x01\x1a\x04\x12\x02\x32\x00", b"\x08\x01\x1a\x05\x12\x03\x32\x01x",  # decimals that are not
    b"\x08\x01\x42\x0a\x12\x08\x42\x06\x0a\x01\x00\x0a\x01\x00",  # a struct naming "" twice (as two empty entries)
    b"\x08\x01\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f", b"\x08\x01\x12\xff\xff\xff\xff\x0f",  # hostile lengths
    b"\x08\x01\x2a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",  # a length longer than a varint may be
    b"\x08\x01\x2a\x00\x2a\x00", b"\x08\x01\x22\x00\x22\x02\x0a\x00",  # an image twice: merged
    b"\x08\x01\x32\x00\x32\x02\x18\x01", b"\x08\x01\x32\x04\x18\x01\x18\x02",  # a source twice, a time twice
    b"\x08\x01\x1a\x00\x2a\x00\x1a\x00",  # key cells around another field
    b"\x08\x01\x1a\x09\x12\x07\x19\x00\x00\x00\x00\x00\x00\xf8",  # a double cut short
    b"\x08\x01\x1a\x00",  # an empty cell is still a cell
])
def test_edge_messages_decode_as_in_the_reference(message: bytes) -> None:
    assert_as_the_reference(message)
    assert_as_the_reference(message, bytearray(message))
    assert_as_the_reference(message, memoryview(message))


RICH = ChangeEvent(
    Op.UPDATE, table=Table("orders", "shop", "main"), key=(Cell("id", 7, "BIGINT"),),
    before=(Cell("id", 7, "BIGINT"), Cell("note", "é" * 70, "TEXT", version=-2, kind=CellKind.DELETE_VERSION)),
    after=(Cell("id", 7), Cell("tags", (1, None, Struct((("a", 1.5), ("b", b"\xff"))))), Cell("price", Decimal("1.10")),
           Cell("gone", kind=CellKind.DELETE_ALL_VERSIONS), Cell("flag", False, version=1700000000000)),
    source=Source("mysql", (("file", "binlog.7"), ("pos", 4)), 1700000000000000, -1), key_only=False,
    attributes=(("x", None), ("y", 2**40)))


def test_every_cut_and_every_changed_byte_decodes_as_the_reference() -> None:
    message = write_event(RICH)
    assert read_event(message) == RICH
    for size in range(len(message)):
        assert_as_the_reference(message[:size])
    for index, old in enumerate(message):
        for new in {0x00, 0x01, 0x7F, 0x80, 0xFF, old ^ 0x01, old ^ 0x80, old ^ 0x08}:
            assert_as_the_reference(message[:index] + bytes([new]) + message[index + 1:])


def test_events_of_different_tables_keep_their_tables() -> None:
    """Tables are remembered by their bytes (a stream names few): each message still gets its own."""
    for index in range(3000):
        table = Table(f"t{index % 1500}", None if index % 3 else "s", "" if index % 2 else None)
        event = ChangeEvent(Op.INSERT, table=table)
        assert CODEC.decode_message(write_event(event)).table == table


@given(st.binary(max_size=64))
@example(b"\x08\x01" + b"\x80" * 100_000)
def test_read_event_raises_only_unhandled(data: bytes) -> None:
    try:
        read_event(data)
    except Unhandled:
        pass
