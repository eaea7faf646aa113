"""The hand-written reader of the canonical Avro body reads what fastavro reads, and refuses garbage with DecodeError.

``read_event`` replaces ``event_from_record(fastavro.schemaless_reader(...))`` in ``AvroCodec.decode_message``; the
reference here is that old path, kept in ``_reference``. The reader is stricter than fastavro where fastavro reads
bytes the specification does not allow (a boolean byte other than 0 or 1, a negative union or enum index, a long of
more than 64 bits); everywhere else the two agree.
"""

from __future__ import annotations

import io
from decimal import Decimal

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError
from cdcformats.envelopes.avro import event_from_record
from cdcformats.envelopes.avro_body import BodyError, TrailingBytes, read_event, write_event
from cdcformats.envelopes.varint import varint
from cdcformats.model import MAX_NESTING, Value
from cdcformats.schemas import avro_schema

from .strategies import events

SCHEMA = fastavro.parse_schema(avro_schema())
AVRO = cf.codec("avro")


class _Refused(Exception):
    pass


def _reference(message: bytes) -> cf.ChangeEvent:
    """What decoding was before read_event: fastavro reads the record, event_from_record builds the event."""
    stream = io.BytesIO(message)
    try:
        record = fastavro.schemaless_reader(stream, SCHEMA, None)
        if stream.tell() != len(message):
            raise _Refused("bytes left over")
        assert isinstance(record, dict)
        return event_from_record(record)
    except Exception as error:  # whatever fastavro or the model raise
        raise _Refused(repr(error)) from error


@given(events())
def test_read_event_inverts_write_event_as_fastavro_does(event: cf.ChangeEvent) -> None:
    message = write_event(event)
    decoded = read_event(message)
    assert decoded == event
    assert decoded == _reference(message)
    assert write_event(decoded) == message


_EDITS = st.lists(st.tuples(st.sampled_from(["replace", "insert", "delete"]), st.integers(0, 2**16),
                            st.binary(min_size=1, max_size=3)), min_size=1, max_size=4)


def _mutated(message: bytes, edits: list[tuple[str, int, bytes]], cut: int | None) -> bytes:
    """``message`` with a few bytes replaced, inserted or removed (at positions taken modulo its length), then maybe
    cut short."""
    buffer = bytearray(message)
    for action, where, data in edits:
        index = where % (len(buffer) + 1)
        if action == "insert":
            buffer[index:index] = data
        elif index < len(buffer):
            if action == "replace":
                buffer[index] = data[0]
            else:
                del buffer[index]
    return bytes(buffer if cut is None else buffer[:cut % (len(buffer) + 1)])


def _check_against_fastavro(message: bytes) -> None:
    try:
        event = AVRO.decode_message(message)
    except DecodeError as error:
        assert error.format == "avro"
        assert error.reason and "\n" not in str(error)
        try:
            reference = _reference(message)
        except _Refused:
            return
        # fastavro read it: refusing is right only for bytes that are not how Avro writes that event (a boolean
        # byte of 2, a negative index...), never for the body of an event.
        assert write_event(reference) != message, error
        return
    assert event == _reference(message)


@given(st.one_of(st.binary(max_size=200),
                 st.builds(lambda event, edits, cut: _mutated(write_event(event), edits, cut),
                           events(), _EDITS, st.none() | st.integers(0, 2**16))))
def test_garbage_is_read_as_fastavro_reads_it_or_refused_with_decode_error(message: bytes) -> None:
    _check_against_fastavro(message)


# -- by hand ----------------------------------------------------------------------------------------------------------

def _long(number: int) -> bytes:
    return varint((number << 1) ^ (number >> 63))  # zigzag


def _string(text: str) -> bytes:
    data = text.encode()
    return _long(len(data)) + data


def _cell(name: str, value: bytes) -> bytes:
    """A cell with no type, no version, kind PUT; ``value`` is the encoded value union."""
    return _string(name) + value + b"\x00\x00\x00"


def _body(key: bytes = b"\x00", attributes: bytes = b"\x00", key_only: bytes = b"\x00") -> bytes:
    """An INSERT with no table, images or source, and the key and attributes arrays given as encoded."""
    return b"\x00\x00" + key + b"\x00\x00" + b"\x00\x00\x00\x00" + key_only + attributes


def _blocks(*blocks: list[bytes], sized: bool = True) -> bytes:
    """An array written as the given blocks, each with a negative count and its size in bytes when ``sized``."""
    out = bytearray()
    for items in blocks:
        content = b"".join(items)
        out += _long(-len(items)) + _long(len(content)) if sized else _long(len(items))
        out += content
    return bytes(out + b"\x00")


STRING, LONG, ARRAY, STRUCT = b"\x08", b"\x04", b"\x0e", b"\x10"


def test_arrays_of_several_blocks_are_read_as_one() -> None:
    cells = [_cell("a", STRING + _string("x")), _cell("b", LONG + _long(-3)), _cell("c", b"\x00")]
    items = [LONG + _long(1), STRING + _string("two"), b"\x00"]
    entries = [_string("p") + LONG + _long(2**40), _string("q") + b"\x02\x01"]
    nested = ARRAY + _blocks(items[:1], items[1:])
    struct = STRUCT + _blocks(entries[:1], entries[1:], sized=False)
    message = _body(key=_blocks(cells[:2], [cells[2]]),
                    attributes=_blocks([_string("n") + nested], [_string("s") + struct], sized=False))
    expected = cf.ChangeEvent(
        cf.Op.INSERT,
        key=(cf.Cell("a", "x"), cf.Cell("b", -3), cf.Cell("c", None)),
        attributes=(("n", (1, "two", None)), ("s", cf.Struct((("p", 2**40), ("q", True))))))
    assert read_event(message) == expected == _reference(message)
    assert AVRO.decode_message(message) == expected
    # A block's size in bytes is there for readers that skip the array; fastavro does not check it, nor does this
    # reader.
    message = _body(key=_long(-1) + _long(999) + cells[0] + _long(0), key_only=b"\x01")
    assert read_event(message) == _reference(message) == cf.ChangeEvent(cf.Op.INSERT, key=(cf.Cell("a", "x"),),
                                                                        key_only=True)


def _overlong(number: int) -> bytes:
    """``number`` as a long written in one byte more than it needs, which Avro readers accept."""
    data = bytearray(_long(number))
    data[-1] |= 0x80
    return bytes(data + b"\x00")


def test_longs_written_longer_than_needed_are_read() -> None:
    one, zero = _overlong(1), _overlong(0)
    table = one + zero + zero + _string("t")
    cell = one + b"a" + _overlong(4) + one + b"x" + one + _string("T") + one + _overlong(5) + one
    value = (_overlong(7) + _overlong(2) + _overlong(2) + _overlong(2)
             + _overlong(8) + one + _string("f") + b"\x00" + zero + zero)
    message = (_overlong(2) + table + one + cell + zero + one + zero + b"\x00" * 6
               + _long(1) + _string("v") + value + zero)
    expected = cf.ChangeEvent(
        cf.Op.DELETE, table=cf.Table("t"), key=(cf.Cell("a", "x", "T", 5, cf.CellKind.DELETE_VERSION),), before=(),
        attributes=(("v", (2, cf.Struct((("f", None),)))),))
    assert read_event(message) == expected == _reference(message)


def _nested(levels: int) -> bytes:
    """A null in ``levels`` arrays of one item each."""
    return (ARRAY + _long(1)) * levels + b"\x00" + b"\x00" * levels


def test_values_nest_as_deep_as_the_model_allows_and_no_deeper() -> None:
    value: Value = None
    for _ in range(MAX_NESTING):
        value = (value,)
    deepest = _body(key=_long(1) + _cell("v", _nested(MAX_NESTING)) + b"\x00")
    assert read_event(deepest) == cf.ChangeEvent(cf.Op.INSERT, key=(cf.Cell("v", value),)) == _reference(deepest)
    too_deep = _body(key=_long(1) + _cell("v", _nested(MAX_NESTING + 1)) + b"\x00")
    with pytest.raises(ValueError, match="nested deeper"):
        read_event(too_deep)
    with pytest.raises(_Refused):
        _reference(too_deep)
    # A hostile body nests far deeper than Python recurses: refused at the limit, not by a RecursionError.
    with pytest.raises(DecodeError, match="nested deeper"):
        AVRO.decode_message(_body(key=_long(1) + _string("v") + (ARRAY + _long(1)) * 100_000))


@pytest.mark.parametrize(("message", "reason"), [
    (b"", "the body ends inside the event"),
    (_body()[:-1], "the body ends inside the event"),
    (_body() + b"\x00\x00", "2 bytes left over after the event"),
    (b"\x0c" + _body()[1:], "Op symbol 6"),
    (b"\x01" + _body()[1:], "Op symbol -1"),
    (b"\x00\x04" + _body()[2:], "union branch 2"),
    (_body(key=_long(1) + _string("a") + b"\x12"), "value union branch 9"),
    (_body(key=_long(1) + _cell("a", b"\x00")[:-1] + b"\x06\x00"), "CellKind symbol 3"),
    (_body(key=_long(1) + _string("\u00e9")[:-1] + b"\xff"), "not UTF-8"),
    (_body(key=_long(1) + _long(2**62) + b"a"), "a length of 4611686018427387904"),
    (_body(key=_long(1) + _long(-1) + b"a"), "a length of -1"),
    (_body(key=_long(2**62)), "an array block of 4611686018427387904 items"),
    (_body(key=_long(-2**63) + b"\x00"), "an array block of 9223372036854775808 items"),
    (_body(key=_long(1) + _cell("a", LONG + b"\xff" * 10 + b"\x01")), "more than 10 bytes"),
    (_body(key=_long(1) + _cell("a", LONG + b"\xff" * 9 + b"\x02")), "more than 64 bits"),
    (_body(key_only=b"\x02"), "a boolean of 2"),
    (_body(key=_long(1) + _cell("a", b"\x0c" + _string("1.5x"))), "ConversionSyntax"),
    (_body(key=_long(1) + _cell("a", STRUCT + _long(2) + (_string("f") + b"\x00") * 2 + b"\x00") + b"\x00"),
     "struct field 'f' twice"),
])
def test_bad_bodies_are_one_line_decode_errors(message: bytes, reason: str) -> None:
    with pytest.raises(DecodeError) as caught:
        AVRO.decode_message(message)
    assert caught.value.format == "avro"
    assert reason in caught.value.reason
    assert "\n" not in str(caught.value)


def test_the_errors_of_the_bytes_read_as_before() -> None:
    with pytest.raises(DecodeError, match=r"^avro: not a canonical Avro change event \(the body ends"):
        AVRO.decode_message(b"\x00")
    with pytest.raises(DecodeError, match=r"^avro: 1 bytes left over after the event$"):
        AVRO.decode_message(_body() + b"\x00")
    with pytest.raises(TrailingBytes):
        read_event(_body() + b"\x00")
    with pytest.raises(BodyError):
        read_event(b"\x00")


def test_any_bytes_like_message_is_read() -> None:
    event = cf.ChangeEvent(cf.Op.DELETE, key=(cf.Cell("id", Decimal("1.10"), "DECIMAL", 7),), before=())
    message = write_event(event)
    for form in (message, bytearray(message), memoryview(message)):
        assert AVRO.decode_message(form) == event


def test_longs_read_at_both_ends_of_their_range() -> None:
    for number in (0, -1, 1, 63, -64, 64, 2**31, -(2**63), 2**63 - 1):
        event = cf.ChangeEvent(cf.Op.INSERT, after=(cf.Cell("n", number, version=number),),
                               source=cf.Source(commit_time_us=number))
        assert read_event(write_event(event)) == event
