"""``maxwell-json``: the JSON that Maxwell's daemon writes for each row a MySQL binlog event changes.

    {"database": "test", "table": "e", "type": "update", "ts": 1477053234, "xid": 23396, "commit": true,
     "position": "master.000006:800911", "server_id": 23042, "thread_id": 108,
     "primary_key": [1], "primary_key_columns": ["id"],
     "data": {"id": 1, "m": 5.444, "c": "2016-10-21 05:33:54.631000"},
     "old": {"m": 4.2341, "c": "2016-10-21 05:33:37.523000"}}

This is what Flink's and Paimon's ``maxwell-json`` formats read. Which fields appear depends on Maxwell's
``output_*`` options: ``xid``/``commit`` by default, ``xoffset``, ``position``, ``gtid``, ``server_id``,
``thread_id``, ``primary_key`` and ``primary_key_columns`` only when asked for.

How the message maps onto the canonical event:

* ``type`` insert, update, delete is INSERT, UPDATE, DELETE; bootstrap-insert (a row read by a bootstrap, Maxwell's
  snapshot) is READ. ``bootstrap-start`` / ``bootstrap-complete`` only mark a bootstrap, and the DDL types of
  ``output_ddl`` (``database-create``, ``table-alter``, ``table-drop``...) describe schemas: none is a row change,
  so they are refused with a DecodeError saying so, or, with the option ``skip_ddl``, skipped (decoded to no event,
  which a conversion counts as a skipped message), as consumers that only want rows skip them. Any other type is
  always refused.
* ``data`` is the row: the after image of an insert, update or bootstrap-insert, the before image of a delete.
  ``old`` holds the previous values of the columns an update changed, so the update's before image is ``data`` with
  those values put back (Maxwell: ``data.merge(old)``), in ``data``'s column order; a column only in ``old`` (which
  ``output_nulls=false`` can cause) follows. An update without ``old`` changed nothing: before equals after.
* Values are the JSON values Maxwell wrote (it already writes blobs as base64 text, decimals as numbers, times as
  text). A SET column (an array) or a JSON column (any JSON) has no scalar form: it is kept as its JSON text in a
  cell of type ``JSON`` and written back as JSON. That is the only cell type this format writes.
* ``database`` and ``table`` are the table (``database`` is its schema). A ``database`` without a ``table`` is refused.
* ``ts`` is the binlog event's time in whole seconds: the commit time. (Flink calls it the "ingestion timestamp";
  Maxwell takes it from the binlog event header.) Sub-second times cannot be written.
* ``xid``, ``xoffset``, ``commit``, ``position``, ``gtid``, ``server_id``, ``thread_id`` are kept verbatim as the
  source position, in that order (the order Maxwell writes them in).
* The key: ``primary_key_columns`` names the key columns and ``primary_key`` holds their values (Maxwell reads both
  from the row); without ``primary_key`` the values are read from ``data`` (null for a column it lacks). A message
  that names no key columns (the field absent, as Maxwell's defaults write it, or empty) takes its key column names
  from the option ``key_columns``: the values then come from ``primary_key`` when the message has it (it must hold
  one per column), else from ``data`` (a column it lacks is left out). With neither, there is no key, and a
  ``primary_key`` field is just another unknown field. A column named twice is one key column, with its first
  value.
* Every other top-level field (``query``, ``schema_id``, ``push_timestamp``, ``comment``, fields of
  ``output_naming_strategy=underscore_to_camelcase``...) is kept verbatim as a ``maxwell.field.<name>`` attribute
  holding its JSON text, and written back.

What public documentation leaves open, and the choice made here: the docs do not say whether ``old`` may hold a
column whose value did not change (this reads it and leaves it out when writing), nor what a consumer should do with
``primary_key`` values that disagree with ``data`` (this keeps ``primary_key`` as the key). Paimon refuses a message
without ``primary_key_columns``, so it is always written, empty when the key is unknown.

Written from other formats (what Flink's and Paimon's maxwell-json readers take them for):

* An UPSERT is an insert (the row as it now is), as Flink writes its upserts; a snapshot READ a bootstrap-insert.
  An insert, bootstrap-insert or delete without the row its type needs writes its key cells as ``data`` (none: an
  empty row), and drops the image it does not use. An update without its before image has no ``old``: it changed
  nothing, before equals after. An update without its after image has no form (``data`` is the new row), nor has a
  TRUNCATE (Maxwell writes no row change for one): refused, and ``cf.loss`` lists them.
* Key cells the row lacks (a Tablestore primary key, kept outside the row image) go into ``data``, first: Maxwell
  writes ``primary_key`` out of the row, and Paimon reads the key values out of ``data`` by
  ``primary_key_columns``.
* Bytes become base64 text (as Maxwell writes blobs), decimals, NaN and infinities their text. Cell types (but
  ``JSON``) and versions fall away; a deleted column (a Lindorm Delete or DeleteColumn, a Tablestore DO/DA) is the
  column set to null; a column twice in one image keeps its first cell. An update's before image comes back as
  ``data`` with ``old``'s values put back, then the columns only ``old`` has.
* The commit time is written in whole seconds, floored (as every format floors a time to its unit); the position
  keeps the first of each Maxwell position field, in Maxwell's order; the capture time, the source system, the
  table's catalog, other formats' attributes and ``maxwell.field.*`` attributes that are not JSON text or name a
  field Maxwell reads are dropped.

Normal form (what ``encode`` writes): ``database`` (when the table has a schema), ``table``, ``type``, ``ts``, the
position fields, the kept fields, ``primary_key`` (with a key), ``primary_key_columns`` (always), ``data``, and
``old`` holding exactly the columns whose before value differs from ``data``'s (left out when none does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from ..contract import PRESENT, Codec, JvmDecoder, JvmEncoder, Option, Shape, flag, with_one_row
from ..core import time_units
from ..core.typed_text import json_form
from ..errors import DecodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import (
    INT64_MAX,
    INT64_MIN,
    Cell,
    CellKind,
    ChangeEvent,
    Entries,
    Image,
    Op,
    Source,
    Table,
    Value,
    same_entries,
)
from ._kit import kept_fields
from ._kit.json_message import (
    AS_IS_TYPES,
    MAX_MESSAGE_BYTES,
    SCALAR_TYPES,
    database_table,
    encode,
    is_canonical,
    json_type,
    load_object,
    raw,
)
from ._kit.keys import KEY_COLUMNS, KeyColumns, key_cells_outside
from ._kit.plain_rows import columns_in_row, plain_object, plain_objects

# Enum members read once: reading a member off its class runs Python code (enum's metaclass), on every event.
_OP_INSERT, _OP_UPDATE, _OP_DELETE, _OP_UPSERT, _OP_READ, _OP_TRUNCATE = (
    Op.INSERT, Op.UPDATE, Op.DELETE, Op.UPSERT, Op.READ, Op.TRUNCATE)
_PUT = CellKind.PUT
_WRITTEN_AS_INSERTS = (_OP_INSERT, _OP_READ)  # the ops of an insert and a bootstrap-insert: the after image alone
NAME = "maxwell-json"
FIELD_ATTRIBUTE = "maxwell.field."
JSON_TYPE = "JSON"  # the cell type of a SET or JSON column, whose value is kept as JSON text
POSITION_FIELDS = ("xid", "xoffset", "commit", "position", "gtid", "server_id", "thread_id")
_POSITION_ORDER = {name: index for index, name in enumerate(POSITION_FIELDS)}
# The values a JSON scalar holds as it reads back (a float may be NaN, which JSON has no number for).
_POSITION_VALUE_TYPES = (str, int)  # the position values that read back as they are
_ROW_FIELDS = ("database", "table", "type", "ts", *POSITION_FIELDS, "primary_key_columns", "data", "old")

# The fields decoding reads (with the key values, where it reads them): any other is kept.
_READ_FIELDS = frozenset(_ROW_FIELDS)
_READ_WITH_KEY = frozenset({*_ROW_FIELDS, "primary_key"})
# The values a cell holds as JSON gives them (an integer within 64 bits).
_PLAIN_JSON_TYPES = frozenset({str, int, float, bool, type(None)})

_OP_OF_TYPE = {"insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE, "bootstrap-insert": Op.READ}
# An UPSERT is the row as it now is, whether or not it existed: the closest Maxwell type is an insert.
_TYPE_OF_OP = {**{op: row_type for row_type, op in _OP_OF_TYPE.items()}, Op.UPSERT: "insert"}
_BOOTSTRAP_MARKERS = ("bootstrap-start", "bootstrap-complete")
_DDL_TYPE = re.compile(r"(database|table)-(create|alter|drop)")

SKIP_DDL = Option("skip_ddl", "skip messages that change no row (bootstrap-start, bootstrap-complete, and output_ddl's "
                              "table-create, database-drop...) instead of refusing them", False, flag)


class MaxwellJsonCodec(Codec):
    name = NAME
    description = "Maxwell's daemon JSON (MySQL binlog rows), as Flink's and Paimon's maxwell-json read it"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "table", "table.schema", "key", "before", "after",
        "image.columns",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "source.position", "source.commit_time",
    })
    position_fields = POSITION_FIELDS
    shapes = (
        Shape(_OP_INSERT, after=PRESENT),
        Shape(_OP_UPDATE, before=PRESENT, after=PRESENT),
        Shape(_OP_DELETE, before=PRESENT),
        Shape(_OP_READ, after=PRESENT),
    )
    own_attributes = frozenset({FIELD_ATTRIBUTE})
    options = (KEY_COLUMNS, SKIP_DDL, MAX_MESSAGE_BYTES)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.key_columns: KeyColumns = self.config["key_columns"]

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_messages(self, message: bytes) -> list[ChangeEvent]:
        """The event of a row message; none for a message that changes no row, under the option skip_ddl."""
        row_message = self._row_message(message)
        if row_message is not None:
            if self.config["skip_ddl"] and _changes_no_row(row_message.type):
                return []
            return [self._typed_event(row_message)]
        document = load_object(NAME, message, self.config["max_message_bytes"])
        if self.config["skip_ddl"] and _changes_no_row(document.get("type")):
            return []
        return [self._event(document)]

    def decode_message(self, message: bytes) -> ChangeEvent:
        row_message = self._row_message(message)
        if row_message is not None:
            return self._typed_event(row_message)
        return self._event(load_object(NAME, message, self.config["max_message_bytes"]))

    def _row_message(self, message: Any) -> _RowMessage | None:
        """A message in the layout Maxwell writes, read into a typed Struct; None for any other."""
        if type(message) is bytes and len(message) <= self.config["max_message_bytes"]:
            try:
                return _read_row_message(message)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                pass  # not in the layout Maxwell writes: the reader of any JSON keeps what it has, or names what is off
        return None

    def _typed_event(self, row_message: _RowMessage) -> ChangeEvent:
        """The event of a message in the layout Maxwell writes (as ``_event`` reads any)."""
        op = _op(row_message.type)
        table = database_table(NAME, row_message.database, row_message.table)
        data = _image(row_message.data, "data")
        before, after = (data, None) if op is _OP_DELETE else (None, data)
        if row_message.old is not UNSET:
            if op is not _OP_UPDATE:
                raise DecodeError(NAME, f"only an update has old values, not a {row_message.type}", field="old")
            before = _merged(data, _image(row_message.old, "old"))
        elif op is _OP_UPDATE:
            before = data
        names = [] if row_message.primary_key_columns is UNSET else row_message.primary_key_columns
        key, key_read = self._key(names, row_message.primary_key, table, data)
        attributes: Entries = ()
        if row_message.primary_key is not UNSET and not key_read:  # a field of the message's own, kept
            attributes = tuple(kept_fields.read(FIELD_ATTRIBUTE, (("primary_key", row_message.primary_key),), ()))
        position = []
        for field in POSITION_FIELDS:
            value = getattr(row_message, field)
            if value is not UNSET:
                position.append((field, value))
        return ChangeEvent(op, table, key, before, after, _source(row_message.ts, tuple(position)),
                           attributes=attributes)

    def _event(self, document: dict[str, Any]) -> ChangeEvent:
        op = _op(document.get("type"))
        table = database_table(NAME, document.get("database"), document.get("table"))
        data = _image(document.get("data"), "data")
        before, after = (data, None) if op is _OP_DELETE else (None, data)
        if "old" in document:
            if op is not _OP_UPDATE:
                raise DecodeError(NAME, f"only an update has old values, not a {document['type']}", field="old")
            before = _merged(data, _image(document["old"], "old"))
        elif op is _OP_UPDATE:
            before = data
        key, key_read = self._key(document.get("primary_key_columns", []), document.get("primary_key", UNSET),
                                  table, data)
        reserved = _READ_WITH_KEY if key_read else _READ_FIELDS
        attributes = () if document.keys() <= reserved \
            else tuple(kept_fields.read(FIELD_ATTRIBUTE, document.items(), reserved))
        return ChangeEvent(op, table, key, before, after, _source(document.get("ts"), _position(document)),
                           attributes=attributes)

    def _key(self, key_names: Any, key_values: Any, table: Table | None, data: Image) -> tuple[Image, bool]:
        """The key cells, of ``primary_key_columns`` and ``primary_key`` (``UNSET`` where the message has none), and
        whether the key values were read (else ``primary_key`` is a field of the message's own)."""
        names = _key_names(key_names)
        if not names:
            names = self.key_columns.for_table(table)
            if key_values is UNSET:
                return self.key_columns.key_of(table, data), False
        if key_values is not UNSET and names:
            if type(key_values) is not list or len(key_values) != len(names):
                raise DecodeError(NAME, f"expected an array of {len(names)} key values, one per key column "
                                        f"{', '.join(names)}; got {_json_excerpt(key_values)}", field="primary_key")
            if len(names) == 1:  # most keys: one column, once, of a scalar made its cell without a call
                value = key_values[0]
                if type(value) in _PLAIN_JSON_TYPES and (type(value) is not int or INT64_MIN <= value <= INT64_MAX):
                    return (Cell(names[0], value),), True
            return _once_each(_cell(name, value, f"primary_key[{index}]")
                              for index, (name, value) in enumerate(zip(names, key_values))), True
        by_name = {cell.name: cell for cell in data}
        return _once_each(by_name.get(name, Cell(name)) for name in names), False

    def jvm_decoder(self) -> JvmDecoder:
        """``cdcformats/jvm/decoders/MaxwellDecoder.java``, this decoder in Java."""
        return JvmDecoder("cdcformats.jvm.decoders.MaxwellDecoder", {
            "max_message_bytes": str(self.config["max_message_bytes"]), **self.key_columns.settings(),
            "skip_ddl": "true" if self.config["skip_ddl"] else "false"})

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/MaxwellJsonEncoder.java``, this encoder in Java, for every option (``key_columns``
        is the only one that changes what is written)."""
        return JvmEncoder("cdcformats.jvm.encoders.MaxwellJsonEncoder", self.key_columns.settings())

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        document: dict[str, Any] = {}
        table, source, key = event.table, event.source, event.key
        if table is not None:
            if table.schema is not None:
                document["database"] = table.schema
            document["table"] = table.name
        document["type"] = _TYPE_OF_OP[event.op]
        if source.commit_time_us is not None:
            document["ts"] = time_units.in_unit(source.commit_time_us, time_units.SECOND)
        if source.position:
            document.update(source.position)
        if event.attributes:  # most events have none
            document.update(kept_fields.write(NAME, event.attributes, FIELD_ATTRIBUTE, self._reserved(event)))
        if key:
            document["primary_key"] = [_cell_json(cell) for cell in key]
        document["primary_key_columns"] = [cell.name for cell in key]
        row = event.before if event.op is _OP_DELETE else event.after
        assert row is not None  # an event this format carries (written()): its shape has these images
        document["data"] = _fields(row)
        if event.op is _OP_UPDATE:
            assert event.before is not None and event.after is not None  # an UPDATE's shape has both images
            after_by_name = {cell.name: cell for cell in event.after}
            # A column the update left as it was is most often the same cell in both images: told by identity.
            changed = tuple(cell for cell in event.before
                            if (after := after_by_name.get(cell.name)) is not cell and after != cell)
            if changed:
                document["old"] = _fields(changed)
        return encode(document)

    def encode_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """An insert, bootstrap-insert, update or delete of the images its type reads, of untyped JSON scalars, each
        column once, an update's before image holding the after image's columns in its order; key cells of the
        row's columns (or, without a key, none that key_columns reads); no attributes, no catalog, a source of
        Maxwell's position fields, in its order, and a commit time in whole seconds: written as ``encode_event``
        writes it, the row checked as it is written (``plain_objects``)."""
        table, source, key = event.table, event.source, event.key
        commit_time = source.commit_time_us
        if event.attributes or event.key_only or table is not None and table.catalog is not None \
                or source.system is not None or source.capture_time_us is not None \
                or commit_time is not None and commit_time % time_units.SECOND \
                or not _is_maxwell_position(source.position):
            return None
        objects = plain_objects(event, AS_IS_TYPES, _WRITTEN_AS_INSERTS)
        if objects is None:
            return None
        row, written, old = objects
        if key:
            if plain_object(key, AS_IS_TYPES) is None or not columns_in_row(key, row):
                return None
        elif self.key_columns.for_table(table):
            return None
        document: dict[str, Any] = {}
        if table is not None:
            if table.schema is not None:
                document["database"] = table.schema
            document["table"] = table.name
        document["type"] = _TYPE_OF_OP[event.op]
        if commit_time is not None:
            document["ts"] = commit_time // time_units.SECOND
        if source.position:
            document.update(source.position)
        if key:
            document["primary_key"] = [cell.value for cell in key]
        document["primary_key_columns"] = [cell.name for cell in key]
        document["data"] = written
        if old:
            document["old"] = old
        return [encode(document)]

    def _reserved(self, event: ChangeEvent) -> frozenset[str]:
        """The message fields that decoding reads as something other than a kept field."""
        if event.key or self.key_columns.for_table(event.table):
            return frozenset({*_ROW_FIELDS, "primary_key"})
        return frozenset(_ROW_FIELDS)

    # -- what is lost ---------------------------------------------------------------------------------------------

    def carried_cell(self, cell: Cell) -> Cell:
        """As ``Codec.carried_cell``, but a cell of type JSON holding JSON text keeps its type: it is written as
        JSON."""
        written = super().carried_cell(cell)
        if _is_json_cell(cell) and cell.kind is _PUT and written.type != cell.type:
            return replace(written, type=cell.type)
        return written

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """An UPSERT is an insert (the row as it now is, as Flink writes upserts). A row the type needs and the
        event lacks is its key cells (none: an empty row); an update without its before image changed nothing (an
        update without ``old``: before equals after). An update without its after image and a TRUNCATE have no
        form."""
        if event.op is _OP_TRUNCATE:
            raise Refusal(Loss("op.TRUNCATE", "op", REFUSED, "Maxwell writes no row change for a TRUNCATE"))
        if event.op is _OP_UPDATE:
            if event.after is None:
                raise Refusal(Loss("op.UPDATE", "after", REFUSED,
                                   "Maxwell writes an update's new row as its data, and this update has none"))
            return replace(event, before=event.after)
        return with_one_row(event, _OP_INSERT if event.op is _OP_UPSERT else event.op)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """Maxwell's ts is in whole seconds, and its position fields come once each, in its order; the key columns
        are columns of the row (Paimon reads the key values out of data by primary_key_columns), or key_columns
        reads the key out of the row; an update's before image is data with old's values put back, then the columns
        only old has; kept fields as decoding gives them."""
        written = super().normal_form(event)
        changed: dict[str, Any] = {}
        source = written.source
        commit_time = source.commit_time_us
        if commit_time is not None and commit_time % time_units.SECOND:
            source = replace(source, commit_time_us=time_units.floored(commit_time, time_units.SECOND))
        position = _position_as_written(source.position)
        if not same_entries(position, source.position):
            source = replace(source, position=position)
        if source is not written.source:
            changed["source"] = source
        row_name = "before" if written.op is _OP_DELETE else "after"
        row = getattr(written, row_name)
        if written.key:
            missing = key_cells_outside(written.key, row)
            if missing:
                row = changed[row_name] = missing + row
        elif self.key_columns.key_of(written.table, row):
            changed["key"] = self.key_columns.key_of(written.table, row)
        if written.op is _OP_UPDATE:
            assert written.before is not None  # reshaped() gives every update a before image
            after_by_name = {cell.name: cell for cell in row}
            changed["before"] = _merged(row, tuple(cell for cell in written.before
                                                   if after_by_name.get(cell.name) != cell))
        reserved = self._reserved(written)

        def group_of(name: str, value: Value) -> tuple[int, Value] | None:
            return (0, value) if kept_fields.is_kept_field(name, value, FIELD_ATTRIBUTE, reserved) else None

        changed["attributes"] = kept_fields.as_decoded(written.attributes, group_of)
        return replace(written, **changed)


# -- decoding helpers -------------------------------------------------------------------------------------------------

# A JSON scalar of the model's: an integer within 64 bits.
_Scalar = str | Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)] | float | bool | None


class _RowMessage(msgspec.Struct, forbid_unknown_fields=True):
    """A row message of the fields Maxwell writes, its values JSON scalars, checked by msgspec as it parses
    (``_read_row_message``)."""

    type: str
    data: dict[str, _Scalar]
    database: str | None = None
    table: str | None = None
    ts: int | None = None
    xid: _Scalar | UnsetType = UNSET
    xoffset: _Scalar | UnsetType = UNSET
    commit: _Scalar | UnsetType = UNSET
    position: _Scalar | UnsetType = UNSET
    gtid: _Scalar | UnsetType = UNSET
    server_id: _Scalar | UnsetType = UNSET
    thread_id: _Scalar | UnsetType = UNSET
    primary_key: list[_Scalar] | UnsetType = UNSET
    primary_key_columns: list[str] | UnsetType = UNSET
    old: dict[str, _Scalar] | UnsetType = UNSET


# Most messages are Maxwell's row messages, which msgspec reads into a Struct faster than into a dict, checking their
# types as it goes. A message of any other shape (a JSON column's array or object, fields of its own) fails this reader
# and is read as any JSON, which keeps what it has and names what is wrong, so both give the same.
_read_row_message = msgspec.json.Decoder(_RowMessage).decode


def _changes_no_row(row_type: Any) -> bool:
    """Whether a message of this type is one that the option skip_ddl skips: a bootstrap marker or a schema change."""
    return type(row_type) is str and (row_type in _BOOTSTRAP_MARKERS or _DDL_TYPE.fullmatch(row_type) is not None)


def _op(row_type: Any) -> Op:
    if type(row_type) is str and row_type in _OP_OF_TYPE:
        return _OP_OF_TYPE[row_type]
    if type(row_type) is str and row_type in _BOOTSTRAP_MARKERS:
        reason = f"{row_type} marks a bootstrap (Maxwell's snapshot) and is no row change (option skip_ddl skips it)"
    elif type(row_type) is str and _DDL_TYPE.fullmatch(row_type):
        reason = f"{row_type} is a schema change (output_ddl) and no row change (option skip_ddl skips it)"
    else:
        reason = f"expected a row change, one of {', '.join(_OP_OF_TYPE)}; got {_json_excerpt(row_type)}"
    raise DecodeError(NAME, reason, field="type")


def _json_excerpt(value: Any) -> str:
    """A short rendering of a parsed JSON value for an error message: a scalar as JSON, else what kind it is."""
    if type(value) in SCALAR_TYPES:
        text = encode(value).decode()
        return text if len(text) <= 40 else text[:37] + "..."
    return json_type(value)


def _cell(name: str, value: Any, path: str) -> Cell:
    """A cell of a JSON value: a scalar as it is, an array or object as its JSON text in a cell of type JSON."""
    if type(value) in (dict, list):
        return Cell(name, encode(value).decode(), JSON_TYPE)
    try:
        return Cell(name, value)
    except ValueError as error:  # an integer beyond 64 bits
        raise DecodeError(NAME, str(error), field=path) from None


def _image(row: Any, field: str) -> Image:
    if type(row) is not dict:
        raise DecodeError(NAME, f"expected an object, got {json_type(row)}", field=field)
    # A scalar (most values) is its cell, made without a call; an array, an object or a number beyond 64 bits is not.
    return tuple([Cell(name, value) if type(value) in _PLAIN_JSON_TYPES
                  and (type(value) is not int or INT64_MIN <= value <= INT64_MAX)
                  else _cell(name, value, f"{field}.{name}") for name, value in row.items()])


def _merged(data: Image, old: Image) -> Image:
    """``data`` with the values of ``old`` put back, then the columns only ``old`` has."""
    old_by_name = {cell.name: cell for cell in old}
    data_names = {cell.name for cell in data}
    return (*(old_by_name.get(cell.name, cell) for cell in data),
            *(cell for cell in old if cell.name not in data_names))


def _once_each(key: Iterable[Cell]) -> Image:
    """The key cells, a column named twice being one key column (its first value)."""
    by_name: dict[str, Cell] = {}
    for cell in key:
        by_name.setdefault(cell.name, cell)
    return tuple(by_name.values())


def _key_names(names: Any) -> tuple[str, ...]:
    if type(names) is list:
        for name in names:
            if type(name) is not str:
                break
        else:
            return tuple(names)
    raise DecodeError(NAME, f"expected an array of column names, got {_json_excerpt(names)}",
                      field="primary_key_columns")


def _position(document: dict[str, Any]) -> Entries:
    position = []
    for field in POSITION_FIELDS:
        if field in document:
            value = document[field]
            if type(value) not in SCALAR_TYPES or (type(value) is int and not INT64_MIN <= value <= INT64_MAX):
                raise DecodeError(NAME, f"expected a scalar, got {_json_excerpt(value)}", field=field)
            position.append((field, value))
    return tuple(position)


def _source(seconds: Any, position: Entries) -> Source:
    """The source of a message's ``ts`` and position fields."""
    commit_time = None
    if seconds is not None:
        commit_time = time_units.to_microseconds(seconds, time_units.SECOND)
        if commit_time is None:
            raise DecodeError(NAME, f"expected a 64-bit timestamp in seconds, got {_json_excerpt(seconds)}",
                              field="ts")
    return Source(position=position, commit_time_us=commit_time)


# -- encoding helpers -------------------------------------------------------------------------------------------------

def _is_json_cell(cell: Cell) -> bool:
    return cell.type == JSON_TYPE and is_canonical(cell.value, nested_only=True)


def _cell_json(cell: Cell) -> Any:
    return raw(NAME, cell.value, cell.name) if _is_json_cell(cell) else json_form(cell.value)


def _fields(cells: Image) -> dict[str, Any]:
    """A row as Maxwell writes it: an untyped JSON scalar (most of a row) as it is, found without a call."""
    return {cell.name: value if cell.type is None and type(value := cell.value) in AS_IS_TYPES
            else _cell_json(cell) for cell in cells}


def _is_maxwell_position(position: Entries) -> bool:
    """Whether a position is Maxwell's position fields, each once, in Maxwell's order, each text or a number."""
    last = -1
    for name, value in position:
        index = _POSITION_ORDER.get(name, -1)
        if index <= last or type(value) not in _POSITION_VALUE_TYPES:
            return False
        last = index
    return True


def _position_as_written(position: Entries) -> Entries:
    """Maxwell's position fields, the first of each, in Maxwell's order."""
    first: dict[str, Value] = {}
    for name, value in position:
        if name in POSITION_FIELDS:
            first.setdefault(name, value)
    return tuple((name, first[name]) for name in POSITION_FIELDS if name in first)
