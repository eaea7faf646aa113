"""How near the by-hand codec of the canonical model does each format's codec come, decoding and encoding?

For every registered format this script holds a by-hand codec of the canonical model: a decoder that builds each
message's ``ChangeEvent`` and an encoder that builds and writes each event's document, in exactly the shape the
format's codec reads and writes for the sample stream, with the library the codec writes with (msgspec for JSON,
fastavro for Avro, the generated classes for Protobuf), and nothing else: no checks, no ``dropped()``, no options.
That is the least any codec of the model must do, so a codec's time over its by-hand codec's is what its checks and
its loss rules cost. ``floor`` is a bare parse (or write) of the same messages, the least any reader (or writer)
must do at all, which the model's own share sits on.

The sample stream is Arcion's changes of ``tpch.region`` (snapshot rows, then inserts, updates with both images and
deletes, with a binlog cursor), converted by each codec into its format; each side then decodes the messages the
codec wrote, and encodes the events the codec decoded from them (events the format holds whole, so that no side has
anything to drop). ``tests/unit/test_model_floor.py`` checks that each by-hand codec does the same job as the codec.

The bounds (issue 30): decode at most 1.3 x the by-hand codec, encode at most 1.5 x; a ratio over its bound ends in
``!``. Times are microseconds per canonical event (per event the codec decodes from its messages: Tablestore's rows
of one key group into fewer records than the changes written), the median of 5 runs with the garbage collector off.

    .venv/bin/python benchmarks/model_floor.py [--messages 20000] [--formats debezium-json,ots]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import msgspec
from codec_throughput import timed

import cdcformats as cf
from cdcformats import samples
from cdcformats.contract import KafkaRecord
from cdcformats.envelopes.avro import event_from_record, record_from_event
from cdcformats.envelopes.protobuf import event_from_proto, proto_from_event
from cdcformats.model import Cell, CellKind, ChangeEvent, Op, Source, Table
from cdcformats.schemas import avro_schema
from cdcformats.schemas import change_event_pb2 as pb

DECODE_BOUND = 1.3
ENCODE_BOUND = 1.5
RUNS = 5
KEY = "r_regionkey"  # the primary key of tpch.region, for the formats that must be told it

_parse = msgspec.json.Decoder().decode
_write = msgspec.json.encode
_NO_SOURCE = Source()

Message = Any
Document = Any


@dataclass(frozen=True)
class ByHand:
    """One format's by-hand codec of the canonical model, and the bare parse and write that are its floor."""

    decode: Callable[[list[Message]], list[ChangeEvent]]
    encode: Callable[[list[ChangeEvent]], list[Message]]
    parse: Callable[[Message], Document]
    write: Callable[[Document], Message]


def _cells(row: dict[str, Any] | None) -> tuple[Cell, ...] | None:
    return None if row is None else tuple(Cell(name, value) for name, value in row.items())


def _row(cells: tuple[Cell, ...] | None) -> dict[str, Any] | None:
    return None if cells is None else {cell.name: cell.value for cell in cells}


def _key_cells(row: dict[str, Any], names: list[str]) -> tuple[Cell, ...]:
    return tuple(Cell(name, row[name]) for name in names)


def _millis(event: ChangeEvent) -> int | None:
    commit = event.source.commit_time_us
    return None if commit is None else commit // 1000


def _source_of(position: tuple[tuple[str, Any], ...], commit_ms: int | None) -> Source:
    return Source(None, position, None if commit_ms is None else commit_ms * 1000)


def _json_parts(record: KafkaRecord) -> tuple[Any, Any]:
    return (None if record.key is None else _parse(record.key), None if record.value is None else _parse(record.value))


def _json_record(parts: tuple[Any, Any]) -> KafkaRecord:
    return KafkaRecord(None if parts[0] is None else _write(parts[0]), None if parts[1] is None else _write(parts[1]))


def _each(decode_one: Callable[[Message], ChangeEvent]) -> Callable[[list[Message]], list[ChangeEvent]]:
    return lambda messages: [decode_one(message) for message in messages]


def _each_written(encode_one: Callable[[ChangeEvent], Message]) -> Callable[[list[ChangeEvent]], list[Message]]:
    return lambda events: [encode_one(event) for event in events]


# -- debezium-json and paimon-log: Debezium's envelope without schemas ------------------------------------------------

_DEBEZIUM_OPS = {"c": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE, "r": Op.READ}
_DEBEZIUM_CODES = {op: code for code, op in _DEBEZIUM_OPS.items()}
_DEBEZIUM_NAMING = ("ts_ms", "db", "schema", "table")


def _debezium_event(document: dict[str, Any], key: tuple[Cell, ...]) -> ChangeEvent:
    source = document.get("source")
    if source is None:
        table, event_source = None, _NO_SOURCE
    else:
        name, schema, db = source.get("table"), source.get("schema"), source.get("db")
        table = None if name is None else Table(name, db) if schema is None else Table(name, schema, db)
        position = tuple((field, value) for field, value in source.items() if field not in _DEBEZIUM_NAMING)
        event_source = _source_of(position, source.get("ts_ms"))
    return ChangeEvent(_DEBEZIUM_OPS[document["op"]], table, key, _cells(document["before"]),
                       _cells(document["after"]), event_source)


def _debezium_document(event: ChangeEvent) -> dict[str, Any]:
    document: dict[str, Any] = {"before": _row(event.before), "after": _row(event.after)}
    table, source = event.table, event.source
    if table is not None or source.position or source.commit_time_us is not None:
        written: dict[str, Any] = {"ts_ms": _millis(event)}
        if table is not None:
            written.update(db=table.schema, table=table.name)
        written.update(source.position)
        document["source"] = written
    document["op"] = _DEBEZIUM_CODES[event.op]
    return document


DEBEZIUM_JSON = ByHand(
    decode=_each(lambda message: _debezium_event(_parse(message), ())),
    encode=_each_written(lambda event: _write(_debezium_document(event))),
    parse=_parse, write=_write)


def _paimon_event(record: KafkaRecord) -> ChangeEvent:
    return _debezium_event(_parse(record.value), _cells(_parse(record.key)) or ())


PAIMON_LOG = ByHand(
    decode=_each(_paimon_event),
    encode=_each_written(lambda event: KafkaRecord(_write(_row(event.key)), _write(_debezium_document(event)))),
    parse=_json_parts, write=_json_record)


# -- lindorm-subscription: Debezium's envelope with a Kafka Connect schema, in a payload ------------------------------

_CONNECT_TYPES = {str: "string", int: "int64", type(None): "string"}
_SUBSCRIPTION_NAMING = ("db", "namespace", "table", "ts_ms")


def _connect_fields(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": _CONNECT_TYPES[type(value)], "optional": value is None, "field": name}
            for name, value in row.items()]


def _subscription_event(message: bytes) -> ChangeEvent:
    payload = _parse(message)["payload"]
    source = payload["source"]
    before, after = _cells(payload["before"]), _cells(payload["after"])
    row = payload["after"] if payload["after"] is not None else payload["before"]
    name = source.get("table")
    table = None if name is None else Table(name, source.get("namespace"), source.get("db"))
    position = tuple((field, value) for field, value in source.items() if field not in _SUBSCRIPTION_NAMING)
    return ChangeEvent(_DEBEZIUM_OPS[payload["op"]], table, (Cell(KEY, row[KEY]),), before, after,
                       _source_of(position, source.get("ts_ms")))


def _subscription_message(event: ChangeEvent) -> bytes:
    before, after = _row(event.before), _row(event.after)
    source = dict(event.source.position)
    table = event.table
    if table is not None:
        source.update(db=table.catalog, namespace=table.schema, table=table.name, ts_ms=_millis(event))
    image_fields = _connect_fields(after if after is not None else before)
    schema = {"type": "struct", "fields": [
        {"type": "string", "optional": False, "field": "op"},
        {"type": "struct", "fields": image_fields, "optional": True, "field": "before"},
        {"type": "struct", "fields": image_fields, "optional": True, "field": "after"},
        {"type": "struct", "fields": _connect_fields(source), "optional": False, "field": "source"}],
        "optional": False}
    return _write({"payload": {"op": _DEBEZIUM_CODES[event.op], "before": before, "after": after, "source": source},
                   "schema": schema})


LINDORM_SUBSCRIPTION = ByHand(decode=_each(_subscription_event), encode=_each_written(_subscription_message),
                              parse=_parse, write=_write)


# -- connect-json: Kafka Connect's JsonConverter, key and value each a schema and a payload --------------------------

def _connect_event(record: KafkaRecord) -> ChangeEvent:
    key = _cells(_parse(record.key)["payload"]) or ()
    if record.value is None:
        return ChangeEvent(Op.DELETE, None, key)
    return ChangeEvent(Op.UPSERT, None, key, None, _cells(_parse(record.value)["payload"]))


def _connect_part(row: dict[str, Any]) -> bytes:
    return _write({"schema": {"type": "struct", "fields": _connect_fields(row), "optional": False}, "payload": row})


def _connect_record(event: ChangeEvent) -> KafkaRecord:
    after = _row(event.after)
    return KafkaRecord(_connect_part(_row(event.key)), None if after is None else _connect_part(after))


CONNECT_JSON = ByHand(decode=_each(_connect_event), encode=_each_written(_connect_record),
                      parse=_json_parts, write=_json_record)


# -- aliyun-json: Aliyun DTS's JSON ----------------------------------------------------------------------------------

_ALIYUN_OPS = {"INSERT": Op.INSERT, "UPDATE_AFTER": Op.UPDATE, "DELETE": Op.DELETE}
_ALIYUN_CODES = {Op.INSERT: "INSERT", Op.READ: "INSERT", Op.UPDATE: "UPDATE_AFTER", Op.DELETE: "DELETE"}
_ALIYUN_TIMES = ("eventTime", "systemTime")


def _aliyun_event(message: bytes) -> ChangeEvent:
    document = _parse(message)
    schema, payload = document["schema"], document["payload"]
    before, after = payload["before"], payload["after"]
    before_row = None if before is None else before["dataColumn"]
    after_row = None if after is None else after["dataColumn"]
    names = schema["source"]
    table = Table(names["tableName"], names["dbName"]) if "tableName" in names else None
    times = payload["timestamp"]
    position = tuple((field, value) for field, value in times.items() if field not in _ALIYUN_TIMES)
    commit = times["eventTime"]
    return ChangeEvent(_ALIYUN_OPS[payload["op"]], table,
                       _key_cells(after_row if after_row is not None else before_row, schema["primaryKey"]),
                       _cells(before_row), _cells(after_row), _source_of(position, None if commit == -1 else commit))


def _aliyun_message(event: ChangeEvent) -> bytes:
    before, after = _row(event.before), _row(event.after)
    table = event.table
    commit = _millis(event)
    columns = after if after is not None else before
    return _write({
        "schema": {"dataColumn": [{"name": name} for name in columns],
                   "primaryKey": [cell.name for cell in event.key],
                   "source": {} if table is None else {"dbName": table.schema, "tableName": table.name}},
        "payload": {"before": None if before is None else {"dataColumn": before},
                    "after": None if after is None else {"dataColumn": after},
                    "timestamp": {"eventTime": -1 if commit is None else commit, "systemTime": -1,
                                  **dict(event.source.position)},
                    "op": _ALIYUN_CODES[event.op]}})


ALIYUN_JSON = ByHand(decode=_each(_aliyun_event), encode=_each_written(_aliyun_message), parse=_parse, write=_write)


# -- arcion: Arcion's realtime messages, and its snapshot rows --------------------------------------------------------

_ARCION_OPS = {"I": Op.INSERT, "U": Op.UPDATE, "D": Op.DELETE}
_ARCION_CODES = {op: code for code, op in _ARCION_OPS.items()}


def _arcion_event(message: bytes) -> ChangeEvent:
    document = _parse(message)
    if "tableName" not in document:  # a snapshot row
        return ChangeEvent(Op.READ, None, _key_cells(document, [KEY]), None, _cells(document))
    name = document["tableName"]
    namespace = name["namespace"]
    before, after = document["before"], document["after"]
    cursor = document["cursor"]
    return ChangeEvent(_ARCION_OPS[document["opType"]], Table(name["name"], namespace["schema"], namespace["catalog"]),
                       _key_cells(after if after is not None else before, [KEY]), _cells(before), _cells(after),
                       _source_of(tuple(cursor.items()), cursor["timestamp"]),
                       attributes=(("arcion.namespace_hash", namespace["hash"]), ("arcion.table_hash", name["hash"])))


def _arcion_message(event: ChangeEvent) -> bytes:
    table = event.table
    if table is None:
        return _write(_row(event.after))
    attributes = dict(event.attributes)
    return _write({"tableName": {"namespace": {"catalog": table.catalog, "schema": table.schema,
                                               "hash": attributes["arcion.namespace_hash"]},
                                 "name": table.name, "hash": attributes["arcion.table_hash"]},
                   "opType": _ARCION_CODES[event.op], "cursor": dict(event.source.position),
                   "before": _row(event.before), "after": _row(event.after)})


ARCION = ByHand(decode=_each(_arcion_event), encode=_each_written(_arcion_message), parse=_parse, write=_write)


# -- canal-json and maxwell-json: MySQL binlog JSON with the changed columns' old values ------------------------------

def _before_of(after: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    return {**after, **old}


def _changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in before.items() if after.get(name) != value}


_CANAL_OPS = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE}
_CANAL_CODES = {Op.INSERT: "INSERT", Op.READ: "INSERT", Op.UPDATE: "UPDATE", Op.DELETE: "DELETE"}


def _canal_event(message: bytes) -> ChangeEvent:
    document = _parse(message)
    op = _CANAL_OPS[document["type"]]
    row = document["data"][0]
    before = row if op is Op.DELETE else None if op is Op.INSERT else _before_of(row, document["old"][0])
    name = document["table"]
    return ChangeEvent(op, None if name is None else Table(name, document["database"]),
                       _key_cells(row, document["pkNames"]), _cells(before), None if op is Op.DELETE else _cells(row),
                       _source_of((), document["es"]))


def _canal_message(event: ChangeEvent) -> bytes:
    before, after = _row(event.before), _row(event.after)
    table = event.table
    return _write({"data": [after if after is not None else before],
                   "database": None if table is None else table.schema, "es": _millis(event), "isDdl": False,
                   "mysqlType": None,
                   "old": [_changed(before, after)] if before is not None and after is not None else None,
                   "pkNames": [cell.name for cell in event.key], "sql": "", "sqlType": None,
                   "table": None if table is None else table.name, "ts": None, "type": _CANAL_CODES[event.op]})


CANAL_JSON = ByHand(decode=_each(_canal_event), encode=_each_written(_canal_message), parse=_parse, write=_write)

_MAXWELL_OPS = {"insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE, "bootstrap-insert": Op.READ}
_MAXWELL_CODES = {op: code for code, op in _MAXWELL_OPS.items()}


def _maxwell_event(message: bytes) -> ChangeEvent:
    document = _parse(message)
    op = _MAXWELL_OPS[document["type"]]
    row = document["data"]
    before = row if op is Op.DELETE else _before_of(row, document["old"]) if op is Op.UPDATE else None
    name = document.get("table")
    key = tuple(Cell(column, value) for column, value in zip(document["primary_key_columns"], document["primary_key"]))
    seconds = document.get("ts")
    source = _NO_SOURCE if seconds is None else Source(None, (("position", document["position"]),), seconds * 1_000_000)
    return ChangeEvent(op, None if name is None else Table(name, document["database"]), key, _cells(before),
                       None if op is Op.DELETE else _cells(row), source)


def _maxwell_message(event: ChangeEvent) -> bytes:
    before, after = _row(event.before), _row(event.after)
    document: dict[str, Any] = {}
    table = event.table
    if table is not None:
        document.update(database=table.schema, table=table.name, type=_MAXWELL_CODES[event.op],
                        ts=event.source.commit_time_us // 1_000_000, **dict(event.source.position))
    else:
        document["type"] = _MAXWELL_CODES[event.op]
    document.update(primary_key=[cell.value for cell in event.key],
                    primary_key_columns=[cell.name for cell in event.key],
                    data=after if after is not None else before)
    if before is not None and after is not None:
        document["old"] = _changed(before, after)
    return _write(document)


MAXWELL_JSON = ByHand(decode=_each(_maxwell_event), encode=_each_written(_maxwell_message), parse=_parse,
                      write=_write)


# -- lindorm: Lindorm's change messages -------------------------------------------------------------------------------

def _lindorm_event(message: bytes) -> ChangeEvent:
    document = _parse(message)
    cells = tuple(Cell(entry["name"], entry["value"]) for entry in document["data"])
    key = tuple(cell for cell in cells if cell.name == KEY)
    name, ts = document.get("table"), document.get("ts")
    table = None if name is None else Table(name)
    source = _NO_SOURCE if ts is None else Source(None, (), int(ts) * 1000)
    if document["op"] == "Put":
        return ChangeEvent(Op.UPSERT, table, key, None, cells, source)
    return ChangeEvent(Op.DELETE, table, key, cells, None, source)


def _lindorm_message(event: ChangeEvent) -> bytes:
    document: dict[str, Any] = {"op": "Put" if event.op is Op.UPSERT else "DeleteFamily"}
    if event.table is not None:
        document["table"] = event.table.name
    commit = _millis(event)
    if commit is not None:
        document["ts"] = str(commit)
    document["keyOnly"] = "false"
    cells = event.after if event.after is not None else event.before
    document["data"] = [{"name": cell.name, "value": cell.value} for cell in cells]
    return _write(document)


LINDORM = ByHand(decode=_each(_lindorm_event), encode=_each_written(_lindorm_message), parse=_parse, write=_write)


# -- ots and ots-json: Tablestore stream rows (key, column, version, value, op), one record over several rows -----

_OTS_KINDS = {"U": CellKind.PUT, "DO": CellKind.DELETE_VERSION, "DA": CellKind.DELETE_ALL_VERSIONS}
_OTS_CODES = {kind: code for code, kind in _OTS_KINDS.items()}


def _ots_events(rows: list[Any]) -> list[ChangeEvent]:
    """A DR row starts a record; the rows of the same key that follow belong to it."""
    events: list[ChangeEvent] = []
    key: Any = None
    started_by_delete = False
    cells: list[Cell] = []

    def close() -> None:
        key_cells = (Cell(KEY, key),)
        if not started_by_delete:
            events.append(ChangeEvent(Op.UPDATE, None, key_cells, None, tuple(cells)))
        elif cells:
            events.append(ChangeEvent(Op.UPSERT, None, key_cells, None, tuple(cells)))
        else:
            events.append(ChangeEvent(Op.DELETE, None, key_cells))

    for row_key, column, version, value, code in rows:
        if code == "DR" or row_key != key:
            if key is not None:
                close()
            key, started_by_delete, cells = row_key, code == "DR", []
        if code != "DR":
            cells.append(Cell(column, value, None, version, _OTS_KINDS[code]))
    if key is not None:
        close()
    return events


def _ots_rows(events: list[ChangeEvent]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for event in events:
        key = event.key[0].value
        if event.op is not Op.UPDATE:
            rows.append((key, None, None, None, "DR"))
        for cell in event.after or ():
            rows.append((key, cell.name, cell.version, cell.value, _OTS_CODES[cell.kind]))
    return rows


OTS = ByHand(decode=_ots_events, encode=_ots_rows, parse=tuple, write=tuple)
OTS_JSON = ByHand(decode=lambda messages: _ots_events([_parse(message) for message in messages]),
                  encode=lambda events: [_write(row) for row in _ots_rows(events)], parse=_parse, write=_write)


# -- avro and protobuf: the canonical envelopes, through fastavro and the generated classes --------------------------
# The record or message of an event, and the event of one, are each envelope's reference mapping (what its own
# faster body reader and writer are checked against): building, with no check but the model's.

_CANONICAL_AVRO = fastavro.parse_schema(avro_schema())


def _avro_read(message: bytes) -> Any:
    return fastavro.schemaless_reader(io.BytesIO(message), _CANONICAL_AVRO, None)


def _avro_write(record: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _CANONICAL_AVRO, record)
    return out.getvalue()


AVRO = ByHand(decode=_each(lambda message: event_from_record(_avro_read(message))),
              encode=_each_written(lambda event: _avro_write(record_from_event(event))),
              parse=_avro_read, write=_avro_write)

PROTOBUF = ByHand(decode=_each(lambda message: event_from_proto(pb.ChangeEvent.FromString(message))),
                  encode=_each_written(lambda event: proto_from_event(event).SerializeToString()),
                  parse=pb.ChangeEvent.FromString, write=lambda proto: proto.SerializeToString())


# -- debezium-avro: Debezium's envelope in Confluent's wire format, one registered schema per table -------------------

_DEBEZIUM_AVRO_NAMING = ("connector", "ts_ms", "ts_us", "db", "schema", "table")


class DebeziumAvroByHand:
    """The writer schemas come from the registry by id, once each, as a Confluent deserializer caches them; the
    encoder writes each table with the ids the registry gave its key and value schemas (looked up once per table, as
    a producer with a fixed schema holds them)."""

    def __init__(self, registry: Any, written: list[tuple[ChangeEvent, KafkaRecord]]) -> None:
        self.registry = registry
        self.schemas: dict[int, Any] = {}
        self.ids_of_table: dict[Table | None, tuple[int, int]] = {}
        for event, record in written:
            self.ids_of_table.setdefault(event.table, (self._id(record.key), self._id(record.value)))

    def _id(self, framed: bytes) -> int:
        schema_id = int.from_bytes(framed[1:5], "big")
        if schema_id not in self.schemas:
            self.schemas[schema_id] = fastavro.parse_schema(json.loads(self.registry.get_schema(schema_id).schema_str))
        return schema_id

    def _read(self, framed: bytes) -> Any:
        return fastavro.schemaless_reader(io.BytesIO(framed[5:]), self.schemas[self._id(framed)], None)

    def _framed(self, schema_id: int, record: dict[str, Any]) -> bytes:
        out = io.BytesIO()
        out.write(b"\0" + schema_id.to_bytes(4, "big"))
        fastavro.schemaless_writer(out, self.schemas[schema_id], record)
        return out.getvalue()

    def parse(self, record: KafkaRecord) -> tuple[int, Any, int, Any]:
        """Each part's schema id and record: what the floor reads and writes back."""
        key_id, value_id = self._id(record.key), self._id(record.value)
        return key_id, self._read(record.key), value_id, self._read(record.value)

    def write(self, parts: tuple[int, Any, int, Any]) -> KafkaRecord:
        key_id, key, value_id, value = parts
        return KafkaRecord(self._framed(key_id, key), self._framed(value_id, value))

    def decode(self, messages: list[KafkaRecord]) -> list[ChangeEvent]:
        return [self._event(message) for message in messages]

    def _event(self, message: KafkaRecord) -> ChangeEvent:
        key, envelope = self._read(message.key), self._read(message.value)
        source = envelope["source"]
        name, schema, db = source["table"], source["schema"], source["db"]
        table = None if name is None else Table(name, db) if schema is None else Table(name, schema, db)
        position = tuple((field, value) for field, value in source.items()
                         if field not in _DEBEZIUM_AVRO_NAMING and value is not None)
        return ChangeEvent(_DEBEZIUM_OPS[envelope["op"]], table, _cells(key), _cells(envelope["before"]),
                           _cells(envelope["after"]), _source_of(position, source["ts_ms"]))

    def encode(self, events: list[ChangeEvent]) -> list[KafkaRecord]:
        return [self._record(event) for event in events]

    def _record(self, event: ChangeEvent) -> KafkaRecord:
        table = event.table
        key_id, value_id = self.ids_of_table[table]
        source: dict[str, Any] = {"ts_ms": _millis(event)}
        if table is not None:
            source.update(db=table.schema, table=table.name)
        source.update(event.source.position)
        return KafkaRecord(self._framed(key_id, _row(event.key)),
                           self._framed(value_id, {"before": _row(event.before), "after": _row(event.after),
                                                   "source": source, "op": _DEBEZIUM_CODES[event.op]}))


# -- the formats ------------------------------------------------------------------------------------------------------

OPTIONS: dict[str, dict[str, Any]] = {
    "arcion": {"key_columns": [KEY]}, "lindorm": {"key_columns": [KEY]},
    "lindorm-subscription": {"key_columns": [KEY]}, "ots": {"primary_key": [KEY]}, "ots-json": {"primary_key": [KEY]}}

BY_HAND: dict[str, ByHand] = {
    "aliyun-json": ALIYUN_JSON, "arcion": ARCION, "avro": AVRO, "canal-json": CANAL_JSON,
    "connect-json": CONNECT_JSON, "debezium-json": DEBEZIUM_JSON, "lindorm": LINDORM,
    "lindorm-subscription": LINDORM_SUBSCRIPTION, "maxwell-json": MAXWELL_JSON, "ots": OTS, "ots-json": OTS_JSON,
    "paimon-log": PAIMON_LOG, "protobuf": PROTOBUF}


@dataclass
class Sample:
    """One format's codec, the messages it wrote for the sample changes, the events it decodes from them, and the
    by-hand codec to set against it."""

    codec: cf.Codec
    messages: list[Message]
    events: list[ChangeEvent]
    by_hand: ByHand | DebeziumAvroByHand


def sample(name: str, changes: list[ChangeEvent]) -> Sample:
    codec = cf.codec(name, **OPTIONS.get(name, {}))
    messages = list(codec.encode(changes))
    events = list(codec.decode(messages))
    if name == "debezium-avro":
        by_hand: ByHand | DebeziumAvroByHand = DebeziumAvroByHand(codec.registry, list(zip(changes, messages)))
    else:
        by_hand = BY_HAND[name]
    return Sample(codec, messages, events, by_hand)


def region_changes(count: int) -> list[ChangeEvent]:
    """Arcion's changes of tpch.region, as the arcion codec decodes them."""
    return list(cf.codec("arcion", key_columns=[KEY]).decode(samples.arcion_region(count)))


def median_seconds(work: Callable[[], Any], runs: int = RUNS) -> float:
    """The median of ``runs`` runs, each timed as ``codec_throughput.timed`` times (garbage collector off)."""
    return statistics.median(timed(work, repeat=1) for _ in range(runs))


def _parse_each(parse: Callable[[Message], Document], messages: list[Message]) -> None:
    """The decode floor drops each document once parsed, as both codecs do (they keep the event): holding 20,000
    parsed documents at once (a Kafka Connect schema in each) costs more in allocation than parsing them."""
    for message in messages:
        parse(message)


def measure(name: str, changes: list[ChangeEvent]) -> tuple[float, ...]:
    """Microseconds per event: decode floor, by hand, codec; encode floor, by hand, codec."""
    s = sample(name, changes)
    codec, messages, events, by_hand = s.codec, s.messages, s.events, s.by_hand
    documents = [by_hand.parse(message) for message in messages]
    works = (lambda: _parse_each(by_hand.parse, messages),
             lambda: by_hand.decode(messages),
             lambda: list(codec.decode(messages)),
             lambda: [by_hand.write(document) for document in documents],
             lambda: by_hand.encode(events),
             lambda: list(codec.encode(events)))
    return tuple(median_seconds(work) / len(events) * 1e6 for work in works)


def _ratio(ours: float, by_hand: float, bound: float) -> str:
    ratio = ours / by_hand
    return f"{ratio:5.2f}{'!' if ratio > bound else ' '}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000, help="Arcion messages to convert (default 20000)")
    parser.add_argument("--formats", default=",".join(cf.formats()), help="comma-separated formats (default all)")
    arguments = parser.parse_args()
    changes = region_changes(arguments.messages)
    print(f"{len(changes):,} of Arcion's tpch.region changes written in each format, cdcformats from "
          f"{Path(cf.__file__).parent}; microseconds per event, median of {RUNS} runs, garbage collector off; bounds: "
          f"decode <= {DECODE_BOUND} x by hand, encode <= {ENCODE_BOUND} x by hand ('!' = over)")
    print(f"{'':<21} {'decode':-^35}  {'encode':-^35}")
    print(f"{'format':<21} " + f"{'floor':>7} {'by hand':>8} {'codec':>7} {'ratio':>7}    " * 2)
    for name in arguments.formats.split(","):
        d_floor, d_hand, d_codec, e_floor, e_hand, e_codec = measure(name, changes)
        print(f"{name:<21} {d_floor:7.2f} {d_hand:8.2f} {d_codec:7.2f} {_ratio(d_codec, d_hand, DECODE_BOUND):>7}    "
              f"{e_floor:7.2f} {e_hand:8.2f} {e_codec:7.2f} {_ratio(e_codec, e_hand, ENCODE_BOUND):>7}")


if __name__ == "__main__":
    main()
