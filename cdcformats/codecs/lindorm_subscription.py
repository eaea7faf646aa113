"""``lindorm-subscription``: the change records of LindormTable's data subscription (change tracking to Kafka).

LindormTable publishes each row change as a Debezium-style envelope, inside Kafka Connect's schema wrapper:

    {"payload": {"op": "u", "ts_ms": 1465491411815,
                 "before": {"id": 1004, "name": "Jane"}, "after": {"id": 1004, "name": "Anne"},
                 "source": {"version": "v1.0", "db": "ld-xxxx", "namespace": "default", "table": "customers",
                            "ts_ms": 1465491411807}},
     "schema": {"type": "struct", "fields": [...]}}

What the documentation says: ``op`` is ``c`` (insert), ``u`` (update), ``d`` (delete) or ``r`` (full export, "not
available" yet); ``payload.ts_ms`` is when the record was written to Kafka; ``before`` is null for an insert and
``after`` null for a delete; ``source`` names the instance (``db``, an instance id such as ``ld-xxxx``), the
namespace and the table. The schema is a Connect struct schema of the envelope, with the columns' Connect types.

How the message maps onto the canonical event, as debezium-json does wherever Lindorm does not differ:

* ``op`` c, u, d, r is INSERT, UPDATE, DELETE, READ. Any other code is refused: Debezium's ``t`` (truncate) and
  ``m`` (message) are not Lindorm ops.
* ``before`` / ``after`` null is an absent image; an object is an image whose cells are its fields in order, each
  value the JSON value it is. Through the schema wrapper each column is read through its Connect schema, as
  ``connect_schema`` reads it (``bytes`` as bytes, a Connect ``Decimal`` as a decimal, exactly; ``float`` /
  ``double`` as floats), and the cell keeps the Connect type when it is not the one its value gets by default
  (``int32``: the documented ``id`` column), so that the schema is written back as it was.
* The table is ``Table(source.table, source.namespace, source.db)``: the instance id is the catalog, the namespace
  the schema. ``db`` and ``namespace`` are read as the table's only when ``source`` has a ``table``.
* ``source.ts_ms`` is the commit time (the page's field table for it could not be read; in its example it is 8 ms
  before ``payload.ts_ms``, when Lindorm made the change); ``payload.ts_ms`` the capture time.
* Not documented, and read as debezium-json reads them so that nothing is lost: ``ts_us`` beside a ``ts_ms`` (the
  time in microseconds, as Debezium 2 writes it) wins over it; ``source.connector`` is the source system; every other
  ``source`` field (``version`` first of all) is kept verbatim and in order as the source position; every other
  envelope field is kept verbatim as a ``debezium.field.<name>`` attribute (the name debezium-json gives them, so that
  the two formats hand such fields to each other).
* Which columns form the primary key is in the Kafka record key, not the value: give ``key_columns``.

Written from other formats: an UPSERT becomes ``c`` (the row as it now is); a TRUNCATE has no op code and is refused.
Otherwise as debezium-json writes them: a deleted cell (a Lindorm Delete or DeleteColumn) is the column set to null
in the ``u``, cell versions are not written, a column twice keeps its first cell, key cells kept outside the row go in
front of it, and a position entry that repeats or names a ``source`` field of its own is left out; only the kept
``debezium.field.*`` attributes are written back.

The option ``schemas`` (default on, the documented form) writes the wrapper. Its schema is generated from the event
as the documented one is laid out: an unnamed struct with ``op`` (string), ``ts_ms`` (int64; and ``ts_us`` where it
is written), ``before`` and ``after`` (optional structs of the images' columns, each column's schema as
``connect_schema`` generates it from the cell, so bytes, decimals, NaN and infinities and every cell type read back
exactly; an absent image gets the other image's struct, as a table has one row schema) and ``source`` (a struct
typed from its JSON values). Kept envelope fields are written in the payload but not described in the schema. A null
decimal's column is written with scale 0, since the value does not say its scale. A bytes or decimal value, or NaN
or an infinity, in the source position is written as text there, so it is reported as dropped.

With ``schemas=False`` only the payload (the bare envelope) is written, values as debezium-json writes them without
the wrapper (bytes as base64 text, decimals and NaN or an infinity as text) and cell types are not written; both
forms are read either way.

Normal form (what ``encode`` writes): the wrapper ``{"payload", "schema"}`` (with ``schemas=False``, the payload
alone). The payload's fields in the documented order ``op``, ``ts_ms`` (then ``ts_us`` when the capture time has
microseconds), ``before``, ``after``, ``source``, then the kept fields; ``source`` holds ``connector`` when there is
a system, the position, then ``db``, ``namespace`` and ``table`` when there is a table (a missing part as null),
then ``ts_ms`` (``ts_us``).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from ..contract import JvmDecoder, Option, flag
from ..core.typed_text import json_form
from ..errors import DecodeError
from ..model import Cell, ChangeEvent, Op, Source, Table, Value, same_entries
from ._kit import connect_schema, kept_fields
from ._kit.debezium_envelope import (
    FIELD_ATTRIBUTE,
    ColumnPlans,
    WrapperSchemas,
    canonical_json,
    column_plans,
    image_cells,
    image_fields,
    json_struct_schema,
    position_as_written,
    position_whole,
    read_source,
    with_op_code,
    write_time,
)
from ._kit.json_message import AS_IS_TYPES, MAX_MESSAGE_BYTES, encode, json_type, load_object
from ._kit.keys import KEY_COLUMNS, KeyedByColumns

NAME = "lindorm-subscription"
_OP_OF_CODE = {"c": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE, "r": Op.READ}
# An UPSERT is the row as it now is, whether or not it existed: the closest op is a create.
_CODE_OF_OP = {**{op: code for code, op in _OP_OF_CODE.items()}, Op.UPSERT: "c"}
_ENVELOPE_FIELDS = ("op", "ts_ms", "ts_us", "before", "after", "source")
_TABLE_FIELDS = ("db", "namespace", "table")
_SYSTEM_AND_TIME_FIELDS = ("connector", "ts_ms", "ts_us")  # source fields that are never the position

SCHEMAS = Option("schemas", "write the documented wrapper {payload, schema}, with a Connect schema that types each "
                            "column; False writes the payload alone", True, flag)


class LindormSubscriptionCodec(KeyedByColumns):
    name = NAME
    description = "LindormTable data subscription: Debezium-style change records in Kafka Connect's schema wrapper"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "table", "table.schema", "table.catalog",
        "key", "before", "after", "image.columns",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "value.nested", "source.system", "source.position", "source.commit_time", "source.capture_time",
        "source.time.sub_ms", *connect_schema.TYPED_FEATURES,
    })
    own_attributes = frozenset({FIELD_ATTRIBUTE})
    options = (KEY_COLUMNS, SCHEMAS, MAX_MESSAGE_BYTES)
    key_in_row = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.schemas: bool = self.config["schemas"]
        self._wrapper_schemas = WrapperSchemas()
        if not self.schemas:
            self.carries = self.carries - connect_schema.TYPED_FEATURES

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_message(self, message: bytes) -> ChangeEvent:
        max_bytes = self.config["max_message_bytes"]
        unwrapped = self._wrapper_schemas.unwrapped(message, max_bytes)
        if unwrapped is not None:  # most messages: a wrapper whose schema was read before
            payload, _, columns = unwrapped
            return self._event(payload, columns, "payload.")
        document = load_object(NAME, message, max_bytes)
        if "payload" in document and "schema" in document and "op" not in document:
            try:
                columns = column_plans(document["schema"])
            except DecodeError as error:
                raise error.relabeled(NAME) from None
            return self._event(document["payload"], columns, "payload.")
        return self._event(document, {}, "")

    def _event(self, envelope: Any, columns: ColumnPlans, path: str) -> ChangeEvent:
        """The event of one envelope; ``path`` is where the envelope is in the message, for error fields."""
        try:
            if type(envelope) is not dict:
                raise DecodeError(NAME, f"expected an object, got {json_type(envelope)}")
            code = envelope.get("op")
            if type(code) is not str or code not in _OP_OF_CODE:
                raise DecodeError(NAME, f"op {code!r} is not a Lindorm row change; expected one of "
                                        f"{', '.join(_OP_OF_CODE)}", field="op")
            before = image_cells(envelope.get("before"), "before", columns.get("before", {}))
            after = image_cells(envelope.get("after"), "after", columns.get("after", {}))
            table, source = _table_and_source(envelope.get("source"), envelope)
        except DecodeError as error:
            error.field = path + error.field if error.field else path.rstrip(".") or None
            raise error.relabeled(NAME) from None
        attributes = kept_fields.read(FIELD_ATTRIBUTE, envelope.items(), _ENVELOPE_FIELDS)
        op = _OP_OF_CODE[code]
        # The key read out of its row (KeyedByColumns.with_key_read), before the event is made: made once.
        key = self.read_key(table, before if op is Op.DELETE or after is None else after)
        return ChangeEvent(op, table, key, before, after, source, attributes=tuple(attributes))

    def jvm_decoder(self) -> JvmDecoder:
        """``cdcformats/jvm/decoders/LindormSubscriptionDecoder.java``, this decoder in Java (``schemas`` is for
        writing: both read either)."""
        return JvmDecoder("cdcformats.jvm.decoders.LindormSubscriptionDecoder", {
            "max_message_bytes": str(self.config["max_message_bytes"]), **self.key_columns.settings()})

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        payload: dict[str, Any] = {"op": _CODE_OF_OP[event.op]}
        write_time(payload, event.source.capture_time_us)
        payload["before"] = image_fields(event.before, self.schemas)
        payload["after"] = image_fields(event.after, self.schemas)
        payload["source"] = _source_fields(event)
        payload.update(kept_fields.write(NAME, event.attributes, FIELD_ATTRIBUTE, _ENVELOPE_FIELDS))
        if self.schemas:
            return encode({"payload": payload, "schema": _schema_of(event, payload)})
        return encode(payload)

    # -- what is lost ---------------------------------------------------------------------------------------------

    def encode_whole(self, event: ChangeEvent) -> list[Any] | None:
        return self.encode_exact(event) if self._is_own_normal_form(event) else None

    def _is_own_normal_form(self, event: ChangeEvent) -> bool:
        """An event of an op with a Lindorm code, no attributes nor ``key_only``, rows of one cell per column of JSON
        scalars (``connect_schema.written_whole``), a position of JSON scalars, each name once and none of
        ``source``'s own, and the key read out of its row."""
        if event.op not in _CODE_OF_OP or event.op is Op.UPSERT or event.attributes or event.key_only:
            return False
        for image in (event.before, event.after):
            if image is not None and not connect_schema.written_whole(image, self.schemas):
                return False
        if not position_whole(event.source.position,
                              _RESERVED if event.table is not None else _RESERVED_WITHOUT_TABLE):
            return False
        row = getattr(event, self.row_image_name(event))
        return not event.key if row is None else self.holds_key_as_read(event, row)

    def carried_cell(self, cell: Cell) -> Cell:
        cell = super().carried_cell(cell)
        return connect_schema.as_read_back(cell) if self.schemas else cell

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        written = with_op_code(super().normal_form(event), _CODE_OF_OP, NAME)
        written = self.with_key_as_read(written, getattr(written, self.row_image_name(written)))
        written = position_as_written(written, _reserved(written.table), self.schemas)
        attributes = kept_fields.as_decoded(written.attributes, _attribute_group)
        return written if same_entries(attributes, written.attributes) else replace(written, attributes=attributes)


def _attribute_group(name: str, value: Value) -> tuple[int, Value] | None:
    """Kept envelope fields are written back as canonical JSON text; nothing else is."""
    if name.startswith(FIELD_ATTRIBUTE) and name[len(FIELD_ATTRIBUTE):] not in _ENVELOPE_FIELDS:
        return 0, canonical_json(value)
    return None


def _table_and_source(source: Any, envelope: dict[str, Any]) -> tuple[Table | None, Source]:
    """The table named by ``db`` (instance), ``namespace`` and ``table``; the rest is read as debezium-json does, with
    the capture time the ``envelope`` says."""
    if type(source) is not dict or "table" not in source:
        return None, read_source(source, envelope)[1]
    for field in _TABLE_FIELDS:
        value = source.get(field)
        if value is not None and type(value) is not str:
            raise DecodeError(NAME, f"expected a string, got {json_type(value)}", field=f"source.{field}")
    if source["table"] is None:
        raise DecodeError(NAME, "expected the table name, got null", field="source.table")
    table = Table(source["table"], source.get("namespace"), source.get("db"))
    # Without a "table" field, debezium-json's reading takes no table fields out of the position.
    return table, read_source({field: value for field, value in source.items() if field not in _TABLE_FIELDS},
                              envelope)[1]


def _source_fields(event: ChangeEvent) -> dict[str, Any]:
    source, table = event.source, event.table
    fields: dict[str, Any] = {}
    if source.system is not None:
        fields["connector"] = source.system
    for name, value in source.position:
        fields[name] = value if type(value) in AS_IS_TYPES else json_form(value)
    if table is not None:
        fields.update(db=table.catalog, namespace=table.schema, table=table.name)
    write_time(fields, source.commit_time_us)
    return fields


# The ``source`` fields that decoding reads as something other than the position, with a table and without one.
_RESERVED = frozenset(_SYSTEM_AND_TIME_FIELDS + _TABLE_FIELDS)
_RESERVED_WITHOUT_TABLE = frozenset((*_SYSTEM_AND_TIME_FIELDS, "table"))


def _reserved(table: Table | None) -> frozenset[str]:
    """The ``source`` fields that decoding reads as something other than the position."""
    return _RESERVED_WITHOUT_TABLE if table is None else _RESERVED


# The wrapper's schema of each layout met (``_schema_layout``), as its JSON text: a stream repeats a few.
_SCHEMA_TEXTS: dict[tuple[Any, ...], msgspec.Raw] = {}
_MAX_SCHEMA_TEXTS = 1024


def _schema_of(event: ChangeEvent, payload: dict[str, Any]) -> Any:
    """The wrapper's schema for ``payload`` (``_envelope_schema``): generated once for each layout it depends on
    alone, and written from its JSON text after that; generated each time where the layout does not say it all."""
    layout = _schema_layout(event, payload)
    if layout is None:
        return _envelope_schema(event, payload)
    text = _SCHEMA_TEXTS.get(layout)
    if text is None:
        if len(_SCHEMA_TEXTS) >= _MAX_SCHEMA_TEXTS:
            _SCHEMA_TEXTS.clear()
        text = _SCHEMA_TEXTS[layout] = msgspec.Raw(encode(_envelope_schema(event, payload)))
    return text


def _schema_layout(event: ChangeEvent, payload: dict[str, Any]) -> tuple[Any, ...] | None:
    """What ``_envelope_schema`` of ``payload`` depends on, where that is all: the payload's fields, each row's
    names and kinds of value (cells without a type, of scalars: ``connect_schema.plain_layout``) and the names and
    kinds of value of ``source``'s fields (scalars); None where a row or ``source`` holds anything else."""
    rows = []
    for image in (event.before, event.after):
        layout = None if image is None else connect_schema.plain_layout(image)
        if image is not None and layout is None:
            return None
        rows.append(layout)
    source = []
    for name, value in payload["source"].items():
        kind = type(value)
        if kind is list or kind is dict:
            return None
        source.append((name, kind))
    return tuple(payload), rows[0], rows[1], tuple(source)


def _envelope_schema(event: ChangeEvent, payload: dict[str, Any]) -> dict[str, Any]:
    """The wrapper's schema for ``payload``, laid out as the documented one: unnamed, the payload's fields in order."""
    fields: list[dict[str, Any]] = []
    for name, value in payload.items():
        if name == "op":
            fields.append({"type": "string", "optional": False, "field": name})
        elif name in ("ts_ms", "ts_us"):
            fields.append({"type": "int64", "optional": False, "field": name})
        elif name in ("before", "after"):
            fields.append(connect_schema.image_struct_schema(event, name, None))
        elif name == "source":
            fields.append({**json_struct_schema(value, False, None), "field": name})
    return connect_schema.struct_schema(fields, False, None)
