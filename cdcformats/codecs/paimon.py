"""``paimon-log``: the Kafka log of a Flink Table Store / Apache Paimon table (``'log.system' = 'kafka'``).

Every change written to the table's files is also written to Kafka as one record (``KafkaLogSerializationSchema``):

* key: the primary key as JSON, ``{"id": 7}``, columns in key order (none for a table without a primary key);
* value: the row in ``debezium-json`` (the default ``log.format``);
* ``log.changelog-mode`` (the option ``changelog_mode``) decides what is written:

  ``all``: every change, as its debezium-json envelope. (Flink writes an update as two records, a ``d`` of the old
  row and a ``c`` of the new one; a ``u`` envelope with both rows is what Flink's reader turns into the same two row
  kinds, so one record here says the same and keeps the update an UPDATE.)

  ``upsert``: no update-before. A change that leaves a row is written as ``c`` with the new row only, and a delete as
  a tombstone: the key with a null value. A table without a primary key cannot use it, as in Paimon.

Decoding reads the key's columns as the event's ``key`` (JSON scalars as they are) and the value as debezium-json
does (see that module for the envelope). In upsert mode a ``c`` is an UPSERT, the row as it now is, and a tombstone a
DELETE of the key with no images (any other op is refused there: Paimon's upsert log holds none); a tombstone in
``all`` mode (which Paimon does not write, but Kafka compaction understands) is read the same way. A record without
a key reads as a change without one.

Written from other formats: the value as debezium-json writes it (an UPSERT a ``c``, a deleted cell the column set to
null, ...), and the key cells as the record key. In upsert mode a change that leaves a row (INSERT, UPDATE, READ,
UPSERT) is that row as a ``c``, without ``before``; a DELETE is a tombstone of its key, everything else dropped; a
TRUNCATE and a change whose new row is not known have no record there and are refused, and so is a change without a
key (``requires key``): an upsert log is keyed by the primary key, Paimon gives none to a table without one, and a
compacted topic refuses a record without a key. A keyless record is still read, as a change without a key.

The value is written as this project's debezium-json writes it, ``source`` included, which Flink's reader ignores;
Paimon's ``auto`` mode (upsert for tables with a primary key) is a table property, not something one record shows:
name the mode. Which partition (bucket) a record goes to is the producer's business, not the message's.

Normal form: ``{"id": 7}`` keys as written above (an empty key object is no key), values as debezium-json's normal
form; in upsert mode, ``c`` values without ``before``.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
from msgspec.structs import replace

from ..contract import ABSENT, PRESENT, JvmEncoder, KafkaRecord, Option, Shape, one_of
from ..core.typed_text import json_form
from ..errors import DecodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import Cell, CellKind, ChangeEvent, Op
from ._kit.debezium_envelope import CODE_OF_OP, envelope_written_whole, with_op_code
from ._kit.json_message import AS_IS_TYPES, MAX_MESSAGE_BYTES, cells_of, encode, load_object, parse
from ._kit.kafka_records import KafkaRecordCodec
from .debezium import DebeziumJsonCodec  # the format of the values (Paimon's default log.format)

# Read once: reading a member off its class runs Python code (enum's metaclass).
_OP_DELETE, _OP_UPSERT, _OP_INSERT = Op.DELETE, Op.UPSERT, Op.INSERT
_PUT = CellKind.PUT

NAME = "paimon-log"
ALL, UPSERT = "all", "upsert"


class PaimonLogCodec(KafkaRecordCodec):
    name = NAME
    description = "the Kafka log of a Flink Table Store / Paimon table: primary key JSON, debezium-json value"
    carries = DebeziumJsonCodec.carries
    own_attributes = DebeziumJsonCodec.own_attributes
    options = (
        Option("changelog_mode", "'all' (every change, update-before included) or 'upsert' (new rows, and a "
                                 "tombstone for each delete)", ALL, one_of(ALL, UPSERT)),
        MAX_MESSAGE_BYTES,
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.upsert = self.config["changelog_mode"] == UPSERT
        self._max_bytes: int = self.config["max_message_bytes"]
        self.values = DebeziumJsonCodec(max_message_bytes=self.config["max_message_bytes"])
        if self.upsert:
            self.carries = (self.carries - {"op.INSERT", "op.UPDATE", "op.READ", "op.TRUNCATE"}) | {"op.UPSERT"}
            # The new row as it now is; a delete is the key alone.
            self.shapes = (Shape(Op.UPSERT, after=PRESENT), Shape(Op.DELETE, before=ABSENT, after=ABSENT))
            self.requires = ("key",)

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_record(self, key: bytes | None, value: bytes | None) -> ChangeEvent:
        key_cells = self._key(key)
        if value is None:
            return ChangeEvent(_OP_DELETE, key=key_cells)
        try:
            event = self.values.decode_keyed(value, key_cells)
        except DecodeError as error:
            error.field = f"value.{error.field}" if error.field else "value"
            raise error.relabeled(NAME) from None
        if self.upsert:
            if event.op is not _OP_INSERT:
                raise DecodeError(NAME, f"an upsert log holds new rows (op c) and tombstones, not {event.op.value}",
                                  field="value.op")
            if event.after is None:
                raise DecodeError(NAME, "an upsert log's c holds the new row, and this one has none",
                                  field="value.after")
            event = replace(event, op=_OP_UPSERT, before=None)
        return event

    def _key(self, key: bytes | None) -> tuple[Cell, ...]:
        if key is None:
            return ()
        if len(key) <= self._max_bytes:
            try:  # most keys: an object of scalars, which the model holds as they are: read here, and the rest below
                columns = parse(key)
                if type(columns) is dict:
                    return tuple([Cell(name, value) for name, value in columns.items()])
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError, TypeError, ValueError):
                pass  # read, or told what is wrong with, below
        try:
            columns = load_object(NAME, key, self.config["max_message_bytes"])
        except DecodeError as error:
            error.field = "key"
            raise
        return cells_of(columns, NAME, "key.")

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> KafkaRecord:
        key = _key_message(event.key)
        if self.upsert and event.op is Op.DELETE:
            return KafkaRecord(key, None)
        return KafkaRecord(key, self.values.encode_event(event))

    def encode_whole(self, event: ChangeEvent) -> list[KafkaRecord] | None:
        """A key of JSON scalars, each column once, and a value the envelope writes whole (debezium-json's
        ``envelope_written_whole``): of an op with a code, or in upsert mode an UPSERT of a new row alone; or in
        upsert mode a tombstone, a DELETE of its key alone. The key is checked in the walk that writes it
        (``connect_schema.written_whole``, untyped, written out: this is the path of every record written)."""
        key = event.key
        columns: dict[str, Any] = {}
        for cell in key:
            value = cell.value
            if cell.kind is not _PUT or cell.version is not None or cell.type is not None or (
                    type(value) not in AS_IS_TYPES and not (type(value) is float and math.isfinite(value))):
                return None
            columns[cell.name] = value
        if len(columns) != len(key):  # a column twice
            return None
        op = event.op
        if self.upsert:
            if not key or event.before is not None:
                return None
            if op is _OP_DELETE:
                source = event.source
                if event.after is None and event.table is None and not event.attributes and not event.key_only \
                        and source.system is None and not source.position and source.commit_time_us is None \
                        and source.capture_time_us is None:
                    return [tuple.__new__(KafkaRecord, (encode(columns), None))]
                return None
            if op is not _OP_UPSERT or event.after is None:
                return None
        elif op is _OP_UPSERT:
            return None
        value = envelope_written_whole(event)
        # KafkaRecord(key, value), made in C: a NamedTuple's constructor is a Python function.
        return None if value is None else [tuple.__new__(KafkaRecord, (encode(columns) if key else None, value))]

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/PaimonLogEncoder.java``, this encoder in Java (a ``RecordEncoder``: its messages
        are records)."""
        return JvmEncoder("cdcformats.jvm.encoders.PaimonLogEncoder", {"changelog_mode": self.config["changelog_mode"]})

    # -- what is lost ---------------------------------------------------------------------------------------------

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """Upsert mode: a change that leaves a row is the new row (``c``), without the row before; a delete is a
        tombstone of its key. A change whose new row is not known, and a TRUNCATE, have no record there."""
        if event.op is Op.DELETE:
            return replace(event, before=None, after=None)
        if event.op is Op.TRUNCATE or event.after is None:
            raise Refusal(Loss(f"op.{event.op.value}", "op", REFUSED,
                               f"an upsert log holds new rows and tombstones, and this {event.op.value} has no row"))
        return replace(event, op=Op.UPSERT, before=None)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        written = super().normal_form(event)
        if not self.upsert:
            return self.values.envelope_form(with_op_code(written, CODE_OF_OP, NAME))
        if not written.key:
            raise Refusal(Loss("requires key", "key", REFUSED, "an upsert log is keyed by the primary key, and this "
                                                               "change has none"))
        if written.op is Op.DELETE:  # a tombstone holds only the key
            return ChangeEvent(Op.DELETE, key=written.key, before=written.before, after=written.after)
        return self.values.envelope_form(written)


def _key_message(key: tuple[Cell, ...]) -> bytes | None:
    """The record key: the key's columns as a JSON object; none for a change without a key."""
    return encode({cell.name: json_form(cell.value) for cell in key}) if key else None
