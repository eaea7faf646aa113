"""``ots`` and ``ots-json``: Tablestore (OTS) stream records as DataX's otsstreamreader exports them.

One Tablestore stream record (PutRow, UpdateRow or DeleteRow) becomes several tuples, one per cell change::

    (pk1, ..., pkN, columnName, timestamp, columnValue, opType[, sequenceInfo])

    opType  meaning                          columnName  timestamp  columnValue
    U       write one version of a column    name        version    value
    DO      delete one version of a column   name        version    null
    DA      delete all versions of a column  name        null       null
    DR      delete the row                   null        null       null

A PutRow is a DR row followed by one U row per column; an UpdateRow is one row per column; a DeleteRow is one DR row.
Decoding groups the rows back into records, and they become UPSERT (PutRow), UPDATE and DELETE events whose ``key``
is the primary key (named by the option ``primary_key``, whose length says where the key ends in a tuple) and whose
after image holds the cells (U -> PUT, DO -> DELETE_VERSION, DA -> DELETE_ALL_VERSIONS).

Grouping:

* With sequence info (``isExportSequenceInfo``), ``"%010d_%020d_%010d_%s:%010d" % (epoch, timestamp, rowIndex,
  shardId, colIdx)``, the rows of one record share everything before the colon: grouping is exact. The record's
  timestamp (microseconds) is the commit time; epoch, rowIndex and shardId are the source position.
* Without it, grouping follows the documented layout: a DR row starts a record, and rows of the same primary key
  that follow belong to it. Two UpdateRows of one row in a row cannot be told apart from one, nor a DeleteRow
  followed by an UpdateRow from a PutRow: that is a limit of the export, not of this codec.

The tuples do not name the table: the option ``table`` does. A PutRow with no attribute columns exports as a lone DR
row, the same as a DeleteRow, so such an UPSERT cannot be carried.

Mode ``single_version_and_update_only`` writes one row per PutRow or UpdateRow, holding the values of the option
``columns`` in order (key or attribute columns); deletes are not exported and a missing column is null. Such rows
decode to UPSERT events without versions.

Written from other formats (each difference a ``Loss`` of ``dropped()``):

* The primary key is the value of each ``primary_key`` column, from the event's key, else from its row image; a
  value of a type a primary key has no form for (STRING, INTEGER, BINARY) is written as its text. A change without
  them has no Tablestore form: refused (``cf.loss`` lists ``requires key``). Primary key columns in the row are the
  key, not columns.
* An INSERT or READ is a PutRow (an UPSERT; a column it deletes is one the PutRow does not write, which replaces the
  row); an UPDATE's after image is an UpdateRow (U, DO and DA rows); a DELETE is a DeleteRow. A before image is
  dropped. A PutRow or UpdateRow with no column besides the key, and a TRUNCATE, have no form: refused.
* A cell without a version (a relational value) is written at the commit time, in milliseconds. In an event without
  a commit time it is written as Tablestore stamps a write that gives no version: at the time of writing (the codec's
  ``clock``, in milliseconds); or, with the option ``default_version``, at that version, so that a conversion gives
  the same rows each time it runs. Each is a ``Loss`` of ``dropped()`` holding the version written, so ``strict``
  refuses it. A DA row has no version and a deletion row no value.
* The commit time and position are written only as whole sequence info (epoch, row_index, shard_id); the table is
  the option ``table``'s; types, decimals (as text), key_only and attributes have no place.
* Mode ``single_version_and_update_only`` writes every change but a DELETE or TRUNCATE as the row of its values.

``ots-json`` is the same tuples as text, one JSON array per message (or line), so that files and Kafka can carry
them: bytes are written as ``{"base64": "..."}`` and NaN or an infinity as ``{"float": "NaN"}``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from operator import attrgetter
from typing import Any, ClassVar, NoReturn

import msgspec
from msgspec.structs import replace

from ..contract import ABSENT, NONEMPTY, Codec, DecodedUnit, IncrementalDecoder, Option, Shape, as_text, one_of, report
from ..core import time_units
from ..errors import ConfigurationError, DecodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Image, Op, Source, Table
from ._kit.json_message import MAX_MESSAGE_BYTES, encode, json_type, load

# Enum members read once: reading a member off its class runs Python code (enum's metaclass), on every event.
_OP_UPDATE, _OP_DELETE, _OP_UPSERT, _OP_TRUNCATE = Op.UPDATE, Op.DELETE, Op.UPSERT, Op.TRUNCATE
_PUT, _DELETE_VERSION, _DELETE_ALL_VERSIONS = CellKind.PUT, CellKind.DELETE_VERSION, CellKind.DELETE_ALL_VERSIONS
NAME = "ots"
MULTI_VERSION = "multi_version"
SINGLE_VERSION = "single_version_and_update_only"
POSITION_LAYOUT = (("epoch", int), ("row_index", int), ("shard_id", str))

_NO_SOURCE = Source()
_OP_TYPES = ("U", "DO", "DA", "DR")
_KIND_OF_OP = {"U": CellKind.PUT, "DO": CellKind.DELETE_VERSION, "DA": CellKind.DELETE_ALL_VERSIONS}
_SEQUENCE_INFO = re.compile(r"(-?[0-9]{1,20})_(-?[0-9]{1,20})_(-?[0-9]{1,20})_(.*):(-?[0-9]{1,20})", re.DOTALL)
_LARGEST_COLUMN_INDEX = 10**20 - 1  # of sequence info: 20 digits
# The colIdx of sequence info after its colon, as DataX writes it (%010d): formatted once for the columns of most rows.
_COLUMN_INDEX_TEXTS = {index: f":{index:010d}" for index in range(1024)}


def _column_index_text(index: int) -> str:
    """The colIdx ``index`` of sequence info, after its colon, as DataX writes it."""
    return _COLUMN_INDEX_TEXTS.get(index) or f":{index:010d}"
_KEY_TYPES = (str, int, bytes)
_VALUE_TYPES = (str, int, float, bool, bytes)
_CELL_VALUE_TYPES = frozenset({*_VALUE_TYPES, type(None)})  # the values of a U row
_JSON_AS_IS_TYPES = frozenset({str, int, bool, type(None)})  # of them, those that JSON writes as they are
_VALUE_OF = attrgetter("value")  # of a cell


def _names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(name, str) for name in value) or not value:
        raise ValueError(f"expected a non-empty list of column names, got {value!r}")
    return tuple(value)


def _version(value: Any) -> int | None:
    if value is not None and (type(value) is not int or not INT64_MIN <= value <= INT64_MAX):
        raise ValueError(f"expected a version in milliseconds (a 64-bit integer), got {value!r}")
    return value


def wall_clock_ms() -> int:
    """The time now, in milliseconds since 1970."""
    return time.time_ns() // 1_000_000


def _table(value: Any) -> Table | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"expected a table name, got {value!r}")
    return None if value is None else Table(value)


class OtsCodec(Codec):
    name = NAME
    description = "Tablestore stream records as DataX otsstreamreader tuples (U/DO/DA/DR rows)"
    message_type: ClassVar[type] = tuple
    carries = frozenset({
        "op.UPSERT", "op.UPDATE", "op.DELETE", "key", "after", "image.columns",
        "cell.version", "cell.repeated", "cell.kind.DELETE_VERSION", "cell.kind.DELETE_ALL_VERSIONS",
        "value.null", "value.bool", "value.int", "value.float", "value.float_nonfinite", "value.str",
        "value.bytes", "value.off_type", "source.position", "source.commit_time", "source.time.sub_ms",
    })
    shapes: tuple[Shape, ...] = (
        Shape(_OP_UPSERT, after=NONEMPTY),
        Shape(_OP_UPDATE, after=NONEMPTY, kinds=frozenset(CellKind)),
        Shape(_OP_DELETE, after=ABSENT),
    )
    # Its source position is sequence info, of this fixed layout with a commit time (property tests draw it so).
    position_layout = POSITION_LAYOUT
    position_fields = tuple(name for name, _ in POSITION_LAYOUT)
    # A row is written by its primary key; a record holds a column besides it.
    requires: tuple[str, ...] = ("key", "after")
    options: ClassVar[tuple[Option, ...]] = (
        Option("primary_key", "the primary key column names, in order (required)", None, _names,
               names_key_columns=True),
        Option("table", "the table name to stamp on decoded events (the tuples do not carry one)", None, _table),
        Option("mode", f"{MULTI_VERSION} (one row per cell change) or {SINGLE_VERSION} (one row per record)",
               MULTI_VERSION, one_of(MULTI_VERSION, SINGLE_VERSION)),
        Option("columns", f"the exported column list, in order (mode {SINGLE_VERSION})", None, _names),
        Option("default_version", "the version (milliseconds since 1970) written for a cell without one in an event "
                                  "without a commit time; default: the time of writing, as Tablestore stamps such a "
                                  "write", None, _version),
    )
    # The time of writing, in milliseconds since 1970: the version of a cell that neither it nor its event dates
    # (without the option default_version). A function, so that a test can fix it.
    clock: Callable[[], int] = staticmethod(wall_clock_ms)
    text_form = "ots-json"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.primary_key: tuple[str, ...] | None = self.config["primary_key"]
        self.table: Table | None = self.config["table"]
        self.single_version = self.config["mode"] == SINGLE_VERSION
        # The primary key column names, in a mode with one row per cell change, which requires them (below).
        self._primary_key: tuple[str, ...] = self.primary_key or ()
        if self.single_version:
            if self.config["columns"] is None:
                raise _configuration(f"mode {SINGLE_VERSION} needs the option columns")
            self.carries = frozenset({"op.UPSERT", "key", "after", "image.columns", "value.bool", "value.int",
                                      "value.float", "value.float_nonfinite", "value.str", "value.bytes",
                                      "value.off_type"})
            self.shapes = (Shape(_OP_UPSERT, after=NONEMPTY),)
            self.requires = ()
        elif self.primary_key is None:
            raise _configuration("the option primary_key is required: its length says where the key ends in a row")
        elif self.config["columns"] is not None:
            raise _configuration(f"the option columns is only for mode {SINGLE_VERSION}")
        # A primary key that names a column twice keys the row by its first value (keyed): no event is written whole;
        # nor in mode single_version_and_update_only.
        writes_whole = not self.single_version and self.primary_key is not None \
            and len(set(self.primary_key)) == len(self.primary_key)
        # What encode_whole reads of the options, in one attribute (it runs for every event, where reading an
        # attribute costs as much as a check): the table, the primary key, its column if it has one, and whether a
        # row is written as its JSON array (ots-json); None where it writes no event.
        key_names: tuple[str, ...] = self._primary_key
        self._whole_plan: tuple[Table | None, tuple[str, ...], str | None, bool] | None = (
            self.table, key_names, key_names[0] if len(key_names) == 1 else None, self.message_type is bytes,
        ) if writes_whole else None
        if self.table is not None:  # the table of every event written is the option's, stamped back on reading
            self.carries = self.carries | {"table"}

    def row_key_width(self) -> int | None:
        return len(self.primary_key) if self.primary_key else None

    # -- decode ---------------------------------------------------------------------------------------------------

    def incremental_decoder(self) -> IncrementalDecoder:
        """The rows of a record (several messages) decode together into its event, as ``decode_units`` groups them."""
        return IncrementalDecoder(self) if self.single_version else _RecordDecoder(self)

    def decode(self, messages: Iterable[Any], on_error: Callable[[DecodeError], None] | None = None
               ) -> Iterator[ChangeEvent]:
        """As ``Codec.decode``: the events of ``decode_units``, grouped in the same walk without a unit for each."""
        if self.single_version:
            return super().decode(messages, on_error)
        return self._grouped(enumerate(messages), _OpenRecord(), ends=True, units=False, on_error=on_error)

    def decode_units(self, numbered: Iterable[tuple[int, Any]]) -> Iterator[DecodedUnit]:
        """The records of a stream of rows, each a unit of its rows' messages: grouped in one walk (``_grouped``)
        rather than by feeding the incremental decoder a row at a time, a call for each of a record's rows."""
        if self.single_version:
            return super().decode_units(numbered)
        return self._grouped(numbered, _OpenRecord(), ends=True, units=True)

    def _grouped(self, numbered: Iterable[tuple[int, Any]], record: _OpenRecord, ends: bool, units: bool,
                 on_error: Callable[[DecodeError], None] | None = None) -> Iterator[Any]:
        """The records that the rows of ``numbered`` complete (see Grouping above), each as its unit (``units``) or
        as its event (an error raised or handed to ``on_error``, as ``decode`` does). A record is complete when a
        row opens the next one, or, with ``ends``, when the stream ends. ``record`` is the one open when the walk
        starts, and holds the one open when it stops (a stream fed a row at a time walks each alone). A row that is
        refused is a unit of its own and leaves the record open.

        A row opens a record, with sequence info, when its record id is another, or its colIdx does not follow the
        previous row's (a record delivered twice in a row); without, when it is a DR row, a row of another primary
        key, or a DO or DA row after a DR (a PutRow holds only U rows)."""
        primary_key, name = self._primary_key, self.name
        width = len(primary_key)
        # Most tables have a one-column primary key, and most rows are then a U row of a Tablestore value or a DR
        # row: read by unpacking and checked here, without sequence info or with the sequence info that DataX writes
        # for the row after the previous one of its record. Any other row (of a longer key, a list, a DO or DA row,
        # the first row of a record with sequence info, an error) is read by _parse_row, which checks every field and
        # says what is wrong. A key is its value for one column, else the tuple of them.
        unpacked_length = 5 if width == 1 else None  # of the rows read by unpacking: none of a longer key
        sequenced_length = 6 if width == 1 else None
        read = None if self.message_type is tuple else self._row  # a tuple is its own row; ots-json parses each
        parse_row, closed = self._parse_row, self._closed
        first_position, messages, key, opens_with_delete, cells, previous, error = record.state  # see _OpenRecord
        for position, message in numbered:
            try:
                row = message if read is None else read(message)
                checked = False
                if type(row) is tuple:
                    if len(row) == unpacked_length:
                        row_key, column, version, value, op_type = row
                        place = None
                        checked = True
                    elif len(row) == sequenced_length and previous is not None:
                        row_key, column, version, value, op_type, sequence_info = row
                        record_id, column_index, prefix = previous
                        place = (record_id, column_index + 1, prefix)
                        checked = column_index < _LARGEST_COLUMN_INDEX \
                            and sequence_info == prefix + _column_index_text(column_index + 1)
                if checked:
                    if op_type == "U":
                        checked = type(column) is str and column not in primary_key \
                            and type(version) is int and INT64_MIN <= version <= INT64_MAX \
                            and type(value) in _CELL_VALUE_TYPES \
                            and (type(value) is not int or INT64_MIN <= value <= INT64_MAX)
                    else:
                        checked = op_type == "DR" and column is None and version is None and value is None
                    if type(row_key) is not str and type(row_key) is not bytes \
                            and (type(row_key) is not int or not INT64_MIN <= row_key <= INT64_MAX):
                        checked = False
                if not checked:
                    row, place = parse_row(row)
                    row_key = row[0] if width == 1 else row[:width]
                    column, version, value, op_type = row[width:width + 4]
            except DecodeError as refusal:
                refusal.relabeled(name).at(position, message)
                if units:
                    yield DecodedUnit(position, (message,), [], refusal)
                else:
                    report(refusal, on_error)
                continue
            if cells is None:  # the first row of the stream
                opens = True
            elif place is None and previous is None:
                opens = op_type == "DR" or row_key != key or opens_with_delete and op_type != "U"
            else:
                opens = place is None or previous is None or place[0] != previous[0] or place[1] != previous[1] + 1
            if opens:
                if cells is not None:
                    done = closed(units, on_error, first_position, messages, key, opens_with_delete, cells, previous,
                                  error)
                    if done is not None:
                        yield done
                first_position, messages, key, opens_with_delete, cells, error = \
                    position, [message], row_key, op_type == "DR", [], None
            else:
                if units:  # decode, which gives events without units, keeps no message but the first
                    messages.append(message)
                # Grouped by its sequence id: is it one of the record's rows?
                if place is not None and error is None \
                        and (row_key != key or op_type == "DR" or opens_with_delete and op_type != "U"):
                    error = _not_of_the_record(key, opens_with_delete, row_key, op_type).relabeled(name)
                    error.at(position, message)
            previous = place
            if op_type != "DR":
                cells.append(Cell(column, value, None, version, _PUT if op_type == "U" else _KIND_OF_OP[op_type]))
        if not ends:
            record.state = first_position, messages, key, opens_with_delete, cells, previous, error
            return
        record.state = _OpenRecord.NONE
        if cells is not None:
            done = closed(units, on_error, first_position, messages, key, opens_with_delete, cells, previous, error)
            if done is not None:
                yield done

    def _closed(self, units: bool, on_error: Callable[[DecodeError], None] | None, position: int,
                messages: list[Any], key: Any, opens_with_delete: bool, cells: list[Cell],
                place: tuple[tuple, int, str] | None, error: DecodeError | None) -> Any:
        """What a complete record gives: its unit (``units``: its first row's ``position`` and its rows'
        ``messages``), else its event or, where an ``error`` refuses its rows, None once the error is raised or
        handed to ``on_error``. Its event is the change of its primary ``key`` values (the value of one column, else
        their tuple) to its ``cells`` (a DR row opens a PutRow or a DeleteRow), at the record id of its last row's
        ``place`` (epoch, timestamp, rowIndex, shardId; None without sequence info)."""
        if error is not None:
            if units:
                return DecodedUnit(position, tuple(messages), [], error)
            report(error, on_error)
            return None
        if not opens_with_delete:
            op, after = _OP_UPDATE, tuple(cells)
        elif cells:
            op, after = _OP_UPSERT, tuple(cells)
        else:
            op, after = _OP_DELETE, None
        primary_key = self._primary_key
        key_cells = (Cell(primary_key[0], key),) if len(primary_key) == 1 else tuple(map(Cell, primary_key, key))
        source = _NO_SOURCE
        if place is not None:
            epoch, timestamp, row_index, shard_id = place[0]
            source = Source(None, (("epoch", epoch), ("row_index", row_index), ("shard_id", shard_id)), timestamp)
        event = ChangeEvent(op, self.table, key_cells, None, after, source)
        return DecodedUnit(position, tuple(messages), [event]) if units else event

    def _row(self, message: Any) -> Any:
        """The row a message holds: the message itself (ots-json parses it)."""
        return message

    def _parse_row(self, message: Any) -> tuple[tuple, Any]:
        """A validated row, and where it stands in its record: its place in the sequence info (``_place``), or None
        without it."""
        if type(message) is not tuple:
            if not isinstance(message, (tuple, list)):
                raise DecodeError(NAME, f"expected a tuple, got {type(message).__name__}")
            message = tuple(message)
        primary_key = self._primary_key
        width, length = len(primary_key), len(message)
        if length != width + 4 and length != width + 5:
            raise DecodeError(NAME, f"expected {width + 4} fields ({width} key columns, columnName, timestamp, "
                                    f"columnValue, opType) or {width + 5} with sequenceInfo, got {length}")
        for index, value in enumerate(message[:width]):
            if type(value) is not str and (type(value) not in _KEY_TYPES
                                           or type(value) is int and not INT64_MIN <= value <= INT64_MAX):
                raise DecodeError(NAME, f"a primary key value is a string, an integer or bytes, got {value!r}",
                                  field=primary_key[index])
        column, timestamp, value, op_type = message[width:width + 4]
        if op_type == "U":  # most rows, and DR rows: checked here, and any other by _check_cell
            if type(column) is not str or type(timestamp) is not int or not INT64_MIN <= timestamp <= INT64_MAX \
                    or type(value) not in _CELL_VALUE_TYPES \
                    or type(value) is int and not INT64_MIN <= value <= INT64_MAX:
                _check_cell(op_type, column, timestamp, value)
        elif op_type != "DR" or column is not None or timestamp is not None or value is not None:
            if op_type not in _OP_TYPES:
                _refuse_op_type(message, width)
            _check_cell(op_type, column, timestamp, value)
        if column in primary_key:
            raise DecodeError(NAME, f"an attribute column cannot have the name of a primary key column ({column!r})",
                              field="columnName")
        if length == width + 4:
            return message, None
        return message, _place(message[width + 4])

    def decode_message(self, message: Any) -> ChangeEvent:
        """One row of mode single_version_and_update_only."""
        columns: tuple[str, ...] = self.config["columns"]
        message = self._row(message)
        if not isinstance(message, (tuple, list)) or len(message) != len(columns):
            raise DecodeError(self.name, f"expected a tuple of {len(columns)} values ({', '.join(columns)})")
        key_names = self.primary_key or ()
        values = dict(zip(columns, message))
        for column, value in values.items():
            if value is not None and type(value) not in _VALUE_TYPES:
                raise DecodeError(self.name, f"not a Tablestore value: {value!r}", field=column)
        try:
            key = tuple(Cell(name, values[name]) for name in key_names if name in values)
            after = tuple(Cell(column, value) for column, value in values.items()
                          if column not in key_names and value is not None)
        except (TypeError, ValueError) as error:
            raise DecodeError(self.name, str(error)) from None
        return ChangeEvent(_OP_UPSERT, self.table, key, after=after)

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_exact(self, event: ChangeEvent) -> list[Any]:  # tuples (ots-json: their JSON)
        """The rows of one event: a whole record, so that one event is one unit (for Kafka, one message each)."""
        if self.single_version:
            return [tuple(_single_version_values(event, self.config["columns"]))]
        key = tuple(cell.value for cell in event.key)
        rows = [] if event.op is _OP_UPDATE else [(*key, None, None, None, "DR")]  # a PutRow or DeleteRow opens so
        for cell in event.after or ():
            kind = cell.kind  # told by identity: looking an enum member up hashes it in Python
            op_type = "U" if kind is _PUT else "DO" if kind is _DELETE_VERSION else "DA"
            rows.append((*key, cell.name, cell.version, cell.value, op_type))
        sequence = _sequence_prefix(event.source) if event.source.position else None
        return rows if sequence is None else _sequenced(rows, sequence)

    # -- what other formats' events lose ----------------------------------------------------------------------------

    def encode_whole(self, event: ChangeEvent) -> list[Any] | None:
        """In a mode with one row per cell change: a PutRow (an UPSERT of puts), an UpdateRow (an UPDATE of puts and
        deletions) or a DeleteRow (a DELETE of no image) of the option table, its key the primary key's values (of a
        key type) in order, its after image of untyped values of attribute columns, a U or DO row's with a version,
        a DO or DA row's without a value, a DA row's without a version; no attributes, and a source of whole sequence
        info or none: its rows as ``encode_exact`` writes them (ots-json: each as its JSON array), each cell checked
        as its row is written."""
        plan = self._whole_plan
        if plan is None:
            return None
        table, primary_key, key_column, writes_json = plan
        op, after, source = event.op, event.after, event.source
        if op is _OP_UPDATE or op is _OP_UPSERT:
            if not after:
                return None
        elif op is not _OP_DELETE or after is not None:
            return None
        if event.before is not None or event.attributes or event.key_only \
                or event.table is not table and event.table != table \
                or source is not _NO_SOURCE and not _is_sequence_info(source):
            return None
        key = event.key
        # Most tables have a one-column primary key: its value is checked without a loop. A row is built of the key
        # value and its cell's four fields; the values of a longer key are unpacked into each row once all are built.
        if key_column is not None:
            if len(key) != 1:
                return None
            cell = key[0]
            key_value: Any = cell.value
            if cell.name != key_column or type(key_value) not in _KEY_TYPES or cell.type is not None \
                    or cell.version is not None or cell.kind is not _PUT:
                return None
            # ots-json writes a row holding bytes or a float in JSON's own form (_json_row): told as rows are written.
            own_json_form = type(key_value) is bytes
        else:
            if len(key) != len(primary_key):
                return None
            for name, cell in zip(primary_key, key):
                if cell.name != name or type(cell.value) not in _KEY_TYPES or cell.type is not None \
                        or cell.version is not None or cell.kind is not _PUT:
                    return None
            key_value = tuple(map(_VALUE_OF, key))
            own_json_form = writes_json and bytes in map(type, key_value)
        # A PutRow or DeleteRow opens with a DR row.
        rows: list[tuple] = [] if op is _OP_UPDATE else [(key_value, None, None, None, "DR")]
        # Each cell's fields are read as its kind needs them, and a put (most cells) is told first: on this path a
        # read or a check costs as much as building the row.
        for cell in after or ():
            name, kind = cell.name, cell.kind
            if cell.type is not None or name in primary_key:
                return None
            if kind is _PUT:
                value, version = cell.value, cell.version
                if version is None:
                    return None
                if type(value) not in _JSON_AS_IS_TYPES:  # most values are; bytes and floats are Tablestore's too
                    if type(value) is not bytes and type(value) is not float:
                        return None
                    own_json_form = True
                rows.append((key_value, name, version, value, "U"))
            elif op is _OP_UPSERT:  # a PutRow puts only
                return None
            elif kind is _DELETE_VERSION:
                version = cell.version
                if cell.value is not None or version is None:
                    return None
                rows.append((key_value, name, version, None, "DO"))
            elif cell.value is not None or cell.version is not None:  # a DELETE_ALL_VERSIONS, of no version
                return None
            else:
                rows.append((key_value, name, None, None, "DA"))
        if key_column is None:
            rows = [(*row[0], *row[1:]) for row in rows]
        if source.position:
            rows = _sequenced(rows, _sequence_text(source))
        if not writes_json:
            return rows
        return [encode(_json_row(row)) for row in rows] if own_json_form else list(map(encode, rows))

    def keyed(self, event: ChangeEvent) -> ChangeEvent:
        """``event`` with its key as Tablestore writes it: the value of each primary_key column, by name from the
        key, else from the row image; a value of a type a primary key has no form for (STRING, INTEGER, BINARY) as
        its text. ``Refusal`` where a primary key column has no value."""
        by_name: dict[str, Any] = {}
        for cell in (*event.key, *(event.after or event.before or ())):
            if cell.kind is _PUT:
                by_name.setdefault(cell.name, cell.value)
        key_names = self.primary_key or ()
        missing = [name for name in key_names if by_name.get(name) is None]
        if missing:
            raise Refusal(Loss("requires key", "key", REFUSED, f"a Tablestore row is written by its primary key, "
                                                               f"and the event has no value for {missing[0]!r}"))
        key = tuple(Cell(name, by_name[name] if type(by_name[name]) in _KEY_TYPES else as_text(by_name[name]))
                    for name in key_names)
        return event if key == event.key else replace(event, key=key)

    def carried_image(self, image_name: str, image: Image) -> Image:
        """The key is written as it is (``keyed``); primary key columns of the row are written as the key, not as
        columns."""
        if image_name == "key":
            return image
        if image_name == "after" and not self.single_version:
            image = tuple(cell for cell in image if cell.name not in self._primary_key)
        return super().carried_image(image_name, image)

    def carried_cell(self, cell: Cell) -> Cell:
        """A U or DO row has a version and a DA row none (a missing version is the commit time's, see
        normal_form); a deletion row has no value."""
        written = super().carried_cell(cell)
        if self.single_version or cell.kind is _PUT:
            return written
        if cell.kind is _DELETE_ALL_VERSIONS and written.version is not None:
            written = replace(written, version=None)
        return written if written.value is None else replace(written, value=None)

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """An INSERT or READ is a PutRow (an UPSERT, which replaces the row: a column it deletes is one it does not
        write); an UPDATE's after image is an UpdateRow; a DELETE is a DeleteRow. A record without a column besides
        the key has no form (a PutRow of none exports as a DeleteRow, an UpdateRow of none as nothing); nor a
        TRUNCATE. In mode single_version_and_update_only every change but a delete is a row of its values."""
        if event.op is _OP_TRUNCATE or (self.single_version and event.op is _OP_DELETE):
            return super().reshaped(event)
        if event.op is _OP_DELETE:
            return replace(event, after=None)
        op = _OP_UPSERT if event.op is not _OP_UPDATE or self.single_version else event.op
        after = event.after or ()
        if event.op is not _OP_UPDATE:
            after = tuple(cell for cell in after if cell.kind is _PUT)
        if not after and not self.single_version:
            raise Refusal(Loss("requires after", "after", REFUSED, f"a Tablestore record of this {event.op.value} "
                                                                   "would hold no column besides the key"))
        return replace(event, op=op, after=after if after or event.after is not None else None)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """The primary key first, as Tablestore writes it (``keyed``). The table is the option table's; a U or DO row
        without a version is written at the commit time (in milliseconds, as Tablestore stamps a write without one;
        without one, see ``_version_of``); the source is written only as whole sequence info. In mode
        single_version_and_update_only the row holds the option columns, in order, a missing one null."""
        written = super().normal_form(event if self.single_version else self.keyed(event))
        changed: dict[str, Any] = {} if written.table == self.table else {"table": self.table}
        if self.single_version:
            values = _single_version_values(written, self.config["columns"])
            changed["key"], changed["after"] = _single_version_event(self.config["columns"], self.primary_key or (),
                                                                     values)
            return replace(written, **changed)
        source = written.source
        if any(cell.version is None and cell.kind is not _DELETE_ALL_VERSIONS for cell in written.after or ()):
            version = self._version_of(source)  # found once, so that every cell of the record has the same
            changed["after"] = tuple(
                replace(cell, version=version) if cell.version is None and cell.kind is not _DELETE_ALL_VERSIONS
                else cell for cell in written.after or ())
        if _sequence_prefix(source) is None:
            changed["source"] = replace(source, position=(), commit_time_us=None)
        return replace(written, **changed) if changed else written

    def _version_of(self, source: Source) -> int:
        """The version of a U or DO row whose cell has none: the commit time, else the option default_version, else
        the time of writing (Tablestore's version of a write that gives none)."""
        if source.commit_time_us is not None:
            return time_units.in_unit(source.commit_time_us, time_units.MILLISECOND)
        if self.config["default_version"] is not None:
            return self.config["default_version"]
        return self.clock()


class OtsJsonCodec(OtsCodec):
    """The same tuples as JSON arrays, one per message."""

    name = "ots-json"
    description = "Tablestore otsstreamreader tuples as JSON arrays, one per message"
    message_type = bytes
    options = (*OtsCodec.options, MAX_MESSAGE_BYTES)

    def transport_messages(self, payload: bytes) -> list[Any]:
        """A record's rows travel as one transport message, a line each."""
        return payload.split(b"\n")

    def transport_payload(self, messages: list[Any]) -> bytes:
        return b"\n".join(messages)

    def _row(self, message: Any) -> tuple:
        if type(message) is bytes and len(message) <= self.config["max_message_bytes"]:
            try:  # most rows: an array of scalars, read into a tuple in C
                return _read_scalar_row(message)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                pass  # a value in JSON's own form, or no row: the general reader tells which
        row = load(self.name, message, self.config["max_message_bytes"])
        if type(row) is not list:
            raise DecodeError(self.name, f"expected a JSON array, got {json_type(row)}")
        for value in row:
            if type(value) is dict or type(value) is list:  # bytes, NaN or an infinity in JSON's own form
                return tuple(_from_json(value, index) for index, value in enumerate(row))
        return tuple(row)

    def encode_exact(self, event: ChangeEvent) -> list[bytes]:
        return [encode(_json_row(row)) for row in super().encode_exact(event)]


_read_scalar_row = msgspec.json.Decoder(tuple[str | int | float | bool | None, ...]).decode


def _from_json(value: Any, index: int) -> Any:
    if type(value) is dict:
        if value.keys() == {"base64"} and type(value["base64"]) is str:
            try:
                return base64.b64decode(value["base64"], validate=True)
            except binascii.Error:
                raise DecodeError("ots-json", "invalid base64", field=f"[{index}].base64") from None
        if value.keys() == {"float"} and value["float"] in ("NaN", "Infinity", "-Infinity"):
            return float(value["float"])
        raise DecodeError("ots-json", 'expected {"base64": ...} or {"float": "NaN"|"Infinity"|"-Infinity"}',
                          field=f"[{index}]")
    if type(value) is list:
        raise DecodeError("ots-json", "expected a scalar, got an array", field=f"[{index}]")
    return value


def _json_row(row: tuple) -> Any:
    """A row as its JSON array: the row itself, unless it holds bytes or a float (NaN or an infinity), which JSON
    writes in its own form."""
    for value in row:
        if type(value) is bytes or type(value) is float:
            return [_to_json(value) for value in row]
    return row


def _to_json(value: Any) -> Any:
    if type(value) is bytes:
        return {"base64": base64.b64encode(value).decode("ascii")}
    if type(value) is float and not math.isfinite(value):
        return {"float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    return value


class _OpenRecord:
    """The record open between two walks of ``OtsCodec._grouped``, as the walk holds it in locals: its first row's
    position, its rows' messages, its primary key (see _grouped), whether a DR row opens it, its cells (None while no
    record is open, as are its messages), its last row's place in the sequence info (``_place``; None without) and
    the error that refuses its rows (rows of one sequence id that cannot be one record)."""

    NONE: ClassVar[tuple[Any, ...]] = (0, None, None, False, None, None, None)

    def __init__(self) -> None:
        self.state = self.NONE


class _RecordDecoder(IncrementalDecoder):
    """Rows fed one at a time, grouped as ``decode_units`` groups a stream (``OtsCodec._grouped``): the record open
    after a row is kept until the next."""

    codec: OtsCodec

    def __init__(self, codec: OtsCodec) -> None:
        super().__init__(codec)
        self.record = _OpenRecord()

    def feed(self, position: int, message: Any) -> list[DecodedUnit]:
        return list(self.codec._grouped(((position, message),), self.record, ends=False, units=True))

    def flush(self) -> list[DecodedUnit]:
        return list(self.codec._grouped((), self.record, ends=True, units=True))


# -- helpers ----------------------------------------------------------------------------------------------------------

def _configuration(message: str) -> ConfigurationError:
    return ConfigurationError(f"{NAME}: {message}")


def _refuse_op_type(row: tuple | list, width: int) -> NoReturn:
    """Refuse a row whose opType is not one, saying so where the row has one where a primary key of another length
    (``width``: the option's) would put it: a row read with one key column too few or too many."""
    hint = ""
    for key_values in (len(row) - 4, len(row) - 5):  # the key's length if the row has no sequence info, and if it has
        if key_values > 0 and key_values != width and row[key_values + 3] in _OP_TYPES:
            hint = (f"; the row has one where a primary key of {key_values} columns puts it, and the option "
                    f"primary_key names {width}: give it every key column, in order")
            break
    raise DecodeError(NAME, f"expected U, DO, DA or DR, got {row[width + 3]!r}{hint}", field="opType")


def _check_cell(op_type: str, column: Any, timestamp: Any, value: Any) -> None:
    """Refuse a row's fields that its ``op_type`` (one of ``_OP_TYPES``: ``_refuse_op_type`` refuses any other)
    has no place for, or has of another type."""
    if op_type == "DR":
        for field, given in (("columnName", column), ("timestamp", timestamp), ("columnValue", value)):
            if given is not None:
                raise DecodeError(NAME, f"a DR row has no {field}, got {given!r}", field=field)
        return
    if type(column) is not str:
        raise DecodeError(NAME, f"expected a column name, got {column!r}", field="columnName")
    if op_type == "DA":
        if timestamp is not None:
            raise DecodeError(NAME, f"a DA row has no timestamp, got {timestamp!r}", field="timestamp")
    elif type(timestamp) is not int or not INT64_MIN <= timestamp <= INT64_MAX:
        raise DecodeError(NAME, f"expected a version (an integer), got {timestamp!r}", field="timestamp")
    if op_type != "U" and value is not None:
        raise DecodeError(NAME, f"a {op_type} row has no value, got {value!r}", field="columnValue")
    if value is not None and type(value) not in _VALUE_TYPES:
        raise DecodeError(NAME, f"not a Tablestore value: {value!r}", field="columnValue")
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        raise DecodeError(NAME, f"{value} is outside the signed 64-bit range", field="columnValue")


def _not_of_the_record(key: Any, opens_with_delete: bool, row_key: Any, op_type: str) -> DecodeError:
    """Why a row of a record's sequence id, following its rows, cannot be one of them: the record of primary ``key``
    values, opened by a DR row or not, and the row's ``row_key`` values and ``op_type``."""
    if row_key != key:
        return DecodeError(NAME, "rows of one record (one sequence id) have different primary keys",
                           field="sequenceInfo")
    if op_type == "DR":
        return DecodeError(NAME, "a DR row can only open a record", field="opType")
    return DecodeError(NAME, "a record that opens with DR (a PutRow) holds only U rows", field="opType")


def _place(text: Any) -> tuple[tuple[int, int, int, str], int, str]:
    """Where the sequence info ``text`` places a row: its record id (epoch, timestamp, rowIndex, shardId), its
    colIdx, and the text before the colIdx (the record's, which the next row of the record repeats)."""
    match = _SEQUENCE_INFO.fullmatch(text) if type(text) is str else None
    if match is None:
        raise DecodeError(NAME, f"expected epoch_timestamp_rowIndex_shardId:colIdx, got {text!r}",
                          field="sequenceInfo")
    epoch, timestamp, row_index, column_index = int(match[1]), int(match[2]), int(match[3]), int(match[5])
    if not (INT64_MIN <= epoch <= INT64_MAX and INT64_MIN <= timestamp <= INT64_MAX
            and INT64_MIN <= row_index <= INT64_MAX):
        raise DecodeError(NAME, "a number is outside the signed 64-bit range", field="sequenceInfo")
    return (epoch, timestamp, row_index, match[4]), column_index, text[:match.end(4)]


def _is_sequence_info(source: Source) -> bool:
    """Whether a source is whole sequence info (of ``POSITION_LAYOUT``, with a commit time) or nothing."""
    if source.system is not None or source.capture_time_us is not None:
        return False
    position = source.position
    if not position:
        return source.commit_time_us is None
    if len(position) != len(POSITION_LAYOUT) or source.commit_time_us is None:
        return False
    for (name, value), (layout_name, layout_type) in zip(position, POSITION_LAYOUT):
        if name != layout_name or type(value) is not layout_type:
            return False
    return True


def _sequence_prefix(source: Source) -> str | None:
    """The sequence info of a record, without the per-row colIdx, when the event came with one."""
    layout = tuple((name, type(value)) for name, value in source.position)
    if layout != POSITION_LAYOUT or source.commit_time_us is None:
        return None
    return _sequence_text(source)


def _sequenced(rows: list[tuple], sequence: str) -> list[tuple]:
    """A record's rows, each with its sequence info: the record's, and the row's colIdx."""
    return [row + (sequence + _column_index_text(index),) for index, row in enumerate(rows)]


def _sequence_text(source: Source) -> str:
    """The sequence info of a source of ``POSITION_LAYOUT`` with a commit time, without the per-row colIdx."""
    (_, epoch), (_, row_index), (_, shard_id) = source.position
    assert isinstance(epoch, int) and isinstance(row_index, int) and isinstance(shard_id, str)  # as the layout says
    return f"{epoch:010d}_{source.commit_time_us:020d}_{row_index:010d}_{shard_id}"


def _single_version_values(event: ChangeEvent, columns: tuple[str, ...]) -> list[Any]:
    """The row of mode single_version_and_update_only: each option column's first value put, else null."""
    first_put: dict[str, Any] = {}
    for cell in (*event.key, *(event.after or ())):
        if cell.kind is _PUT:
            first_put.setdefault(cell.name, cell.value)
    return [first_put.get(column) for column in columns]


def _single_version_event(columns: tuple[str, ...], key_names: tuple[str, ...], values: list[Any]
                          ) -> tuple[Image, Image]:
    """The key and after image that decoding a single-version row gives (as ``decode_message`` reads it)."""
    by_column = dict(zip(columns, values))
    key = tuple(Cell(name, by_column[name]) for name in key_names if name in by_column)
    after = tuple(Cell(column, value) for column, value in by_column.items()
                  if column not in key_names and value is not None)
    return key, after
