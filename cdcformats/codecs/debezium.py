"""``debezium-json``: Debezium's change event envelope as Kafka Connect's JsonConverter writes it.

    {"before": null, "after": {"id": 1001, "email": "sally@example.com"},
     "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": 1695277757000,
                "snapshot": "false", "db": "inventory", "table": "customers", "file": "binlog.000008", "pos": 3693},
     "op": "c", "ts_ms": 1695277757016, "transaction": null}

With ``schemas.enable=true`` the envelope is the ``payload`` of ``{"schema": ..., "payload": ...}``; both read, and
the option ``schemas`` writes the wrapper. This is what Flink's and Paimon's ``debezium-json`` formats read.

How the message maps onto the canonical event:

* ``op`` c, u, d, r, t is INSERT, UPDATE, DELETE, READ, TRUNCATE (``m``, a logical-decoding message, is no row
  change and is refused). ``before`` / ``after`` null is an absent image; an object is an image whose cells are its
  fields in order, each value the JSON value it is. Nested objects or arrays as values are refused.
* ``source.connector`` is the source system; ``source.ts_ms`` (``ts_us`` where it is there) the commit time;
  ``source.table`` the table, in ``source.schema`` (then ``source.db`` is the catalog, as PostgreSQL writes it) or
  else in ``source.db`` (as MySQL writes it). Every other ``source`` field (version, name, snapshot, binlog file and
  position, LSN, ...) is kept verbatim and in order as the source position.
* The envelope's own ``ts_ms`` (``ts_us``) is when the connector read the change: the capture time.
* ``transaction`` fields become ``debezium.transaction.<field>`` attributes; other envelope fields are kept verbatim
  as ``debezium.field.<name>`` attributes. Both are written back.
* With the schema wrapper, ``before`` and ``after`` columns are read through their Connect schemas
  (``connect_schema``): ``bytes`` columns as bytes (base64 in the JSON), ``org.apache.kafka.connect.data.Decimal``
  columns as decimals, float columns as floats, and each cell's type keeps its column's schema (a Connect type name
  such as ``int32``, or the whole schema as JSON text when it says more). The envelope's own schema and the
  ``before`` / ``after`` structs' (name, version, optional, doc: everything but their fields) are kept, where they
  are not what writing generates, as ``debezium-json.schema.envelope`` / ``.before`` / ``.after`` attributes (compact
  JSON, ``"fields": []``), so that a message through Avro or Protobuf comes back as it was. ``source`` and
  ``transaction`` schemas are generated from their values.
* Which columns form the primary key is in the message key, not the value: give ``key_columns``.

Written from other formats (nothing is refused: every op has a code):

* an UPSERT becomes ``c`` (the row as it now is), read back as an INSERT;
* bytes become base64 text, decimals and NaN or an infinity their text, as Debezium's ``binary.handling.mode=base64``
  and ``decimal.handling.mode=string`` write them (with ``schemas``, bytes and decimals are typed instead, and a
  decimal no Connect Decimal holds, NaN or -0, is its text);
* a deleted cell (a Lindorm Delete or DeleteColumn, a Tablestore DO/DA) is the column set to null, in the ``u`` the
  change is: what a Debezium consumer reads as "this column is now empty". Cell versions are not written, nor types
  without ``schemas``; a column twice in one image keeps its first cell;
* key cells that the event keeps outside its row (Tablestore's primary key) are put in front of the row, which is
  where Debezium has them; with ``key_columns`` the key is what reading it out of the row gives;
* a position entry whose name repeats, or names a ``source`` field of its own (``connector``, ``ts_ms``, ``db``...),
  is left out; a kept attribute is written back once, transaction fields as JSON scalars and kept envelope fields as
  canonical JSON text (a value that is no JSON text as the JSON string it is); other formats' attributes are not;
* an UPDATE is written with the before image it has: one without (a Tablestore UpdateRow) is a ``u`` with
  ``"before": null``, which reads back here exactly but which Flink's ``debezium-json`` reader refuses, since it emits
  the update-before row from ``before``; for Flink, write such streams as ``paimon-log`` in upsert mode, which needs
  no before image.

With ``schemas=True`` the envelope is written inside the wrapper, with Debezium's envelope schema: a struct named
``<server>.<db>.<table>.Envelope`` (the server is the position's ``name``) with the fields the payload has, in its
order; ``before`` and ``after`` are optional structs named ``<server>.<db>.<table>.Value`` generated from the images'
cells as ``connect_schema`` does (an absent image gets the other one's struct, as Debezium has one row schema),
``source`` a struct named ``io.debezium.connector.<connector>.Source`` and ``transaction`` an optional struct, both
typed from their JSON values; the ``debezium-json.schema.*`` attributes replace the generated envelope and row
struct schemas (their fields stay the ones generated from the cells), and a cell's type that is a column schema is
that column's. Decimals are then the Connect Decimal's base64 bytes, so bytes, decimals, NaN and infinities and cell
types read back exactly. Kept envelope fields (``debezium.field.*``) are JSON of any shape: they are written in the
payload but not described in the schema, so Connect readers skip them. A bytes or decimal value in the position has
no typed form in ``source`` (written as text), so it is reported as dropped.

Normal form (what ``encode`` writes): the envelope, inside the wrapper with ``schemas``, fields in the order ``before``,
``after``, ``source``, ``op``, ``ts_ms``, then ``ts_us`` when the capture time has microseconds, ``transaction``
when there is one, then the kept fields; ``source`` holds ``connector``, ``ts_ms`` (``ts_us``), ``db`` (``schema``),
``table``, then the position.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from ..codec import JvmDecoder, Option, flag
from ..errors import DecodeError
from ..losses import Loss, without
from ..model import INT64_MAX, INT64_MIN, Cell, ChangeEvent, Entries, Source, Table, Value
from ._kit import connect_schema, kept_fields
from ._kit.debezium_envelope import (
    CODE_OF_OP,
    FIELD_ATTRIBUTE,
    NAME,
    OP_OF_CODE,
    SOURCE_FIELDS,
    TRANSACTION_ATTRIBUTE,
    canonical_json,
    column_schemas,
    image_cells,
    image_fields,
    json_struct_schema,
    op_losses,
    position_losses,
    read_source,
    read_time,
    write_time,
)
from ._kit.json_message import MAX_MESSAGE_BYTES, SCALAR_TYPES, encode, json_type, load_object
from ._kit.keys import KEY_COLUMNS, KeyedByColumns
from ._kit.typed_text import json_form

SCHEMA_ATTRIBUTE = "debezium-json.schema."
_ENVELOPE_FIELDS = ("before", "after", "source", "op", "ts_ms", "ts_us", "transaction")


SCHEMAS = Option("schemas", "write the schemas.enable=true wrapper {schema, payload} with Debezium's envelope "
                            "schema, which types bytes and decimal columns", False, flag)


class DebeziumJsonCodec(KeyedByColumns):
    name = NAME
    description = "Debezium change events as Kafka Connect JSON (with or without the schema wrapper)"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "op.TRUNCATE", "table", "table.schema", "table.catalog",
        "key", "before", "after", "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "value.nested", "source.system", "source.position", "source.commit_time", "source.capture_time",
        "source.time.sub_ms",
    })
    own_attributes = frozenset({TRANSACTION_ATTRIBUTE, FIELD_ATTRIBUTE, SCHEMA_ATTRIBUTE})
    options = (KEY_COLUMNS, SCHEMAS, MAX_MESSAGE_BYTES)
    key_in_row = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.schemas: bool = self.config["schemas"]
        if self.schemas:
            self.carries = self.carries | connect_schema.TYPED_FEATURES

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_message(self, message: bytes) -> ChangeEvent:
        document = load_object(NAME, message, self.config["max_message_bytes"])
        columns: dict[str, dict[str, Any]] = {}
        schema = None
        if "payload" in document and "schema" in document and "op" not in document:
            schema, columns = document["schema"], column_schemas(document["schema"])
            document = document["payload"]
            if type(document) is not dict:
                raise DecodeError(NAME, f"expected an object, got {json_type(document)}", field="payload")
        code = document.get("op")
        if type(code) is not str or code not in OP_OF_CODE:
            raise DecodeError(NAME, f"op {code!r} is not a row change; expected one of {', '.join(OP_OF_CODE)}",
                              field="op")
        before = image_cells(document.get("before"), "before", columns.get("before", {}))
        after = image_cells(document.get("after"), "after", columns.get("after", {}))
        table, source = read_source(document.get("source"))
        capture_time = read_time(document, "")
        attributes = _transaction(document.get("transaction"))
        attributes += kept_fields.read(FIELD_ATTRIBUTE, document.items(), _ENVELOPE_FIELDS)
        source = Source(source.system, source.position, source.commit_time_us, capture_time)
        event = ChangeEvent(OP_OF_CODE[code], table, (), before, after, source, attributes=tuple(attributes))
        event = self.with_key_read(event)
        if schema is None:
            return event
        generated = _headers(_envelope_schema(event, self._payload(event)))
        kept = [(SCHEMA_ATTRIBUTE + part, encode(header).decode()) for part, header in _headers(schema).items()
                if header != generated.get(part)]
        return replace(event, attributes=(*attributes, *kept)) if kept else event

    def jvm_decoder(self) -> JvmDecoder:
        """``jvm/DebeziumJsonDecoder.java``, this decoder in Java (``schemas`` is for writing: both read either)."""
        return JvmDecoder("cdcformats.codecs.jvm.DebeziumJsonDecoder", {
            "max_message_bytes": str(self.config["max_message_bytes"]), **self.key_columns.settings()})

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        document = self._payload(event)
        if self.schemas:
            return encode({"schema": _kept_headers(_envelope_schema(event, document), event.attributes),
                           "payload": document})
        return encode(document)

    def _payload(self, event: ChangeEvent) -> dict[str, Any]:
        document: dict[str, Any] = {
            "before": image_fields(event.before, self.schemas),
            "after": image_fields(event.after, self.schemas),
            "source": _source_fields(event), "op": CODE_OF_OP[event.op],
        }
        write_time(document, event.source.capture_time_us)
        transaction = {name[len(TRANSACTION_ATTRIBUTE):]: value for name, value in event.attributes
                       if name.startswith(TRANSACTION_ATTRIBUTE)}
        if transaction:
            document["transaction"] = transaction
        document.update(kept_fields.write(NAME, event.attributes, FIELD_ATTRIBUTE, _ENVELOPE_FIELDS))
        return document

    # -- what is lost ---------------------------------------------------------------------------------------------

    def cell_losses(self, cell: Cell, path: str) -> list[Loss]:
        losses = super().cell_losses(cell, path)
        return losses + connect_schema.schema_losses(cell, path, losses) if self.schemas else losses

    def dropped_details(self, event: ChangeEvent) -> list[Loss]:
        return op_losses(event, CODE_OF_OP, NAME) + self.envelope_losses(event)

    def envelope_losses(self, event: ChangeEvent) -> list[Loss]:
        """What the envelope does not give back, whatever its op: the key read out of the row, the source position
        and the kept attributes (paimon-log writes its values with this)."""
        losses = self.dropped_key(event, getattr(event, self.row_image_name(event)))
        losses += position_losses(event, _reserved(event.table), self.schemas)
        generated = {}
        if self.schemas:  # the headers generated for this event; they depend on its table and source alone
            bare = replace(without(event, losses), attributes=())
            generated = _headers(_envelope_schema(bare, self._payload(bare)))

        def group(name: str, value: Value) -> tuple[int, Value] | None:
            if name.startswith(SCHEMA_ATTRIBUTE):
                header = _header_of(name[len(SCHEMA_ATTRIBUTE):], value)
                kept = header is not None and header != generated.get(name[len(SCHEMA_ATTRIBUTE):])
                return (2, encode(header).decode()) if kept else None
            return _attribute_group(name, value)

        losses += kept_fields.losses(event.attributes, group, NAME, "debezium.transaction.*, debezium.field.*, "
                                                                   "debezium-json.schema.*")
        return losses


def _attribute_group(name: str, value: Value) -> tuple[int, Value] | None:
    """Transaction fields are written first, as JSON scalars; kept envelope fields then, as canonical JSON text."""
    if name.startswith(TRANSACTION_ATTRIBUTE):
        return 0, json_form(value)
    if name.startswith(FIELD_ATTRIBUTE) and name[len(FIELD_ATTRIBUTE):] not in _ENVELOPE_FIELDS:
        return 1, canonical_json(value)
    return None


def _headers(schema: Any) -> dict[str, Any]:
    """The parts of an envelope schema that cells do not say, as ``debezium-json.schema.*`` attributes keep them:
    the envelope's and the row structs' own schemas (name, version, optional, doc...) with their fields left out
    (``"fields": []``)."""
    if type(schema) is not dict:
        return {}
    headers = {"envelope": {**schema, "fields": []}}
    for field in schema.get("fields") or ():
        if type(field) is dict and field.get("field") in ("before", "after") and field.get("type") == "struct":
            headers[field["field"]] = {**field, "fields": []}
    return headers


def _header_of(part: str, text: Value) -> dict[str, Any] | None:
    """The header a ``debezium-json.schema.<part>`` attribute keeps, when it is one that can be written."""
    try:
        header = msgspec.json.decode(text) if type(text) is str else None
    except (msgspec.DecodeError, RecursionError):
        return None
    if part not in ("envelope", "before", "after") or type(header) is not dict or header.get("fields") != []:
        return None
    if header.get("type") != "struct" or (part != "envelope" and header.get("field") != part):
        return None
    return header


def _kept_headers(schema: dict[str, Any], attributes: Entries) -> dict[str, Any]:
    """The envelope schema with the headers that the event's ``debezium-json.schema.*`` attributes keep."""
    headers = {}
    for name, value in attributes:
        if name.startswith(SCHEMA_ATTRIBUTE):
            assert isinstance(value, str)  # written(): envelope_losses keeps a header only as its JSON text
            headers[name[len(SCHEMA_ATTRIBUTE):]] = msgspec.json.decode(value)
    fields = [{**headers[field["field"]], "fields": field["fields"]} if field["field"] in headers else field
              for field in schema["fields"]]
    return {**headers.get("envelope", schema), "fields": fields}


# -- decoding helpers -------------------------------------------------------------------------------------------------

def _transaction(transaction: Any) -> list[tuple[str, Value]]:
    if transaction is None:
        return []
    if type(transaction) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(transaction)}", field="transaction")
    attributes = []
    for field, value in transaction.items():
        if type(value) not in SCALAR_TYPES:
            raise DecodeError(NAME, f"expected a scalar value, got {json_type(value)}", field=f"transaction.{field}")
        if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
            raise DecodeError(NAME, f"{value} is outside the signed 64-bit range", field=f"transaction.{field}")
        attributes.append((TRANSACTION_ATTRIBUTE + field, value))
    return attributes


# -- encoding helpers -------------------------------------------------------------------------------------------------

def _envelope_schema(event: ChangeEvent, document: dict[str, Any]) -> dict[str, Any]:
    """Debezium's envelope schema for ``document``, the payload written for ``event``."""
    server = dict(event.source.position).get("name")
    parts = [server if type(server) is str else None]
    if event.table is not None:
        parts += [event.table.schema, event.table.name]
    prefix = "".join(f"{part}." for part in parts if part is not None)
    connector = document["source"].get("connector")
    fields: list[dict[str, Any]] = []
    for name, value in document.items():
        if name in ("before", "after"):
            fields.append(connect_schema.image_struct_schema(event, name, f"{prefix}Value"))
        elif name == "source":
            source_name = f"io.debezium.connector.{connector}.Source" if type(connector) is str else None
            fields.append({**json_struct_schema(value, False, source_name), "field": name})
        elif name == "transaction":
            fields.append({**json_struct_schema(value, True, "event.block"), "field": name})
        elif name == "op":
            fields.append({"type": "string", "optional": False, "field": name})
        elif name in ("ts_ms", "ts_us"):
            fields.append({"type": "int64", "optional": True, "field": name})
    return connect_schema.struct_schema(fields, False, f"{prefix}Envelope")


def _source_fields(event: ChangeEvent) -> dict[str, Any]:
    source = event.source
    fields: dict[str, Any] = {}
    if source.system is not None:
        fields["connector"] = source.system
    write_time(fields, source.commit_time_us)
    table = event.table
    if table is not None:
        if table.catalog is not None:
            fields["db"], fields["schema"] = table.catalog, table.schema
        else:
            fields["db"] = table.schema
        fields["table"] = table.name
    fields.update((name, json_form(value)) for name, value in source.position)
    return fields


def _reserved(table: Table | None) -> frozenset[str]:
    """The ``source`` fields that decoding reads as something other than the position."""
    return frozenset(SOURCE_FIELDS) if table is not None else frozenset({"connector", "ts_ms", "ts_us", "table"})
