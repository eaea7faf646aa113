"""``aliyun-json``: the change messages Alibaba Cloud DataWorks writes to Kafka when it synchronizes a database, as
Apache Paimon's Kafka CDC ingestion reads them (format ``aliyun-json``).

    {"schema": {"dataColumn": [{"name": "id", "type": "LONG"}, {"name": "val", "type": "DOUBLE"}],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": "bigdata_test", "tableName": "sync_test_table"}},
     "payload": {"before": {"dataColumn": {"id": 2, "val": "1.100000"}},
                 "after": {"dataColumn": {"id": 2, "val": "2.200000"}},
                 "sequenceId": "1731663842292000001",
                 "timestamp": {"eventTime": 1731662097000, "systemTime": 1731663848979,
                               "checkpointTime": 1731662097000},
                 "op": "UPDATE_AFTER", "ddl": null},
     "version": "0.0.1"}

Sources: DataWorks' "Appendix: Message formats" (the layout, the six column types and how each is written) and
Paimon's ``AliyunRecordParser`` with its test messages (which image each op is read from, which fields are required).

How the message maps onto the canonical event:

* ``payload.op``: ``INSERT`` is INSERT (its row in ``after``), ``DELETE`` is DELETE (its row in ``before``),
  ``UPDATE_AFTER`` is UPDATE (its row in ``after``; ``before`` may carry the old row in the same message, as in
  Paimon's "update in one" example), ``UPDATE_BEFORE`` is UPDATE with only the old row (in ``before``). As Paimon
  does, the image an op is not read from is ignored (an INSERT's ``before``, a DELETE's ``after``); the one it is read
  from must be there. Other ops (DataWorks' heartbeats ``MHEARTBEAT``, transaction and DDL records) are no row
  change and are refused; with the option ``skip_ddl`` a heartbeat, which DataWorks writes periodically so that
  consumers can tell its progress, is skipped (decoded to no event, which a conversion counts as a skipped message)
  whatever else it holds. The ops of transaction and DDL records are not documented, so they stay refused.
* Not documented: whether an update is one message or two. Both are read. An ``UPDATE_BEFORE`` directly followed by
  its ``UPDATE_AFTER`` (the next message, without a ``before``, identical to it in everything but the op, the
  images and schema columns that neither image holds, which say nothing about the row) is one UPDATE event with both
  images; a skipped heartbeat between them parts them. An ``UPDATE_BEFORE`` not followed by its pair stays an
  UPDATE with only a before image; an ``UPDATE_AFTER`` alone an UPDATE with only an after image (or both, when it
  carries them).
  Written: one ``UPDATE_AFTER`` message with both images by default; with ``split_updates=True``, an
  ``UPDATE_BEFORE`` and then an ``UPDATE_AFTER``, the pair the decoder joins again (still one message where the
  before image lacks a key column, which an ``UPDATE_BEFORE`` reads its key from). So an UPDATE with only a before
  image written just before an UPDATE with only an after image and the same metadata reads back as one event.
* ``payload.before|after.dataColumn``: the row, column -> value. Cells come in the order of ``schema.dataColumn``
  (JSON object order is not significant; array order is); a column the schema does not list is refused (DataWorks
  lists every column, and Paimon types the row by that list). A cell's type is its ``schema.dataColumn[].type``,
  verbatim (DataWorks maps every column to ``BOOLEAN``, ``DOUBLE``, ``DATE``, ``BYTES``, ``LONG`` or ``STRING``);
  an entry without a type gives no type. Values are the JSON values as written: the docs make DOUBLE a JSON number
  and Paimon's example writes ``"1.100000"``, so both are kept as they are; DATE is a millisecond number. A
  ``BYTES`` column's text is base64: it becomes bytes where it is base64 exactly as it would be written back, and
  stays text otherwise. Nested objects or arrays as values are refused.
* ``schema.primaryKey``: the key is the cells of those columns, in that order, read out of the row the op is read
  from. A key column that row lacks has no cell to hold it (DataWorks may leave columns out of a row): the key holds
  the cells that are there, and the attribute ``aliyun.primaryKey`` keeps the whole list as JSON text
  (``["id","region"]``), set only where it names such a column, so that it is written back as it came.
* ``schema.source``: ``dbType`` is the source system; ``tableName`` the table, in ``schemaName`` (then ``dbName``
  is the catalog, as for PostgreSQL or Oracle) or else in ``dbName`` (as for MySQL). Without a ``tableName`` there
  is no table, and ``dbName`` / ``schemaName`` are kept as unknown fields.
* ``payload.timestamp``: ``eventTime`` is the commit time and ``systemTime`` the capture time, both milliseconds
  (Paimon takes ``systemTime`` as the record's time). Not documented: ``-1``, which Paimon's insert example has for
  ``eventTime`` and ``checkpointTime`` (with ``sequenceId`` "-1": a row of the initial load, it seems). A time of
  -1, null or absent is read as no time. The other timestamp fields (``checkpointTime``) follow
  ``payload.sequenceId`` in the source position, verbatim and in order.
* Every other field is kept verbatim as JSON text, by where it is: ``aliyun.field.<name>`` (top level, such as
  ``version``), ``aliyun.schema.<name>``, ``aliyun.source.<name>`` (in ``schema.source``, such as ``dbVersion``) and
  ``aliyun.payload.<name>`` (such as ``ddl``), in that order, after ``aliyun.primaryKey``. Not kept: other keys of a
  ``dataColumn`` entry or of an image object, a repeated ``dataColumn`` entry, and schema columns that no image read
  has.

Written from other formats (what Paimon's aliyun-json reader takes them for):

* An UPSERT or a READ is an ``INSERT``, the nearest op here (a snapshot row is an insert to Paimon). An INSERT or a
  DELETE without the row its op is read from writes its key cells as that row (none: an empty row), and drops the
  image its op does not read. An UPDATE with only its old row is an ``UPDATE_BEFORE``, with only its new row an
  ``UPDATE_AFTER``; one with neither image has no form, nor has a TRUNCATE: refused, and ``cf.loss`` lists them.
* The key is read out of the row by ``schema.primaryKey``: key cells the row lacks (a Tablestore primary key, kept
  outside the row image) go into the row, first; a key cell that disagrees with the row's cell of its name comes back
  as the row's. ``schema.primaryKey`` names the key's columns, or is ``aliyun.primaryKey`` where that lists the key's
  columns in order with columns the row lacks among them (it reads back as compact JSON text); an
  ``aliyun.primaryKey`` that does not (or names no column the row lacks) is dropped. A format that has no place for
  it loses the names of the key columns the row lacked.
* Bytes are base64 text, which reads back as bytes only in a ``BYTES`` column (and base64 text in a ``BYTES`` column
  reads back as bytes); decimals, NaN and infinities are their text. Cell versions fall away; a deleted column (a
  Lindorm Delete or DeleteColumn, a Tablestore DO/DA) is the column set to null; a column twice in one image keeps its
  first cell. One ``schema.dataColumn`` serves both images: a column typed differently in the two images takes the
  after image's type, and the after image comes back in the ``dataColumn`` order (below).
* The position keeps a first ``sequenceId`` and the first of each other entry, as JSON scalars, but ``eventTime``
  and ``systemTime`` (times); a time of -1 ms is an unknown time; times are floored to the millisecond. Attributes
  other than ``aliyun.*`` ones, and those that are not JSON text or name a field of the format, are dropped.

Normal form (what ``encode`` writes): ``schema`` then ``payload`` then the kept top-level fields. ``schema`` holds
``dataColumn`` (the columns of both images, each image's in its order, a column only ``after`` has in its place
there; where the two images order the columns they share otherwise, those of ``before`` in order, then those only
``after`` has; ``type`` only where there is one), ``primaryKey`` (always, as it came; ``[]`` without one),
``source`` (``dbType``, ``dbName``, ``schemaName``, ``tableName`` where there are such, then the kept fields), then
the kept schema fields. ``payload`` holds
``before`` and ``after`` (null where the op does not read them), ``sequenceId`` when there is one, ``timestamp``
(``eventTime`` and ``systemTime``, -1 when unknown, then the rest of the position), ``op``, then the kept payload
fields.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from ..contract import (
    ABSENT,
    OPTIONAL,
    PRESENT,
    Codec,
    DecodedUnit,
    IncrementalDecoder,
    Option,
    Shape,
    flag,
    with_one_row,
)
from ..core import time_units
from ..core.typed_text import json_form
from ..errors import DecodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import INT64_MAX, INT64_MIN, Cell, ChangeEvent, Entries, Image, Op, Source, Table, Value
from ._kit import kept_fields
from ._kit.json_message import AS_IS_TYPES, MAX_MESSAGE_BYTES, SCALAR_TYPES, encode, json_type, load_object
from ._kit.keys import key_cells, key_cells_outside
from ._kit.plain_rows import key_of_row, plain_object

# Enum members read once: reading a member off its class runs Python code (enum's metaclass), on every event.
_OP_INSERT, _OP_UPDATE, _OP_DELETE, _OP_UPSERT, _OP_READ, _OP_TRUNCATE = (
    Op.INSERT, Op.UPDATE, Op.DELETE, Op.UPSERT, Op.READ, Op.TRUNCATE)
NAME = "aliyun-json"
FIELD_ATTRIBUTE = "aliyun.field."
SCHEMA_ATTRIBUTE = "aliyun.schema."
SOURCE_ATTRIBUTE = "aliyun.source."
PAYLOAD_ATTRIBUTE = "aliyun.payload."
PRIMARY_KEY_ATTRIBUTE = "aliyun.primaryKey"

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"
# The image each op is read from (as Paimon reads it); an UPDATE_AFTER may carry the old row in "before" too.
_IMAGE_OF_OP = {INSERT: "after", UPDATE_BEFORE: "before", UPDATE_AFTER: "after", DELETE: "before"}
_AFTER_READ = frozenset({INSERT, UPDATE_AFTER})  # the ops whose after image is read; all but an INSERT read before
_OP_OF_CODE = {INSERT: Op.INSERT, UPDATE_BEFORE: Op.UPDATE, UPDATE_AFTER: Op.UPDATE, DELETE: Op.DELETE}
# An UPSERT is the row as it now is, a READ a row of a snapshot: both are inserts to a reader such as Paimon.
_CODE_OF_OP = {Op.INSERT: INSERT, Op.UPSERT: INSERT, Op.READ: INSERT, Op.DELETE: DELETE}

_TOP_FIELDS = ("schema", "payload")
_SCHEMA_FIELDS = ("dataColumn", "primaryKey", "source")
_PAYLOAD_FIELDS = ("before", "after", "sequenceId", "timestamp", "op")
_TABLE_FIELDS = ("dbName", "schemaName", "tableName")
# The fields of schema.source that are not the source's own (kept as attributes), with a table and without one.
_SOURCE_TABLE_FIELDS, _NOT_TABLE_FIELDS = frozenset({"dbType", *_TABLE_FIELDS}), frozenset({"dbType", "tableName"})
_TOP_SET, _SCHEMA_SET, _PAYLOAD_SET = frozenset(_TOP_FIELDS), frozenset(_SCHEMA_FIELDS), frozenset(_PAYLOAD_FIELDS)
_SCALAR_TYPE_SET = frozenset(SCALAR_TYPES)
_STR_TYPE = frozenset({str})
_TIMES = ("eventTime", "systemTime")  # in payload.timestamp; its other fields belong to the position
_TIME_PATHS = tuple(f"payload.timestamp.{field}" for field in _TIMES)
_UNKNOWN_TIME = -1
_MILLISECOND = time_units.MILLISECOND
_UNKNOWN_TIME_US = _UNKNOWN_TIME * _MILLISECOND
_MAX_MILLISECONDS = INT64_MAX // _MILLISECOND  # the latest time in milliseconds that microseconds hold in 64 bits
_SEQUENCE_ID = "sequenceId"
_BYTES_TYPE = "BYTES"

SPLIT_UPDATES = Option(
    "split_updates", "write an UPDATE with both images as an UPDATE_BEFORE and an UPDATE_AFTER message instead of "
    "one UPDATE_AFTER message that carries both", False, flag)


# DataWorks' heartbeat, the one documented op of a message that changes no row.
HEARTBEAT = "MHEARTBEAT"
SKIP_DDL = Option("skip_ddl", f"skip DataWorks' heartbeats ({HEARTBEAT}), which change no row, instead of refusing "
                              "them", False, flag)


class AliyunJsonCodec(Codec):
    name = NAME
    description = "Alibaba Cloud DataWorks change messages for Kafka, as Paimon reads them (aliyun-json)"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "table", "table.schema", "table.catalog", "key", "before", "after",
        "image.columns",
        "cell.type", "value.null", "value.bool", "value.int", "value.float", "value.str", "value.bytes",
        "value.off_type", "source.system", "source.position", "source.commit_time", "source.capture_time",
    })
    shapes = (Shape(_OP_INSERT, after=PRESENT), Shape(_OP_DELETE, before=PRESENT),
              Shape(_OP_UPDATE, before=OPTIONAL, after=PRESENT), Shape(_OP_UPDATE, before=PRESENT, after=ABSENT))
    own_attributes = frozenset({PRIMARY_KEY_ATTRIBUTE, FIELD_ATTRIBUTE, SCHEMA_ATTRIBUTE, SOURCE_ATTRIBUTE,
                                PAYLOAD_ATTRIBUTE})
    options = (SPLIT_UPDATES, SKIP_DDL, MAX_MESSAGE_BYTES)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._split_updates: bool = self.config["split_updates"]

    # -- decode ---------------------------------------------------------------------------------------------------

    def incremental_decoder(self) -> IncrementalDecoder:
        """As the default, with one message of look-ahead: an UPDATE_BEFORE waits for its UPDATE_AFTER."""
        return _UpdatePairDecoder(self)

    def decode_message(self, message: bytes) -> ChangeEvent:
        """One message on its own (an UPDATE_BEFORE is not joined with what follows it: use ``decode``)."""
        typed = self._typed_message(message)
        if typed is not None:
            return _typed_event(typed)
        return _event(_checked(load_object(NAME, message, self.config["max_message_bytes"])))

    def _typed_message(self, message: Any) -> _Message | None:
        """A message in the layout DataWorks writes, of a row change, read into typed Structs; None for any other
        (and for an UPDATE_BEFORE, which waits for its UPDATE_AFTER as a document)."""
        if type(message) is bytes and len(message) <= self.config["max_message_bytes"]:
            try:
                typed = _read_message(message)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                return None  # not in that layout: the reader of any JSON keeps what it has, or names what is off
            if typed.payload.op in _TYPED_CODES:
                return typed
        return None

    def _is_skipped(self, document: dict[str, Any]) -> bool:
        """Whether a message is one that the option skip_ddl skips: a heartbeat."""
        payload = document.get("payload")
        return self.config["skip_ddl"] and type(payload) is dict and payload.get("op") == HEARTBEAT

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_exact(self, event: ChangeEvent) -> list[bytes]:
        before, after = event.before, event.after
        return self._messages(event, None if before is None else _values(before),
                              None if after is None else _values(after), _schema(event, _data_columns(before, after)))

    def _messages(self, event: ChangeEvent, before_values: dict[str, Any] | None,
                  after_values: dict[str, Any] | None, schema: dict[str, Any]) -> list[bytes]:
        """The messages of ``event``, whose images' ``dataColumn`` objects and schema are given."""
        if event.op is _OP_UPDATE:
            if event.after is None:
                codes = [UPDATE_BEFORE]
            elif event.before is not None and self.config["split_updates"] and _has_key(event.before, event.key):
                codes = [UPDATE_BEFORE, UPDATE_AFTER]
            else:
                codes = [UPDATE_AFTER]
        else:
            codes = [_CODE_OF_OP[event.op]]
        split = len(codes) == 2
        if event.attributes:
            top_fields = kept_fields.write(NAME, event.attributes, FIELD_ATTRIBUTE, _TOP_FIELDS)
            return [encode({"schema": schema, "payload": _payload(event, code, split, before_values, after_values),
                            **top_fields}) for code in codes]
        return [encode({"schema": schema, "payload": _payload(event, code, split, before_values, after_values)})
                for code in codes]

    # -- what is lost ---------------------------------------------------------------------------------------------

    def encode_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """An INSERT, an UPDATE or a DELETE of the images its op reads, of untyped JSON scalars, each column once, an
        UPDATE's two images holding the same columns in the same order; key cells that are the row's; no attributes,
        a position of sequenceId and timestamp fields other than the times, each once, and times to the
        millisecond: written as ``encode_exact`` writes it. The path of every message written: one walk that checks
        each part as it writes it, the images by ``plain_rows.plain_object``, the rest written out, since a call per
        part costs more than the check."""
        source = event.source
        commit_time, capture_time = source.commit_time_us, source.capture_time_us
        if event.attributes or event.key_only \
                or commit_time is not None and (commit_time % _MILLISECOND or commit_time == _UNKNOWN_TIME_US) \
                or capture_time is not None and (capture_time % _MILLISECOND or capture_time == _UNKNOWN_TIME_US):
            return None
        op, before, after = event.op, event.before, event.after
        if op is _OP_INSERT and before is None and after is not None:
            row, code = after, INSERT
        elif op is _OP_DELETE and after is None and before is not None:
            row, code = before, DELETE
        elif op is _OP_UPDATE and after is not None:
            row, code = after, UPDATE_AFTER
        elif op is _OP_UPDATE and before is not None:
            row, code = before, UPDATE_BEFORE
        else:
            return None
        before_values = None if before is None else plain_object(before, AS_IS_TYPES)  # their dataColumn objects
        after_values = None if after is None else plain_object(after, AS_IS_TYPES)
        if before_values is None and before is not None or after_values is None and after is not None \
                or not key_of_row(event.key, row):
            return None
        if before_values is not None and after_values is not None and list(before_values) != list(after_values):
            return None  # the columns of an update's two images, in their order, are schema.dataColumn's
        columns = [{"name": name} for name in (after_values if row is after else before_values) or ()]
        payload: dict[str, Any] = {"before": None if before_values is None else {"dataColumn": before_values},
                                   "after": None if after_values is None else {"dataColumn": after_values}}
        timestamp: dict[str, Any] = {
            _TIMES[0]: _UNKNOWN_TIME if commit_time is None else commit_time // _MILLISECOND,
            _TIMES[1]: _UNKNOWN_TIME if capture_time is None else capture_time // _MILLISECOND}
        position = source.position
        if position:
            if position[0][0] == _SEQUENCE_ID:
                payload[_SEQUENCE_ID] = sequence_id = position[0][1]
                if type(sequence_id) not in AS_IS_TYPES:
                    return None
                position = position[1:]
            for name, value in position:
                if type(value) not in AS_IS_TYPES:  # a JSON scalar, written as it is
                    return None
                timestamp[name] = value
            # Each name once, none a time's, nor sequenceId again.
            if len(timestamp) != len(_TIMES) + len(position) or _SEQUENCE_ID in payload and _SEQUENCE_ID in timestamp:
                return None
        if code == UPDATE_AFTER and before is not None and self._split_updates and _has_key(before, event.key):
            return self._messages(event, before_values, after_values, _schema(event, columns))  # two messages
        payload["timestamp"] = timestamp
        payload["op"] = code
        return [encode({"schema": {"dataColumn": columns, "primaryKey": [cell.name for cell in event.key],
                                   "source": _source_fields(event)},
                        "payload": payload})]

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """An UPSERT or a READ is an INSERT (a snapshot row is an insert to Paimon). An INSERT or DELETE without the
        row its op is read from writes its key cells as that row (none: an empty row), and drops the image its op
        does not read. An UPDATE with neither image and a TRUNCATE have no form."""
        op = event.op
        if op is _OP_TRUNCATE:
            raise Refusal(Loss("op.TRUNCATE", "op", REFUSED, "aliyun-json has no op for a TRUNCATE"))
        if op is _OP_UPDATE:  # admitted with either image: this one has neither
            raise Refusal(Loss("op.UPDATE", "after", REFUSED, "an UPDATE is written with its old row, its new row or "
                                                              "both, and this one has neither"))
        return with_one_row(event, _OP_INSERT if op in (_OP_UPSERT, _OP_READ) else op)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """The key is read out of the row by schema.primaryKey, so the key cells the row lacks go into it; one
        schema.dataColumn types and orders the columns of both images, the after image's type first (base64 text is
        bytes in a BYTES column); the position is sequenceId first, then timestamp fields other than the times, once
        each, as JSON scalars; -1 ms means an unknown time; the attributes as decoding gives them."""
        written = super().normal_form(event)
        row_name = "before" if written.op is _OP_DELETE or written.after is None else "after"
        images = {"before": written.before, "after": written.after}
        row = images[row_name]
        assert row is not None  # the image its op is read from: reshaped() gives every change one
        images[row_name] = key_cells_outside(written.key, row) + row
        types = _columns(images["before"], images["after"])
        written_images = {name: _as_decoded(image, types) for name, image in images.items() if image is not None}
        row = written_images[row_name]
        source = written.source
        times = {field: None for field in ("commit_time_us", "capture_time_us")
                 if getattr(source, field) == _UNKNOWN_TIME_US}
        return replace(written, **written_images, key=_key_of(written.key, row),
                       source=replace(source, position=_position_as_decoded(source.position), **times),
                       attributes=_attributes_as_decoded(written, {cell.name for cell in row}))


class _UpdatePairDecoder(IncrementalDecoder):
    """An UPDATE_BEFORE and the UPDATE_AFTER that completes it (the next message, without a before image, the same
    but for the op and the images) decode together into one UPDATE; an UPDATE_BEFORE waits for the next message."""

    codec: AliyunJsonCodec

    def __init__(self, codec: AliyunJsonCodec) -> None:
        super().__init__(codec)
        self.waiting: tuple[DecodedUnit, dict[str, Any]] | None = None  # an UPDATE_BEFORE's unit and its document

    def feed(self, position: int, message: Any) -> list[DecodedUnit]:
        if self.waiting is None:  # most messages: no UPDATE_BEFORE waits for one
            typed = self.codec._typed_message(message)
            if typed is not None:
                try:
                    return [DecodedUnit(position, (message,), [_typed_event(typed)])]
                except DecodeError as error:
                    return [DecodedUnit.refused(position, message, error)]
        waiting, self.waiting = self.waiting, None
        units = [] if waiting is None else [waiting[0]]
        try:
            document = load_object(NAME, message, self.codec.config["max_message_bytes"])
            if self.codec._is_skipped(document):
                return [*units, DecodedUnit(position, (message,), [])]
            event = _event(_checked(document))
        except DecodeError as error:
            return [*units, DecodedUnit.refused(position, message, error)]
        unit = DecodedUnit(position, (message,), [event])
        code = document["payload"]["op"]
        if waiting is not None and code == UPDATE_AFTER and event.before is None:
            before, before_document = waiting
            if _completes(before_document, document):
                joined = replace(event, before=before.events[0].before)
                return [DecodedUnit(before.position, before.messages + unit.messages, [joined])]
        if code == UPDATE_BEFORE:
            self.waiting = (unit, document)
            return units
        return [*units, unit]

    def flush(self) -> list[DecodedUnit]:
        units = [] if self.waiting is None else [self.waiting[0]]
        self.waiting = None
        return units


# -- decoding helpers -------------------------------------------------------------------------------------------------

def _checked(document: dict[str, Any]) -> dict[str, Any]:
    """The document of a row change, its envelope and op checked."""
    for field in _TOP_FIELDS:
        if type(document.get(field)) is not dict:
            raise DecodeError(NAME, f"expected an object, got {json_type(document.get(field))}", field=field)
    code = document["payload"].get("op")
    if type(code) is not str or code not in _OP_OF_CODE:
        skipped = " (option skip_ddl skips heartbeats)" if code == HEARTBEAT else ""
        raise DecodeError(NAME, f"op {code!r} is not a row change; expected one of {', '.join(_OP_OF_CODE)}"
                                f"{skipped}", field="payload.op")
    return document


def _event(document: dict[str, Any]) -> ChangeEvent:
    """The event of one message; ``_checked`` has checked the envelope and the op."""
    schema, payload = document["schema"], document["payload"]
    code = payload["op"]

    def kept(source_fields: list[tuple[str, Any]]) -> list[tuple[str, str]]:
        if document.keys() <= _TOP_SET and schema.keys() <= _SCHEMA_SET and not source_fields \
                and payload.keys() <= _PAYLOAD_SET:  # most messages have no field of their own: nothing is kept
            return []
        return [*kept_fields.read(FIELD_ATTRIBUTE, document.items(), _TOP_FIELDS),
                *kept_fields.read(SCHEMA_ATTRIBUTE, schema.items(), _SCHEMA_FIELDS),
                *kept_fields.read(SOURCE_ATTRIBUTE, source_fields, ()),
                *kept_fields.read(PAYLOAD_ATTRIBUTE, payload.items(), _PAYLOAD_FIELDS)]

    types = _column_types(schema.get("dataColumn"))
    before = _row_of(payload.get("before"), "payload.before") if code != INSERT else None
    after = _row_of(payload.get("after"), "payload.after") if code in _AFTER_READ else None
    return _event_of(code, types, before, after, schema.get("primaryKey"), schema.get("source"),
                     payload.get(_SEQUENCE_ID, UNSET), payload.get("timestamp"), kept)


def _typed_event(message: _Message) -> ChangeEvent:
    """The event of a message in the layout DataWorks writes (as ``_event`` reads any)."""
    schema, payload = message.schema, message.payload
    code = payload.op
    types: dict[str, str | None] = {}
    for column in schema.dataColumn:
        types.setdefault(column.name, column.type)
    before = None if code == INSERT or payload.before is None else payload.before.dataColumn
    after = None if code == DELETE or payload.after is None else payload.after.dataColumn
    return _event_of(code, types, before, after, schema.primaryKey, schema.source, payload.sequenceId,
                     payload.timestamp, None)


def _event_of(code: str, types: dict[str, str | None], before_row: dict[str, Any] | None,
              after_row: dict[str, Any] | None, primary_key_names: Any, source_object: Any, sequence_id: Any,
              timestamp: Any, kept: Callable[[list[tuple[str, Any]]], list[tuple[str, str]]] | None) -> ChangeEvent:
    """The event of a message's parts: its op, its columns' types, the rows its op reads (each ``dataColumn``, None
    for one it does not read or a null one), ``primaryKey``, ``source``, ``sequenceId`` (``UNSET`` where it has none)
    and ``timestamp`` as parsed, and the fields it keeps, given the fields of ``source`` that are no table (None:
    those fields alone, as a message in DataWorks' layout has no other)."""
    row_name = _IMAGE_OF_OP[code]
    if (before_row if row_name == "before" else after_row) is None:
        raise DecodeError(NAME, "the row of this op is missing", field=f"payload.{row_name}")
    before = None if before_row is None else _cells(before_row, "payload.before", types)
    after = None if after_row is None else _cells(after_row, "payload.after", types)
    key, attributes = _key(primary_key_names, (before if row_name == "before" else after) or ())
    table, system, source_fields = _source(source_object)
    commit_time, capture_time, position = _position(sequence_id, timestamp)
    if kept is not None:
        attributes += kept(source_fields)
    elif source_fields:
        attributes += kept_fields.read(SOURCE_ATTRIBUTE, source_fields, ())
    try:  # the model checks the position's values: most are JSON scalars it holds as they are
        source = Source(system, position, commit_time, capture_time)
    except (TypeError, ValueError) as error:  # a value that is no JSON scalar (named), or an integer beyond 64 bits
        for field, value in (timestamp or {}).items():
            _scalar(value, f"payload.timestamp.{field}")
        raise DecodeError(NAME, str(error), field="payload") from None
    return ChangeEvent(_OP_OF_CODE[code], table, key, before, after, source, attributes=tuple(attributes))


# A JSON scalar of the model's: an integer within 64 bits.
_Scalar = str | Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)] | float | bool | None


class _Column(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    type: str | None = None


class _Schema(msgspec.Struct, forbid_unknown_fields=True):
    dataColumn: list[_Column]
    primaryKey: list[str] | None = None
    source: dict[str, str] | None = None


class _Row(msgspec.Struct, forbid_unknown_fields=True):
    dataColumn: dict[str, _Scalar]


class _Payload(msgspec.Struct, forbid_unknown_fields=True):
    op: str
    before: _Row | None = None
    after: _Row | None = None
    sequenceId: _Scalar | UnsetType = UNSET
    timestamp: dict[str, _Scalar] | None = None


class _Message(msgspec.Struct, forbid_unknown_fields=True):
    """A message of the fields DataWorks writes, of the types it writes them with, checked by msgspec as it parses
    (``_read_message``)."""

    schema: _Schema
    payload: _Payload


# Most messages are in the layout DataWorks writes, which msgspec reads into Structs faster than into dicts, checking
# their types as it goes. A message of any other shape (fields of its own, a nested value) fails this reader and is
# read as any JSON, which keeps what it has and names what is wrong, so both give the same.
_read_message = msgspec.json.Decoder(_Message).decode
_TYPED_CODES = frozenset({INSERT, UPDATE_AFTER, DELETE})  # the ops a message read typed may have: rows, alone


def _completes(update_before: dict[str, Any], update_after: dict[str, Any]) -> bool:
    """Whether an UPDATE_AFTER completes the UPDATE_BEFORE before it: the same message but for the op, the images,
    and the schema's columns that neither image holds. Those say nothing about this row, and a message written from
    the event lists only the columns it has, so a pair must not depend on them to read back as a pair."""
    names = {*update_before["payload"]["before"]["dataColumn"], *update_after["payload"]["after"]["dataColumn"]}

    def rest(document: dict[str, Any]) -> bytes:
        schema = document["schema"]
        columns = [column for column in schema["dataColumn"] if column["name"] in names]
        payload = {name: value for name, value in document["payload"].items() if name not in ("op", "before", "after")}
        return encode({**document, "schema": {**schema, "dataColumn": columns}, "payload": payload})

    return rest(update_before) == rest(update_after)


def _column_types(columns: Any) -> dict[str, str | None]:
    """``schema.dataColumn`` as column name -> type name, in schema order."""
    if type(columns) is not list:
        raise DecodeError(NAME, f"expected an array, got {json_type(columns)}", field="schema.dataColumn")
    types: dict[str, str | None] = {}
    for index, column in enumerate(columns):
        path = f"schema.dataColumn[{index}]"
        if type(column) is not dict:
            raise DecodeError(NAME, f"expected an object, got {json_type(column)}", field=path)
        name, type_name = column.get("name"), column.get("type")
        if type(name) is not str:
            raise DecodeError(NAME, f"expected the column name, got {json_type(name)}", field=f"{path}.name")
        if type_name is not None and type(type_name) is not str:
            raise DecodeError(NAME, f"expected a type name, got {json_type(type_name)}", field=f"{path}.type")
        types.setdefault(name, type_name)
    return types


def _row_of(container: Any, path: str) -> dict[str, Any] | None:
    """The ``dataColumn`` object of an image's object; None for null."""
    if container is None:
        return None
    if type(container) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(container)}", field=path)
    row = container.get("dataColumn")
    if type(row) is not dict:
        raise DecodeError(NAME, f"expected an object, got {json_type(row)}", field=f"{path}.dataColumn")
    return row


def _cells(row: dict[str, Any], path: str, types: dict[str, str | None]) -> Image:
    """The cells of an image's ``dataColumn`` object, in ``schema.dataColumn`` order, typed by it."""
    if row.keys() <= types.keys() and _BYTES_TYPE not in types.values():
        try:  # most rows: scalars, which the model holds as they are, and checks
            return tuple([Cell(name, row[name], type_name) for name, type_name in types.items() if name in row])
        except (TypeError, ValueError):  # a nested value, or an integer beyond 64 bits: named below
            pass
    if not row.keys() <= types.keys():
        for name in row:
            if name not in types:
                raise DecodeError(NAME, "the column is not in schema.dataColumn", field=f"{path}.dataColumn.{name}")
    cells = []
    for name, type_name in types.items():
        if name not in row:
            continue
        value = row[name]
        if type_name is None and (type(value) is str or value is None):  # most values: their cell, as they are
            cells.append(Cell(name, value))
            continue
        value_path = f"{path}.dataColumn.{name}"
        if type(value) not in SCALAR_TYPES:
            raise DecodeError(NAME, f"expected a scalar value, got {json_type(value)}", field=value_path)
        if type_name == _BYTES_TYPE and type(value) is str:
            data = _bytes_of(value)
            value = value if data is None else data
        try:
            cells.append(Cell(name, value, type_name))
        except ValueError as error:  # an integer beyond 64 bits
            raise DecodeError(NAME, str(error), field=value_path) from None
    return tuple(cells)


def _bytes_of(text: str) -> bytes | None:
    """The bytes of base64 text written exactly as ``encode`` writes bytes, else None."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):  # ValueError: text that is not ASCII
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def _key(primary_key: Any, image: Image) -> tuple[Image, list[tuple[str, str]]]:
    """The key cells of ``image`` in ``schema.primaryKey`` order, and the attribute ``aliyun.primaryKey`` that keeps
    the list where it names a column the image lacks (none otherwise)."""
    if primary_key is None:
        return (), []
    if type(primary_key) is not list or not _STR_TYPE.issuperset(map(type, primary_key)):
        raise DecodeError(NAME, "expected an array of column names", field="schema.primaryKey")
    key = key_cells(primary_key, image)
    if len(key) == len(primary_key):
        return key, []
    return key, [(PRIMARY_KEY_ATTRIBUTE, encode(primary_key).decode())]


def _source(source: Any) -> tuple[Table | None, str | None, list[tuple[str, Any]]]:
    """The table, the system and the other fields of ``schema.source``."""
    if source is None:
        return None, None, []
    if type(source) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(source)}", field="schema.source")
    system = source.get("dbType")
    if system is not None and type(system) is not str:
        raise DecodeError(NAME, f"expected a string, got {json_type(system)}", field="schema.source.dbType")
    name = source.get("tableName")
    if name is None:
        return None, system, [(field, value) for field, value in source.items() if field not in _NOT_TABLE_FIELDS]
    db, schema = source.get("dbName"), source.get("schemaName")
    if type(name) is not str or db is not None and type(db) is not str \
            or schema is not None and type(schema) is not str:
        for field in _TABLE_FIELDS:
            if source.get(field) is not None and type(source[field]) is not str:
                raise DecodeError(NAME, f"expected a string, got {json_type(source[field])}",
                                  field=f"schema.source.{field}")
    table = Table(name, schema, db) if "schemaName" in source else Table(name, db)
    if source.keys() <= _SOURCE_TABLE_FIELDS:  # most sources: no field of their own
        return table, system, []
    return table, system, [(field, value) for field, value in source.items() if field not in _SOURCE_TABLE_FIELDS]


def _position(sequence_id: Any, timestamp: Any) -> tuple[int | None, int | None, Entries]:
    """Commit and capture times, and the position: ``sequenceId`` (``UNSET`` where the payload has none), then the
    other fields of ``timestamp``, whose values the model checks as it takes them (``_event_of``)."""
    if sequence_id is UNSET:
        first: Entries = ()
    elif type(sequence_id) in _SCALAR_TYPE_SET:  # most: told without a call (nor the path it is named by)
        first = ((_SEQUENCE_ID, sequence_id),)
    else:  # refused, named
        first = ((_SEQUENCE_ID, _scalar(sequence_id, f"payload.{_SEQUENCE_ID}")),)
    if timestamp is None:
        return None, None, first
    if type(timestamp) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(timestamp)}", field="payload.timestamp")
    commit_time, capture_time = timestamp.get(_TIMES[0]), timestamp.get(_TIMES[1])
    # Most times: milliseconds as _time reads them, without a call.
    if type(commit_time) is int and 0 <= commit_time <= _MAX_MILLISECONDS:
        commit_time *= _MILLISECOND
    else:
        commit_time = _time(commit_time, _TIME_PATHS[0])
    if type(capture_time) is int and 0 <= capture_time <= _MAX_MILLISECONDS:
        capture_time *= _MILLISECOND
    else:
        capture_time = _time(capture_time, _TIME_PATHS[1])
    entries = tuple(timestamp.items())
    if len(entries) > 1 and entries[0][0] == _TIMES[0] and entries[1][0] == _TIMES[1]:  # the times first, as
        return commit_time, capture_time, first + entries[2:]  # DataWorks writes them: the rest without a walk
    return commit_time, capture_time, first + tuple([entry for entry in entries if entry[0] not in _TIMES])


def _time(milliseconds: Any, path: str) -> int | None:
    if milliseconds is None or (type(milliseconds) is int and milliseconds == _UNKNOWN_TIME):
        return None
    if type(milliseconds) is int and INT64_MIN <= milliseconds * 1000 <= INT64_MAX:  # to_microseconds, without a call
        return milliseconds * 1000
    microseconds = time_units.to_microseconds(milliseconds, time_units.MILLISECOND)
    if microseconds is None:
        raise DecodeError(NAME, f"expected a millisecond timestamp, got {milliseconds!r}", field=path)
    return microseconds


def _scalar(value: Any, path: str) -> Value:
    if type(value) not in SCALAR_TYPES:
        raise DecodeError(NAME, f"expected a scalar value, got {json_type(value)}", field=path)
    return value


# -- encoding helpers -------------------------------------------------------------------------------------------------

def _schema(event: ChangeEvent, columns: list[dict[str, str]]) -> dict[str, Any]:
    """The message's schema, whose ``dataColumn`` is given."""
    key_names = [cell.name for cell in event.key]
    if not event.attributes:  # most events: nothing kept to write
        return {"dataColumn": columns, "primaryKey": key_names, "source": _source_fields(event)}
    row = event.before if event.op is _OP_DELETE or event.after is None else event.after
    primary_key = _primary_key_kept(event.attribute(PRIMARY_KEY_ATTRIBUTE), key_names,
                                    {cell.name for cell in row or ()})
    return {"dataColumn": columns, "primaryKey": key_names if primary_key is None else primary_key,
            "source": _source_fields(event),
            **kept_fields.write(NAME, event.attributes, SCHEMA_ATTRIBUTE, _SCHEMA_FIELDS)}


def _data_columns(before: Image | None, after: Image | None) -> list[dict[str, str]]:
    """``schema.dataColumn`` as written: each column's name, and its type where it has one (``_columns``)."""
    return [{"name": name} if type_name is None else {"name": name, "type": type_name}
            for name, type_name in _columns(before, after).items()]


def _columns(before: Image | None, after: Image | None) -> dict[str, str | None]:
    """``schema.dataColumn``, column name -> type, for both images: in an order that reads each image back in its
    own order where the two images order the columns they share alike (``_merged``), else ``before``'s columns, then
    the ones only ``after`` has; the after image's type wins where they differ."""
    types: dict[str, str | None] = {}
    if before is not None and after is not None:
        types = dict.fromkeys(_merged([cell.name for cell in before], [cell.name for cell in after]))
    for image in (before, after):
        if image is not None:
            for cell in image:
                types[cell.name] = cell.type
    return types


def _merged(before: list[str], after: list[str]) -> list[str]:
    """The columns of both images in one order that has each image's in its own (a new row's column added in its
    place, as a message whose one ``schema.dataColumn`` orders both images holds it); ``before``'s, then those only
    ``after`` has, where the images order the columns they share otherwise."""
    before, after = list(dict.fromkeys(before)), list(dict.fromkeys(after))  # a column's first cell is the one kept
    in_before, in_after = set(before), set(after)
    merged: list[str] = []
    at_before = at_after = 0
    while at_before < len(before) or at_after < len(after):
        if at_before < len(before) and before[at_before] not in in_after:
            merged.append(before[at_before])
            at_before += 1
        elif at_after < len(after) and after[at_after] not in in_before:
            merged.append(after[at_after])
            at_after += 1
        elif at_before < len(before) and at_after < len(after) and before[at_before] == after[at_after]:
            merged.append(before[at_before])
            at_before += 1
            at_after += 1
        else:  # a column both have comes in another place in each
            return [*before, *(name for name in after if name not in in_before)]
    return merged


def _source_fields(event: ChangeEvent) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if event.source.system is not None:
        fields["dbType"] = event.source.system
    table = event.table
    if table is not None:
        if table.catalog is not None:
            fields["dbName"], fields["schemaName"] = table.catalog, table.schema
        elif table.schema is not None:
            fields["dbName"] = table.schema
        fields["tableName"] = table.name
    if event.attributes:
        fields.update(kept_fields.write(NAME, event.attributes, SOURCE_ATTRIBUTE,
                                        _reserved_source_fields(event.table)))
    return fields


def _reserved_source_fields(table: Table | None) -> tuple[str, ...]:
    """The fields of ``schema.source`` that decoding reads as something other than a kept field."""
    return ("dbType", *_TABLE_FIELDS) if table is not None else ("dbType", "tableName")


def _payload(event: ChangeEvent, code: str, split: bool, before_values: dict[str, Any] | None,
             after_values: dict[str, Any] | None) -> dict[str, Any]:
    """The payload of the message of ``code`` for ``event``, whose images' ``dataColumn`` objects are given."""
    payload: dict[str, Any] = {"before": None, "after": None}
    image_names = ("before", "after") if code == UPDATE_AFTER and not split else (_IMAGE_OF_OP[code],)
    for image_name in image_names:
        values = before_values if image_name == "before" else after_values
        if values is not None:
            payload[image_name] = {"dataColumn": values}
    source = event.source
    position = source.position
    if position and position[0][0] == _SEQUENCE_ID:
        payload[_SEQUENCE_ID] = position[0][1]
        position = position[1:]
    timestamp: dict[str, Value] = {_TIMES[0]: _milliseconds(source.commit_time_us),
                                   _TIMES[1]: _milliseconds(source.capture_time_us)}
    if position:
        timestamp.update(position)
    payload["timestamp"] = timestamp
    payload["op"] = code
    if event.attributes:
        payload.update(kept_fields.write(NAME, event.attributes, PAYLOAD_ATTRIBUTE, _PAYLOAD_FIELDS))
    return payload


def _values(image: Image) -> dict[str, Any]:
    """A row's ``dataColumn``: each column's JSON value (a JSON scalar, most of a row, as it is, without a call)."""
    return {cell.name: value if type(value := cell.value) in AS_IS_TYPES else json_form(value)
            for cell in image}


def _milliseconds(microseconds: int | None) -> int:
    return _UNKNOWN_TIME if microseconds is None else time_units.in_unit(microseconds, time_units.MILLISECOND)


def _primary_key_kept(value: Value, key_names: list[str], row_names: set[str]) -> list[str] | None:
    """The ``schema.primaryKey`` that an ``aliyun.primaryKey`` of ``value`` keeps for a key of ``key_names`` read out
    of a row of ``row_names``: JSON text of a list of column names that reads back as that key and names a column
    the row lacks; None where it is not one."""
    if type(value) is not str:
        return None
    try:
        listed = msgspec.json.decode(value)
    except msgspec.DecodeError:
        return None
    if type(listed) is not list or not all(type(name) is str for name in listed):
        return None
    in_row = [name for name in listed if name in row_names]
    return listed if in_row == key_names and len(in_row) < len(listed) else None


def _has_key(image: Image, key: Image) -> bool:
    names = {cell.name for cell in image}
    return all(cell.name in names for cell in key)


# -- what a round trip keeps ------------------------------------------------------------------------------------------

def _as_decoded(image: Image, types: dict[str, str | None]) -> Image:
    """An image as decoding reads it back: in ``schema.dataColumn`` order, each cell typed by it, and its value
    base64 text in a ``BYTES`` column read as bytes, bytes elsewhere read as their base64 text."""
    by_name = {cell.name: cell for cell in image}
    cells = []
    for name, type_name in types.items():
        if name in by_name:
            value = json_form(by_name[name].value)
            if type_name == _BYTES_TYPE and type(value) is str:
                data = _bytes_of(value)
                value = value if data is None else data
            cells.append(Cell(name, value, type_name))
    return tuple(cells)


def _key_of(key: Image, row: Image) -> Image:
    """The key that decoding gives back: the cells of the row its op is read from, by the key's names."""
    by_name = {cell.name: cell for cell in row}
    return tuple(by_name[cell.name] for cell in key)


def _position_as_decoded(position: Entries) -> Entries:
    """``sequenceId`` when it comes first, then the first of each timestamp field other than the times, as JSON
    scalars."""
    entries = list(position)
    first = [(_SEQUENCE_ID, json_form(entries.pop(0)[1]))] if entries and entries[0][0] == _SEQUENCE_ID else []
    fields: dict[str, Any] = {}
    for name, value in entries:
        if name not in _TIMES:
            fields.setdefault(name, json_form(value))
    return (*first, *fields.items())


def _attributes_as_decoded(event: ChangeEvent, row_names: set[str]) -> Entries:
    """The attributes a message keeps: ``aliyun.primaryKey`` where it is ``schema.primaryKey`` for the key read out of
    the row (of ``row_names``, as written), as JSON text; then as fields ``aliyun.field.*``, ``.schema.*``,
    ``.source.*``, ``.payload.*``, each once, as JSON text, not naming a field of the format; decoded in that
    order."""
    groups = ((FIELD_ATTRIBUTE, _TOP_FIELDS), (SCHEMA_ATTRIBUTE, _SCHEMA_FIELDS),
              (SOURCE_ATTRIBUTE, _reserved_source_fields(event.table)), (PAYLOAD_ATTRIBUTE, _PAYLOAD_FIELDS))
    key_names = [cell.name for cell in event.key]

    def group_of(name: str, value: Value) -> tuple[int, Value] | None:
        if name == PRIMARY_KEY_ATTRIBUTE:
            primary_key = _primary_key_kept(value, key_names, row_names)
            return None if primary_key is None else (0, encode(primary_key).decode())
        for group, (prefix, reserved) in enumerate(groups, 1):
            if kept_fields.is_kept_field(name, value, prefix, reserved):
                return group, value
        return None

    return kept_fields.as_decoded(event.attributes, group_of)
