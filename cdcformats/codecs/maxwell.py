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
  ``output_ddl`` (``table-create``, ``database-drop``...) describe schemas: none is a row change, so they are
  refused with a DecodeError saying so (``on_error`` lets a stream go on past them).
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
  ``primary_key`` field is just another unknown field.
* Every other top-level field (``query``, ``schema_id``, ``push_timestamp``, ``comment``, fields of
  ``output_naming_strategy=underscore_to_camelcase``...) is kept verbatim as a ``maxwell.field.<name>`` attribute
  holding its JSON text, and written back.

What public documentation leaves open, and the choice made here: the docs do not say whether ``old`` may hold a
column whose value did not change (this reads it and leaves it out when writing), nor what a consumer should do with
``primary_key`` values that disagree with ``data`` (this keeps ``primary_key`` as the key). Paimon refuses a message
without ``primary_key_columns``, so it is always written, empty when the key is unknown.

Written from other formats: an UPSERT becomes an insert (the row as it now is), as Flink writes its upserts; an
event without the image ``data`` needs (a key-only delete) writes its key cells as ``data``; bytes become base64 text
(as Maxwell writes blobs), decimals, NaN and infinities their text. Cell types (but ``JSON``), versions, the capture
time, the source system and other formats' position entries and attributes are not written. A deleted cell, a
column twice in one image and a TRUNCATE have no form here and are refused.

Normal form (what ``encode`` writes): ``database`` (when the table has a schema), ``table``, ``type``, ``ts``, the
position fields, the kept fields, ``primary_key`` (with a key), ``primary_key_columns`` (always), ``data``, and
``old`` holding exactly the columns whose before value differs from ``data``'s (left out when none does).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import DecodeError, EncodeError
from ..model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Image, Op, Source, Table, Value
from ._json import (MAX_MESSAGE_BYTES, SCALAR_TYPES, encode, is_canonical, json_type, kept_fields, load_object, raw,
                    scalar)
from .base import PRESENT, Codec, Shape
from .keys import KEY_COLUMNS, KeyColumns

NAME = "maxwell-json"
FIELD_ATTRIBUTE = "maxwell.field."
JSON_TYPE = "JSON"  # the cell type of a SET or JSON column, whose value is kept as JSON text
POSITION_FIELDS = ("xid", "xoffset", "commit", "position", "gtid", "server_id", "thread_id")
_ROW_FIELDS = ("database", "table", "type", "ts", *POSITION_FIELDS, "primary_key_columns", "data", "old")

_OP_OF_TYPE = {"insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE, "bootstrap-insert": Op.READ}
# An UPSERT is the row as it now is, whether or not it existed: the closest Maxwell type is an insert.
_TYPE_OF_OP = {**{op: row_type for row_type, op in _OP_OF_TYPE.items()}, Op.UPSERT: "insert"}
_BOOTSTRAP_MARKERS = ("bootstrap-start", "bootstrap-complete")
_DDL_TYPE = re.compile(r"(database|table)-(create|alter|drop)")
_CELL_TYPE_PATH = re.compile(r"(key|before|after)\[(\d+)\]\.type")
_MICROS_PER_SECOND = 1_000_000


class MaxwellJsonCodec(Codec):
    name = NAME
    description = "Maxwell's daemon JSON (MySQL binlog rows), as Flink's and Paimon's maxwell-json read it"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "table", "table.schema", "key", "before", "after",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "source.position", "source.commit_time",
    })
    shapes = (
        Shape(Op.INSERT, after=PRESENT),
        Shape(Op.UPDATE, before=PRESENT, after=PRESENT),
        Shape(Op.DELETE, before=PRESENT),
        Shape(Op.READ, after=PRESENT),
    )
    own_attributes = frozenset({FIELD_ATTRIBUTE})
    options = (KEY_COLUMNS, MAX_MESSAGE_BYTES)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.key_columns: KeyColumns = self.config["key_columns"]

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_message(self, message: bytes) -> ChangeEvent:
        document = load_object(NAME, message, self.config["max_message_bytes"])
        op = _op(document.get("type"))
        table = _table(document.get("database"), document.get("table"))
        data = _image(document.get("data"), "data")
        before, after = (data, None) if op is Op.DELETE else (None, data)
        if "old" in document:
            if op is not Op.UPDATE:
                raise DecodeError(NAME, f"only an update has old values, not a {document['type']}", field="old")
            before = _merged(data, _image(document["old"], "old"))
        elif op is Op.UPDATE:
            before = data
        key, key_fields = self._key(document, table, data)
        attributes = [(FIELD_ATTRIBUTE + name, encode(value).decode()) for name, value in document.items()
                      if name not in _ROW_FIELDS and name not in key_fields]
        return ChangeEvent(op, table, key, before, after, _source(document), attributes=attributes)

    def _key(self, document: dict[str, Any], table: Table | None, data: Image) -> tuple[Image, tuple[str, ...]]:
        """The key cells, and the message fields read for them."""
        names = _key_names(document.get("primary_key_columns", []))
        fields: tuple[str, ...] = ("primary_key_columns",)
        if not names:
            names = self.key_columns.for_table(table)
            if "primary_key" not in document:
                return self.key_columns.key_of(table, data), fields
        if "primary_key" in document and names:
            values = document["primary_key"]
            if type(values) is not list or len(values) != len(names):
                raise DecodeError(NAME, f"expected an array of {len(names)} key values, one per key column "
                                        f"{', '.join(names)}; got {_json_excerpt(values)}", field="primary_key")
            return tuple(_cell(name, value, f"primary_key[{index}]")
                         for index, (name, value) in enumerate(zip(names, values))), (*fields, "primary_key")
        by_name = {cell.name: cell for cell in data}
        return tuple(by_name.get(name, Cell(name)) for name in names), fields

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        if event.op not in _TYPE_OF_OP:
            raise EncodeError(NAME, f"a {event.op.value} has no Maxwell row type", field="op")
        document: dict[str, Any] = {}
        if event.table is not None:
            if event.table.schema is not None:
                document["database"] = event.table.schema
            document["table"] = event.table.name
        document["type"] = _TYPE_OF_OP[event.op]
        if event.source.commit_time_us is not None:
            document["ts"] = _whole_seconds(event.source.commit_time_us)
        for name, value in event.source.position:
            if name in POSITION_FIELDS and name not in document:
                document[name] = scalar(value)
        reserved = self._reserved(event)
        document.update(kept_fields(NAME, event.attributes, FIELD_ATTRIBUTE, reserved))
        if event.key:
            document["primary_key"] = [_cell_json(cell) for cell in event.key]
        document["primary_key_columns"] = [cell.name for cell in event.key]
        image_name = "before" if event.op is Op.DELETE else "after"
        row = getattr(event, image_name)
        if row is None and not event.key:
            raise EncodeError(NAME, f"a {event.op.value} needs its row ({image_name}) or its key", field=image_name)
        data = _fields(event.key if row is None else row, "key" if row is None else image_name)
        document["data"] = data
        if event.op is Op.UPDATE and event.before is not None and event.after is not None:
            after_by_name = {cell.name: cell for cell in event.after}
            changed = {index: cell for index, cell in enumerate(event.before) if after_by_name.get(cell.name) != cell}
            if changed:
                document["old"] = _fields(changed, "before")
        return encode(document)

    def _reserved(self, event: ChangeEvent) -> frozenset[str]:
        """The message fields that decoding reads as something other than a kept field."""
        if event.key or self.key_columns.for_table(event.table):
            return frozenset({*_ROW_FIELDS, "primary_key"})
        return frozenset(_ROW_FIELDS)

    # -- what is lost ---------------------------------------------------------------------------------------------

    def dropped(self, event: ChangeEvent) -> list[tuple[str, str]]:
        """As ``Codec.dropped``, but a cell of type JSON holding JSON text is written back: it is not lost."""
        def json_cell(path: str) -> bool:
            match = _CELL_TYPE_PATH.fullmatch(path)
            if match is None:
                return False
            image = getattr(event, match.group(1))
            return image is not None and _is_json_cell(image[int(match.group(2))])

        return [(feature, path) for feature, path in super().dropped(event)
                if not (feature == "cell.type" and json_cell(path))]

    def dropped_details(self, event: ChangeEvent) -> list[tuple[str, str]]:
        lost: list[tuple[str, str]] = []
        commit_time = event.source.commit_time_us
        if commit_time is not None and commit_time % _MICROS_PER_SECOND:
            lost.append(("source.commit_time", "source.commit_time_us (ts is in whole seconds)"))
        names = [name for name, _ in event.source.position]
        if names != [name for name in POSITION_FIELDS if name in names]:
            lost.append(("source.position", f"source.position (only {', '.join(POSITION_FIELDS)}, once each, "
                                            "in that order)"))
        if not event.key:
            row = event.before if event.op is Op.DELETE else event.after
            if self.key_columns.key_of(event.table, row):
                lost.append(("key", "key (none, but key_columns reads one out of the row)"))
        if event.op is Op.UPDATE and event.before is not None and event.after is not None:
            after_names = [cell.name for cell in event.after]
            before_names = [cell.name for cell in event.before]
            if before_names[:len(after_names)] != after_names:
                lost.append(("before", "before (an update's before image has the after image's columns, "
                                       "in their order, then only others)"))
        if event.attributes and event.attributes != self._attributes_as_decoded(event):
            lost.append(("attributes", "attributes (maxwell.field.* once each, as JSON text, not naming a field "
                                       "this format reads)"))
        return lost

    def _attributes_as_decoded(self, event: ChangeEvent) -> tuple[tuple[str, Value], ...]:
        """The attributes that decoding this event's message gives back, to tell which ones a round trip keeps."""
        reserved = self._reserved(event)
        fields = [(name, value) for name, value in event.attributes if name.startswith(FIELD_ATTRIBUTE)]
        names = [name for name, _ in fields]
        if len(set(names)) != len(names) or any(not is_canonical(value) or name[len(FIELD_ATTRIBUTE):] in reserved
                                                for name, value in fields):
            return ()
        return tuple(fields)


# -- decoding helpers -------------------------------------------------------------------------------------------------

def _op(row_type: Any) -> Op:
    if type(row_type) is str and row_type in _OP_OF_TYPE:
        return _OP_OF_TYPE[row_type]
    if type(row_type) is str and row_type in _BOOTSTRAP_MARKERS:
        reason = f"{row_type} marks a bootstrap (Maxwell's snapshot) and is no row change"
    elif type(row_type) is str and _DDL_TYPE.fullmatch(row_type):
        reason = f"{row_type} is a schema change (output_ddl) and no row change"
    else:
        reason = f"expected a row change, one of {', '.join(_OP_OF_TYPE)}; got {_json_excerpt(row_type)}"
    raise DecodeError(NAME, reason, field="type")


def _json_excerpt(value: Any) -> str:
    """A short rendering of a parsed JSON value for an error message: a scalar as JSON, else what kind it is."""
    if type(value) in SCALAR_TYPES:
        text = encode(value).decode()
        return text if len(text) <= 40 else text[:37] + "..."
    return json_type(value)


def _table(database: Any, name: Any) -> Table | None:
    for field, value in (("database", database), ("table", name)):
        if value is not None and type(value) is not str:
            raise DecodeError(NAME, f"expected a string, got {json_type(value)}", field=field)
    if name is None:
        if database is not None:
            raise DecodeError(NAME, "a database without a table", field="database")
        return None
    return Table(name, database)


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
    return tuple(_cell(name, value, f"{field}.{name}") for name, value in row.items())


def _merged(data: Image, old: Image) -> Image:
    """``data`` with the values of ``old`` put back, then the columns only ``old`` has."""
    old_by_name = {cell.name: cell for cell in old}
    data_names = {cell.name for cell in data}
    return (*(old_by_name.get(cell.name, cell) for cell in data),
            *(cell for cell in old if cell.name not in data_names))


def _key_names(names: Any) -> tuple[str, ...]:
    if type(names) is not list or not all(type(name) is str for name in names):
        raise DecodeError(NAME, f"expected an array of column names, got {_json_excerpt(names)}",
                          field="primary_key_columns")
    return tuple(names)


def _source(document: dict[str, Any]) -> Source:
    seconds = document.get("ts")
    commit_time = None
    if seconds is not None:
        if type(seconds) is not int or not INT64_MIN <= seconds * _MICROS_PER_SECOND <= INT64_MAX:
            raise DecodeError(NAME, f"expected a 64-bit timestamp in seconds, got {_json_excerpt(seconds)}",
                              field="ts")
        commit_time = seconds * _MICROS_PER_SECOND
    position = []
    for field in POSITION_FIELDS:
        if field in document:
            value = document[field]
            if type(value) not in SCALAR_TYPES or (type(value) is int and not INT64_MIN <= value <= INT64_MAX):
                raise DecodeError(NAME, f"expected a scalar, got {_json_excerpt(value)}", field=field)
            position.append((field, value))
    return Source(position=position, commit_time_us=commit_time)


# -- encoding helpers -------------------------------------------------------------------------------------------------

def _is_json_cell(cell: Cell) -> bool:
    return cell.type == JSON_TYPE and is_canonical(cell.value, nested_only=True)


def _cell_json(cell: Cell) -> Any:
    return raw(NAME, cell.value, cell.name) if _is_json_cell(cell) else scalar(cell.value)


def _fields(cells: Image | dict[int, Cell], image_name: str) -> dict[str, Any]:
    """A row as a JSON object; ``cells`` may be some cells of an image, by their index in it."""
    fields: dict[str, Any] = {}
    for index, cell in (cells.items() if isinstance(cells, dict) else enumerate(cells)):
        path = f"{image_name}[{index}]"
        if cell.kind is not CellKind.PUT:
            raise EncodeError(NAME, f"a {cell.kind.value} cell has no form in a Maxwell row", field=f"{path}.kind")
        if cell.name in fields:
            raise EncodeError(NAME, f"column {cell.name!r} twice in one image", field=f"{path}.name")
        fields[cell.name] = _cell_json(cell)
    return fields


def _whole_seconds(microseconds: int) -> int:
    """Seconds, rounded toward zero, so that reading them back stays within 64 bits."""
    seconds = abs(microseconds) // _MICROS_PER_SECOND
    return seconds if microseconds >= 0 else -seconds
