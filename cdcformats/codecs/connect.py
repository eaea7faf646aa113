"""``connect-json``: rows as Kafka Connect's JsonConverter writes them, for sinks such as the Tablestore Sink Connector.

A message is a Kafka record, ``KafkaRecord(key, value)``. The value is the row as it now is, a flat struct; the key
is the row's primary key, a struct too (what the sink reads with ``primarykey.mode=record_key``). With
``schemas.enable=true`` (option ``schemas``, the default) each is wrapped with its schema::

    key:   {"schema": {"type": "struct", "fields": [{"type": "int32", "optional": false, "field": "id"}],
                       "optional": false, "name": "dbserver1.inventory.customers.Key"},
            "payload": {"id": 1004}}
    value: {"schema": {"type": "struct", "fields": [{"type": "int32", "optional": false, "field": "id"},
                                                     {"type": "string", "optional": true, "field": "email"}],
                       "optional": false, "name": "dbserver1.inventory.customers.Value"},
            "payload": {"id": 1004, "email": null}}

and with ``schemas=False`` each is the bare JSON map (``{"id": 1004}``), which the sink accepts too. The schema
language, and how values and cell type names map onto it, is in ``connect_schema``.

How a record maps onto the canonical event:

* A record with a value is an UPSERT (the sink puts the row, whether or not it existed) whose ``after`` image is the
  value's fields, in schema order; a field the payload leaves out is null. A null field is a null cell: the sink
  with ``insert.mode=update`` and column deletes on deletes that column.
* A record with a null value, a tombstone, is a DELETE of the row the key names (``delete.mode=row``), with no
  images.
* The key is the key struct's fields. A record without a key (or with a key of no fields) takes its key out of the
  value by ``key_columns`` (looked up without a table, since records name none); a record with one ignores the
  option.
* With schemas, a cell's value and type name are what its field's Connect type says (int8 .. int64 an int, float a
  float rounded to single precision, bytes bytes, Decimal a decimal, ...), so bytes, decimals, non-finite floats and
  type names read back exactly. Without schemas, values are the JSON values they are and cells have no type.
* JsonConverter with schemas needs exactly ``schema`` and ``payload``; ``"schema": null`` (a schemaless payload in
  the envelope) reads as without schemas. A key or value that is no struct (a bare string key) is refused. A
  field's schema is kept whole by its cell's type (``connect_schema``: Debezium's ``io.debezium.time.Date``, a
  default, a doc, parameters); a field the payload has but the schema does not declare is read as JSON without a
  schema.
* The key's and the value's own struct schema (everything but its fields), where it is not the one this codec
  writes without it, is kept as the attribute ``connect-json.schema.key`` / ``connect-json.schema.value``: compact
  JSON text with ``"fields": []``, written back as it came. Debezium's records need it: it names its structs after
  the topic (``pg.public.orders.Key``, ``pg.public.orders.Value``) and marks the value optional (the value struct
  is the optional ``after`` field of its envelope).

Written from other formats: INSERT, UPDATE and READ with an ``after`` image become that row put (an UPSERT), the
``before`` image dropped; a DELETE becomes a tombstone of its key, whatever images it has (a DELETE without a key is
a tombstone without one, as such a record reads). A deleted cell (a Lindorm Delete or DeleteColumn, a Tablestore
DO/DA) becomes a null field, which is what the sink's column delete reads; a column twice in one struct keeps its
first cell; a decimal Connect cannot hold (NaN, an infinity, -0) is its text. TRUNCATE, and a change whose row is not
known (an INSERT or UPDATE without an ``after`` image), have no record, neither a row nor a tombstone, and are
refused. No table, source, position, versions or other attributes than its own are written: the table is the topic.

Normal form (what ``encode`` writes): with schemas, ``{"schema": ..., "payload": ...}`` for the key and the value,
each struct the one the event keeps (``connect-json.schema.*``) or else not optional and unnamed, and named by the
option ``key_schema_name`` / ``value_schema_name`` when it is given; its fields in cell order, each field
``{"type", "optional" (whether the value is null), "name", "version", "parameters", "field"}`` as
``connect_schema`` chooses them, or the schema its cell's type keeps; without schemas, the payload map. No key when
the event has no key cells. JSON is spelt as JsonConverter's Jackson writes it (floats as Java spells a double,
``1.0E7``; characters beyond the BMP as escaped surrogate pairs; control characters with upper-case hex).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from ..contract import PRESENT, JvmEncoder, KafkaRecord, Option, Shape, flag
from ..core.typed_text import json_form
from ..errors import DecodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import Cell, ChangeEvent, Image, Op, Source, Value, same_entries
from ._kit import connect_schema, kept_fields
from ._kit.json_message import (
    AS_IS_TYPES,
    MAX_MESSAGE_BYTES,
    cells_of,
    encode,
    encode_as_jackson,
    json_type,
    load_object,
    with_jackson_floats,
)
from ._kit.kafka_records import KafkaRecordCodec
from ._kit.keys import KEY_COLUMNS, KeyColumns

NAME = "connect-json"
# The struct schemas of the key and the value, where they say more than writing gives (Debezium's names).
SCHEMA_ATTRIBUTE = "connect-json.schema."
_PARTS = ("key", "value")  # in the order their schemas are kept and read back
_UNNAMED_STRUCT: dict[str, Any] = {"type": "struct", "fields": [], "optional": False}
_MAX_SCHEMA_TEXTS = 1024
_NULL = msgspec.Raw(b"null")


class _WithSchema(msgspec.Struct, forbid_unknown_fields=True):
    """A key or value as JsonConverter writes it with schemas, its schema as its text: what a plan is found by."""

    schema: msgspec.Raw
    payload: Any


_read_with_schema = msgspec.json.Decoder(_WithSchema).decode
_NO_SOURCE = Source()  # a record says nothing of its source: one for every event
_OP_UPSERT, _OP_DELETE = Op.UPSERT, Op.DELETE  # read once: a member's lookup runs Python code


def _optional_name(value: Any) -> str | None:
    if value is not None and type(value) is not str:
        raise TypeError(f"expected a schema name or None, got {value!r}")
    return value


SCHEMAS = Option("schemas", "write JsonConverter's schemas.enable=true envelope {schema, payload} (False: bare "
                            "JSON maps); read the form it names", True, flag)
VALUE_SCHEMA_NAME = Option("value_schema_name", "the name of the value's struct schema", None, _optional_name)
KEY_SCHEMA_NAME = Option("key_schema_name", "the name of the key's struct schema", None, _optional_name)


class ConnectJsonCodec(KafkaRecordCodec):
    name = NAME
    description = "rows as Kafka Connect JsonConverter records (key and value), for sinks such as Tablestore's"
    carries = frozenset({
        "op.UPSERT", "op.DELETE", "key", "after", "image.columns", "cell.type", "value.null", "value.bool", "value.int",
        "value.float", "value.str", "value.bytes", "value.decimal", "value.float_nonfinite", "value.off_type",
        "value.nested", "value.nested_non_json",
    })
    shapes = (Shape(Op.UPSERT, after=PRESENT), Shape(Op.DELETE))
    # A schemaless payload (also in the envelope with schemas) holds a JSON array of values of mixed kinds as it is,
    # which a field schema cannot type.
    also_reads = frozenset({"value.nested"})
    options = (SCHEMAS, KEY_COLUMNS, VALUE_SCHEMA_NAME, KEY_SCHEMA_NAME, MAX_MESSAGE_BYTES)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.key_columns: KeyColumns = self.config["key_columns"]
        self.schemas: bool = self.config["schemas"]
        # The struct schema of each part and layout of cells met, as its JSON text (``_schema``).
        self._schema_texts: dict[tuple[str, tuple[tuple[str, type], ...]], msgspec.Raw] = {}
        # The plan of each struct schema read (by part and schema text), and its schema as kept (None: as written).
        self._plans: dict[tuple[str, bytes], tuple[connect_schema.StructPlan, str | None]] = {}
        # The struct schema of each part written without a kept one, which reading tells a kept one from.
        self._written_structs = {part: self._struct(None, part) for part in _PARTS}
        if self.schemas:
            self.own_attributes = frozenset({SCHEMA_ATTRIBUTE})
        else:
            self.carries = self.carries - connect_schema.TYPED_FEATURES

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_record(self, key: bytes | None, value: bytes | None) -> ChangeEvent:
        attributes: list[tuple[str, Value]] = []
        key_cells = () if key is None else self._read(key, "key", attributes)
        if value is None:
            return ChangeEvent(Op.DELETE, key=key_cells, source=_NO_SOURCE, attributes=tuple(attributes))
        after = self._read(value, "value", attributes)
        if not key_cells:
            key_cells = self.key_columns.key_of(None, after)
        return ChangeEvent(Op.UPSERT, key=key_cells, after=after, source=_NO_SOURCE, attributes=tuple(attributes))

    def _read(self, data: bytes, part: str, attributes: list[tuple[str, Value]]) -> Image:
        """The cells of the key or the value; its struct schema, where it is not the one this codec writes without
        it, is kept in ``attributes`` (a key of no fields is no key: nor is its schema kept)."""
        if self.schemas and type(data) is bytes and len(data) <= self.config["max_message_bytes"]:
            try:
                wrapped = _read_with_schema(data)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):  # any other message: read below,
                wrapped = None  # which says what is wrong with it
            if wrapped is not None and wrapped.schema != _NULL:
                cells = self._read_planned(wrapped, part, attributes)
                if cells is not None:
                    return cells
        try:
            document: Any = load_object(NAME, data, self.config["max_message_bytes"])
        except DecodeError as error:
            raise DecodeError(NAME, error.reason, field=part) from None
        if self.schemas:
            if set(document) != {"schema", "payload"}:
                raise DecodeError(NAME, "with schemas, expected exactly the fields schema and payload", field=part)
            schema = document["schema"]
            if schema is not None:
                cells = connect_schema.read_struct(schema, document["payload"], NAME, part)
                struct = {**schema, "fields": []}  # the fields are the cells' (their types keep their schemas)
                if struct != self._written_structs[part] and (cells or part == "value"):
                    attributes.append((SCHEMA_ATTRIBUTE + part, encode(struct).decode()))
                return cells
            document = document["payload"]
            if type(document) is not dict:
                raise DecodeError(NAME, f"expected an object, got {json_type(document)}", field=f"{part}.payload")
        return cells_of(document, NAME, f"{part}.")

    def _read_planned(self, wrapped: _WithSchema, part: str, attributes: list[tuple[str, Value]]) -> Image | None:
        """``_read`` of a record with a struct schema, read by the plan of its schema's text, which is found (and the
        schema checked) once for all the records of that schema; None for a schema that is not JSON after all (its
        text is not checked for UTF-8 until it is parsed), which ``_read`` names."""
        key = (part, bytes(wrapped.schema))
        planned = self._plans.get(key)
        if planned is None:
            try:
                schema = msgspec.json.decode(wrapped.schema)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                return None
            plan = connect_schema.struct_plan(schema, NAME, f"{part}.schema")
            struct = {**schema, "fields": []}  # the fields are the cells' (their types keep their schemas)
            if len(self._plans) >= _MAX_SCHEMA_TEXTS:
                self._plans.clear()
            planned = self._plans[key] = (plan, None if struct == self._written_structs[part]
                                          else encode(struct).decode())
        plan, kept = planned
        cells = connect_schema.read_planned(plan, wrapped.payload, NAME, part)
        if kept is not None and (cells or part == "value"):  # a key of no fields is no key: nor is its schema kept
            attributes.append((SCHEMA_ATTRIBUTE + part, kept))
        return cells

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> KafkaRecord:
        attributes = event.attributes
        key = self._write(event.key, "key", attributes and event.attribute(SCHEMA_ATTRIBUTE + "key")) \
            if event.key else None
        if event.op is Op.DELETE:
            return KafkaRecord(key, None)
        assert event.after is not None  # an event this format carries (written()): its shape has these images
        return KafkaRecord(key, self._write(event.after, "value", attributes and event.attribute(SCHEMA_ATTRIBUTE
                                                                                                  + "value")))

    def _write(self, cells: Image, part: str, kept: Value) -> bytes:
        """The key or the value of ``cells``, with the struct schema the event keeps for it (``kept``), if any."""
        if not self.schemas:  # the JSON values, as the schemaless formats write them
            return encode_as_jackson({cell.name: value if type(value := cell.value) in AS_IS_TYPES
                                      else with_jackson_floats(json_form(value)) for cell in cells})
        return encode_as_jackson({"schema": self._schema(cells, part, kept), "payload": {
            cell.name: value if type(value := cell.value) in AS_IS_TYPES
            else with_jackson_floats(connect_schema.json_value(value)) for cell in cells}})

    def encode_whole(self, event: ChangeEvent) -> list[KafkaRecord] | None:
        """An UPSERT of a row, or a DELETE without one, that holds nothing but its key and its row: no table, source,
        before image or attributes; the key and the row of untyped JSON scalars, each column once
        (``connect_schema.written_whole``); a key given, unless no ``key_columns`` would read one out of the row:
        each struct written in the walk that checks it (``_whole_struct``)."""
        source = event.source
        if (event.table is not None or event.before is not None or event.attributes or event.key_only
                or source.system is not None or source.position or source.commit_time_us is not None
                or source.capture_time_us is not None):
            return None
        key, after = event.key, event.after
        if event.op is _OP_UPSERT:
            if after is None or not key and self.key_columns:
                return None
        elif event.op is not _OP_DELETE or after is not None:
            return None
        key_message = None
        if key:
            key_message = self._whole_struct(key, "key")
            if key_message is None:
                return None
        if after is None:
            return [KafkaRecord(key_message, None)]
        value = self._whole_struct(after, "value")
        return None if value is None else [KafkaRecord(key_message, value)]

    def _whole_struct(self, cells: Image, part: str) -> bytes | None:
        """The key or the value of ``cells`` (as ``_write`` writes it) where they are untyped puts of JSON scalars,
        each column once, which a struct writes and reads back as they are; None for any other cells."""
        if not self.schemas:
            payload = connect_schema.whole_fields(cells)
            return None if payload is None else encode_as_jackson(payload)
        layout: list[tuple[str, type]] = []
        payload = connect_schema.whole_fields(cells, layout)
        if payload is None:
            return None
        return encode_as_jackson({"schema": self._laid_out_schema(cells, part, tuple(layout)), "payload": payload})

    def _schema(self, cells: Image, part: str, kept: Value) -> Any:
        """The struct schema of the key or the value: made once for each layout of cells that says it all
        (``connect_schema.plain_layout``), under the struct this codec writes without a kept one, and written from
        its JSON text after that."""
        layout = connect_schema.plain_layout(cells) if not kept else None
        if layout is None:
            return {**self._struct(kept, part), "fields": [connect_schema.field_schema(cell) for cell in cells]}
        return self._laid_out_schema(cells, part, layout)

    def _laid_out_schema(self, cells: Image, part: str, layout: tuple[tuple[str, type], ...]) -> msgspec.Raw:
        text = self._schema_texts.get((part, layout))
        if text is None:
            if len(self._schema_texts) >= _MAX_SCHEMA_TEXTS:
                self._schema_texts.clear()
            text = self._schema_texts[part, layout] = msgspec.Raw(encode(
                {**self._struct(None, part), "fields": [connect_schema.field_schema(cell) for cell in cells]}))
        return text

    def _struct(self, kept: Value, part: str) -> dict[str, Any]:
        """The struct schema of the key or the value, with ``"fields": []``: the one the event keeps, when it is one,
        else an unnamed required struct; named by the option ``<part>_schema_name`` when it is given."""
        struct = _kept_struct(kept) or _UNNAMED_STRUCT
        name = self.config[f"{part}_schema_name"]
        return struct if name is None else {**struct, "name": name}

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/ConnectJsonEncoder.java``, this encoder in Java (a ``RecordEncoder``: its messages
        are records), the schema names only where the options give them."""
        names = {option: name for option in ("key_schema_name", "value_schema_name")
                 if (name := self.config[option]) is not None}
        return JvmEncoder("cdcformats.jvm.encoders.ConnectJsonEncoder", {
            "schemas": "true" if self.schemas else "false", **self.key_columns.settings(), **names})

    # -- what is lost ---------------------------------------------------------------------------------------------

    def carried_cell(self, cell: Cell) -> Cell:
        cell = super().carried_cell(cell)
        return connect_schema.as_read_back(cell) if self.schemas else cell

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """A change that leaves a row is that row put (an UPSERT); a DELETE is a tombstone of its key. A change
        whose row is not known, and a TRUNCATE, have no record."""
        if event.op is Op.DELETE:
            return replace(event, after=None)
        if event.op is Op.TRUNCATE or event.after is None:
            raise Refusal(Loss(f"op.{event.op.value}", "op", REFUSED,
                               f"{NAME} writes a row or a tombstone, and this {event.op.value} has no row"))
        return replace(event, op=Op.UPSERT)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """A record without a key takes it out of the value by key_columns; with schemas, the key's and the value's
        struct schemas that the record writes come back where they are not what writing gives without them."""
        written = super().normal_form(event)
        key = () if written.key or not self.key_columns else self.key_columns.key_of(None, written.after)
        if key:
            written = replace(written, key=key)
        if not self.schemas:  # no struct schemas: the base rules keep no attribute
            return written
        written_parts = {"key": bool(written.key), "value": written.op is not Op.DELETE}

        def struct_written(name: str, value: Value) -> tuple[int, Value] | None:
            part = name[len(SCHEMA_ATTRIBUTE):]
            if not name.startswith(SCHEMA_ATTRIBUTE) or part not in _PARTS or not written_parts[part]:
                return None
            struct = self._struct(value, part)
            return None if struct == self._struct(None, part) else (_PARTS.index(part), encode(struct).decode())

        attributes = kept_fields.as_decoded(written.attributes, struct_written)
        return written if same_entries(attributes, written.attributes) else replace(written, attributes=attributes)


def _kept_struct(text: Value) -> dict[str, Any] | None:
    """The struct schema a ``connect-json.schema.*`` attribute keeps, when it is one: JSON text of a struct schema
    whose fields are left out (``"fields": []``)."""
    try:
        struct = msgspec.json.decode(text) if type(text) is str else None
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(struct) is not dict or struct.get("type") != "struct" or struct.get("fields") != []:
        return None
    return struct
