"""The Protobuf body of the canonical envelope, written from and read into a ``ChangeEvent`` directly.

The generated classes (upb) serialize and parse fast, but building a message from an event, and an event from a
message, goes through upb's Python objects one attribute at a time, and that is most of the envelope's cost. The
schema here is fixed, so both directions can be written by hand for it:

* ``write_event`` writes the same bytes as ``proto_from_event(event).SerializeToString()``, which a property test
  checks for every event: fields in field-number order; a proto3 scalar at its default (an empty name, a zero op or
  kind, ``key_only`` false) left out; an ``optional`` field, a message field and a oneof member written whenever they
  are set, even at their default (a ``Value`` holding ``False`` or ``0`` is not a null); a null cell or entry value
  is no ``value`` field, but a null array item is an empty ``Value`` (a repeated field has no absent element).
* ``read_event`` reads a message laid out that way, as every standard writer lays it out, and nothing else. Protobuf
  lets a reader be given much more (fields in any order, a singular field twice where the last wins, a message field
  twice where both merge, a oneof member twice, unknown fields, overlong varints...). Rather than repeat those rules,
  the reader raises ``Unhandled`` at the first thing it does not expect, and the envelope then parses the message
  with upb, the reference, so that every input gives the event, or the error, it always gave. Values the model
  refuses (a struct naming a field twice, nesting too deep, text that is not a decimal) are left to the reference
  too, for its error message. A property test checks both paths on valid, mutated and random messages.

Neither imports the generated classes: the field numbers and wire types are those of
``proto/cdcformats/v1/change_event.proto``, written here as the tag bytes of each field (all below 16, so one byte).
"""

from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any

from ..model import MAX_NESTING, Cell, CellKind, ChangeEvent, Op, Source, Struct, Table
from .varint import put_varint

# Tags: the field number shifted left by 3, or'd with the wire type (0 varint, 1 fixed64, 2 length-delimited).
_OP_NUMBERS = {Op.INSERT: 1, Op.UPDATE: 2, Op.DELETE: 3, Op.UPSERT: 4, Op.READ: 5, Op.TRUNCATE: 6}
_KIND_NUMBERS = {CellKind.PUT: 0, CellKind.DELETE_VERSION: 1, CellKind.DELETE_ALL_VERSIONS: 2}
_OP_FIELD = {op: bytes((0x08, number)) for op, number in _OP_NUMBERS.items()}  # ChangeEvent.op = 1
# Cell.kind = 5; PUT, the enum's zero, is not written.
_KIND_FIELD = {kind: bytes((0x28, number)) if number else b"" for kind, number in _KIND_NUMBERS.items()}
# Indexed by the number read. 0, no op, is None: the reference reports it. A number past the end raises IndexError,
# which read_event turns into Unhandled, leaving it to the reference too.
_OPS: list[Op | None] = [None, *sorted(_OP_NUMBERS, key=_OP_NUMBERS.__getitem__)]
_KINDS = sorted(_KIND_NUMBERS, key=_KIND_NUMBERS.__getitem__)

_pack_double = struct.Struct("<d").pack
_unpack_double = struct.Struct("<d").unpack_from
# A tag followed by a length below 128, the usual head of a length-delimited field, built once for each.
_HEADS = {tag: [bytes((tag, length)) for length in range(128)] for tag in (0x0A, 0x12, 0x1A, 0x22, 0x2A, 0x32, 0x3A,
                                                                            0x42)}
_FALSE, _TRUE = b"\x08\x00", b"\x08\x01"  # Value.bool_value = 1
_NULL_ITEM = b"\x0a\x00"  # an empty Value as an Array item (Array.items = 1)


class Unhandled(Exception):
    """Raised by ``read_event`` for a message it leaves to the reference parser (not an error: the reference
    decides whether the message is one)."""


# -- event -> bytes ---------------------------------------------------------------------------------------------------

def _put_field(out: bytearray, tag: int, body: bytes | bytearray) -> None:
    """A length-delimited field: ``tag``, the length of ``body``, ``body``."""
    length = len(body)
    if length < 128:
        out += _HEADS[tag][length]
    else:
        out.append(tag)
        put_varint(out, length)
    out += body


def _put_int64(out: bytearray, tag: int, number: int) -> None:
    """An int64 field: a negative number is ten bytes of two's complement."""
    out.append(tag)
    put_varint(out, number & 0xFFFFFFFFFFFFFFFF)


def _put_text(out: bytearray, tag: int, text: str) -> None:
    # A lone surrogate raises UnicodeEncodeError, as upb does; encode_event then lets upb say so itself.
    _put_field(out, tag, text.encode())


def _value(value: Any) -> bytes | bytearray:
    """The body of the ``Value`` message of a value that is not None."""
    kind = type(value)
    if kind is str:
        data = value.encode()
        length = len(data)
        return (_HEADS[0x22][length] + data) if length < 128 else _with_head(0x22, data)
    if kind is int:  # sint64, zigzag
        number = (value << 1) ^ (value >> 63)
        if number < 128:
            return bytes((0x10, number))
        out = bytearray(b"\x10")
        put_varint(out, number)
        return out
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is float:
        return b"\x19" + _pack_double(value)
    if kind is Decimal:
        return _with_head(0x32, str(value).encode())
    if kind is bytes:
        return _with_head(0x2A, value)
    if kind is tuple:
        items = bytearray()
        for item in value:
            if item is None:
                items += _NULL_ITEM
            else:
                _put_field(items, 0x0A, _value(item))
        return _with_head(0x3A, items)
    return _with_head(0x42, _entries(value.fields, 0x0A))  # a Struct: Struct.fields = 1


def _with_head(tag: int, body: bytes | bytearray) -> bytearray:
    out = bytearray()
    _put_field(out, tag, body)
    return out


def _entries(entries: tuple[tuple[str, Any], ...], tag: int) -> bytearray:
    """Each (name, value) as an ``Entry`` field numbered by ``tag``."""
    out = bytearray()
    for name, value in entries:
        entry = bytearray()
        if name:
            _put_text(entry, 0x0A, name)  # Entry.name = 1
        if value is not None:
            _put_field(entry, 0x12, _value(value))  # Entry.value = 2
        _put_field(out, tag, entry)
    return out


def _cells(out: bytearray, cells: tuple[Cell, ...], tag: int) -> None:
    """Each cell as a ``Cell`` field numbered by ``tag``."""
    for cell in cells:
        body = bytearray()
        if cell.name:
            _put_text(body, 0x0A, cell.name)  # Cell.name = 1
        if cell.value is not None:
            _put_field(body, 0x12, _value(cell.value))  # Cell.value = 2
        if cell.type is not None:  # Cell.type = 3, optional: written even when empty
            _put_text(body, 0x1A, cell.type)
        if cell.version is not None:
            _put_int64(body, 0x20, cell.version)  # Cell.version = 4, optional
        body += _KIND_FIELD[cell.kind]  # Cell.kind = 5
        _put_field(out, tag, body)


def write_event(event: ChangeEvent) -> bytes:
    """The Protobuf message of ``event``, as upb serializes ``proto_from_event(event)`` (raises UnicodeEncodeError
    for a str that is not valid Unicode)."""
    out = bytearray(_OP_FIELD[event.op])  # ChangeEvent.op = 1
    table = event.table
    if table is not None:  # ChangeEvent.table = 2
        body = bytearray()
        if table.catalog is not None:
            _put_text(body, 0x0A, table.catalog)  # Table.catalog = 1, optional
        if table.schema is not None:
            _put_text(body, 0x12, table.schema)  # Table.schema = 2, optional
        if table.name:
            _put_text(body, 0x1A, table.name)  # Table.name = 3
        _put_field(out, 0x12, body)
    _cells(out, event.key, 0x1A)  # ChangeEvent.key = 3
    for cells, tag in ((event.before, 0x22), (event.after, 0x2A)):  # ChangeEvent.before = 4, after = 5: Images
        if cells is not None:
            body = bytearray()
            _cells(body, cells, 0x0A)  # Image.cells = 1
            _put_field(out, tag, body)
    source = event.source
    body = bytearray()  # ChangeEvent.source = 6: always set, so always written
    if source.system is not None:
        _put_text(body, 0x0A, source.system)  # Source.system = 1, optional
    if source.position:
        body += _entries(source.position, 0x12)  # Source.position = 2
    if source.commit_time_us is not None:
        _put_int64(body, 0x18, source.commit_time_us)  # Source.commit_time_us = 3, optional
    if source.capture_time_us is not None:
        _put_int64(body, 0x20, source.capture_time_us)  # Source.capture_time_us = 4, optional
    _put_field(out, 0x32, body)
    if event.key_only:
        out += b"\x38\x01"  # ChangeEvent.key_only = 7
    if event.attributes:
        out += _entries(event.attributes, 0x42)  # ChangeEvent.attributes = 8
    return bytes(out)


# -- bytes -> event ---------------------------------------------------------------------------------------------------
# Each reader takes the message and the span of the part it reads, and returns what it read with the position after
# it. Reading data[i] past the message raises IndexError. A field that runs past its part leaves the position beyond
# the part's end, where it stays, and the part is refused where its end is checked. The length of every message
# field is checked against the end of its part before the message is read, so a hostile length never reads past the
# data, allocates or loops (a slice past the data is only short).

def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` (as unsigned 64 bits) and the position after it, unrolled since each loop costs. The
    tenth byte may only carry the 64th bit: the bits beyond it, which upb drops, and an eleventh byte, which it
    refuses, are left to upb."""
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    number = byte & 0x7F
    byte = data[pos + 1]
    if byte < 0x80:
        return number | byte << 7, pos + 2
    number |= (byte & 0x7F) << 7
    byte = data[pos + 2]
    if byte < 0x80:
        return number | byte << 14, pos + 3
    number |= (byte & 0x7F) << 14
    byte = data[pos + 3]
    if byte < 0x80:
        return number | byte << 21, pos + 4
    number |= (byte & 0x7F) << 21
    byte = data[pos + 4]
    if byte < 0x80:
        return number | byte << 28, pos + 5
    number |= (byte & 0x7F) << 28
    byte = data[pos + 5]
    if byte < 0x80:
        return number | byte << 35, pos + 6
    number |= (byte & 0x7F) << 35
    byte = data[pos + 6]
    if byte < 0x80:
        return number | byte << 42, pos + 7
    number |= (byte & 0x7F) << 42
    byte = data[pos + 7]
    if byte < 0x80:
        return number | byte << 49, pos + 8
    number |= (byte & 0x7F) << 49
    byte = data[pos + 8]
    if byte < 0x80:
        return number | byte << 56, pos + 9
    number |= (byte & 0x7F) << 56
    byte = data[pos + 9]
    if byte < 2:
        return number | byte << 63, pos + 10
    raise Unhandled


def _length(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """The span (start, stop) of the length-delimited field whose length starts at ``pos``, within ``end``."""
    length = data[pos]
    if length < 0x80:
        pos += 1
    else:
        length, pos = _varint(data, pos)
    stop = pos + length
    if stop > end:
        raise Unhandled
    return pos, stop


def _int64(number: int) -> int:
    """An int64 field's value from its varint, read as unsigned 64 bits: two's complement."""
    return number - 0x10000000000000000 if number > 0x7FFFFFFFFFFFFFFF else number


def _read_text(data: bytes, pos: int, end: int) -> tuple[str, int]:
    """The text of the string field whose length starts at ``pos`` and the position after it. Invalid UTF-8, which
    upb refuses, raises UnicodeDecodeError: Python's decoder and upb's validator refuse the same sequences
    (surrogates, overlong forms, beyond U+10FFFF), which a property test checks."""
    start, stop = _length(data, pos, end)
    return data[start:stop].decode(), stop


def _read_value(data: bytes, pos: int, end: int, depth: int) -> Any:
    """The value of the ``Value`` message in data[pos:end]: its one member of the oneof, or null for none. ``depth``
    is how many arrays and structs hold it."""
    if pos == end:
        return None
    tag = data[pos]
    value: Any
    if tag == 0x22:  # string_value = 4
        value, pos = _read_text(data, pos + 1, end)
    elif tag == 0x10:  # int_value = 2, sint64
        value, pos = _varint(data, pos + 1)
        value = (value >> 1) ^ -(value & 1)
    elif tag == 0x08:  # bool_value = 1: a number other than 0 or 1 is IndexError, and left to upb
        value = (False, True)[data[pos + 1]]
        pos += 2
    elif tag == 0x19:  # double_value = 3
        pos += 9
        if pos > end:
            raise Unhandled
        value = _unpack_double(data, pos - 8)[0]
    elif tag == 0x2A:  # bytes_value = 5
        start, pos = _length(data, pos + 1, end)
        value = data[start:pos]
    elif tag == 0x32:  # decimal_value = 6: text that is not a decimal raises InvalidOperation, and the reference
        value, pos = _read_text(data, pos + 1, end)  # names the field
        value = Decimal(value)
    elif tag == 0x3A or tag == 0x42:  # array_value = 7, struct_value = 8
        if depth == MAX_NESTING:  # deeper than the model holds: the reference refuses it, and says why
            raise Unhandled
        start, pos = _length(data, pos + 1, end)
        if tag == 0x3A:
            value = _read_items(data, start, pos, depth + 1)
        else:
            fields, start = _read_entries(data, start, pos, 0x0A, depth + 1)  # Struct.fields = 1
            if start != pos:
                raise Unhandled
            value = Struct(fields)
    else:
        raise Unhandled
    if pos != end:  # a second member of the oneof (where the last would win), or one that ran past the Value
        raise Unhandled
    return value


def _read_items(data: bytes, pos: int, end: int, depth: int) -> tuple[Any, ...]:
    """The items of the ``Array`` message in data[pos:end] (items = 1)."""
    items = []
    while pos < end:
        if data[pos] != 0x0A:
            raise Unhandled
        start, pos = _length(data, pos + 1, end)
        items.append(_read_value(data, start, pos, depth))
    return tuple(items)


def _read_entries(data: bytes, pos: int, end: int, tag: int, depth: int) -> tuple[tuple[tuple[str, Any], ...], int]:
    """The ``Entry`` fields numbered by ``tag`` from ``pos`` on, up to the first other field or ``end``, and the
    position after them."""
    entries = []
    while pos < end and data[pos] == tag:
        start, pos = _length(data, pos + 1, end)
        name = ""
        value = None
        if start < pos and data[start] == 0x0A:  # Entry.name = 1
            name, start = _read_text(data, start + 1, pos)
        if start < pos and data[start] == 0x12:  # Entry.value = 2
            value_start, start = _length(data, start + 1, pos)
            value = _read_value(data, value_start, start, depth)
        if start != pos:
            raise Unhandled
        entries.append((name, value))
    return tuple(entries), pos


def _read_cells(data: bytes, pos: int, end: int, tag: int) -> tuple[tuple[Cell, ...], int]:
    """The ``Cell`` fields numbered by ``tag`` from ``pos`` on, up to the first other field or ``end``, and the
    position after them.

    The hot loop, so written out in full, with one-byte lengths and the usual values read in line. A length inside
    a cell is not checked as it is read: one that runs past the cell leaves ``pos`` beyond ``stop`` and the cell is
    refused at its end (a slice past the message is only short, never an error)."""
    cells: list[Cell] = []
    append = cells.append
    put = CellKind.PUT
    while pos < end and data[pos] == tag:
        stop = data[pos + 1]
        if stop < 0x80:
            pos += 2
        else:
            stop, pos = _varint(data, pos + 1)
        stop += pos
        if stop > end:
            raise Unhandled
        value: Any = None
        type_name = version = None
        field = data[pos] if pos < stop else 0
        if field == 0x0A:  # Cell.name = 1
            length = data[pos + 1]
            if length < 0x80:
                start = pos + 2
                pos = start + length
            else:
                start, pos = _length(data, pos + 1, stop)
            name = data[start:pos].decode()
            field = data[pos] if pos < stop else 0
        else:
            name = ""
        if field == 0x12:  # Cell.value = 2
            length = data[pos + 1]
            if length < 0x80:
                start = pos + 2
                pos = start + length
                member = data[start] if length else 0
                if member == 0x22 and data[start + 1] == length - 2:  # all of it string_value, with its length
                    value = data[start + 2:pos].decode()
                elif member == 0x10:  # all of it int_value, sint64
                    value = data[start + 1]
                    if value < 0x80:
                        start += 2
                    else:
                        value, start = _varint(data, start + 1)
                    if start != pos:
                        raise Unhandled
                    value = (value >> 1) ^ -(value & 1)
                elif member == 0x08 and length == 2:  # bool_value: a number other than 0 or 1 is IndexError
                    value = (False, True)[data[start + 1]]
                elif length:
                    value = _read_value(data, start, pos, 0)
            else:
                start, pos = _length(data, pos + 1, stop)
                value = _read_value(data, start, pos, 0)
            field = data[pos] if pos < stop else 0
        if field == 0x1A:  # Cell.type = 3
            length = data[pos + 1]
            if length < 0x80:
                start = pos + 2
                pos = start + length
            else:
                start, pos = _length(data, pos + 1, stop)
            type_name = data[start:pos].decode()
            field = data[pos] if pos < stop else 0
        if field == 0x20:  # Cell.version = 4
            version = data[pos + 1]
            if version < 0x80:
                pos += 2
            else:
                version, pos = _varint(data, pos + 1)
            version = _int64(version)
            field = data[pos] if pos < stop else 0
        if field == 0x28:  # Cell.kind = 5: a number the model has no kind for is IndexError, and left to upb
            kind = _KINDS[data[pos + 1]]
            pos += 2
        else:
            kind = put
        if pos != stop:
            raise Unhandled
        append(Cell(name, value, type_name, version, kind))
    return tuple(cells), pos


def read_event(data: bytes) -> ChangeEvent:
    """The event of a Protobuf message laid out as ``write_event`` and the standard writers lay it out; ``Unhandled``
    for any other message, and for one whose values the model refuses."""
    try:
        return _read_event(data)
    except (IndexError, ValueError, ArithmeticError):  # past the end; invalid UTF-8 or what the model refuses; not a
        raise Unhandled from None  # decimal


def _read_event(data: bytes) -> ChangeEvent:
    end = len(data)
    if data[0] != 0x08:  # ChangeEvent.op = 1; a message without one is the reference's to report
        raise Unhandled
    op = _OPS[data[1]]
    if op is None:
        raise Unhandled
    pos = 2
    table = None
    field = data[pos] if pos < end else 0
    if field == 0x12:  # ChangeEvent.table = 2
        start, pos = _length(data, pos + 1, end)
        catalog = schema = None
        name = ""
        if start < pos and data[start] == 0x0A:  # Table.catalog = 1
            catalog, start = _read_text(data, start + 1, pos)
        if start < pos and data[start] == 0x12:  # Table.schema = 2
            schema, start = _read_text(data, start + 1, pos)
        if start < pos and data[start] == 0x1A:  # Table.name = 3
            name, start = _read_text(data, start + 1, pos)
        if start != pos:
            raise Unhandled
        table = Table(name, schema, catalog)
        field = data[pos] if pos < end else 0
    key: tuple[Cell, ...] = ()
    if field == 0x1A:  # ChangeEvent.key = 3
        key, pos = _read_cells(data, pos, end, 0x1A)
        field = data[pos] if pos < end else 0
    before = after = None
    if field == 0x22:  # ChangeEvent.before = 4, an Image: cells = 1
        start, pos = _length(data, pos + 1, end)
        before, start = _read_cells(data, start, pos, 0x0A)
        if start != pos:
            raise Unhandled
        field = data[pos] if pos < end else 0
    if field == 0x2A:  # ChangeEvent.after = 5, an Image
        start, pos = _length(data, pos + 1, end)
        after, start = _read_cells(data, start, pos, 0x0A)
        if start != pos:
            raise Unhandled
        field = data[pos] if pos < end else 0
    system = commit_time = capture_time = None
    position: tuple[tuple[str, Any], ...] = ()
    if field == 0x32:  # ChangeEvent.source = 6
        start, pos = _length(data, pos + 1, end)
        field = data[start] if start < pos else 0
        if field == 0x0A:  # Source.system = 1
            system, start = _read_text(data, start + 1, pos)
            field = data[start] if start < pos else 0
        if field == 0x12:  # Source.position = 2
            position, start = _read_entries(data, start, pos, 0x12, 0)
            field = data[start] if start < pos else 0
        if field == 0x18:  # Source.commit_time_us = 3
            commit_time, start = _varint(data, start + 1)
            commit_time = _int64(commit_time)
            field = data[start] if start < pos else 0
        if field == 0x20:  # Source.capture_time_us = 4
            capture_time, start = _varint(data, start + 1)
            capture_time = _int64(capture_time)
        if start != pos:
            raise Unhandled
        field = data[pos] if pos < end else 0
    key_only = False
    if field == 0x38:  # ChangeEvent.key_only = 7: a number other than 0 or 1 is IndexError
        key_only = (False, True)[data[pos + 1]]
        pos += 2
    attributes: tuple[tuple[str, Any], ...] = ()
    if pos < end:
        attributes, pos = _read_entries(data, pos, end, 0x42, 0)  # ChangeEvent.attributes = 8
        if pos != end:
            raise Unhandled
    return ChangeEvent(op, table, key, before, after, Source(system, position, commit_time, capture_time), key_only,
                       attributes)
