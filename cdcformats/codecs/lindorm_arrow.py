"""Lindorm Streams JSON decoded a whole Arrow batch at a time: the fast path of ``LindormCodec.decode_arrow``.

The batch is joined into one buffer of JSON lines and parsed by Arrow's JSON reader against the documented layout, and
every canonicalization step of ``lindorm.py`` (ops, versions, entries with a blank ``ts``, typing values by their
column type) is then done with Arrow compute kernels over whole columns. Anything this path cannot do *exactly* as
``LindormCodec.decode_message`` does is not guessed at: the row is flagged undecided and the reference decoder takes
it. That covers every malformed message (so errors are always the reference's), and the rare shapes of valid ones:
fields beyond the documented five, ``DeleteFamilyVersion``, a ``DeleteColumn`` that deletes no column, integers
written as JSON numbers, and ``key_columns`` given per table.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from ..core import time_units, typed_text
from ..envelopes import arrow
from ..model import INT64_MAX

_ENTRY = pa.struct([("type", pa.string()), ("name", pa.string()), ("ts", pa.string()), ("value", pa.string())])
_LAYOUT = pa.schema([("op", pa.string()), ("table", pa.string()), ("ts", pa.string()), ("keyOnly", pa.string()),
                     ("data", pa.list_(_ENTRY))])

# The ops decided here (DeleteFamilyVersion needs the lindorm.op attribute), in the order of the arrays below.
_OP_NAMES = pa.array(["Put", "Delete", "DeleteColumn", "DeleteFamily"])
_CANONICAL_OPS = pa.array(["UPSERT", "UPDATE", "UPDATE", "DELETE"])
_CELL_KINDS = pa.array(["PUT", "DELETE_VERSION", "DELETE_ALL_VERSIONS", "PUT"])
_DELETE_COLUMN, _DELETE_FAMILY = 2, 3

# Text that ``typed_text.parse`` turns into a value, recognized without Python where the rule is simple:
_VERSION = r"^-?[0-9]{1,18}$"  # int(text) fits in 64 bits (longer digit strings go to the reference decoder)
_INTEGER = r"^(0|-?[1-9][0-9]{0,17})$"  # str(int(text)) == text, within 64 bits
_DECIMAL = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$"  # str(Decimal(text)) == text unless it is written with an exponent:
_DECIMAL_WITH_EXPONENT = r"^-?0\.(0{6,}[1-9]|0{7,}$)"  # 0.0000001 reads back as 1E-7
_MILLISECONDS_LIMIT = INT64_MAX // time_units.MILLISECOND  # beyond it, microseconds overflow 64 bits


def decode_arrow(values: pa.Array, max_message_bytes: int, key_columns: tuple[str, ...], blank_ts_attribute: str
                 ) -> tuple[pa.StructArray, pa.BooleanArray]:
    """The events of a batch of messages, and which rows were left undecided (null messages stay null rows).
    ``key_columns`` are the key column names of every table; ``blank_ts_attribute`` names the attribute that lists
    the entries with a blank ``ts`` (``lindorm.BLANK_TS_ATTRIBUTE``, which this module cannot import)."""
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.binary() if pa.types.is_string(values.type) else pa.large_binary())
    length = len(values)
    # Rows to parse: non-null, within the size limit, valid UTF-8 (Arrow's reader does not check it, msgspec does),
    # and starting with an object. The JSON reader skips blank lines, and a line can hold two values, so a chunk
    # parses into as many rows as it has messages only if each gave one row: with no blank message, counting the rows
    # proves it. (pyarrow 26 also crashes, rather than failing, on a batch whose first value is a bare null: starting
    # with "{" rules that out too.)
    an_object = pc.match_substring_regex(values, r"^[ \t\r\n]*\{")
    parsable = pc.and_(pc.and_(an_object, pc.less_equal(pc.binary_length(values), max_message_bytes)),
                       _valid_utf8(values)).fill_null(False)
    rows = pc.indices_nonzero(parsable)
    parsed, failed = _parse(_one_line_each(values.take(rows)))
    events, undecided = _canonical(parsed, key_columns, blank_ts_attribute)
    undecided = pc.or_(undecided, failed)
    if len(rows) == length:
        return events, undecided
    # Scatter back to the batch: unparsable non-null rows are undecided, null rows stay null.
    position = arrow.places_among_chosen(parsable.to_pylist())
    events = events.take(position)
    undecided = pc.if_else(pc.is_null(position), values.is_valid(), undecided.take(position))
    return events, undecided


def _valid_utf8(values: pa.Array) -> pa.Array:
    """Which messages are valid UTF-8: checked for the whole batch at once, row by row only when that fails."""
    try:
        values.cast(pa.string())
    except pa.ArrowInvalid:
        return pa.array([_decodes(value) for value in values.to_pylist()], pa.bool_())
    return pa.array([True] * len(values), pa.bool_())


def _decodes(message: bytes | None) -> bool:
    if message is None:
        return True
    try:
        message.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _one_line_each(values: pa.Array) -> pa.Array:
    """A raw line break cannot be inside a JSON string, so it is whitespace (or an error either way): a space keeps
    every message on its own line."""
    data = values.buffers()[2]  # every message's bytes (and maybe more around a slice: a false alarm costs little)
    text = data.to_pybytes() if data is not None else b""
    if b"\n" in text or b"\r" in text:
        return pc.replace_substring(pc.replace_substring(values, "\n", " "), "\r", " ")
    return values


# -- parsing ----------------------------------------------------------------------------------------------------------

def _parse(values: pa.Array) -> tuple[pa.StructArray, pa.BooleanArray]:
    """Parse each message against the layout; returns the rows (null where parsing failed) and which failed.

    Arrow's reader stops at the first bad row, and says which one when it can: the rows before it are parsed again,
    the bad row is marked failed, and the rest go on; where it cannot say (or a line held two objects), the range is
    split in halves. Each attempt costs about as much as decoding a hundred messages with the reference decoder, so
    after a few failures (one per hundred messages) the rest of the batch is left to it.
    """
    length = len(values)
    failed = [False] * length
    pieces: list[tuple[int, pa.Table]] = []
    ranges = [(0, length)]  # a stack: the range on top is the leftmost not yet parsed
    failures_left = max(8, length // 100)
    while ranges:
        start, stop = ranges.pop()
        if start >= stop:
            continue
        if failures_left <= 0:
            failed[start:stop] = [True] * (stop - start)
            continue
        try:
            table = _read_lines(values.slice(start, stop - start))
        except (pa.ArrowInvalid, UnicodeDecodeError) as error:
            failures_left -= 1
            bad = _bad_row(error)
            if bad is not None and 0 <= bad < stop - start:
                failed[start + bad] = True
                ranges += [(start + bad + 1, stop), (start, start + bad)]
                continue
            table = None
        if table is not None and table.num_rows == stop - start:
            pieces.append((start, table))
        elif stop - start == 1:
            failed[start] = True
        else:  # the reader did not say which row, or a line held two objects: find it by halves
            if table is not None:
                failures_left -= 1
            middle = (start + stop) // 2
            ranges += [(middle, stop), (start, middle)]
    pieces += [(row, _null_rows(1)) for row, bad in enumerate(failed) if bad]
    pieces.sort(key=lambda piece: piece[0])
    table = pa.concat_tables([piece for _, piece in pieces]) if pieces else _LAYOUT.empty_table()
    return table.to_struct_array().combine_chunks(), pa.array(failed, pa.bool_())


def _read_lines(chunk: pa.Array) -> pa.Table:
    # Each message plus a line break, in one new array: its data buffer is the whole chunk as JSON lines.
    lines = pc.binary_join_element_wise(chunk, pa.scalar(b"", chunk.type), b"\n")
    buffer = lines.buffers()[2][:pc.sum(pc.binary_length(lines)).as_py() or 0]
    return pa_json.read_json(
        pa.BufferReader(buffer),
        read_options=pa_json.ReadOptions(use_threads=False, block_size=max(len(buffer), 1) + 1),
        parse_options=pa_json.ParseOptions(explicit_schema=_LAYOUT, unexpected_field_behavior="error"))


def _bad_row(error: Exception) -> int | None:
    text = str(error)
    marker = " in row "
    if marker not in text:
        return None
    digits = text.rsplit(marker, 1)[1].split()[0].rstrip(".:,")
    return int(digits) if digits.isdigit() else None


def _null_rows(count: int) -> pa.Table:
    return pa.table({field.name: pa.nulls(count, field.type) for field in _LAYOUT})


# -- canonicalization -------------------------------------------------------------------------------------------------

def _canonical(parsed: pa.StructArray, key_columns: tuple[str, ...], blank_ts_attribute: str
               ) -> tuple[pa.StructArray, pa.BooleanArray]:
    length = len(parsed)
    op_index = pc.index_in(parsed.field("op"), value_set=_OP_NAMES)
    data = parsed.field("data")
    key_only_text = pc.utf8_lower(parsed.field("keyOnly"))
    ts = parsed.field("ts")
    commit_ms, ts_decided = _versions(ts)
    parents = pc.list_parent_indices(data)  # the row of each cell
    cells, cell_undecided, is_key_cell = _cells(data, parents, op_index, key_columns)
    # A DeleteColumn that deletes no column reads back as a Delete: the reference marks it with lindorm.op.
    deleting_cells = pc.value_counts(pc.filter(parents, pc.invert(is_key_cell)))
    deletes_nothing = pc.invert(pc.is_in(pa.array(range(length), pa.int64()),
                                         value_set=deleting_cells.field("values").cast(pa.int64())))
    undecided = pc.or_kleene(pc.is_null(op_index), pc.is_null(data))
    undecided = pc.or_kleene(undecided, pc.and_(pc.equal(op_index, _DELETE_COLUMN), deletes_nothing))
    undecided = pc.or_kleene(undecided, pc.invert(pc.is_in(key_only_text, pa.array(["true", "false"]))))
    undecided = pc.or_kleene(undecided, pc.invert(ts_decided))
    undecided = pc.or_kleene(undecided, pc.greater(pc.abs(commit_ms), _MILLISECONDS_LIMIT).fill_null(False))
    undecided = pc.or_kleene(undecided, cell_undecided).fill_null(True)

    is_delete_family = pc.equal(op_index, _DELETE_FAMILY).fill_null(False)
    offsets = _offsets(data)
    no_entries = pa.ListArray.from_arrays(pa.array([0] * (length + 1), pa.int32()), pa.array([], arrow.ENTRY))
    null_strings = pa.nulls(length, pa.string())
    events = pa.StructArray.from_arrays([
        _CANONICAL_OPS.take(op_index),
        pa.StructArray.from_arrays([null_strings, null_strings, parsed.field("table")],
                                   fields=list(arrow.TABLE), mask=pc.is_null(parsed.field("table"))),
        _keys(cells, parents, length, key_columns),
        pa.ListArray.from_arrays(offsets, cells, mask=pc.invert(is_delete_family)),
        pa.ListArray.from_arrays(offsets, cells, mask=is_delete_family),
        pa.StructArray.from_arrays([null_strings, no_entries, pc.multiply(commit_ms, time_units.MILLISECOND),
                                    pa.nulls(length, pa.int64())], fields=list(arrow.SOURCE)),
        pc.equal(key_only_text, "true"),
        _blank_ts_attributes(data, parents, offsets, blank_ts_attribute),
        pa.nulls(length, arrow.ERROR),
    ], fields=list(arrow.EVENT), mask=undecided)
    return events, undecided


def _keys(cells: pa.StructArray, parents: pa.Array, length: int, key_columns: tuple[str, ...]) -> pa.ListArray:
    """Each row's key: for each key column in order, the first cell of that name in its image (as
    ``KeyColumns.key_of``), a missing one left out."""
    names = cells.field("name")
    picked_rows, picked_ranks, picked_cells = [], [], []
    for rank, column in enumerate(key_columns):
        matches = pc.indices_nonzero(pc.equal(names, column).fill_null(False))
        if not len(matches):
            continue
        rows = parents.take(matches)
        # Cells are in row order, so the first match of a row is where the row number changes.
        first = pc.not_equal(rows, pa.concat_arrays([pa.array([-1], rows.type), rows.slice(0, len(rows) - 1)]))
        picked_rows.append(pc.filter(rows, first))
        picked_cells.append(pc.filter(matches, first))
        picked_ranks.append(pa.array([rank] * len(picked_cells[-1]), pa.int64()))
    if not picked_rows:
        return pa.ListArray.from_arrays(pa.array([0] * (length + 1), pa.int32()), pa.array([], arrow.CELL))
    picked = pa.table({"row": pa.concat_arrays(picked_rows).cast(pa.int64()),
                       "rank": pa.concat_arrays(picked_ranks),
                       "cell": pa.concat_arrays(picked_cells).cast(pa.int64())})
    picked = picked.take(pc.sort_indices(picked, sort_keys=[("row", "ascending"), ("rank", "ascending")]))
    per_row = pc.value_counts(picked.column("row").combine_chunks())
    counts = [0] * length
    for row, count in zip(per_row.field("values").to_pylist(), per_row.field("counts").to_pylist()):
        counts[row] = count
    offsets = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(pa.array(counts, pa.int64()))])
    return pa.ListArray.from_arrays(offsets.cast(pa.int32()), cells.take(picked.column("cell").combine_chunks()))


def _blank_ts_attributes(data: pa.ListArray, parents: pa.Array, offsets: pa.Array, attribute: str
                         ) -> pa.ListArray:
    """Each row's attributes: ``attribute`` (``lindorm.blank_ts``), the positions in ``data`` of the entries whose
    ``ts`` is blank as JSON text (``[0,2]``), where there are any. ``parents`` is the row of each entry, ``offsets``
    are ``_offsets(data)``."""
    blank = pc.equal(data.flatten().field("ts"), "").fill_null(False)
    row_starts = offsets.cast(pa.int64())
    positions = pc.subtract(pa.array(range(len(blank)), pa.int64()), row_starts.take(parents))
    # Blank entries before each row's first entry: where each row's blank positions start among them all.
    blank_before = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(blank.cast(pa.int64()))])
    blank_offsets = blank_before.take(row_starts)
    texts = pc.binary_join(pa.ListArray.from_arrays(blank_offsets.cast(pa.int32()),
                                                    pc.filter(positions, blank).cast(pa.string())), ",")
    has_blank = pc.greater(pc.subtract(blank_offsets.slice(1), blank_offsets.slice(0, len(blank_offsets) - 1)), 0)
    texts = pc.filter(pc.binary_join_element_wise("[", texts, "]", ""), has_blank)
    values = pa.StructArray.from_arrays([pa.nulls(len(texts), field.type) if field.name != "string" else texts
                                         for field in arrow.VALUE], fields=list(arrow.VALUE))
    entries = pa.StructArray.from_arrays([pa.array([attribute] * len(texts), pa.string()), values],
                                         fields=list(arrow.ENTRY))
    entry_offsets = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(has_blank.cast(pa.int64()))])
    return pa.ListArray.from_arrays(entry_offsets.cast(pa.int32()), entries)


def _offsets(lists: pa.ListArray) -> pa.Array:
    """Offsets of ``lists`` into its flattened values, starting at 0 (a null list counts as empty)."""
    lengths = pc.list_value_length(lists).fill_null(0).cast(pa.int64())
    return pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(lengths)]).cast(pa.int32())


def _versions(texts: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Millisecond versions of ``texts`` (blank or null: null), and whether each was decided here."""
    blank = pc.or_kleene(pc.is_null(texts), pc.equal(texts, "")).fill_null(True)
    digits = pc.match_substring_regex(texts, _VERSION).fill_null(False)
    numbers = pc.cast(pc.if_else(digits, texts, None), pa.int64())
    return numbers, pc.or_(blank, digits)


def _cells(data: pa.ListArray, parents: pa.Array, op_index: pa.Array, key_columns: tuple[str, ...]
           ) -> tuple[pa.StructArray, pa.Array, pa.Array]:
    """The flattened cells of every row (``parents``: the row of each), which rows hold a cell this path cannot
    decide, and which cells belong to key columns (those identify the row, so they are PUT cells whatever the op)."""
    entries = data.flatten()
    names = entries.field("name")
    types = entries.field("type")
    versions, version_decided = _versions(entries.field("ts"))
    values = _typed_values(entries.field("value"), types)
    is_key_cell = pc.is_in(names, pa.array(key_columns, pa.string())).fill_null(False)
    kinds = pc.if_else(is_key_cell, "PUT", _CELL_KINDS.take(op_index.take(parents)))
    cells = pa.StructArray.from_arrays([names, values, types, versions, kinds], fields=list(arrow.CELL))
    bad_entry = pc.invert(pc.and_(version_decided, pc.is_valid(names)))
    bad_rows = pc.unique(pc.filter(parents, bad_entry))
    row_undecided = pc.is_in(pa.array(range(len(data)), pa.int64()), value_set=bad_rows.cast(pa.int64()))
    return cells, row_undecided, is_key_cell


def _typed_values(texts: pa.Array, types: pa.Array) -> pa.StructArray:
    """Each text typed by its column's type name exactly as ``typed_text.parse`` does, as ``arrow.VALUE``."""
    length = len(texts)
    # A batch has few type names: each is told its kind by ``typed_text.kind_of`` itself.
    type_names = [name for name in pc.unique(types).to_pylist() if name is not None]
    kinds = {kind: pc.is_in(types, pa.array([name for name in type_names if typed_text.kind_of(name) is kind],
                                            types.type))
             for kind in (int, float, bool, Decimal)}
    present = pc.is_valid(texts)
    is_int = pc.and_(kinds[int], pc.match_substring_regex(texts, _INTEGER)).fill_null(False)
    is_bool = pc.and_(kinds[bool], pc.is_in(texts, pa.array(["true", "false"]))).fill_null(False)
    is_decimal = pc.and_(pc.and_(kinds[Decimal], pc.match_substring_regex(texts, _DECIMAL)),
                         pc.invert(pc.match_substring_regex(texts, _DECIMAL_WITH_EXPONENT))).fill_null(False)
    # Floats (Python's repr decides what reads back), long integers and decimals written with an exponent or as
    # NaN: typed here in Python, one value at a time, by the reference rule itself.
    by_python = pc.and_(present, pc.or_(
        kinds[float],
        pc.or_(pc.and_(kinds[int], pc.invert(is_int)), pc.and_(kinds[Decimal], pc.invert(is_decimal)))
    )).fill_null(False)
    plain = pc.and_(present, pc.invert(pc.or_(pc.or_(is_int, is_bool), pc.or_(is_decimal, by_python))))
    members: dict[str, Any] = {
        "boolean": pc.if_else(is_bool, pc.equal(texts, "true"), None),
        "long": pc.cast(pc.if_else(is_int, texts, None), pa.int64()),
        "double": pa.nulls(length, pa.float64()),
        "string": pc.if_else(plain, texts, None),
        "bytes": pa.nulls(length, pa.binary()),
        "decimal": pc.if_else(is_decimal, texts, None),
        "nested": pa.nulls(length, pa.string()),  # a text entry is never a nested value
    }
    if pc.any(by_python).as_py():
        _type_in_python(members, texts, types, by_python)
    return pa.StructArray.from_arrays([members[field.name] for field in arrow.VALUE], fields=list(arrow.VALUE),
                                      mask=pc.invert(present))


def _type_in_python(members: dict[str, Any], texts: pa.Array, types: pa.Array, which: pa.Array) -> None:
    indexes = pc.indices_nonzero(which)
    columns: dict[str, list[Any]] = {name: members[name].to_pylist() for name in ("long", "double", "string",
                                                                                    "decimal")}
    for index, text, type_name in zip(indexes.to_pylist(), texts.take(indexes).to_pylist(),
                                      types.take(indexes).to_pylist()):
        row = arrow.value_row(typed_text.parse(text, type_name))
        assert row is not None  # the text is present, and parses to a value (itself, if nothing else)
        for name, value in row.items():
            columns[name][index] = value
    for name, column in columns.items():
        members[name] = pa.array(column, members[name].type)
