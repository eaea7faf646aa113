"""The Avro body of the canonical envelope, written straight from a ``ChangeEvent``.

fastavro writes any schema, and for this one spends most of its time choosing the branch of each value's union,
which makes the envelope the slowest step of a conversion. The schema here is fixed, so the branch is known from the
Python type: this writer is three times faster and writes the same bytes as
``fastavro.schemaless_writer(stream, avro_schema(), record_from_event(event))``, which a property test checks for
every event. Reading stays with fastavro. Encoding as the Avro specification says: longs as zigzag varints, strings
and bytes with their length first, unions and enums as their index, arrays as one block and a zero.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any

from ..model import Cell, CellKind, ChangeEvent, Op, Struct

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
    number = (number << 1) ^ (number >> 63)
    while number > 0x7F:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)


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
