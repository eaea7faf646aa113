"""``debezium-avro``: Debezium's change event envelope as Confluent's ``AvroConverter`` writes it, one typed schema
per table, registered in a schema registry as the table's columns come, widen and go.

A message is a Kafka record, ``KafkaRecord(key, value)``; each part is in Confluent's wire format (``0x00``, the
schema id as 4 big-endian bytes, then the Avro body). The value is the envelope, the key the row's primary key::

    record Envelope (namespace <prefix>.<schema>.<table>, connect.name <prefix>.<schema>.<table>.Envelope)
      before: null | Value       Value: one field per column of the table, each ["null", T] with a null default
      after:  null | Value
      source: Source             connector, ts_ms, ts_us, db, schema, table, then the position's fields
      transaction: null | block  id, total_order, data_collection_order: the debezium.transaction.* attributes
      op:     string             c, u, d, r, t
      ts_ms, ts_us: null | long  when the change was captured
    record Key: the key columns, each T (["null", T] once a key cell has been null)

Column types are ``cdcformats.tables`` types, written as Debezium writes them (``decimal.handling.mode=precise``,
``time.precision.mode=adaptive``): ``int8`` / ``int16`` an ``int`` with ``connect.type``, ``int32`` ``int``,
``int64`` ``long``, ``float``, ``double``, ``boolean``, ``string``, ``bytes``; ``decimal(p,s)`` ``bytes`` with the
``decimal`` logical type and ``connect.parameters`` ``scale`` and ``connect.decimal.precision``; a decimal of any scale
Debezium's ``io.debezium.data.VariableScaleDecimal`` record (``scale``, ``value``); ``date`` ``io.debezium.time.Date``
(days, an ``int``); ``time(3|6|9)`` ``io.debezium.time.Time`` / ``MicroTime`` / ``NanoTime``; ``timestamp(3|6|9)``
``io.debezium.time.Timestamp`` / ``MicroTimestamp`` / ``NanoTimestamp``, each the integer it is, never cut to a coarser
unit; ``json`` ``io.debezium.data.Json`` text; ``null`` Avro's ``null``, alone (no union); ``array<T>`` an
Avro ``array`` of ``["null", T]`` items, as Debezium writes a PostgreSQL array; ``struct<...>`` a record of
``["null", T]`` fields with null defaults, named after its column (``<column>``, ``<column>_<field>`` inside it).
A column that has held only nulls so far has the type its cells' type name declares, as Debezium types a column by
its declaration, where every source sends values of that name as that type: a Connect type (an optional Connect
``Decimal``), an SQL text type (a Lindorm ``VARCHAR``, a Canal ``text``), an SQL number or boolean type (``double``).
Otherwise (no type name, or an SQL date, time or binary type, whose values Canal and Lindorm send as text and
DataWorks as milliseconds) it is a ``null`` column, and the first value's type is a new version that the registry's
BACKWARD check accepts (a reader's ``["null", T]`` reads a writer's ``null``).
Where the source's own type name is not what reading the field gives back, it is the field's
``__debezium.source.column.type`` parameter, as Debezium's ``column.propagate.source.type`` writes it. A column or
position name that Avro does not allow (``order-id``) is written with its invalid characters as ``_``, and its name in
the field property ``cdcformats.column``.

Subjects follow Confluent's strategies (option ``subject_name_strategy``): ``topic`` gives ``<topic>-value`` and
``<topic>-key``, where the topic is the option ``topic`` or else Debezium's per-table topic
``<prefix>.<schema>.<table>`` (so each table has its own subjects); ``record`` the record's full name;
``topic-record`` both. The Kafka serializers (``cdcformats.kafka``) set ``topic`` to the topic they write to, as
Confluent's serializers name subjects. A table's first change starts from the latest schema registered under its
value subject, if any, so that a restart continues it. Each evolution (``cdcformats.tables``) is registered as a new
version, and the registry's compatibility check guards it.

Reading, a message is read with its writer schema, fetched by id: so it reads what Debezium's own ``AvroConverter``
writes too (also Connect's ``Date``, ``Time`` and ``Timestamp`` logical types, read as the integers they are; arrays,
maps and structs as nested values). A field's cell type is its ``__debezium.source.column.type``, else the Connect
type its schema names where that is not the one a value of its kind has by default (``int32``,
``io.debezium.time.MicroTimestamp``), else none, as ``debezium-json`` names them; where that type is a Connect field
schema (which ``debezium-json`` keeps whole where a short name does not say all of it), each value is named as
``debezium-json`` reads it through that schema: a null in an optional ``int32`` field ``int32``, a value the whole
schema. So a null in a change says nothing of its column's type name, as it says nothing of its type. A field of
Connect's ``float`` (a single) is read as ``debezium-json`` reads one, as Java prints it (``-3.4e38``, where the single
is ``-3.3999999521443642e38``). A null ``source`` field is not a position entry. A tombstone (a record without a
value, which Debezium sends after a delete for log compaction) holds no change. A value read alone
(``decode_value``: a Kafka value deserializer, which never sees the key) takes its key cells out of the row, by the
option ``key_columns`` or else by the key columns of the latest key schema registered under the table's key subject;
the registry's errors name the registry (its URL, or its file).

Written from other formats:

* an UPSERT is a ``c``, read back as an INSERT;
* a change without a table (an Arcion snapshot row) is written as the table of no name: its records are
  ``<prefix>.Envelope`` / ``.Value`` / ``.Key``, its subjects ``<prefix>-value`` / ``-key``, and its ``source`` has no
  ``db``, ``schema`` or ``table``, which reads back as no table;
* a row holds every column of its table, in the table's order (``image.columns``): a column the change leaves out is
  null, key cells the image leaves out take the key's values;
* a change whose cells do not fit the table's schema by the rules of evolution (a text value in an ``int64`` column,
  a decimal of another scale) is refused with the schema conflict, naming table, column and both types, so that it
  reaches the dead letter and the stream goes on;
* a value of a cell of Connect's ``float`` type (``float``, or such a Connect field schema) that is a single as Java
  prints it (``0.1``) is a ``float`` column, as Debezium writes a PostgreSQL ``real``; a single that Java prints
  otherwise (``0.10000000149011612``) in such a column is read back as Java prints it (``image.columns``);
* Debezium's variable-scale decimal as ``debezium-json`` reads it (the struct of an int32 ``scale`` and the unscaled
  ``value``'s bytes, typed by a Connect struct schema named ``io.debezium.data.VariableScaleDecimal``) is a decimal
  column of any scale, written as Debezium's record of it, and read back as that struct;
* a nested value is written typed where it has a type (``cdcformats.tables.nested_type``) whose struct field names
  Avro allows; a struct is read back with every field of its column's type, in the type's order (a field it left out
  null); a nested value without such a type is written as its JSON text, and bytes, decimals, NaN and infinities
  inside one as their text; decimals with no unscaled form (NaN, infinities, -0) as their text;
* the ``transaction`` block is written from the attributes ``debezium.transaction.id`` (text), ``.total_order`` and
  ``.data_collection_order`` (longs), in that order, as ``debezium-json`` reads them; any other transaction attributes
  are not written, and a block read with other fields keeps them all;
* cell versions, deleted cells (written as null columns), a column twice in an image, other attributes and
  ``key_only`` are not carried; a position entry that is null, repeats or names a
  structural ``source`` field is left out, and the position comes back in the table's ``source`` field order;
* a table with a catalog but no schema is written with the catalog as its schema (``db``).
"""

from __future__ import annotations

import base64
import io
import json
import struct
from decimal import Decimal
from typing import Any, BinaryIO

import fastavro
from msgspec.structs import replace

from ..contract import FileWriter, JvmDecoder, KafkaRecord, Option, one_of
from ..core import typed_text
from ..errors import DecodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import Cell, ChangeEvent, Image, Op, Table, same_entries
from ..schema_registry.client import address, check_address, connect, jvm_settings
from ..tables import SchemaConflict, TableSchema, table_name
from ._kit.avro_columns import ANY_DECIMAL, NAME, dotted, untyped_nested_as_text
from ._kit.avro_records import MAGIC, Reader, value_in
from ._kit.avro_tables import TableVersion, transaction_block
from ._kit.connect_cells import variable_scale_decimal
from ._kit.debezium_envelope import (
    CODE_OF_OP,
    OP_OF_CODE,
    SOURCE_FIELDS,
    TRANSACTION_ATTRIBUTE,
    position_as_written,
    with_op_code,
)
from ._kit.kafka_records import KafkaRecordCodec
from ._kit.keys import KeyColumns

# What a change must keep to be written: a column's values, change after change, of types one column type holds.
ONE_TYPE = "one type per column"
# Avro names hold letters, digits and _ alone, so that tables whose names differ only in other characters ("a:b" and
# "a_b") would share records and subjects: the first keeps them, and a change of the other is refused.
ONE_NAME = "one Avro name per table"
_STRATEGIES = ("topic", "record", "topic-record")


def _parse_registry(value: Any) -> Any:
    check_address(value)  # a URL, a file or a client, connected when first needed (schema_registry.connect)
    return value


OPTIONS = (
    Option("schema_registry", "the schema registry: a URL (http://, https://), a file (.sqlite/.db) or a client; "
                              "default: the embedded registry", None, _parse_registry),
    Option("topic_prefix", "Debezium's topic.prefix: the first part of record names and per-table topics",
           "cdcformats"),
    Option("subject_name_strategy", "topic, record or topic-record, as Confluent's serializers name subjects",
           "topic", one_of(*_STRATEGIES)),
    Option("topic", "the Kafka topic that subjects of the topic strategies name (default: Debezium's per-table "
                    "topic <prefix>.<schema>.<table>)", None),
    Option("key_columns", "where a record's value is read alone (a value deserializer): the key columns, a list for "
                          "every table or a mapping of table name to list (default: those of the key schema "
                          "registered for the table)", None, KeyColumns),
)


class DebeziumAvroCodec(KafkaRecordCodec):
    name = NAME
    description = "Debezium change events as Confluent's AvroConverter writes them: one typed schema per table, " \
                  "registered in a schema registry"
    carries = frozenset({
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "op.TRUNCATE", "table", "table.schema", "table.catalog",
        "key", "before", "after", "cell.type", "value.null", "value.bool", "value.int", "value.float", "value.str",
        "value.bytes", "value.decimal", "value.float_nonfinite", "value.off_type", "value.nested", "source.system",
        "source.position", "source.commit_time", "source.capture_time", "source.time.sub_ms",
    })
    requires = (ONE_TYPE, ONE_NAME)
    own_attributes = frozenset({TRANSACTION_ATTRIBUTE})
    options = OPTIONS

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._registry: Any = None
        self._tables: dict[Table | None, TableVersion] = {}
        self._readers: dict[tuple[int, str], Reader] = {}
        self._key_names: dict[Table | None, tuple[str, ...]] = {}
        self._namesakes: dict[str, Table | None] = {}  # each Avro name's table, the first this codec wrote with it
        self._own_names: set[Table | None] = set()  # the tables whose Avro name normal_form found their own

    @property
    def registry(self) -> Any:
        if self._registry is None:
            self._registry = connect(self.config["schema_registry"])
        return self._registry

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_messages(self, message: Any) -> list[ChangeEvent]:
        if isinstance(message, tuple) and len(message) == 2 and message[1] is None:
            return []  # a tombstone: Debezium's marker for log compaction, after the delete that said it
        return [self.decode_message(message)]

    def decode_record(self, key: bytes | None, value: bytes | None) -> ChangeEvent:
        if value is None:
            raise DecodeError(NAME, "a tombstone holds no change", field="value")
        reader, envelope = self._read(value, "value")
        code = envelope.get("op")
        if code not in OP_OF_CODE:
            raise DecodeError(NAME, f"op {code!r} is not a row change; expected one of {', '.join(OP_OF_CODE)}",
                              field="op")
        before = reader.image(envelope.get("before"), "before")
        after = reader.image(envelope.get("after"), "after")
        table, source = reader.source(envelope.get("source"), envelope)
        transaction = envelope.get("transaction")
        attributes = () if type(transaction) is not dict else tuple(
            (TRANSACTION_ATTRIBUTE + name, value_in(value, f"transaction.{name}"))
            for name, value in transaction.items())
        key_cells: Image = ()
        if key is not None:
            key_reader, key_record = self._read(key, "key")
            key_cells = key_reader.key(key_record)
        return ChangeEvent(OP_OF_CODE[code], table, key_cells, before, after, source, attributes=attributes)

    reads_values_alone = True

    def decode_value(self, value: bytes) -> list[ChangeEvent]:
        """The change of a record's value read without its key: the key cells are the row's cells of the key columns
        (the option ``key_columns``, else those of the table's latest key schema under its key subject), read out of
        the before image of a delete or a change without an after image, else out of the after image."""
        event = self.decode_record(None, value)
        names = self.config["key_columns"].for_table(event.table) if self.config["key_columns"] else \
            self._registered_key_names(event.table)
        row = event.before if event.op is Op.DELETE or event.after is None else event.after
        cells: dict[str, Cell] = {}
        for cell in row or ():
            cells.setdefault(cell.name, cell)
        key = tuple(cells[name] for name in names if name in cells)
        return [replace(event, key=key) if key else event]

    def jvm_decoder(self) -> JvmDecoder | None:
        """``cdcformats.jvm.decoders.DebeziumAvroDecoder``, a decoder of records (``RecordDecoder``) as
        ``decode_messages`` reads them, with the writer schemas of this codec's registry (``jvm_settings``); None where
        the JVM cannot ask that registry as its client does. The other options are not the decoder's: they name
        subjects and key columns, which reading a record with its key does not ask for."""
        settings = jvm_settings(self.registry)
        return None if settings is None else JvmDecoder("cdcformats.jvm.decoders.DebeziumAvroDecoder", settings)

    def _registered_key_names(self, table: Table | None) -> tuple[str, ...]:
        """The key columns of the latest key schema registered for ``table`` (none where there is none), once."""
        if table not in self._key_names:
            try:
                latest = self.registry.get_latest_version(self.subject(table, is_key=True))
            except Exception:  # the registry's "subject not found": a table without a key
                self._key_names[table] = ()
            else:
                reader = Reader.of(latest.schema.schema_str, latest.schema_id, "key")
                self._key_names[table] = tuple(entry.column.name for entry in reader.key_fields)
        return self._key_names[table]

    def _schema_id(self, framed: bytes, part: str) -> int:
        if len(framed) < 5 or framed[:1] != MAGIC:
            raise DecodeError(NAME, "not in Confluent's wire format (magic byte 0x00 and a 4-byte schema id)",
                              field=part)
        schema_id: int = struct.unpack(">I", framed[1:5])[0]
        return schema_id

    def _read(self, framed: bytes, part: str) -> tuple[Reader, dict[str, Any]]:
        """The reader of a framed record's writer schema, and the record."""
        schema_id = self._schema_id(framed, part)
        reader = self._reader(schema_id, part)
        stream = io.BytesIO(framed[5:])
        try:
            record = fastavro.schemaless_reader(stream, reader.parsed, None)
        except Exception as error:  # fastavro raises whatever the bytes provoke: EOFError, IndexError, ...
            raise DecodeError(NAME, f"cannot be read with schema {schema_id} ({type(error).__name__}: {error})",
                              field=part) from None
        if stream.tell() != len(framed) - 5:
            raise DecodeError(NAME, f"{len(framed) - 5 - stream.tell()} bytes left over", field=part)
        if type(record) is not dict:
            raise DecodeError(NAME, f"schema {schema_id} is not a record", field=part)
        return reader, record

    def _reader(self, schema_id: int, part: str) -> Reader:
        # By part too: a registry gives one id to one schema text, which a key and a value may share.
        if (schema_id, part) not in self._readers:
            try:
                registered = self.registry.get_schema(schema_id)
            except Exception as error:  # the registry's own errors: an unknown id, an unreachable registry
                raise DecodeError(NAME, f"schema id {schema_id} cannot be fetched from {address(self.registry)}: "
                                        f"{error}", field=part) from None
            self._readers[schema_id, part] = Reader.of(registered.schema_str, schema_id, part)
        return self._readers[schema_id, part]

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> KafkaRecord:
        version = self._current(event.table)
        if not (version.value_schema is not None and version.holds_whole(event)
                and (not event.key or version.key_id is not None)):  # else: what evolving gives back is not itself
            version = self._tables[event.table] = version.evolved(event, self)
        value = version.write_value(event)
        key = version.write_key(event.key) if event.key else None
        return KafkaRecord(key, value)

    def _current(self, table: Table | None) -> TableVersion:
        """The table's schema as this codec last wrote it, or as the registry last has it, or none yet."""
        if table not in self._tables:
            self._tables[table] = TableVersion.registered(self, table)
        return self._tables[table]

    # -- the registered schemas -----------------------------------------------------------------------------------

    def table_schemas(self, table: Table | None) -> list[tuple[int, TableSchema]]:
        """Each version registered under ``table``'s value subject, oldest first: its version number and the table
        schema its rows have, with the key columns of the latest key version. None registered: ``[]``."""
        registry, subject = self.registry, self.subject(table)
        try:
            versions = registry.get_versions(subject)
        except Exception:  # the registry's "subject not found"
            return []
        try:
            key = registry.get_latest_version(self.subject(table, is_key=True))
            key_fields = Reader.of(key.schema.schema_str, key.schema_id, "key").key_fields
        except Exception:  # a table written without a key has no key subject
            key_fields = []
        found = []
        for version in sorted(versions):  # confluent's mock:// client lists them in no order
            registered = registry.get_version(subject, version)
            reader = Reader.of(registered.schema.schema_str, registered.schema_id, "value")
            reader.key_fields = key_fields
            found.append((version, reader.table_schema(table)))
        return found

    def table_schema(self, table: Table | None) -> TableSchema | None:
        """The schema of ``table`` as its latest registered version has it (``table_schemas``), or None."""
        versions = self.table_schemas(table)
        return versions[-1][1] if versions else None

    def subject(self, table: Table | None, is_key: bool = False) -> str:
        """The subject of ``table``'s value (or key) schemas, by the option ``subject_name_strategy``."""
        namespace = dotted(self.config["topic_prefix"], table)
        topic = self.config["topic"] or namespace
        record = f"{namespace}.{'Key' if is_key else 'Envelope'}"
        strategy = self.config["subject_name_strategy"]
        if strategy == "record":
            return record
        return f"{topic}-{'key' if is_key else 'value'}" if strategy == "topic" else f"{topic}-{record}"

    # -- files: JSON lines of the framed key and value, as base64 ---------------------------------------------------

    def file_writer(self, stream: BinaryIO) -> FileWriter:
        return _FramedLineWriter(stream)

    def record_of_line(self, line: bytes) -> KafkaRecord:
        try:
            parts = json.loads(line)
            if type(parts) is not dict or set(parts) - {"key", "value"}:
                raise ValueError("expected an object with key and value")
            key, value = (None if parts.get(part) is None else base64.b64decode(parts[part], validate=True)
                          for part in ("key", "value"))
        except (ValueError, TypeError) as error:
            raise DecodeError(NAME, f"not a line of the form {{\"key\": base64, \"value\": base64}}: {error}"
                              ) from None
        return KafkaRecord(key, value)

    # -- what is lost ---------------------------------------------------------------------------------------------

    def encode_whole(self, event: ChangeEvent) -> list[KafkaRecord] | None:
        """An event of an op with a code and no attributes nor ``key_only``, of a table named as normal_form found it
        (its own Avro name; a schema where it has a catalog) and written before, that the table's version holds as
        it is (``TableVersion.holds_whole``), with a key schema where it has a key: written with that version."""
        if event.op is Op.UPSERT or event.attributes or event.key_only:
            return None
        table = event.table
        if table is not None and table.catalog is not None and table.schema is None or table not in self._own_names:
            return None
        version = self._tables.get(table)
        if version is None or version.value_schema is None or event.key and version.key_id is None \
                or not version.holds_whole(event):
            return None
        return [KafkaRecord(version.write_key(event.key) if event.key else None, version.write_value(event))]

    def carried_cell(self, cell: Cell) -> Cell:
        """As the base rules write it, judged by what it holds: a variable-scale decimal by its decimal (the record
        is written with the struct as it is); a decimal no decimal column holds (NaN, an infinity, -0) as its text;
        a nested value of no one Avro type as its JSON text."""
        decimal = variable_scale_decimal(cell)
        value = cell.value if decimal is None else decimal
        written = super().carried_cell(cell if decimal is None else replace(cell, value=decimal))
        if type(value) is Decimal and not ANY_DECIMAL.fits(value):
            written = replace(written, value=typed_text.render(value))
        elif decimal is not None:
            return replace(written, value=cell.value) if written.value is decimal else written
        nested = untyped_nested_as_text(written.value)
        return written if nested is written.value else replace(written, value=nested)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """The envelope's form: its op codes, the source fields that hold the position (no null, no decimal NaN, a
        nested value of no one Avro type as its JSON text), the transaction block only whole, the catalog as the
        schema (db) where there is none; then the rows as the table's schema types them. ``Refusal`` for a schema
        conflict, or a table whose Avro name another table has."""
        written = with_op_code(super().normal_form(event), CODE_OF_OP, NAME)
        written = position_as_written(written, frozenset(SOURCE_FIELDS), False)
        source = written.source
        position = tuple((name, untyped_nested_as_text(value)) for name, value in source.position
                         if value is not None and not (type(value) is Decimal and not ANY_DECIMAL.fits(value)))
        changed: dict[str, Any] = {}
        if not same_entries(position, source.position):
            changed["source"] = replace(source, position=position)
        if transaction_block(written) is None and any(
                name.startswith(TRANSACTION_ATTRIBUTE) for name, _ in written.attributes):
            changed["attributes"] = tuple(entry for entry in written.attributes
                                          if not entry[0].startswith(TRANSACTION_ATTRIBUTE))
        table = written.table
        if table is not None and table.catalog is not None and table.schema is None:
            changed["table"] = Table(table.name, table.catalog)
        if changed:
            written = replace(written, **changed)
        namesake = self._namesakes.setdefault(dotted(self.config["topic_prefix"], written.table), written.table)
        if namesake != written.table:
            raise Refusal(Loss(f"requires {ONE_NAME}", "table", REFUSED,
                               f"table {table_name(written.table)} has the Avro name of table "
                               f"{table_name(namesake)}, whose records and subjects it would share"))
        self._own_names.add(written.table)
        try:
            version = self._current(written.table).evolved(written, self, register=False)
        except SchemaConflict as conflict:
            raise Refusal(Loss(f"requires {ONE_TYPE}", _path_of(written, conflict.column), REFUSED,
                               str(conflict))) from None
        typed = version.typed(written)
        if typed is written:  # writing evolves the table from this very event: to this version
            return typed
        # Writing evolves the table from this form: where that types a column otherwise (a null whose type only a
        # cell now written without it named), the form is the one that table gives.
        again = self._current(typed.table).evolved(typed, self, register=False)
        return typed if again.schema == version.schema else again.typed(written)


def _path_of(event: ChangeEvent, column: str) -> str:
    """Where a column's first cell is in an event, for a schema conflict's error."""
    for image_name in ("after", "before", "key"):
        for index, cell in enumerate(getattr(event, image_name) or ()):
            if cell.name == column:
                return f"{image_name}[{index}].value"
    return "source.position" if column.startswith("source.") else "key"


# -- files: JSON lines of the framed key and value, as base64 -----------------------------------------------------

class _FramedLineWriter(FileWriter):
    def write(self, messages: list[Any]) -> None:
        for record in messages:
            self.stream.write(json.dumps({"key": _base64(record.key), "value": _base64(record.value)}).encode())
            self.stream.write(b"\n")


def _base64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")
