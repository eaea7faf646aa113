"""Tablestore's one walk of a stream of rows (``OtsCodec._grouped``), on streams of rows near valid ones: rows of
``ots_streams`` with a field swapped for an odd value (a bool, a float or an integer out of range where an integer
goes, a key column's name, a null, a list...), a field too few or too many, or a list for a tuple.

- The rows it checks as it reads them (a one-column key's U and DR rows, without sequence info or with the next of
  their record's) are refused exactly where the full check (``_parse_row``) refuses them, with its error; so are all
  others; and they decode to the events that the same rows as lists, which only the full check reads, decode to.
- Its three uses agree: ``decode``'s events and errors, ``decode_units``' units, and the incremental decoder fed a row
  at a time.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError
from cdcformats.codecs._kit.json_message import encode
from cdcformats.codecs.ots import OtsCodec
from cdcformats.contract import DecodedUnit

from .native import ots_streams, to_json_value

_ODD_VALUES = st.sampled_from([True, False, 1.0, 2**63, -(2**63) - 1, Decimal(1), None, "DR", "U", "DO", "DA", "id",
                               "pk2", "", b"", 0, ["x"], float("nan")])


@st.composite
def _other_sequence_info(draw: st.DrawFn, text: str) -> str:
    """Sequence info near ``text``: its colIdx one off, or written without DataX's zeros (the same number), or of 21
    digits; the record id written without zeros; or another shard."""
    prefix, _, column_index = text.rpartition(":")
    epoch, timestamp, row_index, shard_id = prefix.split("_", 3)
    index = int(column_index)
    return draw(st.sampled_from([
        f"{prefix}:{index + 1:010d}", f"{prefix}:{index - 1:010d}", f"{prefix}:{index}", f"{prefix}:{'9' * 21}",
        f"{int(epoch)}_{int(timestamp)}_{int(row_index)}_{shard_id}:{column_index}",
        f"{epoch}_{timestamp}_{row_index}_{shard_id}x:{column_index}"]))


@st.composite
def near_rows(draw: st.DrawFn, key_width: int) -> list[Any]:
    """A stream of ``ots_streams`` rows, some changed into rows that are not quite right."""
    rows: list[Any] = list(draw(ots_streams(key_width)))
    sequenced = [row for row in rows if len(row) == key_width + 5]  # as drawn, with sequence info
    for index in draw(st.lists(st.integers(0, max(len(rows) - 1, 0)), max_size=6)) if rows else ():
        row = list(rows[index])
        change = draw(st.sampled_from(["swap", "swap", "swap", "drop", "add", "list", "sequence"]))
        if change == "swap":
            row[draw(st.integers(0, len(row) - 1))] = draw(_ODD_VALUES)
        elif change == "drop":
            del row[draw(st.integers(0, len(row) - 1))]
        elif change == "add":
            row.insert(draw(st.integers(0, len(row))), draw(_ODD_VALUES))
        elif change == "sequence" and rows[index] in sequenced:
            row[-1] = draw(_other_sequence_info(row[-1]))
        rows[index] = row if change == "list" else tuple(row)
    return rows


CODECS = {
    "ots": cf.codec("ots", primary_key=["id"]),
    "ots+two-column key": cf.codec("ots", primary_key=["pk1", "pk2"]),
    "ots-json": cf.codec("ots-json", primary_key=["id"]),
}
STREAMS = {
    "ots": near_rows(1),
    "ots+two-column key": near_rows(2),
    "ots-json": near_rows(1).map(lambda rows: [_as_json(row) for row in rows]),
}


def _as_json(row: Any) -> bytes:
    """A row as ots-json writes one (a Decimal, which has no JSON form, as its text)."""
    return encode([to_json_value(value) if not isinstance(value, Decimal) else str(value) for value in row])


def _full_check(codec: OtsCodec, message: Any) -> tuple[str, str | None] | None:
    """What the full check of one row refuses it for (reason and field), or None."""
    try:
        codec._parse_row(codec._row(message))
    except DecodeError as error:
        return error.reason, error.field
    return None


def _seen(unit: DecodedUnit) -> tuple:
    return unit.position, unit.messages, unit.events, None if unit.error is None else str(unit.error)


@pytest.mark.parametrize("configuration", CODECS)
@given(data=st.data())
def test_the_walk_refuses_the_rows_the_full_check_refuses_and_its_uses_agree(configuration: str,
                                                                            data: st.DataObject) -> None:
    codec = CODECS[configuration]
    assert isinstance(codec, OtsCodec)
    stream = data.draw(STREAMS[configuration])
    units = list(codec.decode_units(enumerate(stream)))
    # A refused row is a unit of its own; a record's rows refused together (of one sequence id) are two or more.
    refused_rows = {unit.position: (unit.error.reason, unit.error.field) for unit in units
                    if unit.error is not None and len(unit.messages) == 1}
    expected = {position: refusal for position, message in enumerate(stream)
                if (refusal := _full_check(codec, message)) is not None}
    assert refused_rows == expected
    assert all(unit.error.format == codec.name for unit in units if unit.error is not None)

    errors: list[DecodeError] = []
    events = list(codec.decode(stream, on_error=errors.append))
    assert events == [event for unit in units for event in unit.events]
    assert [str(error) for error in errors] == [str(unit.error) for unit in units if unit.error is not None]

    # The same rows as lists, which the walk reads by _parse_row alone, decode to the same events and errors.
    if configuration != "ots-json":
        as_lists = [list(row) if type(row) is tuple else row for row in stream]
        listed_errors: list[DecodeError] = []
        assert list(codec.decode(as_lists, on_error=listed_errors.append)) == events
        assert [(error.position, error.reason, error.field) for error in listed_errors] == \
            [(error.position, error.reason, error.field) for error in errors]

    decoder = codec.incremental_decoder()
    fed = [unit for position, message in enumerate(stream) for unit in decoder.feed(position, message)]
    fed += decoder.flush()
    assert [_seen(unit) for unit in fed] == [_seen(unit) for unit in units]
