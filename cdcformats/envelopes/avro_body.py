"""The Avro body of the canonical envelope, written straight from a ``ChangeEvent`` and read straight back into one.

fastavro writes and reads any schema. Writing this one, it spends most of its time choosing the branch of each
value's union; reading it, it builds a dict for every record, which ``event_from_record`` then turns into the model.
The schema here is fixed, so the branch is known from the Python type, and the reader can build the model as it
goes: this writer is three times faster and writes the same bytes as
``fastavro.schemaless_writer(stream, avro_schema(), record_from_event(event))``; this reader is nearly three times
faster than ``event_from_record(fastavro.schemaless_reader(...))`` and reads the same event. Property tests check both
for every event, and that the reader refuses, with an error, what fastavro cannot read. Encoding as the Avro
specification says: longs as zigzag varints, strings and bytes with their length first, unions and enums as their
index, arrays as one block and a zero.

The reader takes every form the specification allows, as fastavro does: arrays in several blocks, blocks with a
negative count and their size in bytes, longs written in more bytes than they need. Where fastavro reads bytes that
the specification does not allow, the reader refuses them rather than guess what was meant: a boolean byte other than
0 and 1 (fastavro reads true, Avro's Java reader false), a negative union or enum index (fastavro counts it from the
end), a long of more than 10 bytes or 64 bits (fastavro's C reader makes up a number).
"""

from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any

from ..model import MAX_NESTING, Cell, CellKind, ChangeEvent, Op, Source, Struct, Table
from .varint import put_varint

# Indexes of the branches and symbols, in the order of avro/change_event.avsc.
_OP_INDEX = {op: bytes([index * 2]) for index, op in enumerate(
    [Op.INSERT, Op.UPDATE, Op.DELETE, Op.UPSERT, Op.READ, Op.TRUNCATE])}
_KIND_INDEX = {kind: bytes([index * 2]) for index, kind in enumerate(
    [CellKind.PUT, CellKind.DELETE_VERSION, CellKind.DELETE_ALL_VERSIONS])}
_NULL, _PRESENT = b"\x00", b"\x02"  # union branch 0 (null) and 1, zigzag-encoded
# Every value union of the schema (a cell's, an entry's, an array item's) has these branches in this order.
_VALUE_BRANCH = {type(None): 0, bool: 1, int: 2, float: 3, str: 4, bytes: 5, Decimal: 6, tuple: 7, Struct: 8}
_pack_double = struct.Struct("<d").pack


def _long(out: bytearray, number: int) -> None:
    put_varint(out, (number << 1) ^ (number >> 63))  # zigzag


def _string(out: bytearray, text: str) -> None:
    data = text.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, as in fastavro
    _long(out, len(data))
    out += data


def _optional_string(out: bytearray, text: str | None) -> None:
    if text is None:
        out += _NULL
    else:
        out += _PRESENT
        _string(out, text)


def _optional_long(out: bytearray, number: int | None) -> None:
    if number is None:
        out += _NULL
    else:
        out += _PRESENT
        _long(out, number)


def _value(out: bytearray, value: Any) -> None:
    branch = _VALUE_BRANCH[type(value)]
    out.append(branch * 2)
    if branch == 4:
        _string(out, value)
    elif branch == 2:
        _long(out, value)
    elif branch == 1:
        out.append(1 if value else 0)
    elif branch == 3:
        out += _pack_double(value)
    elif branch == 5:
        _long(out, len(value))
        out += value
    elif branch == 6:
        _string(out, str(value))
    elif branch == 7:
        if value:
            _long(out, len(value))
            for item in value:
                _value(out, item)
        out += b"\x00"
    elif branch == 8:
        _entries(out, value.fields)


def _cells(out: bytearray, cells: tuple[Cell, ...]) -> None:
    if cells:
        _long(out, len(cells))
        for cell in cells:
            _string(out, cell.name)
            _value(out, cell.value)
            _optional_string(out, cell.type)
            _optional_long(out, cell.version)
            out += _KIND_INDEX[cell.kind]
    out += b"\x00"


def _optional_cells(out: bytearray, cells: tuple[Cell, ...] | None) -> None:
    if cells is None:
        out += _NULL
    else:
        out += _PRESENT
        _cells(out, cells)


def _entries(out: bytearray, entries: tuple[tuple[str, Any], ...]) -> None:
    if entries:
        _long(out, len(entries))
        for name, value in entries:
            _string(out, name)
            _value(out, value)
    out += b"\x00"


def write_event(event: ChangeEvent) -> bytes:
    """The Avro body of ``event`` (raises UnicodeEncodeError for a str that is not valid Unicode)."""
    out = bytearray(_OP_INDEX[event.op])
    table = event.table
    if table is None:
        out += _NULL
    else:
        out += _PRESENT
        _optional_string(out, table.catalog)
        _optional_string(out, table.schema)
        _string(out, table.name)
    _cells(out, event.key)
    _optional_cells(out, event.before)
    _optional_cells(out, event.after)
    source = event.source
    _optional_string(out, source.system)
    _entries(out, source.position)
    _optional_long(out, source.commit_time_us)
    _optional_long(out, source.capture_time_us)
    out.append(1 if event.key_only else 0)
    _entries(out, event.attributes)
    return bytes(out)


# -- reading ----------------------------------------------------------------------------------------------------------
#
# Functions named *_at read what starts at ``pos`` in ``data`` and return it with the position after it. A read past
# the end raises IndexError, turned into BodyError once, in ``read_event``, rather than checked before every byte.
# Lengths are checked against the bytes left before anything is sliced, and a block's count too (each item of an
# array takes at least a byte), so that a hostile length fails at once instead of after a long loop or allocation.

class BodyError(ValueError):
    """Bytes that are not an Avro body of the canonical schema."""


class TrailingBytes(BodyError):
    """A whole event, followed by bytes that belong to none of it."""


_OPS = (Op.INSERT, Op.UPDATE, Op.DELETE, Op.UPSERT, Op.READ, Op.TRUNCATE)
_KINDS = (CellKind.PUT, CellKind.DELETE_VERSION, CellKind.DELETE_ALL_VERSIONS)
_PUT = CellKind.PUT
_VALUE_BRANCHES = 9
_SHIFTS = (7, 14, 21, 28, 35, 42, 49, 56, 63)  # of the 2nd to 10th byte of a long
_unpack_double = struct.Struct("<d").unpack_from
# By the first byte of a string: how many bytes the string takes with its length, when that length is one byte and
# even (not negative); 0 otherwise.
_SHORT = tuple(0 if byte & 0x81 else 1 + (byte >> 1) for byte in range(256))


def _long_at(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), pos + 1
    start = pos
    number = byte - 0x80
    for shift in _SHIFTS:
        pos += 1
        byte = data[pos]
        if byte < 0x80:
            number |= byte << shift
            break
        number |= (byte - 0x80) << shift
    else:  # fastavro's C reader would go on shifting bits out of its 64-bit integer
        raise BodyError(f"a long of more than 10 bytes at byte {start}")
    if number >> 64:  # the 10th byte may only carry the 64th bit
        raise BodyError(f"a long of more than 64 bits at byte {start}")
    return (number >> 1) ^ -(number & 1), pos + 1


def _index_at(data: bytes, pos: int, count: int, what: str) -> tuple[int, int]:
    """A union branch or enum symbol, in its general form: the callers read the one-byte forms themselves."""
    index, end = _long_at(data, pos)
    if not 0 <= index < count:  # fastavro takes a negative index from the end of the list, which is not Avro
        raise BodyError(f"{what} {index} at byte {pos}, of {count}")
    return index, end


def _size_at(data: bytes, pos: int) -> tuple[int, int]:
    """The length of the string or bytes at ``pos``, and the position of their first byte."""
    size, start = _long_at(data, pos)
    if not 0 <= size <= len(data) - start:
        raise BodyError(f"a length of {size} at byte {pos}, with {len(data) - start} bytes left")
    return size, start


def _string_at(data: bytes, pos: int) -> tuple[str, int]:
    end = pos + _SHORT[data[pos]]
    if end == pos or end > len(data):
        size, pos = _size_at(data, pos)
        end = pos + size
        return data[pos:end].decode(), end
    return data[pos + 1:end].decode(), end


def _present_at(data: bytes, pos: int) -> tuple[bool, int]:
    """Whether the ``["null", X]`` union at ``pos`` holds an X, and the position after its branch."""
    byte = data[pos]
    if byte == 0:
        return False, pos + 1
    if byte == 2:
        return True, pos + 1
    index, pos = _index_at(data, pos, 2, "union branch")
    return index == 1, pos


def _optional_string_at(data: bytes, pos: int) -> tuple[str | None, int]:
    present, pos = _present_at(data, pos)
    return _string_at(data, pos) if present else (None, pos)


def _optional_long_at(data: bytes, pos: int) -> tuple[int | None, int]:
    present, pos = _present_at(data, pos)
    return _long_at(data, pos) if present else (None, pos)


def _boolean_at(data: bytes, pos: int) -> bool:
    byte = data[pos]
    if byte > 1:  # the specification writes 0 or 1 only; fastavro reads anything else as true
        raise BodyError(f"a boolean of {byte} at byte {pos}")
    return byte == 1


def _block_at(data: bytes, pos: int) -> tuple[int, int]:
    """The item count of the array block at ``pos`` (0: the array ends) and the position of its first item."""
    count, pos = _long_at(data, pos)
    if count < 0:  # the block gives its size in bytes too, for readers that skip it; fastavro does not check it
        count = -count
        pos = _long_at(data, pos)[1]
    if count > len(data) - pos:
        raise BodyError(f"an array block of {count} items at byte {pos}, with {len(data) - pos} bytes left")
    return count, pos


def _value_at(data: bytes, pos: int, depth: int) -> tuple[Any, int]:
    """The value at ``pos``, held in ``depth`` arrays and Structs."""
    branch = data[pos]
    pos += 1
    if branch > 16 or branch & 1:  # not the one-byte form of an index in range
        index, pos = _index_at(data, pos - 1, _VALUE_BRANCHES, "value union branch")
        branch = index * 2
    if branch == 8:
        return _string_at(data, pos)
    if branch == 4:
        return _long_at(data, pos)
    if branch == 0:
        return None, pos
    if branch == 12:
        text, pos = _string_at(data, pos)
        return Decimal(text), pos
    if branch == 2:
        return _boolean_at(data, pos), pos + 1
    if branch == 6:
        if pos + 8 > len(data):
            raise IndexError  # as every read past the end
        return _unpack_double(data, pos)[0], pos + 8
    if branch == 10:
        size, pos = _size_at(data, pos)
        return data[pos:pos + size], pos + size
    if depth >= MAX_NESTING:  # the model would refuse the value; refused before reading on, as a body can nest deep
        raise ValueError(f"a value nested deeper than {MAX_NESTING} levels")
    if branch == 14:
        items = []
        count, pos = _block_at(data, pos)
        while count:
            for _ in range(count):
                item, pos = _value_at(data, pos, depth + 1)
                items.append(item)
            count, pos = _block_at(data, pos)
        return tuple(items), pos
    fields, pos = _entries_at(data, pos, depth + 1)
    return Struct(fields), pos


def _entries_at(data: bytes, pos: int, depth: int = 0) -> tuple[tuple[tuple[str, Any], ...], int]:
    if data[pos] == 0:
        return (), pos + 1
    entries = []
    count, pos = _block_at(data, pos)
    while count:
        for _ in range(count):
            name, pos = _string_at(data, pos)
            value, pos = _value_at(data, pos, depth)
            entries.append((name, value))
        count, pos = _block_at(data, pos)
    return tuple(entries), pos


def _cells_at(data: bytes, pos: int) -> tuple[tuple[Cell, ...], int]:
    # This loop is most of the time of a decode, so the common forms are read inline: strings shorter than 64 bytes,
    # the usual branches of the value, a null type or version, PUT.
    if data[pos] == 0:
        return (), pos + 1
    length = len(data)
    short = _SHORT
    cells: list[Cell] = []
    append = cells.append
    value: Any
    count = data[pos]
    if count & 0x81 or count >> 1 > length - pos - 1:
        count, pos = _block_at(data, pos)
    else:
        count >>= 1
        pos += 1
    while count:
        for _ in range(count):
            end = pos + short[data[pos]]
            if end == pos or end > length:
                name, pos = _string_at(data, pos)
            else:
                name = data[pos + 1:end].decode()
                pos = end
            branch = data[pos]
            pos += 1
            if branch == 8:
                end = pos + short[data[pos]]
                if end == pos or end > length:
                    value, pos = _string_at(data, pos)
                else:
                    value = data[pos + 1:end].decode()
                    pos = end
            elif branch == 0:
                value = None
            elif branch == 4:
                value, pos = _long_at(data, pos)
            elif branch == 12:
                text, pos = _string_at(data, pos)
                value = Decimal(text)
            else:
                value, pos = _value_at(data, pos - 1, 0)
            branch = data[pos]
            pos += 1
            if branch == 0:
                type_name = None
            else:
                end = pos + short[data[pos]]
                if branch != 2 or end == pos or end > length:
                    type_name, pos = _optional_string_at(data, pos - 1)
                else:
                    type_name = data[pos + 1:end].decode()
                    pos = end
            branch = data[pos]
            pos += 1
            if branch == 0:
                version = None
            elif branch == 2:
                version, pos = _long_at(data, pos)
            else:
                version, pos = _optional_long_at(data, pos - 1)
            if data[pos] == 0:
                kind = _PUT
                pos += 1
            else:
                index, pos = _index_at(data, pos, 3, "CellKind symbol")
                kind = _KINDS[index]
            append(Cell(name, value, type_name, version, kind))
        if data[pos] == 0:  # the end, as a zero of one byte (a zero in more bytes ends the loop as a count)
            pos += 1
            break
        count, pos = _block_at(data, pos)
    return tuple(cells), pos


def _optional_cells_at(data: bytes, pos: int) -> tuple[tuple[Cell, ...] | None, int]:
    byte = data[pos]
    if byte == 0:
        return None, pos + 1
    if byte == 2:
        return _cells_at(data, pos + 1)
    present, pos = _present_at(data, pos)
    return _cells_at(data, pos) if present else (None, pos)


def _event_at(data: bytes) -> tuple[ChangeEvent, int]:
    # The nulls and empty arrays that most events have are read inline, as in _cells_at.
    byte = data[0]
    if byte < 12 and not byte & 1:
        op, pos = _OPS[byte >> 1], 1
    else:
        index, pos = _index_at(data, 0, len(_OPS), "Op symbol")
        op = _OPS[index]
    if data[pos] == 0:
        table = None
        pos += 1
    else:
        present, pos = _present_at(data, pos)
        table = None
        if present:
            catalog, pos = (None, pos + 1) if data[pos] == 0 else _optional_string_at(data, pos)
            schema, pos = (None, pos + 1) if data[pos] == 0 else _optional_string_at(data, pos)
            name, pos = _string_at(data, pos)
            table = Table(name, schema, catalog)
    key, pos = _cells_at(data, pos)
    before, pos = (None, pos + 1) if data[pos] == 0 else _optional_cells_at(data, pos)
    after, pos = (None, pos + 1) if data[pos] == 0 else _optional_cells_at(data, pos)
    system, pos = (None, pos + 1) if data[pos] == 0 else _optional_string_at(data, pos)
    position, pos = ((), pos + 1) if data[pos] == 0 else _entries_at(data, pos)
    commit_time_us, pos = (None, pos + 1) if data[pos] == 0 else _optional_long_at(data, pos)
    capture_time_us, pos = (None, pos + 1) if data[pos] == 0 else _optional_long_at(data, pos)
    key_only = _boolean_at(data, pos)
    attributes, pos = ((), pos + 2) if data[pos + 1] == 0 else _entries_at(data, pos + 1)
    return ChangeEvent(op, table, key, before, after, Source(system, position, commit_time_us, capture_time_us),
                       key_only, attributes), pos


def read_event(message: bytes) -> ChangeEvent:
    """The event of an Avro body of the canonical schema, as ``event_from_record`` makes it of what fastavro reads.

    Bytes that are not such a body raise ``BodyError`` (``TrailingBytes``: an event, then more bytes); an event the
    model refuses raises what the model raises (ValueError, TypeError, decimal.InvalidOperation)."""
    data = message if type(message) is bytes else bytes(message)
    try:
        event, end = _event_at(data)
    except IndexError:
        raise BodyError(f"the body ends inside the event, after {len(data)} bytes") from None
    except UnicodeDecodeError as error:
        raise BodyError(f"a string that is not UTF-8 ({error})") from None
    if end != len(data):
        raise TrailingBytes(f"{len(data) - end} bytes left over after the event")
    return event
