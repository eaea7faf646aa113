"""``arcion``: Arcion Replicant's NATIVE format for Kafka (``replication-format: NATIVE``), one JSON message per row.

Realtime messages carry an envelope::

    {"tableName": {"namespace": {"catalog": null, "schema": "tpch", "hash": -1732472540},
                   "name": "region", "hash": 1193131537},
     "opType": "U", "cursor": {"extractorId": 0, "timestamp": 1677166633000, ...},
     "before": {"r_regionkey": "2", ...}, "after": {"r_regionkey": "2", ...}}

Snapshot messages are a bare row, ``{"r_regionkey": "1", "r_name": "AMERICA", ...}``: they become READ events of the
table named by the option ``table``.

How the message maps onto the canonical event:

* ``opType`` I, U, D is INSERT, UPDATE, DELETE; ``before`` / ``after`` null is an absent image.
* ``tableName`` is the table (catalog, schema, name). The two ``hash`` numbers are opaque: they are kept as the
  attributes ``arcion.namespace_hash`` and ``arcion.table_hash`` and written back.
* ``cursor`` differs per source database, so it is kept verbatim and in order as the source position. A nested
  value in it is kept as its JSON text, named by an ``arcion.cursor.json`` attribute, and written back as JSON.
* The cursor's ``timestamp``, the time of the change's commit in the source database in milliseconds, is also the
  commit time (it stays in the cursor too, which is written back as it came). A ``timestamp`` that is not an integer,
  or too far from 1970 to hold in microseconds, gives no commit time; a message without one has none.
* Top-level fields other than the five of the envelope are kept verbatim as ``arcion.field.<name>`` attributes and
  written back, so nothing is lost.
* Values are kept as the JSON value they are (the samples have only strings). With the option ``column_types``
  (a SQL type name per column, for every table or per table) text values in those columns are typed, reversibly,
  and the cell's ``type`` says which type (see ``typed_text``). Objects or arrays as values are refused.
* Which columns form the primary key is not in the message: give ``key_columns``.

Written from other formats (each difference a ``Loss`` of ``dropped()``):

* An UPSERT is an I message with its images: the whole row, written whether or not it existed, as Flink's Debezium
  and Canal writers write an upsert. A READ is a snapshot row (mode auto): the after image alone, of the table of the
  option ``table``, without cursor or attributes; in mode realtime it is an I message, and in mode snapshot every
  change but a DELETE is a snapshot row of its after image. A TRUNCATE has no form: refused.
* A realtime message names its table: an event without one takes the table of the option ``table``, and without
  that option it is refused (``cf.loss`` lists ``requires table``).
* The commit time is the cursor's ``timestamp``, in milliseconds (a sub-millisecond part is floored away): a cursor
  without one gets it as its last entry; where the cursor has one, it is written as it came and the commit time reads
  back as what it says. A snapshot row has no cursor, so no commit time either.
* Key cells that the event keeps outside the row image (Tablestore's primary key) are written in front of the row
  image the key is read from (the before image of a D); the key then reads back as ``key_columns`` names it.
* A deleted column (a Lindorm Delete, a Tablestore DA) is the column set to null; versions, a repeated column (the
  first is kept), the capture time and other formats' attributes have no place. Bytes are written as base64 text;
  decimals, NaN and infinities as their text (typed back where ``column_types`` types the column); a value is typed
  by ``column_types`` alone, so its cell's type becomes the column's.

Normal form (what ``encode`` writes): the envelope with every field present; typed values as JSON strings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from ..contract import OPTIONAL, PRESENT, JvmDecoder, JvmEncoder, Option, Shape, one_of
from ..core import time_units, typed_text
from ..errors import DecodeError, EncodeError
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
    is_nested,
)
from ._kit import kept_fields
from ._kit.json_message import (
    AS_IS_TYPES,
    MAX_MESSAGE_BYTES,
    SCALAR_TYPES,
    cells_of,
    encode,
    is_canonical,
    json_type,
    load_object,
    raw,
    value_of,
)
from ._kit.keys import KEY_COLUMNS, KeyedByColumns
from ._kit.plain_rows import plain_object

# Enum members read once: reading a member off its class runs Python code (enum's metaclass), on every event.
_OP_INSERT, _OP_UPDATE, _OP_DELETE, _OP_READ, _OP_TRUNCATE = Op.INSERT, Op.UPDATE, Op.DELETE, Op.READ, Op.TRUNCATE
_PUT = CellKind.PUT
NAME = "arcion"
NAMESPACE_HASH = "arcion.namespace_hash"
TABLE_HASH = "arcion.table_hash"
CURSOR_JSON = "arcion.cursor.json"
FIELD_ATTRIBUTE = "arcion.field."
TIMESTAMP = "timestamp"  # the cursor's entry that holds the commit time
_NO_SOURCE = Source()
_MILLISECOND = time_units.MILLISECOND  # read once: a module attribute costs a lookup on every event
_ABSENT = object()  # what a row holds for a column it lacks: of no value's type
_ENVELOPE_FIELDS = ("tableName", "opType", "cursor", "before", "after")

_OP_OF_TYPE = {"I": Op.INSERT, "U": Op.UPDATE, "D": Op.DELETE}
_TYPE_OF_OP = {op: op_type for op_type, op in _OP_OF_TYPE.items()}
MODES = ("auto", "realtime", "snapshot")


# A JSON scalar of the model's: an integer within 64 bits.
_Scalar = str | Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)] | float | bool | None
_Hash = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)] | UnsetType


class _Namespace(msgspec.Struct, forbid_unknown_fields=True):
    catalog: str | None = None
    schema: str | None = None
    hash: _Hash = UNSET


class _TableName(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    namespace: _Namespace = msgspec.field(default_factory=_Namespace)  # first, as Arcion writes it
    name: str
    hash: _Hash = UNSET


class _Realtime(msgspec.Struct, forbid_unknown_fields=True):
    """A realtime message of the fields Arcion writes, in its order, its cursor and rows of JSON scalars, checked by
    msgspec as it parses (``_read_realtime``). ``encode_whole`` writes a message from them too: msgspec writes a
    Struct faster than a dict, and an UNSET hash not at all."""

    tableName: _TableName
    opType: str
    cursor: dict[str, _Scalar] = msgspec.field(default_factory=dict)
    before: dict[str, _Scalar] | None = None
    after: dict[str, _Scalar] | None = None


# Most messages are realtime ones in the layout Arcion writes, which msgspec reads into Structs faster than into dicts,
# checking their types as it goes. A message of any other shape (a snapshot row, a nested value, fields of its own)
# fails this reader and is read as any JSON, which keeps what it has and names what is wrong, so both give the same.
_read_realtime = msgspec.json.Decoder(_Realtime).decode
_READ_FIELDS = frozenset(_ENVELOPE_FIELDS)  # the fields a realtime message is read from: any other is kept


def _table(value: str | None) -> Table | None:
    """``region``, ``tpch.region`` or ``catalog.tpch.region``."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a table name such as 'tpch.region', got {value!r}")
    parts = value.split(".")
    if len(parts) > 3:
        raise ValueError(f"expected at most catalog.schema.table, got {value!r}")
    schema, catalog = [*reversed(parts[:-1]), None, None][:2]
    return Table(parts[-1], schema, catalog)


class ColumnTypes:
    """SQL type names per column: one mapping for every table, or a mapping of table name to mapping."""

    def __init__(self, types: Mapping[str, Any] | None) -> None:
        self.everywhere: dict[str, str] = {}
        self.per_table: dict[str, dict[str, str]] = {}
        if types is None:
            return
        if not isinstance(types, Mapping):
            raise TypeError(f"expected a mapping of column to type name, got {types!r}")
        if all(isinstance(value, Mapping) for value in types.values()) and types:
            self.per_table = {table: _type_names(columns) for table, columns in types.items()}
        else:
            self.everywhere = _type_names(types)

    def __bool__(self) -> bool:
        return bool(self.everywhere or self.per_table)

    def settings(self) -> dict[str, str]:
        """These types as a JVM decoder's settings (``cdcformats/jvm/decoders/PerTable.java``)."""
        return {"column_types": encode(self.everywhere).decode(),
                "column_types_per_table": encode(self.per_table).decode()}

    def for_table(self, table: Table | None) -> dict[str, str]:
        if table is not None and self.per_table:
            qualified = ".".join(part for part in (table.catalog, table.schema, table.name) if part is not None)
            return self.per_table.get(qualified, self.per_table.get(table.name, self.everywhere))
        return self.everywhere


def _type_names(columns: Mapping[str, Any]) -> dict[str, str]:
    if not all(isinstance(name, str) and isinstance(type_name, str) for name, type_name in columns.items()):
        raise TypeError(f"expected column name -> SQL type name, got {dict(columns)!r}")
    return dict(columns)


class ArcionCodec(KeyedByColumns):
    name = NAME
    description = "Arcion Replicant NATIVE JSON (realtime envelope with cursor, or snapshot rows)"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "table", "table.schema", "table.catalog",
        "key", "before", "after", "image.columns", "cell.type",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.decimal", "value.off_type",
        "value.nested", "source.position", "source.commit_time",
    })
    shapes: tuple[Shape, ...] = (
        Shape(_OP_INSERT, before=OPTIONAL, after=OPTIONAL),
        Shape(_OP_UPDATE, before=OPTIONAL, after=OPTIONAL),
        Shape(_OP_DELETE, before=OPTIONAL, after=OPTIONAL),
        Shape(_OP_READ, after=PRESENT),
    )
    own_attributes = frozenset({NAMESPACE_HASH, TABLE_HASH, CURSOR_JSON, FIELD_ATTRIBUTE})
    # A realtime message names its table; the option table names it when the event does not.
    requires: tuple[str, ...] = ("table",)
    options = (
        KEY_COLUMNS,
        Option("column_types", "SQL type names that type text values: {column: type} for every table, or "
                               "{table: {column: type}}", None, ColumnTypes),
        Option("table", "the table of snapshot rows, e.g. 'tpch.region' (snapshot rows do not name it), and of "
                        "realtime messages written from events that name none", None, _table),
        Option("mode", "auto (a message with opType is realtime, any other a snapshot row), realtime or snapshot",
               "auto", one_of(*MODES)),
        MAX_MESSAGE_BYTES,
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.column_types: ColumnTypes = self.config["column_types"]
        self.mode: str = self.config["mode"]
        # Told once: each is asked of every event written.
        self._typed_by_option, self._keyed_by_option = bool(self.column_types), bool(self.key_columns)
        # The opType of each op written as a realtime message: none in mode snapshot.
        self._op_types = {} if self.mode == "snapshot" else _TYPE_OF_OP
        # The key column, where key_columns names one for every table (as most do): told without a call.
        names = self.key_columns.everywhere
        self._key_name: str | None = names[0] if len(names) == 1 and not self.key_columns.per_table else None
        if self.column_types:  # NaN or an infinity is written as text, which a FLOAT column types back
            self.carries = self.carries | {"value.float_nonfinite"}
        else:
            self.carries = self.carries - {"cell.type", "value.decimal"}
        if self.config["table"] is not None or self.mode == "snapshot":
            self.requires = ()
        if self.mode != "auto":
            self.shapes = tuple(shape for shape in self.shapes
                                if (shape.op is _OP_READ) == (self.mode == "snapshot"))

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_message(self, message: bytes) -> ChangeEvent:
        mode = self.mode
        if mode != "snapshot" and type(message) is bytes and len(message) <= self.config["max_message_bytes"]:
            try:
                realtime = _read_realtime(message)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                pass  # not in the layout Arcion writes: the reader of any JSON keeps what it has, or names what is off
            else:
                return self._realtime_event(realtime)
        document = load_object(NAME, message, self.config["max_message_bytes"])
        if mode == "snapshot" or (mode == "auto" and "opType" not in document):
            table = self.config["table"]
            after = self._cells(document, table, "")
            return ChangeEvent(_OP_READ, table, self.key_columns.key_of(table, after), after=after)
        return self._decode_realtime(document)

    def _decode_realtime(self, document: dict[str, Any]) -> ChangeEvent:
        op_type = document.get("opType")
        op = _OP_OF_TYPE.get(op_type) if type(op_type) is str else None
        if op is None:
            raise DecodeError(NAME, f"expected one of I, U, D, got {document.get('opType')!r}", field="opType")
        table, attributes = _table_name(document.get("tableName"))
        position, cursor_json = _cursor(document.get("cursor", {}))
        attributes.extend((CURSOR_JSON, name) for name in cursor_json)
        if not document.keys() <= _READ_FIELDS:
            attributes.extend(kept_fields.read(FIELD_ATTRIBUTE, document.items(), _ENVELOPE_FIELDS))
        before = self._image(document, "before", table)
        after = self._image(document, "after", table)
        key_image = before if op is _OP_DELETE or after is None else after
        return ChangeEvent(op, table, self.key_columns.key_of(table, key_image), before, after,
                           Source(position=position, commit_time_us=_commit_time(position)),
                           attributes=tuple(attributes))

    def _realtime_event(self, realtime: _Realtime) -> ChangeEvent:
        """The event of a realtime message in the layout Arcion writes (as ``_decode_realtime`` reads any)."""
        op = _OP_OF_TYPE.get(realtime.opType)
        if op is None:
            raise DecodeError(NAME, f"expected one of I, U, D, got {realtime.opType!r}", field="opType")
        name = realtime.tableName
        namespace = name.namespace
        table = _named_table(name.name, namespace.schema, namespace.catalog)
        attributes = []
        if namespace.hash is not UNSET:
            attributes.append((NAMESPACE_HASH, namespace.hash))
        if name.hash is not UNSET:
            attributes.append((TABLE_HASH, name.hash))
        position = tuple(realtime.cursor.items())
        before = None if realtime.before is None else self._cells(realtime.before, table, "before.")
        after = None if realtime.after is None else self._cells(realtime.after, table, "after.")
        key_image = before if op is _OP_DELETE or after is None else after
        return ChangeEvent(op, table, self.key_columns.key_of(table, key_image), before, after,
                           Source(position=position, commit_time_us=_commit_time(position)),
                           attributes=tuple(attributes))

    def _image(self, document: dict[str, Any], name: str, table: Table | None) -> Image | None:
        row = document.get(name)
        if row is None:
            return None
        if type(row) is not dict:
            raise DecodeError(NAME, f"expected an object or null, got {json_type(row)}", field=name)
        return self._cells(row, table, name + ".")

    def _cells(self, row: dict[str, Any], table: Table | None, path: str) -> Image:
        types = self.column_types.for_table(table)
        if not types:  # the common case: a JSON value is its cell
            return cells_of(row, NAME, path)
        cells = []
        for column, value in row.items():
            type_name = types.get(column)
            if type_name is not None and type(value) is str:
                value = typed_text.parse(value, type_name)
            cells.append(Cell(column, value_of(value, NAME, path, column), type_name))
        return tuple(cells)

    def jvm_decoder(self) -> JvmDecoder:
        """``cdcformats/jvm/decoders/ArcionDecoder.java``, this decoder in Java."""
        return JvmDecoder("cdcformats.jvm.decoders.ArcionDecoder", {
            "max_message_bytes": str(self.config["max_message_bytes"]), **self._jvm_settings()})

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/ArcionEncoder.java``, this encoder in Java, for every option."""
        return JvmEncoder("cdcformats.jvm.encoders.ArcionEncoder", self._jvm_settings())

    def _jvm_settings(self) -> dict[str, str]:
        """The options that the Java decoder and encoder both read, as their settings: the mode, the table (a JSON
        array [catalog, schema, name]), key_columns and column_types."""
        table = self.config["table"]
        return {"mode": self.mode,
                **({} if table is None else {"table": encode([table.catalog, table.schema, table.name]).decode()}),
                **self.key_columns.settings(), **self.column_types.settings()}

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        if event.op is _OP_READ:
            return encode(_row(event.after or ()))
        table = event.table
        if table is None or event.op not in _TYPE_OF_OP:
            raise EncodeError(NAME, "a realtime message has an opType I, U or D and names its table", field="op")
        attributes = event.attributes
        namespace: dict[str, Any] = {"catalog": table.catalog, "schema": table.schema}
        table_name: dict[str, Any] = {"namespace": namespace, "name": table.name}
        position = event.source.position
        cursor_json = None
        if attributes:  # the hashes, nested cursor entries, kept fields
            _put_hash(namespace, event.attribute(NAMESPACE_HASH))
            _put_hash(table_name, event.attribute(TABLE_HASH))
            cursor_json = _cursor_json_names(attributes)
        if cursor_json:
            cursor = {name: raw(NAME, value, f"source.position.{name}") if name in cursor_json else value
                      for name, value in position}
        else:
            cursor = dict(position)
        document: dict[str, Any] = {
            "tableName": table_name,
            "opType": _TYPE_OF_OP[event.op],
            "cursor": cursor,
            "before": None if event.before is None else _row(event.before),
            "after": None if event.after is None else _row(event.after),
        }
        if attributes:
            document.update(kept_fields.write(NAME, attributes, FIELD_ATTRIBUTE, _ENVELOPE_FIELDS))
        return encode(document)

    def encode_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """A realtime I, U or D message of a named table, or (but in mode realtime) a snapshot row of the option
        table's, of untyped JSON scalars, each column once, not typed by the option column_types; the key read out
        of its row by key_columns; attributes none but the hashes, in their order; a cursor of JSON scalars, each
        name once, whose timestamp is the commit time: written as ``encode_event`` writes it, each image checked as
        it is written (``plain_object``). The path of every realtime message written: each part is checked as it is
        written, its checks written out where a call would cost more than the check (the attributes', the cursor's,
        and ``KeyedByColumns.holds_key_as_read``'s for a key of one column), and the message is written from the
        Structs that decoding reads it into."""
        op, table, before, after = event.op, event.table, event.before, event.after
        op_type = self._op_types.get(op)
        if op_type is None:  # a snapshot row, or no message
            return self._snapshot_row_whole(event) if op is _OP_READ else None
        if table is None or event.key_only or self._typed_by_option and self.column_types.for_table(table):
            return None
        # The attributes: no more than the namespace hash, then the table hash, each a 64-bit integer.
        attributes = event.attributes
        namespace_hash: int | UnsetType = UNSET
        table_hash: int | UnsetType = UNSET
        if len(attributes) == 2:  # most: both hashes, told without a loop
            (first, first_value), (second, second_value) = attributes
            if first != NAMESPACE_HASH or second != TABLE_HASH or type(first_value) is not int \
                    or type(second_value) is not int:
                return None
            namespace_hash, table_hash = first_value, second_value
        elif len(attributes) == 1:
            ((name, value),) = attributes
            if type(value) is not int:
                return None
            if name == NAMESPACE_HASH:
                namespace_hash = value
            elif name == TABLE_HASH:
                table_hash = value
            else:
                return None
        elif attributes:
            return None
        # The cursor: JSON scalars (no NaN), each name once, and a commit time that is its timestamp (none without).
        source = event.source
        if source.system is not None or source.capture_time_us is not None:
            return None
        position = source.position
        cursor: dict[str, Any] = {}
        for name, value in position:  # a loop: frozenset.issuperset(map(type, ...)) costs more
            if type(value) not in AS_IS_TYPES:
                return None
            cursor[name] = value
        timestamp = cursor.get(TIMESTAMP)
        # A commit time is a 64-bit time: so is the timestamp of milliseconds that gives it.
        if len(cursor) != len(position) \
                or source.commit_time_us != (None if type(timestamp) is not int else timestamp * _MILLISECOND):
            return None
        before_row = None if before is None else plain_object(before, AS_IS_TYPES)
        after_row = None if after is None else plain_object(after, AS_IS_TYPES)
        if before_row is None and before is not None or after_row is None and after is not None:
            return None
        # The key: the one reading it back out of the row by key_columns gives.
        key = event.key
        image, row = (before, before_row) if op is _OP_DELETE or after is None else (after, after_row)
        if len(key) == 1 and row is not None and key[0].name == self._key_name:
            # Most keys: the one column key_columns names for every table. The row's cell of that name is a plain
            # one: the key cell is that cell where it is plain too and its value of the same type and equal.
            key_cell = key[0]
            value, row_value = key_cell.value, row.get(key_cell.name, _ABSENT)
            if type(value) is not type(row_value) or value != row_value or key_cell.kind is not _PUT \
                    or key_cell.type is not None or key_cell.version is not None:
                return None
        elif not self._holds_key(event, image):
            return None
        table_name = _TableName(namespace=_Namespace(table.catalog, table.schema, namespace_hash), name=table.name,
                                hash=table_hash)
        return [encode(_Realtime(table_name, op_type, cursor, before_row, after_row))]

    def _snapshot_row_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """``encode_whole`` of a READ: a snapshot row (but in mode realtime) of the option table's, with no source
        and no attributes, whose row has no column opType in mode auto (it would read back as a realtime
        message's)."""
        table, after = event.table, event.after
        if self.mode == "realtime" or event.before is not None or after is None or event.key_only \
                or table != self.config["table"] or self._typed_by_option and self.column_types.for_table(table) \
                or event.source is not _NO_SOURCE and event.source != _NO_SOURCE or event.attributes:
            return None
        row = plain_object(after, AS_IS_TYPES)
        if row is None or self.mode == "auto" and "opType" in row or not self._holds_key(event, after):
            return None
        return [encode(row)]

    def _holds_key(self, event: ChangeEvent, row: Image | None) -> bool:
        """Whether ``event``'s key is the one decoding reads out of ``row`` by key_columns (none without them)."""
        if not self._keyed_by_option:
            return not event.key
        return row is not None and self.holds_key_as_read(event, row)

    # -- what other formats' events lose ----------------------------------------------------------------------------

    key_in_row = True

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """An UPSERT is an I message with its images (Flink's Debezium and Canal writers write an upsert's row as an
        insert too); a snapshot row is the after image alone (of an INSERT, UPSERT or UPDATE in mode snapshot), and
        in mode realtime a READ is an I message. A TRUNCATE, and a DELETE in mode snapshot, have no form."""
        mode = self.mode
        if event.op is _OP_TRUNCATE or (mode == "snapshot" and event.op is _OP_DELETE):
            return super().reshaped(event)
        if mode == "snapshot" or (event.op is _OP_READ and mode == "auto"):
            return replace(event, op=_OP_READ, before=None, after=event.after or ())
        return replace(event, op=_OP_INSERT)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """A realtime message names its table (the option table names it when the event does not); a snapshot row
        is a bare row of the table of the option table; values as the JSON values that read back typed by the
        option column_types; the cursor as a JSON object; the attributes as decoding gives them."""
        written = super().normal_form(event)
        changed: dict[str, Any] = {}
        table = written.table
        snapshot = written.op is _OP_READ
        if snapshot:
            table = changed["table"] = self.config["table"]
            changed["source"] = replace(written.source, position=(), commit_time_us=None)
            if self.mode == "auto":  # an opType column would read back as a realtime message
                changed["after"] = tuple(cell for cell in written.after or () if cell.name != "opType")
        elif table is None:
            if self.config["table"] is None:
                raise Refusal(Loss("requires table", "table", REFUSED,
                                   "an Arcion realtime message names its table: give the option table"))
            table = changed["table"] = self.config["table"]
        written = replace(written, **changed) if changed else written
        types = self.column_types.for_table(table)
        images = {image_name: tuple(_read_back(cell, types.get(cell.name)) for cell in image)
                  for image_name in ("before", "after") if (image := getattr(written, image_name)) is not None}
        if self.key_columns:
            image = images.get("before" if written.op is _OP_DELETE or written.after is None else "after")
            images["key"] = self.key_columns.key_of(table, tuple(cell for cell in image or ()
                                                                 if not (snapshot and cell.name == "opType")))
        attributes = () if snapshot else _attributes_as_decoded(written)
        source = written.source if snapshot else _cursor_as_written(written.source)
        return replace(written, **images, attributes=attributes, source=source)


def _cursor_as_written(source: Source) -> Source:
    """The cursor is a JSON object of JSON values, whose timestamp is the commit time: a source position's repeated
    names are left out and its other values written as text, and the commit time is the cursor's timestamp (added
    where it has none)."""
    cursor = []
    seen = set()
    for name, value in source.position:
        if name in seen:
            continue
        if type(value) not in SCALAR_TYPES or (type(value) is float and not math.isfinite(value)):
            value = typed_text.render(value)
        cursor.append((name, value))
        seen.add(name)
    if TIMESTAMP not in seen and source.commit_time_us is not None:
        cursor.append(_timestamp_entry(source.commit_time_us))
    return replace(source, position=tuple(cursor), commit_time_us=_commit_time(cursor))


def _commit_time(cursor: Iterable[tuple[str, Value]]) -> int | None:
    """The commit time a cursor says: its timestamp, an integer of milliseconds (the first, of a position that
    repeats the name, as a cursor keeps it)."""
    for name, value in cursor:
        if name == TIMESTAMP:
            return time_units.to_microseconds(value, time_units.MILLISECOND)
    return None


def _timestamp_entry(commit_time_us: int) -> tuple[str, int]:
    return TIMESTAMP, time_units.in_unit(commit_time_us, time_units.MILLISECOND)


def _cursor_json_names(attributes: Entries) -> set[str]:
    """The cursor entries that ``arcion.cursor.json`` attributes name as JSON text: each attribute's value, where it
    is a name (any other value names no entry, and may not even be hashable: a signalling NaN decimal)."""
    return {value for name, value in attributes if name == CURSOR_JSON and isinstance(value, str)}


def _attributes_as_decoded(event: ChangeEvent) -> Entries:
    """The attributes that decoding this event's message would give, to tell which ones a round trip keeps: the
    hashes and the kept fields as the kit keeps them, and between them an ``arcion.cursor.json`` for each cursor
    entry that holds JSON text of an object or array, in cursor order."""
    kept = kept_fields.as_decoded(event.attributes, _attribute_group)
    hashes = tuple(entry for entry in kept if entry[0] in (NAMESPACE_HASH, TABLE_HASH))
    nested = _cursor_json_names(event.attributes)
    cursor_json = tuple((CURSOR_JSON, name) for name, value in event.source.position
                        if name in nested and is_canonical(value, nested_only=True))
    return (*hashes, *cursor_json, *kept[len(hashes):])


def _attribute_group(name: str, value: Value) -> tuple[int, Value] | None:
    """The namespace hash, the table hash (64-bit integers), then the kept fields; arcion.cursor.json is the
    cursor's."""
    if name in (NAMESPACE_HASH, TABLE_HASH):
        return ((0 if name == NAMESPACE_HASH else 1), value) if type(value) is int else None
    return (2, value) if kept_fields.is_kept_field(name, value, FIELD_ATTRIBUTE, _ENVELOPE_FIELDS) else None


def _put_hash(fields: dict[str, Any], hash_value: Any) -> None:
    if hash_value is not None:
        fields["hash"] = hash_value


def _table_name(value: Any) -> tuple[Table, list[tuple[str, Any]]]:
    if type(value) is not dict:
        raise DecodeError(NAME, f"expected an object, got {json_type(value)}", field="tableName")
    namespace = value.get("namespace", {})
    if type(namespace) is not dict:
        raise DecodeError(NAME, f"expected an object, got {json_type(namespace)}", field="tableName.namespace")
    attributes: list[tuple[str, Any]] = []
    for attribute, holder, path in ((NAMESPACE_HASH, namespace, "tableName.namespace.hash"),
                                    (TABLE_HASH, value, "tableName.hash")):
        if "hash" in holder:
            if type(holder["hash"]) is not int or not INT64_MIN <= holder["hash"] <= INT64_MAX:
                raise DecodeError(NAME, f"expected a 64-bit integer, got {holder['hash']!r}", field=path)
            attributes.append((attribute, holder["hash"]))
    fields = {}
    for field, holder, path in (("name", value, "tableName.name"), ("schema", namespace, "tableName.namespace.schema"),
                                ("catalog", namespace, "tableName.namespace.catalog")):
        part = holder.get(field)
        if part is not None and type(part) is not str:
            raise DecodeError(NAME, f"expected a string or null, got {json_type(part)}", field=path)
        fields[field] = part
    if fields["name"] is None:
        raise DecodeError(NAME, "the table name is missing", field="tableName.name")
    return _named_table(fields["name"], fields["schema"], fields["catalog"]), attributes


def _named_table(name: str, schema: str | None, catalog: str | None) -> Table:
    try:
        return Table(name, schema, catalog)
    except TypeError as error:
        raise DecodeError(NAME, str(error), field="tableName") from None


def _cursor(cursor: Any) -> tuple[tuple[tuple[str, Any], ...], list[str]]:
    """The cursor as ordered (name, value) pairs; nested values as JSON text, with their names listed."""
    if type(cursor) is not dict:
        raise DecodeError(NAME, f"expected an object, got {json_type(cursor)}", field="cursor")
    position = []
    nested = []
    for name, value in cursor.items():
        if type(value) in (dict, list):
            value = encode(value).decode()
            nested.append(name)
        elif type(value) is int and not INT64_MIN <= value <= INT64_MAX:
            raise DecodeError(NAME, f"{value} is outside the signed 64-bit range", field=f"cursor.{name}")
        position.append((name, value))
    return tuple(position), nested




def _json_value(cell: Cell) -> Any:
    """The JSON value of a cell: typed values, and values JSON has no number for (a decimal, NaN, an infinity), as
    their text; a nested value as nested JSON, whatever its column's type (typing reads text only)."""
    value = cell.value
    if is_nested(value):
        return typed_text.json_form(value)
    if value is not None and (cell.type is not None or type(value) not in SCALAR_TYPES
                              or (type(value) is float and not math.isfinite(value))):
        return typed_text.render(value)
    return value


def _read_back(cell: Cell, type_name: str | None) -> Cell:
    """The cell that decoding its JSON value gives, in a column of ``type_name`` by the option column_types (which
    it is written with); ``cell`` itself when that is the same cell."""
    if (type_name is None and cell.type is None and type(cell.value) in AS_IS_TYPES and cell.version is None
            and cell.kind is _PUT):
        return cell  # a JSON value of its own, read back as it is
    value = _json_value(Cell(cell.name, cell.value, type_name))
    if type_name is not None and type(value) is str:
        value = typed_text.parse(value, type_name)
    return Cell(cell.name, typed_text.from_json(value), type_name)


def _row(cells: Image) -> dict[str, Any]:
    """A row's JSON object: an untyped JSON scalar (most of a row) as it is, found without a call."""
    return {cell.name: value if cell.type is None and type(value := cell.value) in AS_IS_TYPES
            else _json_value(cell) for cell in cells}
