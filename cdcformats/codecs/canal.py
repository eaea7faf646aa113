"""``canal-json``: Alibaba Canal's flat message, as Canal writes it to Kafka with ``canal.mq.flatMessage=true``.

    {"data": [{"id": "111", "name": "scooter", "weight": "5.18"}], "database": "inventory",
     "es": 1589373560000, "id": 9, "isDdl": false,
     "mysqlType": {"id": "INTEGER", "name": "VARCHAR(255)", "weight": "FLOAT"}, "old": [{"weight": "5.15"}],
     "pkNames": ["id"], "sql": "", "sqlType": {"id": 4, "name": 12, "weight": 7}, "table": "products",
     "ts": 1589373560798, "type": "UPDATE"}

This is what Flink's and Paimon's ``canal-json`` formats read.

How the message maps onto the canonical event:

* One message holds the rows of one binlog event: ``data`` is an array of rows, and a message with N rows is N
  events (none when ``data`` is null or empty).
* ``type`` INSERT, UPDATE, DELETE is the op, and INIT (a row of an initial snapshot, as Flink CDC writes it and Flink
  reads it) a READ. INSERT's and INIT's row is the after image, DELETE's the before image. For an
  UPDATE, ``old[i]`` holds the previous values of the columns that changed in ``data[i]``: the after image is the
  row, the before image the row with those columns replaced, then any ``old`` column the row does not have (in
  ``old``'s order). ``old`` must have one entry per row.
* ``type`` TRUNCATE (a DDL message of Canal's) is a TRUNCATE of the table, with no rows. Every other type Canal
  writes (CREATE, ALTER, ERASE, QUERY, RENAME, CINDEX, DINDEX, GTID, XACOMMIT, XAROLLBACK, MHEARTBEAT) changes no
  row: refused as a ``DecodeError`` naming ``type``, or, with the option ``skip_ddl``, skipped as Flink and Paimon
  skip them. An unknown type is always refused.
* Every value is text or null (JSON numbers and booleans are read as their text too). A value becomes typed by its
  column's ``mysqlType`` entry (``int(11)``, ``int unsigned``, ``mediumint``, ``bigint(20) unsigned``,
  ``decimal(10,2)``, ``float``...) only where writing the typed value back gives the same text (see ``typed_text``):
  "7" in an ``int(11)`` column is 7, "007" stays "007". Numbers are spelt as Canal, a Java program, spells them: a
  double as Java's ``Double.toString`` ("1.0E7", "-3.4E38"; "10000000.0" stays text), a decimal in plain digits
  ("0.000000000001"; "1E-12" stays text) unless its exponent is positive ("1E+3") or it has more than the 38 places
  a MySQL column has ("1E-40").
  The ``mysqlType`` entry is kept verbatim as the cell's type.
* ``pkNames`` names the key: the key cells are the row's cells of those names, in ``pkNames`` order (a name the row
  does not have, or named again, is left out).
* ``database`` and ``table`` are the table (``database`` as its schema). ``es``, the binlog execute time in
  milliseconds, is the commit time; ``ts``, when Canal built the message, the capture time.
* ``id`` (Canal's batch id) and ``gtid`` (newer Canal versions), where the message has them, are the source
  position, in that order, verbatim.
* ``sql`` becomes the attribute ``canal.sql`` when it is not empty (Canal writes "" for row changes); ``sqlType``
  (column -> java.sql.Types number, which nothing here interprets) the attribute ``canal.sqlType`` as JSON text;
  any other field the attribute ``canal.field.<name>`` as JSON text. All three are written back.

What the docs leave open, and the choice made here: a null in ``old`` is the previous value NULL (Canal's producer
writes the previous value of every updated column, null included; Flink reads such a null as "unchanged", which
loses exactly that case). Older Canal versions leave out an empty ``old`` entry, so rows and entries no longer
match: refused. Whether a value may be a JSON number is not said: read as its text. What ``gtid`` holds outside GTID
mode is not said: kept verbatim. Canal's own ``old`` may list a column whose value did not change (it collects the
updated columns over all rows of a message); such an entry says nothing, and the normal form leaves it out.

Written from other formats (what Flink's and Paimon's canal-json readers take them for):

* An UPSERT is an INSERT (the row as it now is). A snapshot READ is an INSERT too by default (Paimon's reader knows no
  INIT), or, with the option ``read_type="INIT"``, an INIT, so that Flink CDC's snapshot rows are written back as they
  came. An INSERT, INIT or DELETE without the row its type needs writes its key cells as the row (none: an empty row),
  and drops the image it does not use. An UPDATE without its before image has an ``old`` entry with no columns, which
  Flink reads as "nothing changed": its before image is its after image. An UPDATE without its after image has no form
  (Canal's ``data`` is the new row; writing the old one there would tell a sink the row is back to its old values):
  refused, and ``cf.loss`` lists that shape. A TRUNCATE has no rows, so its images and key are dropped.
* The key is read out of the row by ``pkNames``: key cells that the row lacks (a Tablestore primary key, kept
  outside the row image) go into the row, first; a key cell that disagrees with the row's cell of its name comes back
  as the row's.
* Every value is written as its text (``typed_text.render``, numbers spelt as Java spells them, as above; bytes as
  ISO-8859-1 text, which is how Canal writes binary columns; a nested value as its JSON text, as Canal writes a JSON
  column) and read back typed by its ``mysqlType`` only where that gives the same text: a value of another kind than
  its column's type implies (7 in an untyped column) comes back as its text. Cell versions fall away; a deleted
  column (a Lindorm Delete or DeleteColumn, a Tablestore DO/DA) is the column set to null; a column twice in one
  image keeps its first cell.
* An UPDATE's ``old`` holds the before cells whose text differs from the after image's, then the before cells the
  after image lacks, and ``mysqlType`` types a column once for both: a before image in another column order, with
  fewer columns, or typed differently from the after image comes back in that form.
* The position keeps the first ``id`` and the first ``gtid``, as JSON scalars; ``canal.sql`` (non-empty text),
  ``canal.sqlType`` and ``canal.field.*`` (JSON text) are kept once each, in that order; the source system, the
  table's catalog and other attributes are dropped; times are floored to the millisecond.

Normal form (what ``encode`` writes): one row per message; the fields Canal writes, in Canal's (alphabetical) order:
``data``, ``database``, ``es``, ``gtid`` and ``id`` when the position has them, ``isDdl`` (true only for TRUNCATE),
``mysqlType`` (the typed columns of the row, then of the ``old`` entry; null when none), ``old`` (UPDATE only; null
otherwise), ``pkNames`` (null for no key), ``sql`` ("" when there is none), ``sqlType``, ``table``, ``ts``,
``type``; then the kept fields. Every value is a JSON string or null. A TRUNCATE has null ``data``, and ``sql`` ""
unless the event kept its statement: none is made up.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from ..contract import ABSENT, PRESENT, Codec, JvmDecoder, JvmEncoder, Option, Shape, flag, one_of, with_one_row
from ..core import time_units, typed_text
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
    same_value,
)
from ._kit import kept_fields
from ._kit.json_message import (
    MAX_MESSAGE_BYTES,
    SCALAR_TYPES,
    database_table,
    encode,
    is_canonical,
    jackson_float,
    json_type,
    load_object,
    raw,
)
from ._kit.keys import key_cells_outside
from ._kit.plain_rows import key_of_row, plain_objects

# Enum members read once: reading a member off its class runs Python code (enum's metaclass), on every event.
_OP_INSERT, _OP_UPDATE, _OP_DELETE, _OP_UPSERT, _OP_READ, _OP_TRUNCATE = (
    Op.INSERT, Op.UPDATE, Op.DELETE, Op.UPSERT, Op.READ, Op.TRUNCATE)
_PUT = CellKind.PUT
NAME = "canal-json"
SQL_ATTRIBUTE = "canal.sql"
SQL_TYPE_ATTRIBUTE = "canal.sqlType"
FIELD_ATTRIBUTE = "canal.field."
# The values a row of text holds as they read back, in an untyped column.
_TEXT_TYPES: frozenset[type] = frozenset({str, type(None)})
_POSITION_VALUE_TYPES = (str, int)  # the position values that read back as they are
# The fields of Canal's FlatMessage, in the order Canal's JSON writer puts them.
_FIELDS = ("data", "database", "es", "gtid", "id", "isDdl", "mysqlType", "old", "pkNames", "sql", "sqlType", "table",
           "ts", "type")
_POSITION_FIELDS = ("id", "gtid")
_MILLISECOND = time_units.MILLISECOND  # read once: a module attribute costs a lookup on every event
_ABSENT = object()  # what a row holds for a column it lacks: of no value's type
# The most digits after a decimal's point that Canal writes: MariaDB's largest DECIMAL scale (MySQL's is 30).
MOST_DECIMAL_PLACES = 38

# INIT is a row of an initial snapshot (what Flink CDC's canal-json writes for it, and Flink reads as an insert).
_OP_OF_TYPE = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE, "TRUNCATE": Op.TRUNCATE,
               "INIT": _OP_READ}
_TYPE_OF_OP = {op: type_name for type_name, op in _OP_OF_TYPE.items()}
# Canal's other event types: schema changes, statements and markers, none of which changes a row.
_NO_ROW_TYPES = frozenset({"CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX", "GTID", "XACOMMIT",
                           "XAROLLBACK", "MHEARTBEAT"})


READ_TYPE = Option("read_type", "the type a snapshot READ is written as: INSERT, which every reader takes, or INIT, "
                                "as Flink CDC writes snapshot rows (Flink reads it, Paimon does not)", "INSERT",
                   one_of("INSERT", "INIT"))
SKIP_DDL = Option("skip_ddl", "skip messages that change no row (CREATE, ALTER, QUERY...) instead of refusing them",
                  False, flag)


class CanalJsonCodec(Codec):
    name = NAME
    description = "Alibaba Canal flat messages (canal-json), as Flink and Paimon read them"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.TRUNCATE", "table", "table.schema", "key", "before", "after",
        "image.columns",
        "cell.type", "value.null", "value.bool", "value.int", "value.float", "value.str", "value.decimal",
        "value.float_nonfinite", "source.position", "source.commit_time", "source.capture_time",
    })
    shapes: tuple[Shape, ...] = (
        Shape(_OP_INSERT, after=PRESENT), Shape(_OP_UPDATE, before=PRESENT, after=PRESENT),
        Shape(_OP_DELETE, before=PRESENT), Shape(_OP_TRUNCATE, before=ABSENT, after=ABSENT))
    own_attributes = frozenset({SQL_ATTRIBUTE, SQL_TYPE_ATTRIBUTE, FIELD_ATTRIBUTE})
    position_fields = _POSITION_FIELDS
    options = (SKIP_DDL, READ_TYPE, MAX_MESSAGE_BYTES)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # The ops whose after image is the row alone, written as it is (encode_whole).
        self._after_alone: tuple[Op, ...] = (_OP_INSERT,)
        if self.config["read_type"] == "INIT":  # else a READ is reshaped into an INSERT
            self.carries = self.carries | {"op.READ"}
            self.shapes = (*self.shapes, Shape(_OP_READ, after=PRESENT))
            self._after_alone = (_OP_INSERT, _OP_READ)

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_messages(self, message: bytes) -> list[ChangeEvent]:
        """The events of one message: one per row, none for a skipped message; a bad message gives none."""
        max_bytes = self.config["max_message_bytes"]
        if type(message) is bytes and len(message) <= max_bytes:
            try:
                flat = _read_flat_message(message)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                pass  # not in the layout Canal writes: the reader of any JSON keeps what it has, or names what is wrong
            else:
                op = self._op(flat.type)
                if op is None:
                    return []
                _check_is_ddl(flat.isDdl, op, flat.type)
                position = () if flat.id is UNSET else (("id", flat.id),)
                if flat.gtid is not UNSET:
                    position = (*position, ("gtid", flat.gtid))
                kept: list[tuple[str, Value]] = [(SQL_ATTRIBUTE, flat.sql)] if flat.sql else []
                if flat.sqlType is not None:
                    kept.append((SQL_TYPE_ATTRIBUTE, encode(flat.sqlType).decode()))
                return self._row_events(op, flat.type, database_table(NAME, flat.database, flat.table),
                                        Source(position=position, commit_time_us=_time(flat.es, "es"),
                                               capture_time_us=_time(flat.ts, "ts")),
                                        tuple(kept), flat.data or [], flat.old or [], flat.mysqlType,
                                        flat.pkNames)
        document = load_object(NAME, message, max_bytes)
        type_name: Any = document.get("type")
        op = self._op(type_name)
        if op is None:
            return []
        _check_is_ddl(document.get("isDdl"), op, type_name)
        table = database_table(NAME, document.get("database"), document.get("table"))
        source = Source(position=_position(document), commit_time_us=_time(document.get("es"), "es"),
                        capture_time_us=_time(document.get("ts"), "ts"))
        attributes = tuple(_attributes(document))
        return self._row_events(op, type_name, table, source, attributes, _objects(document.get("data"), "data"),
                                _objects(document.get("old"), "old"), document.get("mysqlType"),
                                document.get("pkNames"))

    def _op(self, type_name: Any) -> Op | None:
        """The op of a message's type; None for a message that the option skip_ddl skips."""
        if type(type_name) is not str or type_name not in _OP_OF_TYPE:
            if type(type_name) is str and type_name in _NO_ROW_TYPES and self.config["skip_ddl"]:
                return None
            found = repr(type_name) if type(type_name) is str else json_type(type_name)
            raise DecodeError(NAME, f"type {found} is not a row change; expected one of {', '.join(_OP_OF_TYPE)} "
                                    "(option skip_ddl skips DDL messages)", field="type")
        return _OP_OF_TYPE[type_name]

    def _row_events(self, op: Op, type_name: str, table: Table | None, source: Source, attributes: Entries,
                    rows: list[dict[str, Any]], olds: list[dict[str, Any]], mysql_types: Any, key_names: Any
                    ) -> list[ChangeEvent]:
        """The events of a message's rows (``data``, with ``old``, ``mysqlType`` and ``pkNames`` as parsed)."""
        if op is _OP_TRUNCATE:
            if rows or olds:
                raise DecodeError(NAME, "a TRUNCATE lists no rows", field="data" if rows else "old")
            return [ChangeEvent(op, table, source=source, attributes=attributes)]
        if op is _OP_UPDATE and len(olds) != len(rows):
            raise DecodeError(NAME, f"an UPDATE needs one old entry per row: {len(rows)} rows, {len(olds)} entries",
                              field="old")
        if op is not _OP_UPDATE and olds:
            raise DecodeError(NAME, f"only an UPDATE has old values, not an {type_name}", field="old")
        types = _column_types(mysql_types)
        names = _key_names(key_names)
        events = []
        for index, row in enumerate(rows):
            cells = _cells(row, types, "data", index)
            before: Image | None = cells if op is _OP_DELETE else None
            after: Image | None = None if op is _OP_DELETE else cells
            if op is _OP_UPDATE:
                before = _before(cells, _cells(olds[index], types, "old", index))
            events.append(ChangeEvent(op, table, _key(names, cells), before, after, source, attributes=attributes))
        return events

    def jvm_decoder(self) -> JvmDecoder:
        """``cdcformats/jvm/decoders/CanalDecoder.java``, this decoder in Java, for the messages that give exactly
        one event (as Spark's Arrow path, which reads a message with ``ChangeEventDeserializer``, refuses the
        others)."""
        return JvmDecoder("cdcformats.jvm.decoders.CanalDecoder", {
            "skip_ddl": "true" if self.config["skip_ddl"] else "false",
            "max_message_bytes": str(self.config["max_message_bytes"])})

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/CanalJsonEncoder.java``, this encoder in Java, for every option (``read_type``
        is the only one that changes what is written)."""
        return JvmEncoder("cdcformats.jvm.encoders.CanalJsonEncoder", {"read_type": self.config["read_type"]})

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        op = event.op
        data = old = key_names = None
        types: dict[str, str] = {}
        if op is not _OP_TRUNCATE:
            row = event.before if op is _OP_DELETE else event.after
            assert row is not None  # an event this format carries (written()): its shape has these images
            texts = _texts_typed(row, types)
            data = [texts]
            if op is _OP_UPDATE:
                assert event.before is not None  # an event this format carries (written()): its shape has these images
                old = [_texts(_changed(texts, event.before))]
                _add_types(event.before, types)
            key_names = [cell.name for cell in event.key] or None
        table = event.table
        source = event.source
        commit_time, capture_time = source.commit_time_us, source.capture_time_us
        document: dict[str, Any] = {
            "data": data, "database": None if table is None else table.schema,
            "es": None if commit_time is None else time_units.in_unit(commit_time, time_units.MILLISECOND)}
        if source.position:
            position = dict(source.position)
            for name in ("gtid", "id"):  # Canal's field order
                if name in position:
                    document[name] = position[name]
        document["isDdl"] = op is _OP_TRUNCATE
        document["mysqlType"] = types or None
        document["old"] = old
        document["pkNames"] = key_names
        document["sql"] = ""
        document["sqlType"] = None
        document["table"] = None if table is None else table.name
        document["ts"] = None if capture_time is None else time_units.in_unit(capture_time, time_units.MILLISECOND)
        document["type"] = _TYPE_OF_OP[op]
        attributes = event.attributes
        if attributes:  # most events have none
            for index, (name, value) in enumerate(attributes):
                if name == SQL_ATTRIBUTE:
                    document["sql"] = value
                elif name == SQL_TYPE_ATTRIBUTE:
                    document["sqlType"] = raw(NAME, value, f"attributes[{index}]")
            document.update(kept_fields.write(NAME, attributes, FIELD_ATTRIBUTE, _FIELDS))
        return encode(document)

    def encode_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """An INSERT (or, under read_type INIT, a READ), an UPDATE or a DELETE of the images its type reads, of
        untyped text or null columns, each once, an UPDATE's before image holding the after image's columns in its
        order; key cells that are the row's; no attributes, no catalog, no system, and a position of Canal's id and
        gtid, in that order, and times to the millisecond: written as ``encode_event`` writes it, the row checked as
        it is written (``plain_objects``). The path of every message written: its checks are written out where a
        call would cost more than the check (``plain_rows.key_of_row``'s, for a key of one column)."""
        table, source = event.table, event.source
        position, commit_time, capture_time = source.position, source.commit_time_us, source.capture_time_us
        if event.attributes or event.key_only or table is not None and table.catalog is not None \
                or source.system is not None \
                or commit_time is not None and commit_time % _MILLISECOND \
                or capture_time is not None and capture_time % _MILLISECOND:
            return None
        last = -1  # the position: Canal's id, then its gtid, each text or a number
        for name, value in position:
            index = 0 if name == "id" else 1 if name == "gtid" else -1
            if index <= last or type(value) not in _POSITION_VALUE_TYPES:
                return None
            last = index
        objects = plain_objects(event, _TEXT_TYPES, self._after_alone)
        if objects is None:
            return None
        row, written, old = objects
        key = event.key
        if len(key) == 1:  # most keys: one column, whose cell in the row (a plain one) it is, told without a call
            key_cell = key[0]
            value, row_value = key_cell.value, written.get(key_cell.name, _ABSENT)
            if type(value) is not type(row_value) or value != row_value or key_cell.kind is not _PUT \
                    or key_cell.type is not None or key_cell.version is not None:
                return None
            key_names: list[str] | None = [key_cell.name]
        elif not key_of_row(key, row):
            return None
        else:
            key_names = [cell.name for cell in key] or None
        document: dict[str, Any] = {
            "data": [written], "database": None if table is None else table.schema,
            "es": None if commit_time is None else commit_time // _MILLISECOND}
        if position:
            for name, value in reversed(position):  # Canal's field order: gtid, then id
                document[name] = value
        document["isDdl"] = False
        document["mysqlType"] = None
        document["old"] = None if old is None else [old]
        document["pkNames"] = key_names
        document["sql"] = ""
        document["sqlType"] = None
        document["table"] = None if table is None else table.name
        document["ts"] = None if capture_time is None else capture_time // _MILLISECOND
        document["type"] = _TYPE_OF_OP[event.op]
        return [encode(document)]

    # -- what is lost ---------------------------------------------------------------------------------------------

    def carried_cell(self, cell: Cell) -> Cell:
        """A row holds text: each value is written as its text and read back typed by the column's ``mysqlType``
        only where that gives the same text, so a value of another kind than its type implies comes back as
        text (or as the kind its text reads as); bytes as their ISO-8859-1 text; a deleted column as null; no
        versions."""
        value = None if cell.kind is not _PUT else cell.value
        read_back = _read_back(value, cell.type)
        if same_value(read_back, value):
            if cell.kind is _PUT and cell.version is None:
                return cell
            read_back = value
        return Cell(cell.name, read_back, cell.type)

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """An UPSERT (and a READ, unless ``read_type`` is INIT) is the row as it now is: an INSERT. A row Canal's
        type needs and the event lacks is its key cells (an INSERT or DELETE of a key: Flink and Paimon key the row
        by pkNames); an UPDATE without its before image has an ``old`` entry with no columns (Flink: nothing
        changed); an UPDATE without its after image has no ``data`` row, so no form; a TRUNCATE lists no rows."""
        op = event.op
        if op is _OP_UPSERT or (op is _OP_READ and "op.READ" not in self.carries):
            op = _OP_INSERT
        if op is _OP_UPDATE:
            if event.after is None:
                raise Refusal(Loss("op.UPDATE", "after", REFUSED,
                                   "Canal writes an UPDATE's new row as its data, and this UPDATE has none"))
            return event if event.before is not None else replace(event, before=event.after)
        if op is _OP_TRUNCATE:
            return replace(event, before=None, after=None)
        return with_one_row(event, op)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """Canal reads the key out of the row by pkNames, so the key cells the row lacks go into it (a TRUNCATE
        lists no rows, and so no key); ``mysqlType`` types a column once, for its row and its old value, and an
        update's ``old`` holds the changed columns of the row, then the columns the row lacks; the position is
        Canal's id, then its gtid, each a JSON scalar; Canal's own attributes as decoding gives them."""
        written = super().normal_form(event)
        changed: dict[str, Any] = {}
        if written.op is _OP_TRUNCATE:
            changed["key"] = ()
        else:
            row_name = "before" if written.op is _OP_DELETE else "after"
            row = getattr(written, row_name)
            row = key_cells_outside(written.key, row) + row
            if written.op is _OP_UPDATE:
                assert written.before is not None  # reshaped() gives every UPDATE a before image
                row, changed["before"] = _update_as_decoded(row, written.before)
            changed[row_name] = row
            changed["key"] = _key(tuple(cell.name for cell in written.key), row)
        source = written.source
        changed["source"] = replace(source, position=_position_as_decoded(source.position))
        changed["attributes"] = kept_fields.as_decoded(written.attributes, _attribute_group)
        return replace(written, **changed)


class _FlatMessage(msgspec.Struct, forbid_unknown_fields=True):
    """A flat message of the fields Canal writes, of the types it writes them with (its row values text or null),
    checked by msgspec as it parses (``_read_flat_message``)."""

    type: str
    data: list[dict[str, str | None]] | None = None
    database: str | None = None
    es: int | None = None
    gtid: str | UnsetType = UNSET
    id: Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)] | UnsetType = UNSET
    isDdl: bool | None = None
    mysqlType: dict[str, str | None] | None = None
    old: list[dict[str, str | None]] | None = None
    pkNames: list[str] | None = None
    sql: str | None = None
    sqlType: dict[str, int] | None = None
    table: str | None = None
    ts: int | None = None


# Most messages are Canal's own, which msgspec reads into a Struct faster than into a dict, checking their types as it
# goes. A message of any other shape (fields of its own, a number as a value) fails this reader and is read as any
# JSON, which keeps what it has and names what is wrong, so both give the same.
_read_flat_message = msgspec.json.Decoder(_FlatMessage).decode


# -- decoding helpers -------------------------------------------------------------------------------------------------

def _check_is_ddl(is_ddl: Any, op: Op, type_name: str) -> None:
    if (is_ddl is not None and type(is_ddl) is not bool) or (is_ddl is True and op is not _OP_TRUNCATE):
        raise DecodeError(NAME, f"isDdl {is_ddl!r} does not fit type {type_name}", field="isDdl")


def _time(value: Any, field: str) -> int | None:
    """Microseconds from a millisecond field's value."""
    if value is None:
        return None
    microseconds = time_units.to_microseconds(value, time_units.MILLISECOND)
    if microseconds is None:
        raise DecodeError(NAME, f"expected a 64-bit millisecond timestamp, got {value!r}", field=field)
    return microseconds


def _position(document: dict[str, Any]) -> Entries:
    position = []
    for field in _POSITION_FIELDS:
        if field in document:
            value = document[field]
            if not _is_scalar(value):
                raise DecodeError(NAME, f"expected a JSON scalar, got {json_type(value)}", field=field)
            position.append((field, value))
    return tuple(position)


def _is_scalar(value: Any) -> bool:
    """A JSON scalar that reads back as itself: no integer beyond 64 bits, no NaN or infinity."""
    if type(value) is int:
        return INT64_MIN <= value <= INT64_MAX
    if type(value) is float:
        return math.isfinite(value)
    return type(value) in SCALAR_TYPES


def _attributes(document: dict[str, Any]) -> list[tuple[str, Value]]:
    attributes: list[tuple[str, Value]] = []
    sql = document.get("sql")
    if sql is not None and type(sql) is not str:
        raise DecodeError(NAME, f"expected the SQL text, got {json_type(sql)}", field="sql")
    if sql:
        attributes.append((SQL_ATTRIBUTE, sql))
    if document.get("sqlType") is not None:
        attributes.append((SQL_TYPE_ATTRIBUTE, encode(document["sqlType"]).decode()))
    attributes += kept_fields.read(FIELD_ATTRIBUTE, document.items(), _FIELDS)
    return attributes


def _objects(items: Any, field: str) -> list[dict[str, Any]]:
    """The objects of a ``data`` or ``old`` array; null is no objects."""
    if items is None:
        return []
    if type(items) is not list:
        raise DecodeError(NAME, f"expected an array or null, got {json_type(items)}", field=field)
    for index, item in enumerate(items):
        if type(item) is not dict:
            raise DecodeError(NAME, f"expected an object, got {json_type(item)}", field=f"{field}[{index}]")
    return items


def _column_types(mysql_types: Any) -> dict[str, str]:
    if mysql_types is None:
        return {}
    if type(mysql_types) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(mysql_types)}", field="mysqlType")
    for name, type_name in mysql_types.items():
        if type_name is not None and type(type_name) is not str:
            raise DecodeError(NAME, f"expected a type name, got {json_type(type_name)}", field=f"mysqlType.{name}")
    return {name: type_name for name, type_name in mysql_types.items() if type_name is not None}


def _key_names(names: Any) -> tuple[str, ...]:
    if names is None:
        return ()
    if type(names) is not list:
        raise DecodeError(NAME, f"expected an array of column names or null, got {names!r}", field="pkNames")
    for name in names:
        if type(name) is not str:
            raise DecodeError(NAME, f"expected an array of column names or null, got {names!r}", field="pkNames")
    return tuple(dict.fromkeys(names))  # a key column named twice is one key column


def _cells(row: dict[str, Any], types: dict[str, str], field: str, index: int) -> Image:
    """The cells of ``row``, ``field[index]`` of the message (a place joined only for an error)."""
    cells = []
    for name, value in row.items():
        type_name = types.get(name) if types else None
        if type(value) is str and type_name is None:  # most values: text in an untyped column, as it is
            cells.append(Cell(name, value))
            continue
        if value is None:
            cells.append(Cell(name, None, type_name))
            continue
        if type(value) is bool:
            value = "true" if value else "false"
        elif type(value) in (int, float):
            value = repr(value)
        elif type(value) is not str:
            raise DecodeError(NAME, f"expected text or null, got {json_type(value)}", field=f"{field}[{index}].{name}")
        cells.append(Cell(name, typed_text.parse(value, type_name, _spelled), type_name))
    return tuple(cells)


def _before(row: Image, old: Image) -> Image:
    """An update's before image: the row with its ``old`` columns replaced, then the ``old`` columns it lacks."""
    changed = {cell.name: cell for cell in old}
    return tuple(changed.pop(cell.name, cell) for cell in row) + tuple(changed.values())


def _key(names: tuple[str, ...], row: Image) -> Image:
    by_name = {cell.name: cell for cell in row}
    return tuple(by_name[name] for name in names if name in by_name)


# -- encoding helpers -------------------------------------------------------------------------------------------------

def _texts(cells: Image) -> dict[str, str | None]:
    """A row as Canal writes it: each column's text (text itself, most of a row, found without a call)."""
    return {cell.name: value if (value := cell.value) is None or type(value) is str else _text(value)
            for cell in cells}


def _texts_typed(cells: Image, types: dict[str, str]) -> dict[str, str | None]:
    """``_texts``, walking the row once to add the type of each typed column to ``types`` (as ``_add_types``)."""
    texts: dict[str, str | None] = {}
    for cell in cells:
        value = cell.value
        texts[cell.name] = value if value is None or type(value) is str else _text(value)
        if cell.type is not None:
            types.setdefault(cell.name, cell.type)
    return texts


def _text(value: Value) -> str | None:
    """A value as Canal writes it: text; binary columns as ISO-8859-1 text, as Canal writes them."""
    if value is None or type(value) is str:
        return value
    if type(value) is bytes:
        return value.decode("latin-1")
    return _spelled(value)


def _spelled(value: Value) -> str:
    """A typed value as Canal, a Java program, spells it: a double as ``Double.toString`` (``1.0E7``, ``-3.4E38``),
    a decimal as ``BigDecimal.toPlainString`` (``0.000000000001``, where Python writes ``1E-12``) unless its exponent
    is positive, which plain digits would lose (``1E+3`` is not ``1000``), or has more places than a MySQL column
    (which plain digits would spell with as many zeros); anything else as ``typed_text.render``."""
    if type(value) is float and math.isfinite(value):
        return bytes(jackson_float(value)).decode()
    if type(value) is Decimal and value.is_finite() and -MOST_DECIMAL_PLACES <= int(value.as_tuple().exponent) <= 0:
        return format(value, "f")
    return typed_text.render(value)


def _changed(after_texts: dict[str, str | None], before: Image) -> Image:
    """The before cells that an update's ``old`` entry holds: those whose text differs from the after image's (its
    ``_texts``), and those the after image lacks."""
    return tuple(cell for cell in before
                 if cell.name not in after_texts or _text(cell.value) != after_texts[cell.name])


def _column_types_of(row: Image, old: Image) -> dict[str, str]:
    """``mysqlType``: the type of each typed column, the row's first."""
    types: dict[str, str] = {}
    _add_types(row, types)
    _add_types(old, types)
    return types


def _add_types(cells: Image, types: dict[str, str]) -> None:
    """The type of each typed column of ``cells`` that ``types`` lacks, added to it."""
    for cell in cells:
        if cell.type is not None:
            types.setdefault(cell.name, cell.type)


# -- what decoding gives back -----------------------------------------------------------------------------------------

def _read_back(value: Value, type_name: str | None) -> Value:
    """A value as decoding reads its text back in a column of ``type_name``."""
    text = _text(value)
    return None if text is None else typed_text.parse(text, type_name, _spelled)


def _retyped(cells: Image, types: dict[str, str]) -> Image:
    return tuple(Cell(cell.name, _read_back(cell.value, types.get(cell.name)), types.get(cell.name))
                 for cell in cells)


def _update_as_decoded(after: Image, before: Image) -> tuple[Image, Image]:
    """The after and before images that decoding an encoded update gives: ``old`` holds the changed columns, and
    ``mysqlType`` types each column once, for both."""
    types = _column_types_of(after, before)
    retyped_after = _retyped(after, types)
    return retyped_after, _before(retyped_after, _retyped(_changed(_texts(after), before), types))


def _position_as_decoded(position: Entries) -> Entries:
    """Canal's position: the first ``id``, then the first ``gtid``, as JSON scalars."""
    first: dict[str, Any] = {}
    for name, value in position:
        if name in _POSITION_FIELDS:
            first.setdefault(name, json_form(value))
    return tuple((name, first[name]) for name in _POSITION_FIELDS if name in first)


def _attribute_group(name: str, value: Value) -> tuple[int, Value] | None:
    if name == SQL_ATTRIBUTE:
        return (0, value) if type(value) is str and value != "" else None
    if name == SQL_TYPE_ATTRIBUTE:
        return (1, value) if is_canonical(value) and value != "null" else None
    return (2, value) if kept_fields.is_kept_field(name, value, FIELD_ATTRIBUTE, _FIELDS) else None
