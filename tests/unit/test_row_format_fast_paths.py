"""The fast paths of canal-json, maxwell-json, aliyun-json, arcion, ots and lindorm: ``encode_whole`` writes only an
event that is its own normal form, as ``encode_exact`` writes it, including for the conditions the conversion matrix's
sources seldom draw (an update's columns in another order, a time not in the format's unit, attributes out of order,
a cell without its version); and Tablestore's records of one sequence id are still checked row against row."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest

import cdcformats as cf
from cdcformats import DecodeError
from cdcformats.model import Cell, ChangeEvent, Op, Source, Table

KEY = (Cell("id", "1"),)
ROW = (Cell("id", "1"), Cell("name", "a"), Cell("note", "x"))
CHANGED = (Cell("id", "1"), Cell("name", "b"), Cell("note", "x"))
REORDERED = (Cell("id", "1"), Cell("note", "x"), Cell("name", "a"))
TABLE = Table("t", "db")
MILLIS = Source(commit_time_us=1_700_000_000_123_000)
SECONDS = Source(commit_time_us=1_700_000_000_000_000)


def update(before: tuple[Cell, ...], source: Source = MILLIS) -> ChangeEvent:
    return ChangeEvent(Op.UPDATE, TABLE, KEY, before, CHANGED, source)


def arcion_update(attributes: tuple[tuple[str, int], ...]) -> ChangeEvent:
    cursor = Source(position=(("timestamp", 1_700_000_000_123),), commit_time_us=1_700_000_000_123_000)
    return ChangeEvent(Op.UPDATE, TABLE, KEY, ROW, CHANGED, cursor, attributes=attributes)


def ots_upsert(version: int | None) -> ChangeEvent:
    return ChangeEvent(Op.UPSERT, None, (Cell("id", "1"),), after=(Cell("name", "a", version=version),))


def lindorm_put(source: Source) -> ChangeEvent:
    """A row with a cell of its own time and a null cell, which entries write otherwise than plain text."""
    row = (Cell("id", "1"), Cell("name", "a", version=1_700_000_000_123), Cell("note", None))
    return ChangeEvent(Op.UPSERT, Table("t"), KEY, after=row, source=source)


# (format, options, an event written whole, the same event but for one condition, which its normal form changes)
CASES = [
    ("canal-json", {}, update(ROW), update(REORDERED)),
    ("maxwell-json", {}, update(ROW, SECONDS), update(ROW, MILLIS)),
    ("aliyun-json", {}, update(ROW), update(ROW, Source(commit_time_us=-1_000))),
    ("arcion", {"key_columns": ["id"]},
     arcion_update((("arcion.namespace_hash", 1), ("arcion.table_hash", 2))),
     arcion_update((("arcion.table_hash", 2), ("arcion.namespace_hash", 1)))),
    ("ots", {"primary_key": ["id"]}, ots_upsert(5), ots_upsert(None)),
    ("lindorm", {"key_columns": ["id"]}, lindorm_put(MILLIS), lindorm_put(Source(commit_time_us=1_000_001))),
]


@pytest.mark.parametrize(("name", "options", "whole", "changed"), CASES, ids=[case[0] for case in CASES])
def test_encode_whole_writes_exactly_the_events_that_are_their_own_normal_form(
        name: str, options: dict, whole: ChangeEvent, changed: ChangeEvent) -> None:
    codec = cf.codec(name, **options)
    assert codec.encode_whole(whole) == codec.encode_exact(whole)
    assert codec.normal_form(whole) == whole
    assert codec.encode_whole(changed) is None
    assert codec.normal_form(changed) != changed
    assert codec.dropped(changed)


SEQUENCE = "0000000001_00000000000001000000_0000000002_shard:%010d"


@pytest.mark.parametrize(("second_row", "field", "reason"), [
    (("j", "c", 5, "v", "U", SEQUENCE % 1), "sequenceInfo", "different primary keys"),
    (("k", "c", 5, None, "DO", SEQUENCE % 1), "opType", "holds only U rows"),
])
def test_rows_of_one_sequence_id_are_checked_against_the_first(second_row: tuple, field: str, reason: str) -> None:
    codec = cf.codec("ots", primary_key=["id"])
    units = list(codec.decode_units(enumerate([("k", None, None, None, "DR", SEQUENCE % 0), second_row])))
    assert len(units) == 1 and units[0].events == []
    error = units[0].error
    assert error is not None and f"field {field}" in str(error) and reason in str(error)


def test_a_dr_row_of_the_same_sequence_id_cannot_follow() -> None:
    codec = cf.codec("ots", primary_key=["id"])
    rows = [("k", "c", 5, "v", "U", SEQUENCE % 0), ("k", None, None, None, "DR", SEQUENCE % 1)]
    (unit,) = codec.decode_units(enumerate(rows))
    assert unit.error is not None and "a DR row can only open a record" in str(unit.error)


# Values a row's field may hold that the model or Tablestore holds only elsewhere, or not at all.
ODD_VALUES = [True, False, 1.0, 2**63, -(2**63) - 1, Decimal(1), None, "DR", "U", "DO", "DA", "id", "", b"", 0, ["x"],
              float("nan")]


# The first row of a record with sequence info, which a row of the same record follows.
OPENER = ("k", None, None, None, "DR", SEQUENCE % 0)


@pytest.mark.parametrize(("row", "after"), [
    (("k", "c", 5, "v", "U"), ()), (("k", None, None, None, "DR"), ()),
    (("k", "c", 5, "v", "U", SEQUENCE % 1), (OPENER,)), (("k", None, None, None, "DR", SEQUENCE % 1), (OPENER,)),
], ids=["U", "DR", "U with sequence info", "DR with sequence info"])
def test_a_tablestore_row_read_by_the_walk_is_refused_as_the_full_check_refuses_it(row: tuple, after: tuple) -> None:
    """A one-column key's U and DR rows are checked as they are read (with sequence info, after a row of their
    record), and any other by _parse_row: each row with a field changed is refused exactly where _parse_row refuses
    it, with its error."""
    codec = cf.codec("ots", primary_key=["id"])
    for index, value in itertools.product(range(len(row)), ODD_VALUES):
        changed = (*row[:index], value, *row[index + 1:])
        try:
            codec._parse_row(changed)
        except DecodeError as error:
            expected: tuple | None = (error.reason, error.field)
        else:
            expected = None
        units = list(codec.decode_units(enumerate([*after, changed])))
        refused = [(unit.error.reason, unit.error.field) for unit in units if unit.error is not None
                   and unit.position == len(after)]
        assert (refused[0] if refused else None) == expected, changed


def test_a_col_idx_of_21_digits_is_refused_after_the_largest_of_20() -> None:
    """Sequence info holds 20 digits of colIdx at most: the row after colIdx 99999999999999999999 cannot be read as
    the next row of its record."""
    codec = cf.codec("ots", primary_key=["id"])
    prefix = SEQUENCE.rpartition(":")[0]
    rows = [("k", "a", 5, "v", "U", f"{prefix}:{'9' * 20}"), ("k", "b", 5, "v", "U", f"{prefix}:1{'0' * 20}")]
    refused, record = codec.decode_units(enumerate(rows))  # a refused row leaves its record open
    assert refused.position == 1 and refused.error is not None and refused.error.field == "sequenceInfo"
    assert record.position == 0 and record.error is None


def test_an_update_from_true_to_1_is_written_with_its_old_value() -> None:
    """True == 1 in Python; a changed column is told by the cells, which compare the kind of value too."""
    before, after = (Cell("id", 1), Cell("flag", True)), (Cell("id", 1), Cell("flag", 1))
    event = ChangeEvent(Op.UPDATE, TABLE, (Cell("id", 1),), before, after, SECONDS)
    codec = cf.codec("maxwell-json")
    assert codec.encode_whole(event) == codec.encode_exact(event)
    assert list(codec.decode(codec.encode([event]))) == [event]
