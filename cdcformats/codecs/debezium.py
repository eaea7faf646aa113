"""``debezium-json``: Debezium's change event envelope as Kafka Connect's JsonConverter writes it.

    {"before": null, "after": {"id": 1001, "email": "sally@example.com"},
     "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": 1695277757000,
                "snapshot": "false", "db": "inventory", "table": "customers", "file": "binlog.000008", "pos": 3693},
     "op": "c", "ts_ms": 1695277757016, "transaction": null}

With ``schemas.enable=true`` the envelope is the ``payload`` of ``{"schema": ..., "payload": ...}``; both read, and
the option ``schemas`` writes the wrapper. This is what Flink's and Paimon's ``debezium-json`` formats read.

How the message maps onto the canonical event:

* ``op`` c, u, d, r, t is INSERT, UPDATE, DELETE, READ, TRUNCATE. What changes no row is refused, saying what it
  is, or with the option ``skip_control`` skipped (decoded to no event, which a conversion counts as skipped): a
  logical-decoding message (``op`` m), a heartbeat (``{"ts_ms": ...}`` alone, on ``__debezium-heartbeat.<prefix>``)
  and a transaction's BEGIN or END record (``status``, on ``<prefix>.transaction``). ``before`` / ``after`` null
  is an absent image; an object is an image whose cells are its fields in order, each value the JSON value it is.
  Nested objects or arrays as values are refused.
* ``source.connector`` is the source system; ``source.ts_ms`` (``ts_us`` where it is there) the commit time;
  ``source.table`` the table, in ``source.schema`` (then ``source.db`` is the catalog, as PostgreSQL writes it) or
  else in ``source.db`` (as MySQL writes it). Every other ``source`` field (version, name, snapshot, binlog file and
  position, LSN, ...) is kept verbatim and in order as the source position.
* The envelope's own ``ts_ms`` (``ts_us``) is when the connector read the change: the capture time.
* ``transaction`` fields become ``debezium.transaction.<field>`` attributes; other envelope fields are kept verbatim
  as ``debezium.field.<name>`` attributes. Both are written back.
* A message is written back as it came. Where the order of the envelope's fields or of ``source``'s is not the
  one writing gives (below), or the envelope has a field that holds null and that writing leaves out (a null
  ``transaction``, as Debezium 2 writes it), the names of the fields in their order are kept as the attributes
  ``debezium-json.fields.envelope`` / ``.source`` (a JSON array of text).
* With the schema wrapper, ``before`` and ``after`` columns are read through their Connect schemas
  (``connect_schema``): ``bytes`` columns as bytes (base64 in the JSON), ``org.apache.kafka.connect.data.Decimal``
  columns as decimals, float columns as floats, and each cell's type keeps its column's schema (a Connect type name
  such as ``int32``, or the whole schema as JSON text when it says more). The envelope's schema, where it is not
  the one writing generates, is kept whole as the attribute ``debezium-json.schema.envelope`` (compact JSON, the
  ``before`` and ``after`` structs with ``"fields": []``, since the cells keep their columns; with their columns in
  a change without rows, a TRUNCATE, where no cell does): the ``source`` connector's own schema (``row`` an int32,
  ``snapshot`` an ``io.debezium.data.Enum`` with its default, which fields are optional), the transaction block's,
  the order of the fields, and whatever else it says. So a message through Avro or Protobuf comes back as it was.
  A wrapper whose schema is null (JsonConverter's form of a record without one) is kept as the attribute
  ``debezium-json.schemaless_wrapper`` (true).
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

JSON is written as JsonConverter's Jackson spells it, so that Debezium's own messages come back byte for byte:
floats as Java's ``Double.toString`` (``2.25``, ``1.0E7``, ``-3.4E38``), control characters escaped with upper-case
hex digits, characters beyond the BMP as escaped surrogate pairs (``\\uD83D\\uDE00``), everything else as it is.

With ``schemas=True`` the envelope is written inside the wrapper, with the envelope schema the event keeps (each of
its fields whose schema does not hold the payload's value, or null where the payload lacks the field, replaced by
the one generated, or left out), or else Debezium's envelope schema generated for it: a struct named
``<server>.<db>.<table>.Envelope`` (the server is the position's ``name``) with the fields the payload has, in its
order; ``before`` and ``after`` are optional structs named ``<server>.<db>.<table>.Value`` generated from the images'
cells as ``connect_schema`` does (an absent image gets the other one's struct, as Debezium has one row schema),
``source`` a struct named ``io.debezium.connector.<connector>.Source`` typed from its JSON values, and
``transaction`` the optional struct ``event.block`` version 1, typed from its values (a null one has Debezium's
``id``, ``total_order``, ``data_collection_order``). A cell's type that is a column schema is that column's. Decimals
are then the Connect Decimal's base64 bytes, so bytes, decimals, NaN and infinities and cell types read back
exactly. Kept envelope fields (``debezium.field.*``) are JSON of any shape: they are written in the payload but the
generated schema does not describe them, so Connect readers skip them. A bytes or decimal value in the position has
no typed form in ``source`` (written as text), so it is reported as dropped. A message that came in a wrapper whose
schema is null goes back in one, as without ``schemas``. Without ``schemas`` the envelope schema is not written, and
is reported as dropped.

Normal form (what ``encode`` writes): the envelope, inside the wrapper with ``schemas``, with its fields and its
source's in the order the event keeps, where they are the fields it writes (a null row, an empty source, a null
transaction or time are then written where they are named); else in the order ``before``, ``after``, ``source``
(unless it is empty), ``op``, ``ts_ms``, then ``ts_us`` when the capture time has microseconds, ``transaction`` when
there is one, then the kept fields; ``source`` holds ``connector``, ``ts_ms`` (``ts_us``), ``db`` (``schema``),
``table``, then the position. A null time is written as the other time of the pair says (the event holds one).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import msgspec
from msgspec.structs import replace

from ..contract import JvmDecoder, JvmEncoder, Option, flag
from ..core import time_units, typed_text
from ..core.typed_text import json_form
from ..errors import DecodeError
from ..model import (
    INT64_MAX,
    INT64_MIN,
    Cell,
    ChangeEvent,
    Entries,
    Image,
    Op,
    Source,
    Table,
    Value,
    is_nested,
    same_entries,
)
from ._kit import connect_schema, kept_fields
from ._kit.debezium_envelope import (
    CODE_OF_OP,
    FIELD_ATTRIBUTE,
    NAME,
    OP_OF_CODE,
    RESERVED,
    RESERVED_WITHOUT_TABLE,
    TRANSACTION_ATTRIBUTE,
    WRAPPER_OPENINGS,
    ColumnPlans,
    WrapperSchemas,
    canonical_json,
    column_plans,
    envelope_written_whole,
    image_cells,
    image_fields,
    json_struct_schema,
    position_as_written,
    position_whole,
    read_source,
    with_op_code,
)
from ._kit.json_message import (
    MAX_MESSAGE_BYTES,
    SCALAR_TYPES,
    encode,
    encode_as_jackson,
    json_type,
    load_object,
    parse,
    with_jackson_floats,
)
from ._kit.keys import KEY_COLUMNS, KeyedByColumns

# The envelope's schema as the message gave it, where writing would generate another (its rows' columns left out).
SCHEMA_ATTRIBUTE = "debezium-json.schema."
ENVELOPE_SCHEMA = SCHEMA_ATTRIBUTE + "envelope"
# True: the message came in the wrapper with a null schema, as JsonConverter writes a record that has none.
SCHEMALESS_WRAPPER = "debezium-json.schemaless_wrapper"
# The names of the envelope's and the source's fields, in the message's order, where writing would give another.
FIELDS_ATTRIBUTE = "debezium-json.fields."
ENVELOPE_FIELDS = FIELDS_ATTRIBUTE + "envelope"
SOURCE_FIELD_NAMES = FIELDS_ATTRIBUTE + "source"
_OWN = (FIELDS_ATTRIBUTE, SCHEMA_ATTRIBUTE, SCHEMALESS_WRAPPER)  # the attributes that say how a message was written
_ENVELOPE_FIELDS = ("before", "after", "source", "op", "ts_ms", "ts_us", "transaction")
_ENVELOPE_FIELD_SET = frozenset(_ENVELOPE_FIELDS)
_NO_PLANS: dict[str, Any] = {}  # an envelope without a schema: no column is read by a plan
_ROWS = ("before", "after")
# Read once: reading a member off its class runs Python code (enum's metaclass).
_OP_UPSERT, _OP_DELETE = Op.UPSERT, Op.DELETE
_MILLISECOND = time_units.MILLISECOND
# The fields of Debezium's transaction block (``event.block``): the schema of a null transaction.
_TRANSACTION_BLOCK = [{"type": "string", "optional": False, "field": "id"},
                      {"type": "int64", "optional": False, "field": "total_order"},
                      {"type": "int64", "optional": False, "field": "data_collection_order"}]


SKIP_CONTROL = Option("skip_control", "skip messages that change no row (heartbeats, transactions' BEGIN and END "
                                      "records, logical-decoding messages) instead of refusing them", False, flag)
SCHEMAS = Option("schemas", "write the schemas.enable=true wrapper {schema, payload} with Debezium's envelope "
                            "schema, which types bytes and decimal columns", False, flag)


class DebeziumJsonCodec(KeyedByColumns):
    name = NAME
    description = "Debezium change events as Kafka Connect JSON (with or without the schema wrapper)"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "op.TRUNCATE", "table", "table.schema", "table.catalog",
        "key", "before", "after", "image.columns",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "value.nested", "source.system", "source.position", "source.commit_time", "source.capture_time",
        "source.time.sub_ms",
    })
    own_attributes = frozenset({TRANSACTION_ATTRIBUTE, FIELD_ATTRIBUTE, FIELDS_ATTRIBUTE, SCHEMALESS_WRAPPER})
    options = (KEY_COLUMNS, SCHEMAS, SKIP_CONTROL, MAX_MESSAGE_BYTES)
    key_in_row = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.schemas: bool = self.config["schemas"]
        self.schemaless = self
        self.skip_control: bool = self.config["skip_control"]
        self._keyed = bool(self.key_columns)  # told once: KeyColumns tells it by a call
        self._max_bytes: int = self.config["max_message_bytes"]
        self._wrapper_schemas = WrapperSchemas()
        if self.schemas:
            self.carries = self.carries | connect_schema.TYPED_FEATURES
            self.own_attributes = self.own_attributes | {SCHEMA_ATTRIBUTE}
            # What writes a message that came in a wrapper without a schema: it goes back in one.
            self.schemaless = DebeziumJsonCodec(**{**self.given, "schemas": False})

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_messages(self, message: bytes) -> list[ChangeEvent]:
        """The event of a row change; none for a message that changes no row, under the option skip_control."""
        envelope, schema, columns = self._envelope(message)
        if self.skip_control and _control_message(envelope) is not None:
            return []
        return [self._event(envelope, schema, columns)]

    def decode_message(self, message: bytes) -> ChangeEvent:
        return self._event(*self._envelope(message))

    def decode_keyed(self, message: bytes, key: Image) -> ChangeEvent:
        """The event of a message whose key is given, not read out of its row (paimon-log's values)."""
        return self._event(*self._envelope(message), key)

    def _envelope(self, message: bytes) -> tuple[dict[str, Any], Any, ColumnPlans | None]:
        """The envelope of a message; in JsonConverter's schema wrapper, the wrapper's schema and the plans of its
        columns (None: no wrapper)."""
        max_bytes = self._max_bytes
        if type(message) is bytes and len(message) <= max_bytes:
            if message.startswith(WRAPPER_OPENINGS):
                unwrapped = self._wrapper_schemas.unwrapped(message, max_bytes)
                if unwrapped is not None and type(unwrapped[0]) is dict:  # most wrapped messages: a schema read before
                    return unwrapped
            else:  # most messages: an envelope as it is, parsed here (load_object reads, or refuses, the others)
                try:
                    document = parse(message)
                except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                    pass
                else:
                    if type(document) is dict and "op" in document:  # no wrapper: one has no op (_unwrapped)
                        return document, None, None
        document = load_object(NAME, message, max_bytes)
        envelope = _unwrapped(document)
        if envelope is document:
            return document, None, None
        return envelope, document["schema"], column_plans(document["schema"])

    def _event(self, document: dict[str, Any], schema: Any, columns: ColumnPlans | None, key: Image | None = None
               ) -> ChangeEvent:
        """The event of an envelope, of the wrapper ``schema`` and ``columns`` (None: no wrapper), with ``key``, or
        else the key read out of its row. The path of every message read: what is asked of most messages is asked
        here, without a call."""
        wrapped = columns is not None
        code = document.get("op")
        if type(code) is not str or code not in OP_OF_CODE:
            control = _control_message(document)
            if control is not None:
                raise DecodeError(NAME, f"{control} changes no row (option skip_control skips it)", field="op")
            raise DecodeError(NAME, f"op {code!r} is not a row change; expected one of {', '.join(OP_OF_CODE)}",
                              field="op")
        before, after = document.get("before"), document.get("after")
        if columns:  # in a wrapper whose schema describes its columns: each read through its column's plan
            before = image_cells(before, "before", columns.get("before", _NO_PLANS))
            after = image_cells(after, "after", columns.get("after", _NO_PLANS))
        else:
            try:  # most images: null, or objects of scalars that the model holds as they are, and checks (cells_of)
                if before is not None:
                    before = tuple([Cell(name, value) for name, value in before.items()])
                if after is not None:
                    after = tuple([Cell(name, value) for name, value in after.items()])
            except (AttributeError, TypeError, ValueError):  # no object, a value to read, or one refused, named
                before = image_cells(document.get("before"), "before", _NO_PLANS)
                after = image_cells(document.get("after"), "after", _NO_PLANS)
        source_fields = document.get("source")
        table, source = read_source(source_fields, document)
        transaction = document.get("transaction")
        attributes = [] if transaction is None else _transaction(transaction)
        names = tuple(document)
        capture = source.capture_time_us
        # Most envelopes: no transaction, and the fields writing gives, in its order (so none of another's).
        if attributes or names != _PLAIN_ENVELOPE_FIELDS[
                before is not None, after is not None, table is not None or _says_something(table, source),
                0 if capture is None else 2 if capture % _MILLISECOND else 1]:  # _time_kind, without a call
            if not document.keys() <= _ENVELOPE_FIELD_SET:
                attributes += kept_fields.read(FIELD_ATTRIBUTE, document.items(), _ENVELOPE_FIELDS)
            # The order of the fields, where writing would give another (or leave out a null one).
            if names != _envelope_layout(_shape_of(before, after, table, source, attributes), None).default:
                attributes.append((ENVELOPE_FIELDS, encode(list(names)).decode()))
        if type(source_fields) is dict and not _in_default_order(source_fields, table, source):
            attributes.append((SOURCE_FIELD_NAMES, encode(list(source_fields)).decode()))
        op = OP_OF_CODE[code]
        if key is None:  # the key read out of its row (KeyedByColumns.with_key_read), before the event is made
            key = self.read_key(table, before if op is _OP_DELETE or after is None else after) if self._keyed else ()
        event = ChangeEvent(op, table, key, before, after, source, attributes=tuple(attributes))
        if wrapped and schema is None:  # JsonConverter's wrapper of a record that has no schema
            event = replace(event, attributes=(*event.attributes, (SCHEMALESS_WRAPPER, True)))
        elif schema is not None:
            generated = _envelope_schema(event, _payload(event, False), None, columns=False)
            given = _columns_left_out(schema) if before is not None or after is not None else schema
            if encode(given) != encode(generated):
                event = replace(event, attributes=(*event.attributes, (ENVELOPE_SCHEMA, encode(given).decode())))
        return event

    def jvm_decoder(self) -> JvmDecoder:
        """``cdcformats/jvm/decoders/DebeziumJsonDecoder.java``, this decoder in Java (``schemas`` is for writing:
        both read either)."""
        return JvmDecoder("cdcformats.jvm.decoders.DebeziumJsonDecoder", {
            "max_message_bytes": str(self.config["max_message_bytes"]),
            "skip_control": "true" if self.config["skip_control"] else "false", **self.key_columns.settings()})

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/DebeziumJsonEncoder.java``, this encoder in Java, with or without ``schemas``."""
        return JvmEncoder("cdcformats.jvm.encoders.DebeziumJsonEncoder", {
            "schemas": "true" if self.schemas else "false", **self.key_columns.settings()})

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        # Spelt as JsonConverter's Jackson writes JSON, floats included, so that Debezium's messages come back as
        # they were sent.
        if not self.schemas and not event.attributes:  # most events: no kept order, transaction or field
            message = envelope_written_whole(event)
            if message is not None:
                return message
        if event.attribute(SCHEMALESS_WRAPPER) is True:
            return encode_as_jackson({"schema": None, "payload": with_jackson_floats(_payload(event, False))})
        document = _payload(event, self.schemas)
        if self.schemas:
            return encode_as_jackson({"schema": _envelope_schema(event, document, _kept_schema(event)),
                                      "payload": with_jackson_floats(document)})
        return encode_as_jackson(with_jackson_floats(document))

    # -- what is lost ---------------------------------------------------------------------------------------------

    def encode_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """An event of an op with a code, its key the one read out of its row, and an envelope written whole
        (``envelope_written_whole``)."""
        if event.op is _OP_UPSERT:
            return None
        key = event.key
        if key or self._keyed:  # most events without key_columns have no key, which is what reading one gives
            row = getattr(event, self.row_image_name(event))
            if key if row is None else not self.holds_key_as_read(event, row):
                return None
        message = envelope_written_whole(event) if not self.schemas else self._typed_envelope_written_whole(event)
        return None if message is None else [message]

    def _typed_envelope_written_whole(self, event: ChangeEvent) -> bytes | None:
        """With schemas, the envelope of ``event`` where it writes it as it is (``envelope_written_whole``, and
        ``connect_schema.written_whole`` typed)."""
        if event.attributes or event.key_only:
            return None
        for image in (event.before, event.after):
            if image is not None and not connect_schema.written_whole(image, True):
                return None
        return self.encode_event(event) if position_whole(event.source.position, _reserved(event)) else None

    def carried_cell(self, cell: Cell) -> Cell:
        cell = super().carried_cell(cell)
        return connect_schema.as_read_back(cell) if self.schemas else cell

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        if self.schemas and event.attribute(SCHEMALESS_WRAPPER) is True:
            return self.schemaless.normal_form(event)  # written as without schemas, in the wrapper it came in
        return self.envelope_form(with_op_code(super().normal_form(event), CODE_OF_OP, NAME))

    def envelope_form(self, event: ChangeEvent) -> ChangeEvent:
        """What the envelope gives back, whatever its op: the key read out of the row, the source position and the
        kept attributes (paimon-log writes its values with this)."""
        written = self.with_key_as_read(event, getattr(event, self.row_image_name(event)))
        written = position_as_written(written, _reserved(written), self.schemas)
        own = (self._own_attributes_written(written)
               if any(name.startswith(_OWN) for name, _ in event.attributes) else {})

        def group(name: str, value: Value) -> tuple[int, Value] | None:
            if name.startswith(_OWN):
                return own.get(name)
            return _attribute_group(name, value)

        attributes = kept_fields.as_decoded(event.attributes, group)
        return written if same_entries(attributes, event.attributes) else replace(written, attributes=attributes)

    def _own_attributes_written(self, event: ChangeEvent) -> dict[str, tuple[int, Value]]:
        """The ``debezium-json.fields.*`` and ``.schema.*`` attributes that a message of ``event`` gives back, each
        with its group and the text it reads back as: those that fit what the event writes, and say something that
        writing would not generate."""
        attributes = kept_fields.as_decoded(event.attributes, _attribute_group)
        own: dict[str, tuple[int, Value]] = {}
        envelope_shape = _envelope_shape(event, attributes)
        for group, name, shape, layout_of in (
                (2, ENVELOPE_FIELDS, envelope_shape, _envelope_layout),
                (3, SOURCE_FIELD_NAMES, _source_shape(event), _source_layout)):
            names = _names(event.attribute(name))
            if names is not None and layout_of(shape, names).fits(names) and names != layout_of(shape, None).default:
                own[name] = (group, encode(list(names)).decode())
        envelope_names = _names(event.attribute(ENVELOPE_FIELDS))
        if "source" not in _envelope_layout(envelope_shape, envelope_names).order(envelope_names):
            own.pop(SOURCE_FIELD_NAMES, None)  # an empty source that is not written: nor is the order of its fields
        kept = _kept_schema(event)
        if event.attribute(SCHEMALESS_WRAPPER) is True:
            own[SCHEMALESS_WRAPPER] = (4, True)
        elif self.schemas and kept is not None:
            written = replace(event, attributes=(*attributes, *((name, text) for name, (_, text) in own.items())))
            payload = _payload(written, self.schemas)
            generated = encode(_envelope_schema(written, payload, None, columns=False))
            merged = encode(_envelope_schema(written, payload, kept, columns=False))
            if merged != generated:
                own[ENVELOPE_SCHEMA] = (4, merged.decode())
        return own


def _attribute_group(name: str, value: Value) -> tuple[int, Value] | None:
    """Transaction fields are written first, as JSON scalars; kept envelope fields then, as canonical JSON text."""
    if name.startswith(TRANSACTION_ATTRIBUTE):
        return 0, _transaction_value(value)
    if name.startswith(FIELD_ATTRIBUTE) and name[len(FIELD_ATTRIBUTE):] not in _ENVELOPE_FIELDS:
        return 1, canonical_json(value)
    return None


def _transaction_value(value: Value) -> Any:
    """A transaction field as written: a JSON scalar (a nested value as its JSON text, since the block holds
    scalars)."""
    return typed_text.render(value) if is_nested(value) else json_form(value)


# -- decoding helpers -------------------------------------------------------------------------------------------------

def _unwrapped(document: dict[str, Any]) -> dict[str, Any]:
    """The envelope: the ``payload`` of JsonConverter's schema wrapper, or the document itself."""
    wrapped = "payload" in document and "schema" in document and "op" not in document
    return document["payload"] if wrapped and type(document["payload"]) is dict else document


def _control_message(envelope: dict[str, Any]) -> str | None:
    """What a message that Debezium sends beside the row changes is, or None for any other."""
    if envelope.get("op") == "m":
        return "a logical-decoding message (op m)"
    if "op" in envelope:
        return None
    if envelope.get("status") in ("BEGIN", "END") and "id" in envelope:
        return f"a transaction's {envelope['status']} record"
    if tuple(envelope) == ("ts_ms",):
        return "a heartbeat"
    return None


def _transaction(transaction: Any) -> list[tuple[str, Value]]:
    """The attributes of a transaction block that is not null."""
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


# -- the fields of the envelope and of its source ---------------------------------------------------------------------

class _Layout(NamedTuple):
    """The fields an object (the envelope, its ``source``) can be written with: ``available`` every one it can have,
    ``required`` those it must have for the event to read back, ``default`` their order when no kept order says
    another."""

    available: frozenset[str]
    required: frozenset[str]
    default: tuple[str, ...]

    def fits(self, names: tuple[str, ...] | None) -> bool:
        """Whether ``names`` is an order to write the object in: every required field, and only fields it has."""
        return names is not None and self.required.issubset(names) and self.available.issuperset(names)

    def order(self, names: tuple[str, ...] | None) -> tuple[str, ...]:
        return names if names is not None and self.fits(names) else self.default


def _names(value: Value) -> tuple[str, ...] | None:
    """The field names a ``debezium-json.fields.*`` attribute keeps: a JSON array of distinct strings."""
    return _names_in(value) if type(value) is str else None


@lru_cache(maxsize=256)  # an event's own order, the same for every message of a table
def _names_in(text: str) -> tuple[str, ...] | None:
    try:
        names = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(names) is not list or any(type(name) is not str for name in names) or len(set(names)) != len(names):
        return None
    return tuple(names)


_TIMES = frozenset({"ts_ms", "ts_us"})


def _time_kind(instant: int | None) -> int:
    """0: no time; 1: a time in whole milliseconds; 2: a time with microseconds."""
    return 0 if instant is None else 2 if instant % time_units.MILLISECOND else 1


def _times(kind: int, ts_us_named: bool) -> tuple[frozenset[str], tuple[str, ...]]:
    """``ts_ms`` and ``ts_us`` of a time of ``kind``: which must be written (``ts_us`` where the time has
    microseconds, else ``ts_ms`` unless the kept order has ``ts_us``), and their default order."""
    if kind == 0:
        return frozenset(), ()
    if kind == 2:
        return frozenset({"ts_us"}), ("ts_ms", "ts_us")
    return frozenset() if ts_us_named else frozenset({"ts_ms"}), ("ts_ms",)


def _time_values(instant: int | None) -> dict[str, int | None]:
    if instant is None:
        return {"ts_ms": None, "ts_us": None}
    return {"ts_ms": time_units.in_unit(instant, time_units.MILLISECOND), "ts_us": instant}


class _EnvelopeShape(NamedTuple):
    """What of an event decides the envelope's fields: which rows it has, whether its source says something, its
    capture time's kind (``_time_kind``), whether it has a transaction, and the fields it keeps."""

    before: bool
    after: bool
    source: bool
    time_kind: int
    transaction: bool
    kept: tuple[str, ...]


def _envelope_shape(event: ChangeEvent, attributes: Entries | None = None) -> _EnvelopeShape:
    """The envelope's shape of ``event`` (with ``attributes`` in place of its own, where given)."""
    return _shape_of(event.before, event.after, event.table, event.source,
                     event.attributes if attributes is None else attributes)


def _says_something(table: Table | None, source: Source) -> bool:
    """Whether the ``source`` object of an event has something to say, so that it is written."""
    return source.system is not None or source.commit_time_us is not None or table is not None or bool(source.position)


def _shape_of(before: Image | None, after: Image | None, table: Table | None, source: Source,
              attributes: Sequence[tuple[str, Value]]) -> _EnvelopeShape:
    return _EnvelopeShape(
        before is not None, after is not None, _says_something(table, source),
        _time_kind(source.capture_time_us), any(name.startswith(TRANSACTION_ATTRIBUTE) for name, _ in attributes),
        tuple(dict.fromkeys(name[len(FIELD_ATTRIBUTE):] for name, _ in attributes if name.startswith(FIELD_ATTRIBUTE)
                            and name[len(FIELD_ATTRIBUTE):] not in _ENVELOPE_FIELDS)))


@lru_cache(maxsize=1024)  # a layout depends on the shape alone, which a stream repeats
def _envelope_layout(shape: _EnvelopeShape, names: tuple[str, ...] | None) -> _Layout:
    """The envelope: ``before``, ``after``, ``source`` when it says something, ``op``, the capture time,
    ``transaction`` when the event has one, then the kept fields. A null row, an empty source, a null transaction
    and a null time are written only where ``names`` has them."""
    times, default_times = _times(shape.time_kind, names is not None and "ts_us" in names)
    required = {"op", *times, *shape.kept, *(name for name, present in (
        ("before", shape.before), ("after", shape.after), ("source", shape.source),
        ("transaction", shape.transaction)) if present)}
    default = ("before", "after", *(("source",) if shape.source else ()), "op", *default_times,
               *(("transaction",) if shape.transaction else ()), *shape.kept)
    return _Layout(frozenset(_ENVELOPE_FIELDS).union(shape.kept), frozenset(required), default)


class _SourceShape(NamedTuple):
    """What of an event decides its source's fields: whether it has a system, its commit time's kind, its table
    (whether it has a catalog and a schema) and the names of its position."""

    system: bool
    time_kind: int
    table: tuple[bool, bool] | None
    position: tuple[str, ...]


def _source_shape(event: ChangeEvent) -> _SourceShape:
    return _source_shape_of(event.table, event.source)


def _source_shape_of(table: Table | None, source: Source) -> _SourceShape:
    return _SourceShape(source.system is not None, _time_kind(source.commit_time_us),
                        None if table is None else (table.catalog is not None, table.schema is not None),
                        tuple(dict.fromkeys(name for name, _ in source.position)))


@lru_cache(maxsize=1024)
def _source_layout(shape: _SourceShape, names: tuple[str, ...] | None) -> _Layout:
    """``source``: ``connector``, the commit time, the table (``db``, with ``schema`` where the table has a catalog
    or ``names`` has it, ``table``), then the position."""
    required, default_times = _times(shape.time_kind, names is not None and "ts_us" in names)
    required |= {"connector"} if shape.system else set()
    available = {"connector", *_TIMES}
    default: tuple[str, ...] = (*(("connector",) if shape.system else ()), *default_times)
    if shape.table is not None:
        catalog, schema = shape.table
        available |= {"db", "table"}
        required |= {"table"}
        if catalog or (names is not None and "schema" in names):
            available.add("schema")
            required |= {"schema", *(("db",) if catalog else ())}
            default += ("db", "schema", "table")
        else:
            required |= {"db"} if schema else set()
            default += ("db", "table")
    position = shape.position
    return _Layout(frozenset(available.union(position)), frozenset(required.union(position)), default + position)


# The default order of the fields of an envelope without attributes, by whether it has each row, whether its source
# says something and its time's kind (the shape of _envelope_layout that decoding meets most): looked up per message.
_PLAIN_ENVELOPE_FIELDS = {
    (before, after, source, time_kind): _envelope_layout(_EnvelopeShape(before, after, source, time_kind, False, ()),
                                                         None).default
    for before, after, source, time_kind in itertools.product((False, True), (False, True), (False, True), (0, 1, 2))}
# The default order of a source's own fields (before its position's), by whether it has a system, its time's kind,
# and its table's shape (_SourceShape).
_OWN_SOURCE_FIELDS = {
    (system, time_kind, table): _source_layout(_SourceShape(system, time_kind, table, ()), None).default
    for system, time_kind, table in itertools.product(
        (False, True), (0, 1, 2), (None, *itertools.product((False, True), (False, True))))}


def _in_default_order(fields: dict[str, Any], table: Table | None, source: Source) -> bool:
    """Whether a ``source`` object read as ``table`` and ``source`` has its fields in the order writing gives
    (``_source_layout``'s default): its fields of its own first, in their order, then the position's, which it has
    in its own order (``read_source``), found without making the position's names."""
    commit = source.commit_time_us
    own = _OWN_SOURCE_FIELDS[source.system is not None,
                             0 if commit is None else 2 if commit % _MILLISECOND else 1,  # _time_kind, without a call
                             None if table is None else (table.catalog is not None, table.schema is not None)]
    return len(fields) == len(own) + len(source.position) and tuple(fields)[:len(own)] == own


def _source_fields(event: ChangeEvent) -> dict[str, Any]:
    """``source`` as written, in the order the event keeps (``debezium-json.fields.source``) where it fits."""
    names = _names(event.attribute(SOURCE_FIELD_NAMES))
    order = _source_layout(_source_shape(event), names).order(names)
    source, table = event.source, event.table
    values: dict[str, Any] = {"connector": source.system, **_time_values(source.commit_time_us)}
    if table is not None:
        if "schema" in order:
            values.update(db=table.catalog, schema=table.schema, table=table.name)
        else:
            values.update(db=table.schema, table=table.name)
    for name, value in reversed(source.position):  # the first of a name
        values[name] = json_form(value)
    return {name: values[name] for name in order}


def _payload(event: ChangeEvent, schemas: bool) -> dict[str, Any]:
    """The envelope as written, in the order the event keeps (``debezium-json.fields.envelope``) where it fits;
    with ``schemas``, row values as their Connect schemas type them."""
    names = _names(event.attribute(ENVELOPE_FIELDS))
    order = _envelope_layout(_envelope_shape(event), names).order(names)
    document: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    for name in order:
        if name in _ROWS:
            document[name] = image_fields(getattr(event, name), schemas)
        elif name == "source":
            document[name] = _source_fields(event)
        elif name == "op":
            document[name] = CODE_OF_OP[event.op]
        elif name in _TIMES:
            document[name] = _time_values(event.source.capture_time_us)[name]
        elif name == "transaction":
            transaction = {field[len(TRANSACTION_ATTRIBUTE):]: _transaction_value(value)
                           for field, value in event.attributes if field.startswith(TRANSACTION_ATTRIBUTE)}
            document[name] = transaction or None
        else:
            kept = kept or kept_fields.write(NAME, event.attributes, FIELD_ATTRIBUTE, _ENVELOPE_FIELDS)
            document[name] = kept[name]
    return document


# -- the envelope's schema ------------------------------------------------------------------------------------------

def _envelope_schema(event: ChangeEvent, document: dict[str, Any], kept: dict[str, Any] | None,
                     columns: bool = True) -> dict[str, Any]:
    """Debezium's envelope schema for ``document``, the payload written for ``event``: the one ``kept``, its rows
    given the columns of the cells, and each of its other fields that does not hold the payload's value (null where
    the payload lacks it) replaced by the one generated, or left out, then the generated struct of a row it does not
    describe whose cells need one; else the generated one, which describes every field of the payload but the kept
    ones (``debezium.field.*``). Without ``columns``, the rows' structs have ``"fields": []``."""
    server = dict(event.source.position).get("name")
    parts = [server if type(server) is str else None]
    if event.table is not None:
        parts += [event.table.schema, event.table.name]
    prefix = "".join(f"{part}." for part in parts if part is not None)

    def row(header: dict[str, Any]) -> dict[str, Any]:
        name = header["field"]
        return {**header, "fields": connect_schema.image_struct_schema(event, name, None)["fields"] if columns else []}

    def generated(name: str) -> dict[str, Any] | None:
        value = document.get(name)
        if name not in document:
            return None
        if name in _ROWS:
            return row({**connect_schema.struct_schema([], True, f"{prefix}Value"), "field": name})
        if name == "source":
            connector = (value or {}).get("connector")
            source_name = f"io.debezium.connector.{connector}.Source" if type(connector) is str else None
            return {**json_struct_schema(value or {}, False, source_name), "field": name}
        if name == "transaction":
            block = json_struct_schema(value, True, "event.block") if value else connect_schema.struct_schema(
                list(_TRANSACTION_BLOCK), True, "event.block")
            return {**block, "version": 1, "field": name}
        if name == "op":
            return {"type": "string", "optional": False, "field": name}
        if name in _TIMES:
            return {"type": "int64", "optional": True, "field": name}
        return None  # a kept field (debezium.field.*): JSON of any shape

    if kept is None:
        return connect_schema.struct_schema([field for field in map(generated, document) if field is not None],
                                            False, f"{prefix}Envelope")
    fields = []
    for kept_field in kept["fields"]:
        name = kept_field["field"]
        value = _parsed(document[name]) if name in document else None  # a field the payload lacks reads as null
        if name in _ROWS:
            if kept_field.get("type") == "struct" and kept_field.get("fields") == []:
                field = row(kept_field) if value is not None or kept_field.get("optional") is True else generated(
                    name)
            elif event.before is None and event.after is None:
                # A change without rows (TRUNCATE) keeps its table's row struct whole: no cell holds its columns.
                field = kept_field if connect_schema.holds(kept_field, value) else generated(name)
            else:
                field = generated(name)
        else:
            field = kept_field if connect_schema.holds(kept_field, value) else generated(name)
        if field is not None:
            fields.append(field)
    described = {field["field"] for field in fields}
    for name in _ROWS:
        if name in document and name not in described and not _read_without_schema(getattr(event, name)):
            fields.append(row({**connect_schema.struct_schema([], True, f"{prefix}Value"), "field": name}))
    return {**kept, "fields": fields}


def _read_without_schema(image: Image | None) -> bool:
    """Whether an image reads back as it is without a schema: no cell has a type or a value only a schema types."""
    return all(cell.type is None and not connect_schema.schema_only_features(cell.value) for cell in image or ())


def _parsed(value: Any) -> Any:
    """A payload value as JSON: a kept field's raw text parsed."""
    return msgspec.json.decode(value) if type(value) is msgspec.Raw else value


def _columns_left_out(schema: dict[str, Any]) -> dict[str, Any]:
    """An envelope schema with ``"fields": []`` in its row structs, whose columns the cells' types keep."""
    return {**schema, "fields": [
        {**field, "fields": []} if type(field) is dict and field.get("field") in _ROWS
        and field.get("type") == "struct" and type(field.get("fields")) is list else field
        for field in schema["fields"]]}


def _kept_schema(event: ChangeEvent) -> dict[str, Any] | None:
    """The envelope schema the event's ``debezium-json.schema.envelope`` keeps, when it is one: a struct whose fields
    each have a name of their own."""
    text = event.attribute(ENVELOPE_SCHEMA)
    try:
        schema = msgspec.json.decode(text) if type(text) is str else None
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(schema) is not dict or schema.get("type") != "struct" or type(schema.get("fields")) is not list:
        return None
    names = [field.get("field") if type(field) is dict else None for field in schema["fields"]]
    if any(type(name) is not str for name in names) or len(set(names)) != len(names):
        return None
    return schema


def _reserved(event: ChangeEvent) -> frozenset[str]:
    """The ``source`` fields that decoding reads as something other than the position."""
    return RESERVED if event.table is not None else RESERVED_WITHOUT_TABLE
