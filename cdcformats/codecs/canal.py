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
* ``type`` INSERT, UPDATE, DELETE is the op. INSERT's row is the after image, DELETE's the before image. For an
  UPDATE, ``old[i]`` holds the previous values of the columns that changed in ``data[i]``: the after image is the
  row, the before image the row with those columns replaced, then any ``old`` column the row does not have (in
  ``old``'s order). ``old`` must have one entry per row.
* ``type`` TRUNCATE (a DDL message of Canal's) is a TRUNCATE of the table, with no rows. Every other type Canal
  writes (CREATE, ALTER, ERASE, QUERY, RENAME, CINDEX, DINDEX, GTID, XACOMMIT, XAROLLBACK, MHEARTBEAT) changes no
  row: refused as a ``DecodeError`` naming ``type``, or, with the option ``skip_ddl``, skipped as Flink and Paimon
  skip them. An unknown type is always refused.
* Every value is text or null (JSON numbers and booleans are read as their text too). A value becomes typed by its
  column's ``mysqlType`` entry (``int(11)``, ``bigint(20)``, ``decimal(10,2)``, ``float``...) only where writing the
  typed value back gives the same text (see ``typed_text``): "7" in an ``int(11)`` column is 7, "007" stays "007".
  The ``mysqlType`` entry is kept verbatim as the cell's type.
* ``pkNames`` names the key: the key cells are the row's cells of those names, in ``pkNames`` order (a name the row
  does not have is left out).
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

Written from other formats: an UPSERT or a snapshot READ becomes an INSERT (the row as it now is). Values are
written as their text (``typed_text.render``; bytes as ISO-8859-1 text, which is how Canal writes binary columns).
An UPDATE's ``old`` holds the before cells whose text differs from the after image's, then the before cells the
after image lacks: a before image in another column order, with fewer columns, or whose types differ from the after
image's, does not survive (``dropped()`` says so). Cell versions, deleted cells (a Lindorm Delete, a Tablestore
DO/DA) and a column twice in one image have no form here; such cells are refused. An INSERT needs its after image, a
DELETE its before image, an UPDATE both.

Normal form (what ``encode`` writes): one row per message; the fields Canal writes, in Canal's (alphabetical) order:
``data``, ``database``, ``es``, ``gtid`` and ``id`` when the position has them, ``isDdl`` (true only for TRUNCATE),
``mysqlType`` (the typed columns of the row, then of the ``old`` entry; null when none), ``old`` (UPDATE only; null
otherwise), ``pkNames`` (null for no key), ``sql`` ("" when there is none), ``sqlType``, ``table``, ``ts``,
``type``; then the kept fields. Every value is a JSON string or null. A TRUNCATE has null ``data``, and ``sql`` ""
unless the event kept its statement: none is made up.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import DecodeError, EncodeError
from ..model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Entries, Image, Op, Source, Table, Value
from . import typed_text
from ._json import MAX_MESSAGE_BYTES, SCALAR_TYPES, encode, is_canonical, json_type, load_object, raw
from .base import ABSENT, PRESENT, Codec, Option, Shape, flag

NAME = "canal-json"
SQL_ATTRIBUTE = "canal.sql"
SQL_TYPE_ATTRIBUTE = "canal.sqlType"
FIELD_ATTRIBUTE = "canal.field."
# The fields of Canal's FlatMessage, in the order Canal's JSON writer puts them.
_FIELDS = ("data", "database", "es", "gtid", "id", "isDdl", "mysqlType", "old", "pkNames", "sql", "sqlType", "table",
           "ts", "type")
_POSITION_FIELDS = ("id", "gtid")

_OP_OF_TYPE = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE, "TRUNCATE": Op.TRUNCATE}
# An UPSERT or a snapshot read is the row as it now is: Canal's closest type is an insert.
_TYPE_OF_OP = {**{op: name for name, op in _OP_OF_TYPE.items()}, Op.UPSERT: "INSERT", Op.READ: "INSERT"}
# Canal's other event types: schema changes, statements and markers, none of which changes a row.
_NO_ROW_TYPES = frozenset({"CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX", "GTID", "XACOMMIT",
                           "XAROLLBACK", "MHEARTBEAT"})


SKIP_DDL = Option("skip_ddl", "skip messages that change no row (CREATE, ALTER, QUERY...) instead of refusing them",
                  False, flag)


class CanalJsonCodec(Codec):
    name = NAME
    description = "Alibaba Canal flat messages (canal-json), as Flink and Paimon read them"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.TRUNCATE", "table", "table.schema", "key", "before", "after",
        "cell.type", "value.null", "value.bool", "value.int", "value.float", "value.str", "value.decimal",
        "value.float_nonfinite", "source.position", "source.commit_time", "source.capture_time",
    })
    shapes = (Shape(Op.INSERT, after=PRESENT), Shape(Op.UPDATE, before=PRESENT, after=PRESENT),
              Shape(Op.DELETE, before=PRESENT), Shape(Op.TRUNCATE, before=ABSENT, after=ABSENT))
    own_attributes = frozenset({SQL_ATTRIBUTE, SQL_TYPE_ATTRIBUTE, FIELD_ATTRIBUTE})
    options = (SKIP_DDL, MAX_MESSAGE_BYTES)

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_messages(self, message: bytes) -> list[ChangeEvent]:
        """The events of one message: one per row, none for a skipped message; a bad message gives none."""
        document = load_object(NAME, message, self.config["max_message_bytes"])
        type_name = document.get("type")
        if type(type_name) is not str or type_name not in _OP_OF_TYPE:
            if type(type_name) is str and type_name in _NO_ROW_TYPES and self.config["skip_ddl"]:
                return []
            found = repr(type_name) if type(type_name) is str else json_type(type_name)
            raise DecodeError(NAME, f"type {found} is not a row change; expected one of {', '.join(_OP_OF_TYPE)} "
                                    "(option skip_ddl skips DDL messages)", field="type")
        op = _OP_OF_TYPE[type_name]
        is_ddl = document.get("isDdl")
        if (is_ddl is not None and type(is_ddl) is not bool) or (is_ddl is True and op is not Op.TRUNCATE):
            raise DecodeError(NAME, f"isDdl {is_ddl!r} does not fit type {type_name}", field="isDdl")
        table = _table(document.get("database"), document.get("table"))
        source = Source(position=_position(document), commit_time_us=_time(document, "es"),
                        capture_time_us=_time(document, "ts"))
        attributes = _attributes(document)
        rows = _objects(document.get("data"), "data")
        olds = _objects(document.get("old"), "old")
        if op is Op.TRUNCATE:
            if rows or olds:
                raise DecodeError(NAME, "a TRUNCATE lists no rows", field="data" if rows else "old")
            return [ChangeEvent(op, table, source=source, attributes=attributes)]
        if op is Op.UPDATE and len(olds) != len(rows):
            raise DecodeError(NAME, f"an UPDATE needs one old entry per row: {len(rows)} rows, {len(olds)} entries",
                              field="old")
        if op is not Op.UPDATE and olds:
            raise DecodeError(NAME, f"only an UPDATE has old values, not an {type_name}", field="old")
        types = _column_types(document.get("mysqlType"))
        key_names = _key_names(document.get("pkNames"))
        events = []
        for index, row in enumerate(rows):
            cells = _cells(row, types, f"data[{index}]")
            before: Image | None = cells if op is Op.DELETE else None
            after: Image | None = None if op is Op.DELETE else cells
            if op is Op.UPDATE:
                before = _before(cells, _cells(olds[index], types, f"old[{index}]"))
            events.append(ChangeEvent(op, table, _key(key_names, cells), before, after, source,
                                      attributes=attributes))
        return events

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        op = event.op
        data = old = key_names = None
        types: dict[str, str] = {}
        if op is not Op.TRUNCATE:
            row_name = "before" if op is Op.DELETE else "after"
            row = _image_of(event, row_name, op)
            data = [_texts(row, row_name)]
            if op is Op.UPDATE:
                before = _image_of(event, "before", op)
                _texts(before, "before")  # the same checks as the row's
                old = [{cell.name: _text(cell.value) for cell in _changed(row, before)}]
                types = _column_types_of(row, before)
            else:
                types = _column_types_of(row, ())
            key_names = [cell.name for cell in event.key] or None
        table = event.table
        source = event.source
        document: dict[str, Any] = {"data": data, "database": table.schema if table else None,
                                    "es": _milliseconds(source.commit_time_us, "source.commit_time_us")}
        position = dict(source.position)
        for name in ("gtid", "id"):  # Canal's field order
            if name in position:
                document[name] = position[name]
        document.update({"isDdl": op is Op.TRUNCATE, "mysqlType": types or None, "old": old, "pkNames": key_names,
                         "sql": "", "sqlType": None, "table": table.name if table else None,
                         "ts": _milliseconds(source.capture_time_us, "source.capture_time_us"),
                         "type": _TYPE_OF_OP[op]})
        for index, (name, value) in enumerate(event.attributes):
            path = f"attributes[{index}]"
            if name == SQL_ATTRIBUTE:
                if type(value) is not str:
                    raise EncodeError(NAME, f"expected the SQL text, got {value!r}", field=path)
                document["sql"] = value
            elif name == SQL_TYPE_ATTRIBUTE:
                document["sqlType"] = raw(NAME, value, path)
            elif name.startswith(FIELD_ATTRIBUTE):
                field_name = name[len(FIELD_ATTRIBUTE):]
                if field_name in _FIELDS:
                    raise EncodeError(NAME, f"{name} would overwrite Canal's field {field_name!r}", field=path)
                document[field_name] = raw(NAME, value, path)
        return encode(document)

    # -- what is lost ---------------------------------------------------------------------------------------------

    def dropped_details(self, event: ChangeEvent) -> list[tuple[str, str]]:
        lost = []
        if event.op is Op.UPDATE and event.before is not None and event.after is not None:
            types = _column_types_of(event.after, event.before)
            if any(cell.type != types.get(cell.name) for cell in event.after):
                lost.append(("cell.type", "after (Canal's mysqlType gives a column one type, for its row value and "
                                          "its old value)"))
            if event.before != _before_as_decoded(event.after, event.before, types):
                lost.append(("before", "before (Canal writes an update's before image as the changed columns of the "
                                       "after image, then the columns the after image lacks)"))
        if event.key != _key_as_decoded(event):
            lost.append(("key", "key (Canal reads the key out of the row by pkNames)"))
        if event.source.position and not _position_fits(event.source.position):
            lost.append(("source.position", "source.position (Canal has id, then gtid, each a JSON scalar)"))
        if event.attributes and event.attributes != _attributes_as_decoded(event.attributes):
            lost.append(("attributes", f"attributes ({SQL_ATTRIBUTE} as non-empty text, {SQL_TYPE_ATTRIBUTE} and "
                                       f"{FIELD_ATTRIBUTE}* once each as JSON text, in that order)"))
        return lost


# -- decoding helpers -------------------------------------------------------------------------------------------------

def _table(database: Any, name: Any) -> Table | None:
    for field, value in (("database", database), ("table", name)):
        if value is not None and type(value) is not str:
            raise DecodeError(NAME, f"expected a string or null, got {json_type(value)}", field=field)
    if name is None:
        if database is not None:
            raise DecodeError(NAME, "a database without a table", field="table")
        return None
    return Table(name, database)


def _time(document: dict[str, Any], field: str) -> int | None:
    """Microseconds from a millisecond field."""
    value = document.get(field)
    if value is None:
        return None
    if type(value) is not int or not INT64_MIN <= value * 1000 <= INT64_MAX:
        raise DecodeError(NAME, f"expected a 64-bit millisecond timestamp, got {value!r}", field=field)
    return value * 1000


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
    attributes += [(FIELD_ATTRIBUTE + name, encode(value).decode())
                   for name, value in document.items() if name not in _FIELDS]
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
    if type(names) is not list or not all(type(name) is str for name in names):
        raise DecodeError(NAME, f"expected an array of column names or null, got {names!r}", field="pkNames")
    return tuple(names)


def _cells(row: dict[str, Any], types: dict[str, str], path: str) -> Image:
    cells = []
    for name, value in row.items():
        type_name = types.get(name)
        if value is None:
            cells.append(Cell(name, None, type_name))
            continue
        if type(value) is bool:
            value = "true" if value else "false"
        elif type(value) in (int, float):
            value = repr(value)
        elif type(value) is not str:
            raise DecodeError(NAME, f"expected text or null, got {json_type(value)}", field=f"{path}.{name}")
        cells.append(Cell(name, typed_text.parse(value, type_name), type_name))
    return tuple(cells)


def _before(row: Image, old: Image) -> Image:
    """An update's before image: the row with its ``old`` columns replaced, then the ``old`` columns it lacks."""
    changed = {cell.name: cell for cell in old}
    return tuple(changed.pop(cell.name, cell) for cell in row) + tuple(changed.values())


def _key(names: tuple[str, ...], row: Image) -> Image:
    by_name = {cell.name: cell for cell in row}
    return tuple(by_name[name] for name in names if name in by_name)


# -- encoding helpers -------------------------------------------------------------------------------------------------

def _image_of(event: ChangeEvent, image_name: str, op: Op) -> Image:
    image = getattr(event, image_name)
    if image is None:
        raise EncodeError(NAME, f"Canal writes an {op.value} with its {image_name} image, and this event has none",
                          field=image_name)
    return image


def _texts(cells: Image, image_name: str) -> dict[str, str | None]:
    row: dict[str, str | None] = {}
    for index, cell in enumerate(cells):
        path = f"{image_name}[{index}]"
        if cell.kind is not CellKind.PUT:
            raise EncodeError(NAME, f"a {cell.kind.value} cell has no form in a Canal row", field=f"{path}.kind")
        if cell.version is not None:
            raise EncodeError(NAME, "a cell version has no form in a Canal row", field=f"{path}.version")
        if cell.name in row:
            raise EncodeError(NAME, f"column {cell.name!r} twice in one row", field=f"{path}.name")
        row[cell.name] = _text(cell.value)
    return row


def _text(value: Value) -> str | None:
    """A value as Canal writes it: text; binary columns as ISO-8859-1 text, as Canal writes them."""
    if value is None or type(value) is str:
        return value
    if type(value) is bytes:
        return value.decode("latin-1")
    return typed_text.render(value)


def _changed(after: Image, before: Image) -> Image:
    """The before cells that an update's ``old`` entry holds: those whose text differs from the after image's, and
    those the after image lacks."""
    after_texts = {cell.name: _text(cell.value) for cell in after}
    return tuple(cell for cell in before
                 if cell.name not in after_texts or _text(cell.value) != after_texts[cell.name])


def _column_types_of(row: Image, old: Image) -> dict[str, str]:
    """``mysqlType``: the type of each typed column, the row's first."""
    types: dict[str, str] = {}
    for cell in (*row, *old):
        if cell.type is not None:
            types.setdefault(cell.name, cell.type)
    return types


def _milliseconds(microseconds: int | None, field: str) -> int | None:
    if microseconds is None:
        return None
    if microseconds // 1000 * 1000 < INT64_MIN:  # the millisecond before the earliest instant: it would not read back
        raise EncodeError(NAME, f"{microseconds} microseconds have no millisecond within the 64-bit range", field=field)
    return microseconds // 1000


# -- what decoding gives back -----------------------------------------------------------------------------------------

def _before_as_decoded(after: Image, before: Image, types: dict[str, str]) -> Image:
    """The before image that decoding an encoded update gives: its cells typed by the message's ``mysqlType``."""
    rebuilt = _before(after, _changed(after, before))
    return tuple(Cell(cell.name, cell.value, types.get(cell.name)) for cell in rebuilt)


def _key_as_decoded(event: ChangeEvent) -> Image:
    if event.op is Op.TRUNCATE:
        return ()
    row = event.before if event.op is Op.DELETE else event.after
    return _key(tuple(cell.name for cell in event.key), row or ())


def _position_fits(position: Entries) -> bool:
    names = [name for name, _ in position]
    return (names in (["id"], ["gtid"], ["id", "gtid"])
            and all(_is_scalar(value) for _, value in position))


def _attributes_as_decoded(attributes: Entries) -> Entries:
    """The attributes that decoding this event's message gives back, to tell which ones a round trip keeps."""
    sql = [(name, value) for name, value in attributes if name == SQL_ATTRIBUTE]
    sql_type = [(name, value) for name, value in attributes if name == SQL_TYPE_ATTRIBUTE]
    fields = [(name, value) for name, value in attributes if name.startswith(FIELD_ATTRIBUTE)]
    field_names = [name for name, _ in fields]
    if (len(sql) > 1 or any(type(value) is not str or not value for _, value in sql)
            or len(sql_type) > 1 or any(not is_canonical(value) or value == "null" for _, value in sql_type)
            or len(set(field_names)) != len(field_names)
            or any(not is_canonical(value) or name[len(FIELD_ATTRIBUTE):] in _FIELDS for name, value in fields)):
        return ()
    return (*sql, *sql_type, *fields)
