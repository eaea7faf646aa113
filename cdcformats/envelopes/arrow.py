"""The canonical change event as Apache Arrow data, and batch decode/encode over Arrow arrays.

This is what the Spark functions run on (Spark hands Python UDFs Arrow batches), and it needs nothing but pyarrow.

The Arrow type mirrors the model one to one (``EVENT``): a value is a struct with one member per kind
(``boolean``, ``long``, ``double``, ``string``, ``bytes``, ``decimal``, ``nested``), exactly one of them set, and the
struct null for a null value; a decimal travels as its exact text, as in the Avro and Protobuf envelopes, so any
precision and scale survive.

Spark types cannot recurse, so a nested value (an array or a ``Struct``) travels as JSON text in ``nested``, which
``from_json`` and ``get_json_object`` read: arrays as arrays, Structs as objects with their fields in order, null,
booleans, integers and text as JSON writes them, and floats always with a fraction or an exponent (``1.0``), so that
they stay floats. What JSON has no form for is an object of one tagged member: ``{"$binary": "<base64>"}``,
``{"$decimal": "<exact text>"}``, ``{"$double": "NaN"}`` (or ``"Infinity"``, ``"-Infinity"``); a Struct whose only
field has one of the names ``$binary``, ``$decimal``, ``$double`` or ``$struct`` is written inside ``{"$struct": ...}``,
so that it is never read as a tag.

The last field, ``error``, is set only on a row that could not be decoded under ``errors="dead-letter"``: it names the
format, the reason and the field, and keeps the raw input, as Spark's ``from_json`` keeps a corrupt record.

A codec may decode a whole batch at once: its ``batch_decoder()`` gives a ``BatchDecoder``, ``values -> (events,
undecided)``, and the rows flagged in ``undecided`` (a boolean array) are decoded one by one with ``decode_message``,
which is the reference, so the fast path only ever has to recognise what it can do exactly. The property tests
check that both paths agree.
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from itertools import accumulate, chain, compress, count, islice
from operator import attrgetter, itemgetter
from typing import Any, cast

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from ..contract import BatchDecoder
from ..core import typed_text
from ..core.error_modes import error_mode
from ..errors import CodecError, DecodeError, EncodeError
from ..model import MAX_NESTING, Cell, CellKind, ChangeEvent, Op, Source, Struct, Table, Value, is_nested

VALUE = pa.struct([
    ("boolean", pa.bool_()), ("long", pa.int64()), ("double", pa.float64()), ("string", pa.string()),
    ("bytes", pa.binary()), ("decimal", pa.string()), ("nested", pa.string()),
])
CELL = pa.struct([
    ("name", pa.string()), ("value", VALUE), ("type", pa.string()), ("version", pa.int64()), ("kind", pa.string()),
])
ENTRY = pa.struct([("name", pa.string()), ("value", VALUE)])
TABLE = pa.struct([("catalog", pa.string()), ("schema", pa.string()), ("name", pa.string())])
SOURCE = pa.struct([
    ("system", pa.string()), ("position", pa.list_(ENTRY)), ("commit_time_us", pa.int64()),
    ("capture_time_us", pa.int64()),
])
ERROR = pa.struct([
    ("format", pa.string()), ("reason", pa.string()), ("field", pa.string()), ("message", pa.string()),
    ("raw", pa.binary()),
])
EVENT = pa.struct([
    ("op", pa.string()), ("table", TABLE), ("key", pa.list_(CELL)), ("before", pa.list_(CELL)),
    ("after", pa.list_(CELL)), ("source", SOURCE), ("key_only", pa.bool_()), ("attributes", pa.list_(ENTRY)),
    ("error", ERROR),
])

# What a column function does with a row it cannot convert (cdcformats.core.error_modes.ERROR_MODES): one row per row.
COLUMN_ERROR_MODES = ("fail", "null", "dead-letter")

# -- Python objects <-> Arrow rows ------------------------------------------------------------------------------------

_MEMBER_OF_TYPE = {bool: "boolean", int: "long", float: "double", str: "string", bytes: "bytes"}


_TAGS = ("$binary", "$decimal", "$double", "$struct")


def _tagged(value: Value) -> Any:
    """A nested value's members as the ``nested`` text writes them (see the module's docstring)."""
    if type(value) is tuple:
        return [_tagged(item) for item in value]
    if type(value) is Struct:
        members = {name: _tagged(item) for name, item in value.fields}
        return {"$struct": members} if len(members) == 1 and value.fields[0][0] in _TAGS else members
    if type(value) is bytes:
        return {"$binary": base64.b64encode(value).decode("ascii")}
    if type(value) is Decimal:
        return {"$decimal": str(value)}
    if type(value) is float and not math.isfinite(value):
        return {"$double": typed_text.render(value)}
    return value


def _untagged(member: Any, where: str, depth: int) -> Value:
    """The value of a member of ``nested`` text, ``depth`` levels deep: the inverse of ``_tagged``."""
    if type(member) in (list, dict) and depth == MAX_NESTING:
        raise EncodeError("arrow", f"nested deeper than {MAX_NESTING} levels", field=where)
    if type(member) is list:
        return tuple(_untagged(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(member))
    if type(member) is not dict:
        return member
    if len(member) == 1:
        (tag, tagged), = member.items()
        if tag == "$struct" and type(tagged) is dict:
            member = tagged
        elif tag in _TAGS and type(tagged) is str:
            return _tag_value(tag, tagged, where)
    return Struct(tuple((name, _untagged(item, f"{where}.{name}", depth + 1)) for name, item in member.items()))


def _tag_value(tag: str, text: str, where: str) -> Value:
    try:
        if tag == "$binary":
            return base64.b64decode(text, validate=True)
        if tag == "$decimal":
            return Decimal(text)
        if text in ("NaN", "Infinity", "-Infinity"):
            return float(text)
    except (ValueError, ArithmeticError):
        pass
    raise EncodeError("arrow", f"{tag} does not hold {text!r}", field=where)


def value_row(value: Value) -> dict[str, Any] | None:
    if value is None:
        return None
    if type(value) is Decimal:
        return {"decimal": str(value)}
    if is_nested(value):
        return {"nested": _nested_text(value)}
    return {_MEMBER_OF_TYPE[type(value)]: value}


def _nested_text(value: Value) -> str:
    return msgspec.json.encode(_tagged(value)).decode()


def _cell_row(cell: Cell) -> dict[str, Any]:
    return {"name": cell.name, "value": value_row(cell.value), "type": cell.type, "version": cell.version,
            "kind": cell.kind.value}


def _image_row(cells: Sequence[Cell] | None) -> list[dict[str, Any]] | None:
    return None if cells is None else [_cell_row(cell) for cell in cells]


def _entries_row(entries: Iterable[tuple[str, Value]]) -> list[dict[str, Any]]:
    return [{"name": name, "value": value_row(value)} for name, value in entries]


def event_row(event: ChangeEvent) -> dict[str, Any]:
    """``event`` as a Python dict of the ``EVENT`` type."""
    table = event.table
    source = event.source
    return {
        "op": event.op.value,
        "table": None if table is None else {"catalog": table.catalog, "schema": table.schema, "name": table.name},
        "key": _image_row(event.key), "before": _image_row(event.before), "after": _image_row(event.after),
        "source": {"system": source.system, "position": _entries_row(source.position),
                   "commit_time_us": source.commit_time_us, "capture_time_us": source.capture_time_us},
        "key_only": event.key_only, "attributes": _entries_row(event.attributes), "error": None,
    }


def error_row(error: CodecError) -> dict[str, Any]:
    """A dead-letter row: every event field null, ``error`` set, the raw input kept as bytes."""
    raw = error.raw
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    elif not isinstance(raw, (bytes, type(None))):
        raw = repr(raw).encode("utf-8", "backslashreplace")
    return {"error": {"format": error.format, "reason": error.reason, "field": error.field, "message": str(error),
                      "raw": raw}}


def error_from_row(row: dict[str, Any]) -> DecodeError:
    """The decode error that a dead-letter row holds."""
    return DecodeError(row["format"], row["reason"], field=row["field"], raw=row["raw"])


def to_arrow(rows: Sequence[ChangeEvent | CodecError | None]) -> pa.StructArray:
    """Events (and, for dead-letter rows, errors; None for null rows) as an ``EVENT`` array.

    It is the array ``pa.array`` makes of each row's ``event_row`` (``error_row``, None), built a column at a time:
    making those dicts took longer than decoding the events did."""
    is_event = [row is not None and not isinstance(row, CodecError) for row in rows]
    events = cast(list[ChangeEvent], list(compress(rows, is_event)))
    columns = _event_columns(events)
    if len(events) == len(rows):
        columns.append(pa.nulls(len(rows), ERROR))
        return pa.StructArray.from_arrays(columns, fields=list(EVENT))
    is_error = [isinstance(row, CodecError) for row in rows]
    errors = pa.array([error_row(row)["error"] for row in rows if isinstance(row, CodecError)], ERROR)
    at_events = places_among_chosen(is_event)
    columns = [column.take(at_events) for column in columns]
    columns.append(errors.take(places_among_chosen(is_error)))
    nulls = [row is None for row in rows]
    return pa.StructArray.from_arrays(columns, fields=list(EVENT), mask=pa.array(nulls) if True in nulls else None)


def places_among_chosen(chosen: list[bool]) -> pa.Int64Array:
    """For each row, its place among the chosen rows, null for a row not chosen: what ``take`` spreads the chosen
    rows' array over all rows with."""
    place = count()
    return pa.array([next(place) if flag else None for flag in chosen], pa.int64())


# The VALUE member each kind of value goes to, by its number in VALUE's order counted from 1: 0 is a null value.
_MEMBER_NUMBER = {type(None): 0, bool: 1, int: 2, float: 3, str: 4, bytes: 5, Decimal: 6, tuple: 7, Struct: 7}
_DECIMAL_MEMBER = 6
_NESTED_MEMBER = 7
# For each member number, the bytes.translate table that turns a list's member numbers into 1 for its own, else 0.
_MEMBER_SELECTORS = [bytes(code == number for code in range(256)) for number in range(len(VALUE) + 1)]


def _value_array(values: list[Value]) -> pa.StructArray:
    """``values`` as a ``VALUE`` array, each as ``value_row`` writes it.

    The values' member numbers are bytes, so that each member's values are picked out of the list at C speed
    (translate, then compress), converted on their own and put back in place by Arrow: a loop appending each value to
    its member's list would run Python code per value."""
    numbers = bytes(map(_MEMBER_NUMBER.__getitem__, map(type, values)))
    number_array = pa.Array.from_buffers(pa.int8(), len(numbers), [None, pa.py_buffer(numbers)])
    members = []
    for number, member in enumerate(VALUE, start=1):
        if bytes((number,)) not in numbers:
            members.append(pa.nulls(len(values), member.type))
            continue
        picked = list(compress(values, numbers.translate(_MEMBER_SELECTORS[number])))
        if number == _DECIMAL_MEMBER:
            picked = list(map(str, picked))
        elif number == _NESTED_MEMBER:
            picked = list(map(_nested_text, picked))
        members.append(pc.replace_with_mask(pa.nulls(len(values), member.type), pc.equal(number_array, number),
                                            pa.array(picked, member.type)))
    return pa.StructArray.from_arrays(members, fields=list(VALUE),
                                      mask=pc.equal(number_array, 0) if b"\0" in numbers else None)


def _list_array(groups: list[Any], items: pa.Array) -> pa.ListArray:
    """``groups`` (sequences, None for a null list) as a list array of ``items``, which holds their members in
    order."""
    if None in groups:
        lengths: Iterable[int] = [0 if group is None else len(group) for group in groups]
        mask = pa.array([group is None for group in groups])
    else:
        lengths, mask = map(len, groups), None
    offsets = pa.array(list(accumulate(lengths, initial=0)), pa.int32())
    return pa.ListArray.from_arrays(offsets, items, mask=mask)


def _strings(items: Iterable[Any]) -> pa.Array:
    return pa.array(list(items), pa.string())


def _int64s(items: Iterable[Any]) -> pa.Array:
    return pa.array(list(items), pa.int64())


def _kind_array(cells: list[Cell]) -> pa.Array:
    """The cells' kinds as text: counted by identity, since hashing an Enum member runs Python code, and read by
    ``_value_``, since Enum's ``value`` property does too."""
    kinds = list(map(attrgetter("kind"), cells))
    if kinds.count(CellKind.PUT) == len(kinds):  # the common case: every cell a PUT
        return pa.repeat(pa.scalar(CellKind.PUT.value), len(kinds))
    return _strings(map(attrgetter("_value_"), kinds))


def _event_columns(events: list[ChangeEvent]) -> list[pa.Array]:
    """The arrays of every ``EVENT`` field but ``error`` for ``events``, each of them ``len(events)`` long."""
    tables = list(map(attrgetter("table"), events))
    keys = list(map(attrgetter("key"), events))
    befores = list(map(attrgetter("before"), events))
    afters = list(map(attrgetter("after"), events))
    sources = list(map(attrgetter("source"), events))
    positions = list(map(attrgetter("position"), sources))
    attributes = list(map(attrgetter("attributes"), events))

    # Every cell (of the keys, then the befores, then the afters) and every entry (of the positions, then the
    # attributes) in one list each, their values in one VALUE array: the leaf arrays are built once, then sliced.
    key_cells = list(chain.from_iterable(keys))
    before_cells = list(chain.from_iterable(filter(None, befores)))
    cells = key_cells + before_cells + list(chain.from_iterable(filter(None, afters)))
    position_entries = list(chain.from_iterable(positions))
    entries = position_entries + list(chain.from_iterable(attributes))
    values = _value_array([*map(attrgetter("value"), cells), *map(itemgetter(1), entries)])
    cell_array = pa.StructArray.from_arrays([
        _strings(map(attrgetter("name"), cells)), values.slice(0, len(cells)), _strings(map(attrgetter("type"), cells)),
        _int64s(map(attrgetter("version"), cells)), _kind_array(cells),
    ], fields=list(CELL))
    entry_array = pa.StructArray.from_arrays([_strings(map(itemgetter(0), entries)), values.slice(len(cells))],
                                             fields=list(ENTRY))

    if None in tables:
        table_members = [[None if table is None else getattr(table, member) for table in tables]
                         for member in TABLE.names]
        table_mask = pa.array([table is None for table in tables])
    else:
        table_members = [list(map(attrgetter(member), tables)) for member in TABLE.names]
        table_mask = None
    return [
        _strings(map(attrgetter("op._value_"), events)),  # not op.value, a property that runs Python code
        pa.StructArray.from_arrays([_strings(member) for member in table_members], fields=list(TABLE),
                                   mask=table_mask),
        _list_array(keys, cell_array.slice(0, len(key_cells))),
        _list_array(befores, cell_array.slice(len(key_cells), len(before_cells))),
        _list_array(afters, cell_array.slice(len(key_cells) + len(before_cells))),
        pa.StructArray.from_arrays([
            _strings(map(attrgetter("system"), sources)),
            _list_array(positions, entry_array.slice(0, len(position_entries))),
            _int64s(map(attrgetter("commit_time_us"), sources)), _int64s(map(attrgetter("capture_time_us"), sources)),
        ], fields=list(SOURCE)),
        pa.array(list(map(attrgetter("key_only"), events)), pa.bool_()),
        _list_array(attributes, entry_array.slice(len(position_entries))),
    ]


def value_from_row(row: dict[str, Any] | None, where: str) -> Value:
    """The model's value of a ``VALUE`` row, the inverse of ``value_row`` (``EncodeError`` naming ``where``)."""
    if row is None:
        return None
    members = [(name, value) for name, value in row.items() if value is not None]
    if not members:
        return None
    if len(members) > 1:
        raise EncodeError("arrow", f"a value has one member set, this one {len(members)}: "
                                   f"{', '.join(name for name, _ in members)}", field=where)
    name, value = members[0]
    if name == "decimal":
        try:
            return Decimal(value)
        except ArithmeticError:
            raise EncodeError("arrow", f"not a decimal: {value!r}", field=where) from None
    if name == "nested":
        try:
            nested = _untagged(msgspec.json.decode(value), where, 0)
        except (msgspec.DecodeError, RecursionError) as error:
            raise EncodeError("arrow", f"nested is not JSON: {error}", field=where) from None
        if not is_nested(nested):
            raise EncodeError("arrow", f"nested holds an array or an object, not {value!r}", field=where)
        return nested
    return value


def _name(row: dict[str, Any]) -> Any:
    """A cell's or entry's name as the row has it, unchecked (None when a hand-built struct leaves it out): the model
    refuses a name that is not a str, and event_from_row reports that."""
    return row.get("name")


def _cells(rows: list[dict[str, Any]] | None, where: str) -> tuple[Cell, ...] | None:
    if rows is None:
        return None
    cells = []
    for index, row in enumerate(rows):
        path = f"{where}[{index}]"
        try:
            kind = CellKind(row.get("kind") or "PUT")
        except ValueError:
            raise EncodeError("arrow", f"unknown cell kind {row.get('kind')!r}; expected one of "
                                       f"{', '.join(kind.value for kind in CellKind)}", field=f"{path}.kind") from None
        cells.append(Cell(_name(row), value_from_row(row.get("value"), f"{path}.value"), row.get("type"),
                          row.get("version"), kind))
    return tuple(cells)


def _entries(rows: list[dict[str, Any]] | None, where: str) -> tuple[tuple[str, Value], ...]:
    return tuple((_name(row), value_from_row(row.get("value"), f"{where}[{index}].value"))
                 for index, row in enumerate(rows or ()))


def event_from_row(row: dict[str, Any]) -> ChangeEvent:
    """The event of one ``EVENT`` row (as ``to_pylist`` gives it); raises ``EncodeError`` naming the field when the
    row is not a change event (a dead-letter row, an unknown op, a value with two members). A struct built by hand
    may leave fields out: a missing field is null (an empty key, attributes or position)."""
    if row.get("error") is not None:
        raise EncodeError("arrow", f"this row is a dead letter, not an event: {row['error'].get('message')}",
                          field="error")
    try:
        op = Op(row.get("op"))
    except ValueError:
        raise EncodeError("arrow", f"unknown op {row.get('op')!r}; expected one of "
                                   f"{', '.join(op.value for op in Op)}", field="op") from None
    try:
        table = None if row.get("table") is None else Table(**row["table"])
        source_row = row.get("source") or {}
        source = Source(source_row.get("system"), _entries(source_row.get("position"), "source.position"),
                        source_row.get("commit_time_us"), source_row.get("capture_time_us"))
        return ChangeEvent(op, table, _cells(row.get("key"), "key") or (), _cells(row.get("before"), "before"),
                           _cells(row.get("after"), "after"), source, bool(row.get("key_only")),
                           _entries(row.get("attributes"), "attributes"))
    except (TypeError, ValueError) as error:  # the model refuses it: a null name, say
        raise EncodeError("arrow", str(error)) from None


# -- EVENT arrays -> events, a column at a time -----------------------------------------------------------------------

# What the columnar reader puts where event_from_row would raise (a value with two members, an unknown op or kind, a
# cell the model refuses): the model refuses it in every place, so the row's event is never built, and the row is
# left to event_from_row, which raises the error with its message.
_UNREADABLE = object()
_OP_OF_TEXT = {op.value: op for op in Op}
# A null or empty kind is a PUT, as _cells reads it.
_KIND_OF_TEXT: dict[str | None, CellKind] = {None: CellKind.PUT, "": CellKind.PUT,
                                              **{kind.value: kind for kind in CellKind}}


def events_from_array(array: pa.Array) -> list[ChangeEvent | None]:
    """The events of an ``EVENT`` array, each leaf column read once, as ``event_from_row`` reads each row; None for a
    row it leaves to ``event_from_row``: a null row, a dead letter, a row that is not an event, and every row of an
    array that is not of ``EVENT``'s type (a struct built by hand, which may lack fields)."""
    if not isinstance(array, pa.StructArray) or not _reads_as_event(array.type):
        return [None] * len(array)
    op, table, key, before, after, source, key_only, attributes, error = array.flatten()  # with the rows' nulls
    system, position, commit_time_us, capture_time_us = source.flatten()
    images = (key, before, after)
    cell_array = pa.concat_arrays([image.flatten() for image in images])
    entry_array = pa.concat_arrays([position.flatten(), attributes.flatten()])
    names, cell_values, types, versions, kinds = cell_array.flatten()
    entry_names, entry_values = entry_array.flatten()
    values = _read_values(pa.concat_arrays([cell_values, entry_values]))
    cells = iter(_built(Cell, _UNREADABLE, names.to_pylist(), values[:len(cell_array)], types.to_pylist(),
                        versions.to_pylist(), [_KIND_OF_TEXT.get(kind, _UNREADABLE) for kind in kinds.to_pylist()]))
    entries = iter(list(zip(entry_names.to_pylist(), values[len(cell_array):])))
    key_cells, before_cells, after_cells = (_grouped(image, cells) for image in images)
    positions, attribute_entries = (_grouped(entry_lists, entries) for entry_lists in (position, attributes))
    catalogs, schemas, table_names = table.flatten()
    tables = _built(_table, _UNREADABLE, table.is_valid().to_pylist(), table_names.to_pylist(), schemas.to_pylist(),
                    catalogs.to_pylist())
    sources = _built(Source, _UNREADABLE, system.to_pylist(), [group or () for group in positions],
                     commit_time_us.to_pylist(), capture_time_us.to_pylist())
    events: list[ChangeEvent | None] = _built(
        ChangeEvent, None, [_OP_OF_TEXT.get(text, _UNREADABLE) for text in op.to_pylist()], tables,
        [group or () for group in key_cells], before_cells, after_cells, sources,
        pc.fill_null(key_only, False).to_pylist(), [group or () for group in attribute_entries])
    for index in pc.indices_nonzero(error.is_valid()).to_pylist():  # a dead letter, even one with an op
        events[index] = None
    return events


@functools.lru_cache(maxsize=64)
def _reads_as_event(data_type: pa.DataType) -> bool:
    """Whether an array of ``data_type`` is read a column at a time (kept: a batch's type is seldom new, and walking
    it takes longer than reading a small batch)."""
    return _shaped_like(data_type, EVENT)


def _shaped_like(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Whether ``actual`` is ``expected`` but for nullability and the names of list items, which Spark sets its own
    way (it names them ``element``)."""
    if pa.types.is_struct(expected):
        return (pa.types.is_struct(actual) and actual.names == expected.names
                and all(_shaped_like(member.type, expected_member.type)
                        for member, expected_member in zip(actual, expected)))
    if pa.types.is_list(expected):
        return pa.types.is_list(actual) and _shaped_like(actual.value_type, expected.value_type)
    return actual == expected


def _built(make: Callable[..., Any], refused: Any, *columns: list[Any]) -> list[Any]:
    """``make`` of each row of ``columns``, ``refused`` for each row where it raises TypeError or ValueError, as the
    model does for what it cannot hold."""
    try:
        return list(map(make, *columns))
    except (TypeError, ValueError):
        made = []
        for items in zip(*columns):
            try:
                made.append(make(*items))
            except (TypeError, ValueError):
                made.append(refused)
        return made


def _table(valid: bool, name: Any, schema: Any, catalog: Any) -> Table | None:
    return Table(name, schema, catalog) if valid else None


def _grouped(lists: pa.ListArray, items: Iterator[Any]) -> list[tuple[Any, ...] | None]:
    """The rows of ``lists`` as tuples of the next ``items``, None for a null list."""
    return [None if length is None else tuple(islice(items, length)) for length in lists.value_lengths().to_pylist()]


def _read_values(array: pa.StructArray) -> list[Any]:
    """The model's values of a ``VALUE`` array as ``value_from_row`` reads each, ``_UNREADABLE`` where it raises.

    Each member's values are read on their own, and one list of indexes, made in Arrow, picks each value out of them
    all at C speed: a loop over the values would run Python code for each."""
    picked: list[Any] = []
    index_of_value = pa.repeat(pa.scalar(-1, pa.int64()), len(array))  # -1: the None appended to picked
    members_set = pa.repeat(pa.scalar(0, pa.int8()), len(array))
    for name, member in zip(VALUE.names, array.flatten()):  # with the values' nulls
        if member.null_count == len(member):
            continue
        is_set = member.is_valid()
        members_set = pc.add(members_set, pc.cast(is_set, pa.int8()))
        index_of_value = pc.if_else(is_set, pc.add(pc.cumulative_sum(pc.cast(is_set, pa.int64())), len(picked) - 1),
                                    index_of_value)
        member_values = member.drop_null().to_pylist()
        picked.extend(member_values if name not in ("decimal", "nested")
                      else [_read_member(name, text) for text in member_values])
    picked.append(None)
    values = list(map(picked.__getitem__, index_of_value.to_pylist()))
    for index in pc.indices_nonzero(pc.greater(members_set, 1)).to_pylist():
        values[index] = _UNREADABLE
    return values


def _read_member(name: str, text: str) -> Any:
    try:
        return value_from_row({name: text}, name)
    except (CodecError, TypeError, ValueError):  # a nested integer beyond 64 bits is refused with a ValueError
        return _UNREADABLE


# -- batches ----------------------------------------------------------------------------------------------------------

def _handled(error: CodecError, errors: str) -> CodecError | None:
    """What a bad row becomes: raised under "fail", a null row under "null", the error row under "dead-letter"."""
    if errors == "fail":
        raise error
    return error if errors == "dead-letter" else None


def decode_rows(messages: Sequence[Any], read: Callable[[Any], ChangeEvent | None], errors: str
                ) -> list[ChangeEvent | CodecError | None]:
    """Decode each message on its own with ``read`` (a null message, or one that ``read`` finds holds no change,
    gives a null row)."""
    rows: list[ChangeEvent | CodecError | None] = []
    for message in messages:
        if message is None:
            rows.append(None)
            continue
        try:
            rows.append(read(message))
        except DecodeError as error:
            rows.append(_handled(error.with_input(message), errors))
    return rows


def decode_array(values: pa.Array, read: Callable[[Any], ChangeEvent | None], errors: str = "fail",
                 read_batch: BatchDecoder | None = None) -> pa.StructArray:
    """Decode an array of messages (binary or string, or the structs ``read`` takes) into an ``EVENT`` array of the
    same length.

    ``read`` decodes one message (the reference); ``read_batch``, a codec's ``batch_decoder()``, decodes a whole batch
    and leaves to ``read`` the rows it flags as undecided. ``errors``: "fail" raises the first ``DecodeError``;
    "null" gives a null row; "dead-letter" a row with only ``error`` set.
    """
    error_mode(errors, COLUMN_ERROR_MODES)
    if read_batch is None:
        return to_arrow(decode_rows(values.to_pylist(), read, errors))
    fast, undecided = read_batch(values)
    if not pc.any(undecided).as_py():
        return fast
    indexes = pc.indices_nonzero(undecided)
    slow = decode_rows(values.take(indexes).to_pylist(), read, errors)
    full: list[ChangeEvent | CodecError | None] = [None] * len(values)
    for index, row in zip(indexes.to_pylist(), slow):
        full[index] = row
    return pc.if_else(undecided, to_arrow(full), fast)


def encode_array(events: pa.StructArray, write: Callable[[ChangeEvent], Any], format_name: str,
                 errors: str = "fail") -> list[Any]:
    """Each ``EVENT`` row written by ``write`` (a null row gives None), errors handled as in ``decode_array``."""
    error_mode(errors, COLUMN_ERROR_MODES)
    results: list[Any] = []
    for index, event in enumerate(events_from_array(events)):
        row: Any = None  # the row's dict, where the reader left the row to event_from_row
        if event is None:  # the reader left it to event_from_row: a null row, a dead letter, a row that is no event
            row = events[index].as_py()
            if row is None:
                results.append(None)
                continue
            if row.get("error") is not None:  # a message that could not be read: its error goes on
                results.append(_handled(error_from_row(row["error"]), errors))
                continue
        try:
            results.append(write(event if event is not None else event_from_row(row)))
        except CodecError as error:
            if error.format == "arrow":  # the row is not an event at all: report it as the target's input error
                error.relabeled(format_name)
            if error.raw is None:
                error.raw = repr(events[index].as_py() if row is None else row)
            results.append(_handled(error, errors))
    return results
