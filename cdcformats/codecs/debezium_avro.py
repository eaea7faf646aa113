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
import datetime
import io
import json
import re
import struct
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, BinaryIO

import fastavro
from msgspec.structs import replace

from ..contract import FileWriter, KafkaRecord, Option, as_text, one_of
from ..core import typed_text
from ..errors import DecodeError, EncodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import (
    INT64_MAX,
    INT64_MIN,
    Cell,
    CellKind,
    ChangeEvent,
    Image,
    Op,
    Source,
    Struct,
    Table,
    Value,
    is_nested,
    same_entries,
    value_key,
)
from ..schema_registry.client import address, check_address, connect
from ..tables import (
    Column,
    ColumnType,
    SchemaConflict,
    TableSchema,
    cell_type,
    connect_type,
    declared_type,
    nested_type,
    table_name,
)
from ._kit.connect_schema import DECIMAL, SOURCE_TYPE, connect_float, json_value, kept_schema, read_value
from ._kit.debezium_envelope import (
    CODE_OF_OP,
    OP_OF_CODE,
    SOURCE_FIELDS,
    TRANSACTION_ATTRIBUTE,
    position_as_written,
    read_time,
    with_op_code,
    write_time,
)
from ._kit.kafka_records import KafkaRecordCodec
from ._kit.keys import KeyColumns

NAME = "debezium-avro"
# What a change must keep to be written: a column's values, change after change, of types one column type holds.
ONE_TYPE = "one type per column"
# Avro names hold letters, digits and _ alone, so that tables whose names differ only in other characters ("a:b" and
# "a_b") would share records and subjects: the first keeps them, and a change of the other is refused.
ONE_NAME = "one Avro name per table"
MAGIC = b"\x00"
COLUMN_PROPERTY = "cdcformats.column"
_STRATEGIES = ("topic", "record", "topic-record")
# The types of the fields of ``source`` that say the system, times and table; the position's fields follow them.
_SOURCE_FIELD_TYPES = ("string", "long", "long", "string", "string", "string")
# Debezium's transaction block: the transaction's id, the change's place in it and its place among the table's changes.
_TRANSACTION_FIELDS = (("id", "string"), ("total_order", "long"), ("data_collection_order", "long"))
_TRANSACTION_BLOCK = {"type": "record", "name": "block", "namespace": "event",
                      "fields": [{"name": name, "type": kind} for name, kind in _TRANSACTION_FIELDS],
                      "connect.version": 1, "connect.name": "event.block"}
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MIDNIGHT = datetime.datetime(1970, 1, 1)

# How each column type is written: the Avro type and Debezium's Connect name for it.
_LOGICAL: dict[Any, tuple[str, str]] = {
    "date": ("int", "io.debezium.time.Date"),
    ("time", 3): ("int", "io.debezium.time.Time"),
    ("time", 6): ("long", "io.debezium.time.MicroTime"),
    ("time", 9): ("long", "io.debezium.time.NanoTime"),
    ("timestamp", 3): ("long", "io.debezium.time.Timestamp"),
    ("timestamp", 6): ("long", "io.debezium.time.MicroTimestamp"),
    ("timestamp", 9): ("long", "io.debezium.time.NanoTimestamp"),
    "json": ("string", "io.debezium.data.Json"),
}
_PRIMITIVE = {"null": "null", "boolean": "boolean", "int32": "int", "int64": "long", "float": "float",
              "double": "double", "string": "string", "bytes": "bytes"}
_VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
_ANY_DECIMAL = ColumnType("decimal")  # the column a decimal of any scale fits: any but NaN, infinities and -0
_FLOAT = ColumnType("float")
_NULL = ColumnType("null")
# The column types whose SQL names every source sends values of as the text they are.
_TEXT_TYPES = ("string", "json")
# The column types of Connect names and Avro logical types, for reading.
_TYPE_OF_NAME = {
    **{connect_name: ColumnType(*(key if isinstance(key, tuple) else (key,))) for key, (_, connect_name)
       in _LOGICAL.items()},
    "org.apache.kafka.connect.data.Date": ColumnType("date"), "date": ColumnType("date"),
    "org.apache.kafka.connect.data.Time": ColumnType("time", 3), "time-millis": ColumnType("time", 3),
    "time-micros": ColumnType("time", 6),
    "org.apache.kafka.connect.data.Timestamp": ColumnType("timestamp", 3),
    "timestamp-millis": ColumnType("timestamp", 3), "timestamp-micros": ColumnType("timestamp", 6),
    "local-timestamp-millis": ColumnType("timestamp", 3), "local-timestamp-micros": ColumnType("timestamp", 6),
}
# What a change-event value written for the Avro type of each column type needs.
_TIME_UNIT = {3: datetime.timedelta(milliseconds=1), 6: datetime.timedelta(microseconds=1)}


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
        self._tables: dict[Table | None, _TableVersion] = {}
        self._readers: dict[tuple[int, str], _Reader] = {}
        self._key_names: dict[Table | None, tuple[str, ...]] = {}
        self._namesakes: dict[str, Table | None] = {}  # each Avro name's table, the first this codec wrote with it

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
        table, source = reader.source(envelope.get("source"))
        capture = _time(envelope, "")
        transaction = envelope.get("transaction")
        attributes = () if type(transaction) is not dict else tuple(
            (TRANSACTION_ATTRIBUTE + name, _value_in(value, f"transaction.{name}"))
            for name, value in transaction.items())
        key_cells: Image = ()
        if key is not None:
            key_reader, key_record = self._read(key, "key")
            key_cells = key_reader.key(key_record)
        return ChangeEvent(OP_OF_CODE[code], table, key_cells, before, after,
                           Source(source.system, source.position, source.commit_time_us, capture),
                           attributes=attributes)

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

    def _registered_key_names(self, table: Table | None) -> tuple[str, ...]:
        """The key columns of the latest key schema registered for ``table`` (none where there is none), once."""
        if table not in self._key_names:
            try:
                latest = self.registry.get_latest_version(self.subject(table, is_key=True))
            except Exception:  # the registry's "subject not found": a table without a key
                self._key_names[table] = ()
            else:
                reader = _Reader.of(latest.schema.schema_str, latest.schema_id, "key")
                self._key_names[table] = tuple(entry.column.name for entry in reader.key_fields)
        return self._key_names[table]

    def _schema_id(self, framed: bytes, part: str) -> int:
        if len(framed) < 5 or framed[:1] != MAGIC:
            raise DecodeError(NAME, "not in Confluent's wire format (magic byte 0x00 and a 4-byte schema id)",
                              field=part)
        schema_id: int = struct.unpack(">I", framed[1:5])[0]
        return schema_id

    def _read(self, framed: bytes, part: str) -> tuple[_Reader, dict[str, Any]]:
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

    def _reader(self, schema_id: int, part: str) -> _Reader:
        # By part too: a registry gives one id to one schema text, which a key and a value may share.
        if (schema_id, part) not in self._readers:
            try:
                registered = self.registry.get_schema(schema_id)
            except Exception as error:  # the registry's own errors: an unknown id, an unreachable registry
                raise DecodeError(NAME, f"schema id {schema_id} cannot be fetched from {address(self.registry)}: "
                                        f"{error}", field=part) from None
            self._readers[schema_id, part] = _Reader.of(registered.schema_str, schema_id, part)
        return self._readers[schema_id, part]

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> KafkaRecord:
        version = self._current(event.table).evolved(event, self)
        value = version.write_value(event)
        key = version.write_key(event.key) if event.key else None
        self._tables[event.table] = version
        return KafkaRecord(key, value)

    def _current(self, table: Table | None) -> _TableVersion:
        """The table's schema as this codec last wrote it, or as the registry last has it, or none yet."""
        if table not in self._tables:
            self._tables[table] = _TableVersion.registered(self, table)
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
            key_fields = _Reader.of(key.schema.schema_str, key.schema_id, "key").key_fields
        except Exception:  # a table written without a key has no key subject
            key_fields = []
        found = []
        for version in sorted(versions):  # confluent's mock:// client lists them in no order
            registered = registry.get_version(subject, version)
            reader = _Reader.of(registered.schema.schema_str, registered.schema_id, "value")
            reader.key_fields = key_fields
            found.append((version, reader.table_schema(table)))
        return found

    def table_schema(self, table: Table | None) -> TableSchema | None:
        """The schema of ``table`` as its latest registered version has it (``table_schemas``), or None."""
        versions = self.table_schemas(table)
        return versions[-1][1] if versions else None

    def subject(self, table: Table | None, is_key: bool = False) -> str:
        """The subject of ``table``'s value (or key) schemas, by the option ``subject_name_strategy``."""
        namespace = _dotted(self.config["topic_prefix"], table)
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

    def carried_cell(self, cell: Cell) -> Cell:
        """As the base rules write it, judged by what it holds: a variable-scale decimal by its decimal (the record
        is written with the struct as it is); a decimal no decimal column holds (NaN, an infinity, -0) as its text;
        a nested value of no one Avro type as its JSON text."""
        decimal = _variable_scale_decimal(cell)
        value = cell.value if decimal is None else decimal
        written = super().carried_cell(cell if decimal is None else replace(cell, value=decimal))
        if type(value) is Decimal and not _ANY_DECIMAL.fits(value):
            written = replace(written, value=typed_text.render(value))
        elif decimal is not None:
            return replace(written, value=cell.value) if written.value is decimal else written
        nested = _untyped_nested_as_text(written.value)
        return written if nested is written.value else replace(written, value=nested)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """The envelope's form: its op codes, the source fields that hold the position (no null, no decimal NaN, a
        nested value of no one Avro type as its JSON text), the transaction block only whole, the catalog as the
        schema (db) where there is none; then the rows as the table's schema types them. ``Refusal`` for a schema
        conflict, or a table whose Avro name another table has."""
        written = with_op_code(super().normal_form(event), CODE_OF_OP, NAME)
        written = position_as_written(written, frozenset(SOURCE_FIELDS), False)
        source = written.source
        position = tuple((name, _untyped_nested_as_text(value)) for name, value in source.position
                         if value is not None and not (type(value) is Decimal and not _ANY_DECIMAL.fits(value)))
        changed: dict[str, Any] = {}
        if not same_entries(position, source.position):
            changed["source"] = replace(source, position=position)
        if _transaction_block(written) is None and any(
                name.startswith(TRANSACTION_ATTRIBUTE) for name, _ in written.attributes):
            changed["attributes"] = tuple(entry for entry in written.attributes
                                          if not entry[0].startswith(TRANSACTION_ATTRIBUTE))
        table = written.table
        if table is not None and table.catalog is not None and table.schema is None:
            changed["table"] = Table(table.name, table.catalog)
        if changed:
            written = replace(written, **changed)
        namesake = self._namesakes.setdefault(_dotted(self.config["topic_prefix"], written.table), written.table)
        if namesake != written.table:
            raise Refusal(Loss(f"requires {ONE_NAME}", "table", REFUSED,
                               f"table {table_name(written.table)} has the Avro name of table "
                               f"{table_name(namesake)}, whose records and subjects it would share"))
        try:
            version = self._current(written.table).evolved(written, self, register=False)
        except SchemaConflict as conflict:
            raise Refusal(Loss(f"requires {ONE_TYPE}", _path_of(written, conflict.column), REFUSED,
                               str(conflict))) from None
        typed = version.typed(written)
        # Writing evolves the table from this form: where that types a column otherwise (a null that only a cell
        # now written without its type named), the form is the one that table gives.
        again = self._current(typed.table).evolved(typed, self, register=False)
        return typed if again.schema == version.schema else again.typed(written)


def _path_of(event: ChangeEvent, column: str) -> str:
    """Where a column's first cell is in an event, for a schema conflict's error."""
    for image_name in ("after", "before", "key"):
        for index, cell in enumerate(getattr(event, image_name) or ()):
            if cell.name == column:
                return f"{image_name}[{index}].value"
    return "source.position" if column.startswith("source.") else "key"


def _untyped_nested_as_text(value: Value) -> Value:
    """A nested value that no Avro type holds (``nested_type`` has none, or a struct field's name is none Avro
    allows) as the JSON text it is written as; any other value as it is."""
    return as_text(value) if is_nested(value) and not _typed_in_avro(value) else value


def _typed_in_avro(value: Value) -> bool:
    found = nested_type(value)
    return found is not None and _avro_names_only(found)


def _avro_names_only(column_type: ColumnType) -> bool:
    if column_type.items is not None:
        return _avro_names_only(column_type.items)
    return all(_AVRO_NAME.fullmatch(name) and _avro_names_only(field_type) for name, field_type in column_type.fields)


def _transaction_block(event: ChangeEvent) -> dict[str, Value] | None:
    """The transaction block that ``event``'s transaction attributes make, or None where they make none."""
    block = {name[len(TRANSACTION_ATTRIBUTE):]: value for name, value in event.attributes
             if name.startswith(TRANSACTION_ATTRIBUTE)}
    if list(block) != [name for name, _ in _TRANSACTION_FIELDS] or len(block) != sum(
            name.startswith(TRANSACTION_ATTRIBUTE) for name, _ in event.attributes):
        return None
    transaction_id, total_order, collection_order = block.values()
    if type(transaction_id) is not str or not all(
            type(order) is int and INT64_MIN <= order <= INT64_MAX for order in (total_order, collection_order)):
        return None
    return block


# -- cells as debezium-json reads them: typed by the Connect field schema that Debezium sent ----------------------

def _type_read(type_name: str | None, value: Value) -> str | None:
    """The type name of a cell of ``value`` in a column whose type name is ``type_name``: that name, or where it is a
    Connect field schema (which ``debezium-json`` keeps whole where a short name would not say all of it), the name
    that ``debezium-json`` reads the value with through that schema: a null in an optional field has the short name
    (``int32``), a value in it the whole schema."""
    schema = kept_schema(type_name)
    if schema is None:
        return type_name
    try:
        read = read_value(json_value(value), schema, NAME, "")[1]
    except DecodeError:  # a value that the schema does not read: the column's type name, as it is
        return type_name
    return type_name if kept_schema(read) == schema else read  # the whole schema as it was written


def _connect_float(type_name: str | None) -> bool:
    """Whether a type name is Connect's ``float`` (a single), whose values ``debezium-json`` reads as Java prints
    them (``connect_float``: 3.4E38 is 3.4e38, not the single's 3.3999999521443642e38); a float column of that name
    is Debezium's Avro ``float``, read back so."""
    return connect_type(type_name) == _FLOAT


def _single(value: Value) -> float | None:
    """The single-precision float nearest ``value``, or None beyond the singles' range."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except (OverflowError, struct.error):
        return None


def _connect_struct(type_name: str | None) -> bool:
    """Whether a type name is a Connect struct schema: ``debezium-json``'s type of a column of Debezium's
    ``io.debezium.data.VariableScaleDecimal``, whose cells hold the struct ``{scale, value}`` that its JSON sends."""
    schema = kept_schema(type_name)
    return schema is not None and schema.get("type") == "struct"


def _variable_scale_decimal(cell: Cell) -> Decimal | None:
    """The decimal that a cell of Debezium's variable-scale decimal holds as ``debezium-json`` reads it (a Connect
    struct schema of that name, and a struct of an int32 ``scale`` and the unscaled ``value``'s bytes), or None for
    any other cell. Such a column is Debezium's record of it, which holds the struct as it is."""
    value = cell.value
    if type(value) is not Struct or connect_type(cell.type) != _ANY_DECIMAL or not _connect_struct(cell.type):
        return None
    if [name for name, _ in value.fields] != ["scale", "value"]:
        return None
    scale, unscaled = value.get("scale"), value.get("value")
    if type(scale) is not int or not -(2**31) <= scale < 2**31 or type(unscaled) is not bytes:
        return None
    return _decimal_of(scale, unscaled)


def _decimal_of(scale: int, unscaled: bytes) -> Decimal:
    """The decimal of Debezium's variable-scale decimal record."""
    # exact: Decimal arithmetic would round to 28 digits
    return Decimal(f"{int.from_bytes(unscaled, 'big', signed=True)}E{-scale}")


def _as_typed(event: ChangeEvent, schema: TableSchema | None) -> ChangeEvent:
    """``event`` as its cells type the columns of its table (``schema``, as it is so far): a variable-scale decimal
    (``_variable_scale_decimal``) as the decimal it holds; a null whose type name is the short one that a Connect
    field schema gives a null, with that schema, where the column has it (another cell of the change, or else the
    column as it is), since a null says nothing of its column."""
    schemas = {cell.name: cell.type for cell in (*event.key, *(event.before or ()), *(event.after or ()))
               if cell.value is not None and kept_schema(cell.type) is not None}
    for column in schema.columns if schema is not None else ():
        if column.name not in schemas and kept_schema(column.source_type) is not None:
            schemas[column.name] = column.source_type

    def typed(cell: Cell) -> Cell:
        decimal = _variable_scale_decimal(cell)
        if decimal is not None:
            return replace(cell, value=decimal)
        single = _single(cell.value) if type(cell.value) is float and _connect_float(cell.type) else None
        if single is not None and value_key(connect_float(single)) == value_key(cell.value):
            return replace(cell, value=single)  # a Connect float, as Java prints its single: a float column
        kept = schemas.get(cell.name)
        if cell.value is None and kept is not None and cell.type != kept and _type_read(kept, None) == cell.type:
            return replace(cell, type=kept)
        return cell

    def image(cells: Image | None) -> Image | None:
        return None if cells is None else tuple(map(typed, cells))

    return replace(event, key=tuple(map(typed, event.key)), before=image(event.before), after=image(event.after))


def _avro_name(name: str) -> str:
    """A name Avro allows: invalid characters as ``_``, as Debezium's schema name adjuster writes them."""
    adjusted = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return adjusted if _AVRO_NAME.fullmatch(adjusted) else f"_{adjusted}"


def _dotted(prefix: str, table: Table | None) -> str:
    """Debezium's ``<prefix>.<schema>.<table>``: the names of a table's topic and records (the prefix alone for a
    change without a table)."""
    parts = (prefix,) if table is None else (prefix, table.schema, table.name)
    return ".".join(_avro_name(part) for part in parts if part is not None)


# -- writing -------------------------------------------------------------------------------------------------------

def _implied_type(column_type: ColumnType) -> str | None:
    """The cell type that reading a field written for ``column_type`` gives without a source type parameter."""
    return _implied_of_field(_avro_type(column_type, None, set()))


def _avro_type(column_type: ColumnType, source_type: str | None, defined: set[str], record_name: str = "") -> Any:
    """The Avro type of a column type (names already ``defined`` in the schema are referred to by name), with the
    source's type name as a parameter where it is given; a variable-scale decimal, a named record defined once per
    schema, has the parameter on its field instead (``_fields``). A struct is a record named ``record_name`` (its
    column's field name), or that name followed by ``_`` as often as it takes to be new in the schema."""
    name = column_type.name
    schema: dict[str, Any]
    if column_type.items is not None:
        schema = {"type": "array", "items": _optional(_avro_type(column_type.items, None, defined, record_name))}
    elif column_type.fields:
        while record_name in defined:
            record_name += "_"
        defined.add(record_name)
        schema = {"type": "record", "name": record_name, "fields": [
            {"name": field_name, "type": _optional(_avro_type(field_type, None, defined,
                                                              f"{record_name}_{field_name}")), "default": None}
            for field_name, field_type in column_type.fields]}
    elif name == "decimal" and column_type.scale is None:
        if _VARIABLE_DECIMAL in defined:
            return _VARIABLE_DECIMAL
        defined.add(_VARIABLE_DECIMAL)
        return {"type": "record", "name": "VariableScaleDecimal", "namespace": "io.debezium.data",
                "fields": [{"name": "scale", "type": "int"}, {"name": "value", "type": "bytes"}],
                "connect.doc": "Variable scaled decimal", "connect.version": 1, "connect.name": _VARIABLE_DECIMAL}
    elif name in _PRIMITIVE:
        schema = {"type": _PRIMITIVE[name]}
    elif name in ("int8", "int16"):
        schema = {"type": "int", "connect.type": name}
    elif name == "decimal":
        scale = column_type.scale
        assert scale is not None  # the decimal of any scale was written above, as Debezium's record
        parameters = {"scale": str(scale)}
        if column_type.precision is not None:
            parameters["connect.decimal.precision"] = str(column_type.precision)
        schema = {"type": "bytes", "scale": column_type.scale,
                  # Connect's default precision, or the scale where it is larger: Avro wants scale <= precision.
                  "precision": max(64, scale) if column_type.precision is None else column_type.precision,
                  "connect.version": 1, "connect.parameters": parameters, "connect.name": DECIMAL,
                  "logicalType": "decimal"}
    else:
        avro, connect_name = _LOGICAL[name if name in _LOGICAL else (name, column_type.precision)]
        schema = {"type": avro, "connect.version": 1, "connect.name": connect_name}
    if source_type is not None:
        schema.setdefault("connect.parameters", {})[SOURCE_TYPE] = source_type
    return schema["type"] if len(schema) == 1 else schema


def _optional(avro_type: Any) -> Any:
    """``avro_type`` or null: a union with null, except for the null type itself (a column of nulls only, with or
    without a source type parameter), which a union could not hold twice."""
    if avro_type == "null" or (type(avro_type) is dict and avro_type.get("type") == "null"):
        return avro_type
    return ["null", avro_type]


def _type_of_nulls(type_name: str | None) -> ColumnType:
    """The type of a column that has held only nulls so far, whose cells' type name is ``type_name``: the type the
    name declares where the values of such a column are of that type from every source (a Connect type, an SQL text
    type, an SQL number or boolean type, whose text the formats that send text type back); else ``null``. A declared
    SQL date, time or binary type says nothing sure of the values, which Canal and Lindorm send as text and DataWorks
    as milliseconds: a later value then picks the type, which a null field widens to under BACKWARD compatibility."""
    declared = declared_type(type_name)
    if declared is None:
        return _NULL
    if connect_type(type_name) is not None or declared.name in _TEXT_TYPES or typed_text.kind_of(type_name):
        return declared
    return _NULL


def _declared_nulls(schema: TableSchema) -> TableSchema:
    """``schema`` with its columns of nulls only typed as their type names declare (``_type_of_nulls``)."""
    return TableSchema(schema.table, tuple(
        Column(column.name, _type_of_nulls(column.source_type), column.nullable, column.source_type)
        if column.type == _NULL else column for column in schema.columns), schema.key)


def _fields(columns: tuple[Column, ...], required: frozenset[str], defined: set[str], taken: set[str] | None = None
            ) -> list[dict[str, Any]]:
    """The fields of a row or key record: a field per column, optional (null default) unless ``required``; field
    names ``taken`` by fields before them are not used again."""
    fields = []
    taken = set() if taken is None else taken
    for column in columns:
        implied = _implied_type(column.type)
        source_type = column.source_type if column.source_type != implied and column.source_type is not None \
            else None
        field_name = _field_name(column.name, taken)
        avro_type = _avro_type(column.type, source_type, defined, field_name)
        entry: dict[str, Any] = {"name": field_name}
        if source_type is not None and column.type.name == "decimal" and column.type.scale is None:
            entry["connect.parameters"] = {SOURCE_TYPE: source_type}
        if column.name in required and not column.nullable:
            entry["type"] = avro_type
        else:
            entry["type"], entry["default"] = _optional(avro_type), None
        if field_name != column.name:
            entry[COLUMN_PROPERTY] = column.name
        fields.append(entry)
    return fields


def _field_name(name: str, taken: set[str]) -> str:
    field_name = _avro_name(name)
    while field_name in taken:
        field_name += "_"
    taken.add(field_name)
    return field_name


def _column_type_name(column: Column) -> str | None:
    """The type name of a column's cells: its source type, or the type its Avro type implies."""
    return column.source_type if column.source_type is not None else _implied_type(column.type)


def _written_type(column: Column, value: Value) -> str | None:
    """The cell type a value of a column is read back with (``_type_read``)."""
    return _type_read(_column_type_name(column), value)


def _avro_value(value: Value, column_type: ColumnType) -> Any:
    kind = type(value)
    if kind is tuple:
        assert column_type.items is not None  # a nested value is written in a column of its type
        return [_avro_value(item, column_type.items) for item in value]  # type: ignore[union-attr]
    if kind is Struct and column_type == _ANY_DECIMAL:  # Debezium's variable-scale decimal, as its JSON sends it
        return dict(value.fields)  # type: ignore[union-attr]
    if kind is Struct:
        fields = dict(value.fields)  # type: ignore[union-attr]
        return {name: _avro_value(fields.get(name), field_type) for name, field_type in column_type.fields}
    if kind is Decimal and column_type.scale is None:
        sign, digits, exponent = value.as_tuple()  # type: ignore[union-attr]
        assert isinstance(exponent, int)  # only finite decimals fit a decimal column
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        return {"scale": -exponent, "value": unscaled.to_bytes(_byte_length(unscaled), "big", signed=True)}
    return value


def _written_value(value: Value, column_type: ColumnType) -> Value:
    """A value as reading it back from a column of ``column_type`` gives it: a struct with every field of the type,
    in the type's order."""
    kind = type(value)
    if kind is tuple and column_type.items is not None:
        return tuple(_written_value(item, column_type.items) for item in value)  # type: ignore[union-attr]
    if kind is Struct and column_type.fields:
        fields = dict(value.fields)  # type: ignore[union-attr]
        return Struct(tuple((name, _written_value(fields.get(name), field_type))
                            for name, field_type in column_type.fields))
    return value


def _byte_length(number: int) -> int:
    return max(1, (number + (number < 0)).bit_length() // 8 + 1)


@dataclass
class _TableVersion:
    """A table's schema as last written: its ``TableSchema``, the position fields of its ``source``, and the
    registered Avro schemas and ids of its value and key."""

    table: Table | None
    schema: TableSchema | None = None
    position: TableSchema | None = None
    connector: str | None = None
    value_id: int | None = None
    key_id: int | None = None
    value_schema: Any = None
    key_schema: Any = None
    value_fields: list[dict[str, Any]] = field(default_factory=list)
    # The Avro field names of the position's and the key's columns, as register() chose them.
    position_names: list[str] = field(default_factory=list)
    key_names: list[str] = field(default_factory=list)

    @classmethod
    def registered(cls, codec: DebeziumAvroCodec, table: Table | None) -> _TableVersion:
        """The table as the latest schema under its value subject has it, or a table with no schema yet."""
        try:
            latest = codec.registry.get_latest_version(codec.subject(table))
        except Exception:  # the registry's "subject not found" (or no such registry yet): a new table
            return cls(table)
        try:
            reader = _Reader.of(latest.schema.schema_str, latest.schema_id, "value")
        except DecodeError:
            return cls(table)  # not an envelope this codec reads: its own evolution starts afresh
        return cls(table, reader.table_schema(table), reader.position_schema(), reader.connector,
                   value_id=latest.schema_id)

    def evolved(self, event: ChangeEvent, codec: DebeziumAvroCodec, register: bool = True) -> _TableVersion:
        """This table, evolved to hold ``event`` (``SchemaConflict`` if it cannot), its new schemas registered."""
        observed = TableSchema.of_event(_as_typed(event, self.schema))
        # A null says nothing of a column with a type; a column of nulls only takes the type its name declares.
        schema = _declared_nulls(observed if self.schema is None else self.schema.evolved(observed))
        position = _position_schema(event)
        try:
            position = position if self.position is None else self.position.evolved(position)
        except SchemaConflict as conflict:
            raise SchemaConflict(self.table, f"source.{conflict.column}", conflict.current, conflict.new) from None
        if schema == self.schema and position == self.position and self.value_schema is not None and (
                not event.key or self.key_id is not None):
            return self
        evolved = _TableVersion(self.table, schema, position, self.connector or event.source.system)
        if register:
            evolved.register(codec, bool(event.key) or self.key_id is not None)
        return evolved

    def register(self, codec: DebeziumAvroCodec, with_key: bool) -> None:
        from confluent_kafka.schema_registry import Schema

        assert self.schema is not None and self.position is not None
        namespace = _dotted(codec.config["topic_prefix"], self.table)
        defined = {"Value", "Envelope", "Key"}  # the records of the schema's own, which a struct's record is not
        self.value_fields = _fields(self.schema.columns, frozenset(), defined)
        value_record = {"type": "record", "name": "Value", "namespace": namespace, "fields": self.value_fields,
                        "connect.name": f"{namespace}.Value"}
        connector = _avro_name(self.connector) if self.connector else "common"
        source_fields = [{"name": name, "type": ["null", kind], "default": None}
                         for name, kind in zip(SOURCE_FIELDS, _SOURCE_FIELD_TYPES, strict=True)]
        position_fields = _fields(self.position.columns, frozenset(), defined, set(SOURCE_FIELDS))
        self.position_names = [entry["name"] for entry in position_fields]
        source_fields += position_fields
        envelope = {
            "type": "record", "name": "Envelope", "namespace": namespace, "fields": [
                {"name": "before", "type": ["null", value_record], "default": None},
                {"name": "after", "type": ["null", f"{namespace}.Value"], "default": None},
                {"name": "source", "type": {"type": "record", "name": "Source",
                                            "namespace": f"io.debezium.connector.{connector}",
                                            "fields": source_fields,
                                            "connect.name": f"io.debezium.connector.{connector}.Source"}},
                {"name": "transaction", "type": ["null", _TRANSACTION_BLOCK], "default": None},
                {"name": "op", "type": "string"},
                {"name": "ts_ms", "type": ["null", "long"], "default": None},
                {"name": "ts_us", "type": ["null", "long"], "default": None},
            ],
            "connect.version": 1, "connect.name": f"{namespace}.Envelope"}
        self.value_schema = fastavro.parse_schema(envelope)
        self.value_id = _registered(codec, self.table, False, Schema(json.dumps(envelope), "AVRO"))
        if with_key and self.schema.key:
            key_fields = _fields(self.schema.key_columns(), frozenset(self.schema.key), {"Key"})
            self.key_names = [entry["name"] for entry in key_fields]
            key_record = {"type": "record", "name": "Key", "namespace": namespace, "fields": key_fields,
                          "connect.name": f"{namespace}.Key"}
            self.key_schema = fastavro.parse_schema(key_record)
            self.key_id = _registered(codec, self.table, True, Schema(json.dumps(key_record), "AVRO"))

    # -- writing ----------------------------------------------------------------------------------------------

    def write_value(self, event: ChangeEvent) -> bytes:
        """The framed envelope of ``event``, a change this version's schema holds."""
        assert self.schema is not None and self.position is not None and self.value_id is not None
        table = event.table
        source = event.source
        record_source: dict[str, Any] = {"connector": source.system, "ts_ms": None, "ts_us": None, "db": None,
                                         "schema": None, "table": None}
        if table is not None:
            record_source.update(db=table.catalog if table.catalog is not None else table.schema,
                                 schema=table.schema if table.catalog is not None else None, table=table.name)
        write_time(record_source, source.commit_time_us)
        position = dict(source.position)
        for column, avro_name in zip(self.position.columns, self.position_names, strict=True):
            record_source[avro_name] = _avro_value(position.get(column.name), column.type)
        record: dict[str, Any] = {"before": self.row(event.before), "after": self.row(event.after),
                                  "source": record_source, "transaction": _transaction_block(event),
                                  "op": CODE_OF_OP[event.op], "ts_ms": None, "ts_us": None}
        write_time(record, source.capture_time_us)
        return _framed(self.value_id, self.value_schema, record)

    def row(self, image: Image | None) -> dict[str, Any] | None:
        assert self.schema is not None
        if image is None:
            return None
        values = {cell.name: cell.value for cell in reversed(image)}  # the first cell of a column is the one kept
        return {avro_field["name"]: _avro_value(values.get(column.name), column.type)
                for column, avro_field in zip(self.schema.columns, self.value_fields, strict=True)}

    def write_key(self, key: Image) -> bytes | None:
        """The framed key record, or None for a table without key columns."""
        assert self.schema is not None
        if self.key_id is None:
            return None
        values = {cell.name: cell.value for cell in key}
        record = {avro_name: _avro_value(values.get(column.name), column.type)
                  for column, avro_name in zip(self.schema.key_columns(), self.key_names, strict=True)}
        return _framed(self.key_id, self.key_schema, record)

    # -- losses -------------------------------------------------------------------------------------------------

    def typed(self, event: ChangeEvent) -> ChangeEvent:
        """``event`` as a table of this schema gives it back: each row with every column of the table in its order,
        the key's cells typed by their columns, and the position in the table's source field order."""
        assert self.schema is not None and self.position is not None
        columns = {column.name: column for column in self.schema.columns}
        key = {cell.name: cell for cell in event.key}
        changed: dict[str, Any] = {}
        for image_name in ("before", "after"):
            image = getattr(event, image_name)
            if image is None:
                continue
            row: dict[str, Cell] = {}
            for cell in image:
                row.setdefault(cell.name, cell)
            written = tuple(_written_cell(row.get(name) or key.get(name) or Cell(name), column)
                            for name, column in columns.items())
            if written != image:
                changed[image_name] = written
        typed_key = []
        for cell in event.key:
            written_cell = _written_cell(cell, columns[cell.name])
            typed_key.append(replace(cell, value=written_cell.value, type=written_cell.type))
        if typed_key != list(event.key):
            changed["key"] = tuple(typed_key)
        types = {column.name: column.type for column in self.position.columns}
        order = list(types)
        position = tuple((name, _written_value(value, types[name])) for name, value in sorted(
            event.source.position, key=lambda entry: order.index(entry[0])))
        if position != event.source.position:
            changed["source"] = replace(event.source, position=position)
        return replace(event, **changed) if changed else event


def _written_cell(cell: Cell, column: Column) -> Cell:
    value = _written_value(cell.value, column.type) if cell.kind is CellKind.PUT else None
    if column.type == _ANY_DECIMAL and value is not None:  # read back in the form the column's type name gives
        value = _value_in(_avro_value(value, column.type), cell.name, _connect_struct(column.source_type))
    if type(value) is float and column.type == _FLOAT and _connect_float(_column_type_name(column)):
        value = connect_float(value)  # as _Field.cell reads it
    return Cell(cell.name, value, _written_type(column, value))


def _position_schema(event: ChangeEvent) -> TableSchema:
    return TableSchema(None, tuple(Column(name, cell_type(value, None)) for name, value in event.source.position))


def _registered(codec: DebeziumAvroCodec, table: Table | None, is_key: bool, schema: Any) -> int:
    subject = codec.subject(table, is_key)
    try:
        schema_id: int = codec.registry.register_schema(subject, schema)
    except Exception as error:  # the registry's refusal (409: incompatible) or an unreachable registry
        raise EncodeError(NAME, f"{address(codec.registry)} refused the schema of table {table_name(table)} under "
                                f"subject {subject}: {' '.join(str(error).split())}") from None
    return schema_id


def _framed(schema_id: int, parsed: Any, record: dict[str, Any]) -> bytes:
    body = io.BytesIO()
    body.write(MAGIC + struct.pack(">I", schema_id))
    try:
        fastavro.schemaless_writer(body, parsed, record)
    except UnicodeEncodeError as error:  # a str that is not valid Unicode (a lone surrogate)
        raise EncodeError(NAME, f"{type(error).__name__}: {error}") from None
    return body.getvalue()


def _time(record: dict[str, Any], path: str) -> int | None:
    """Microseconds from ``ts_us`` where it is there, else from ``ts_ms``, as debezium-json reads them."""
    try:
        return read_time(record, path)
    except DecodeError as error:
        raise error.relabeled(NAME) from None


# -- reading -------------------------------------------------------------------------------------------------------

def _implied_of_field(avro_type: Any) -> str | None:
    """The cell type a field of this (non-null) Avro type reads as without a source type parameter, as
    ``debezium-json`` names Connect types: the Connect name where it is not the default one of its value's kind."""
    if type(avro_type) is not dict:
        return {"int": "int32", "float": "float"}.get(avro_type)
    if "connect.type" in avro_type:
        return str(avro_type["connect.type"])
    name = avro_type.get("connect.name")
    if name in (None, DECIMAL, _VARIABLE_DECIMAL) or avro_type.get("type") == "record":
        return _implied_of_field(avro_type.get("type")) if type(avro_type.get("type")) is str and name is None \
            else None
    return str(name)


@dataclass
class _Field:
    """One field of a row, key or source record as read: its Avro name, its column and the cell type it reads as."""

    avro_name: str
    column: Column
    cell_type: str | None

    def cell(self, record: dict[str, Any], path: str) -> Cell:
        """The cell of this field in a row or key record: Debezium's variable-scale decimal in the form the type
        name gives (``_value_in``), and the type named as ``_type_read`` names the value."""
        value = _value_in(record.get(self.avro_name), f"{path}.{self.avro_name}", _connect_struct(self.cell_type))
        if type(value) is float and self.column.type == _FLOAT and _connect_float(self.cell_type):
            value = connect_float(value)
        return Cell(self.column.name, value, _type_read(self.cell_type, value))


@dataclass
class _Reader:
    """What a registered schema says about the records written with it."""

    schema_id: int
    parsed: Any
    row: list[_Field] = field(default_factory=list)
    key_fields: list[_Field] = field(default_factory=list)
    position: list[_Field] = field(default_factory=list)
    connector: str | None = None

    @classmethod
    def of(cls, text: str, schema_id: int, part: str) -> _Reader:
        try:
            schema = json.loads(text)
            parsed = fastavro.parse_schema(schema)
        except Exception as error:  # a registry may hold anything under an id
            raise DecodeError(NAME, f"schema {schema_id} is not an Avro schema ({type(error).__name__}: {error})",
                              field=part) from None
        reader = cls(schema_id, parsed)
        if type(schema) is not dict or schema.get("type") != "record":
            raise DecodeError(NAME, f"schema {schema_id} is not a record schema", field=part)
        if part == "key":  # a record of the key columns, which may have any names ("op" too)
            reader.key_fields = _read_fields(schema["fields"])
            return reader
        envelope = {entry.get("name"): entry for entry in schema.get("fields", [])}
        row_type = _non_null(envelope.get("after", envelope.get("before", {})).get("type"))
        if type(row_type) is dict and row_type.get("type") == "record":
            reader.row = _read_fields(row_type["fields"])
        elif type(row_type) is str:  # after refers to the record before defined
            before = _non_null(envelope.get("before", {}).get("type"))
            reader.row = _read_fields(before["fields"]) if type(before) is dict else []
        source = envelope.get("source", {}).get("type")
        if type(source) is dict and source.get("type") == "record":
            connector = str(source.get("namespace", "")).rpartition(".")[2]
            reader.connector = None if connector in ("", "common") else connector
            reader.position = [entry for entry in _read_fields(source["fields"])
                               if entry.column.name not in SOURCE_FIELDS]
        return reader

    def table_schema(self, table: Table | None) -> TableSchema:
        return TableSchema(table, tuple(entry.column for entry in self.row),
                           tuple(entry.column.name for entry in self.key_fields))

    def position_schema(self) -> TableSchema:
        return TableSchema(None, tuple(entry.column for entry in self.position))

    def image(self, record: Any, path: str) -> Image | None:
        if record is None:
            return None
        return tuple(entry.cell(record, path) for entry in self.row)

    def key(self, record: dict[str, Any]) -> Image:
        return tuple(entry.cell(record, "key") for entry in self.key_fields)

    def source(self, record: Any) -> tuple[Table | None, Source]:
        """The table and source of a ``source`` record: no table where it names none, db and schema neither."""
        if type(record) is not dict:
            raise DecodeError(NAME, "expected the source record", field="source")
        name, db, schema = record.get("table"), record.get("db"), record.get("schema")
        if type(name) is not str and (name is not None or db is not None or schema is not None):
            raise DecodeError(NAME, "expected the table's name with its db and schema", field="source.table")
        table = None if name is None else Table(name, schema, db) if schema is not None else Table(name, db)
        position = tuple((entry.column.name, _value_in(record[entry.avro_name], f"source.{entry.avro_name}"))
                         for entry in self.position if record.get(entry.avro_name) is not None)
        connector = record.get("connector")
        return table, Source(connector if type(connector) is str else None, position, _time(record, "source."))


def _non_null(avro_type: Any) -> Any:
    if type(avro_type) is list:
        branches = [branch for branch in avro_type if branch != "null"]
        return branches[0] if len(branches) == 1 else (branches or ["null"])[0]
    return avro_type


def _read_fields(fields: list[dict[str, Any]]) -> list[_Field]:
    read = []
    for entry in fields:
        avro_type = _non_null(entry.get("type"))
        optional = type(entry.get("type")) is list and "null" in entry["type"]
        column_type = _column_type_of(avro_type)
        parameters = avro_type.get("connect.parameters", {}) if type(avro_type) is dict else {}
        parameters = parameters or entry.get("connect.parameters", {})
        source_type = parameters.get(SOURCE_TYPE) if type(parameters) is dict else None
        cell_type_name = source_type if source_type is not None else _implied_of_field(avro_type)
        name = entry.get(COLUMN_PROPERTY, entry["name"])
        read.append(_Field(entry["name"], Column(name, column_type, optional, source_type), cell_type_name))
    return read


def _column_type_of(avro_type: Any) -> ColumnType:
    """The column type of a field's Avro type (``json`` for a map, or a record referred to by name)."""
    if avro_type == _VARIABLE_DECIMAL:  # the record, referred to by name after its first field
        return ColumnType("decimal")
    if type(avro_type) is str:
        return {"null": ColumnType("null"), "boolean": ColumnType("boolean"), "int": ColumnType("int32"),
                "long": ColumnType("int64"), "float": ColumnType("float"), "double": ColumnType("double"),
                "string": ColumnType("string"), "bytes": ColumnType("bytes")}.get(avro_type, ColumnType("json"))
    if type(avro_type) is not dict:
        return ColumnType("json")
    named = avro_type.get("connect.name") or avro_type.get("logicalType")
    if named in _TYPE_OF_NAME:
        return _TYPE_OF_NAME[named]
    if named == _VARIABLE_DECIMAL:
        return ColumnType("decimal")
    if avro_type.get("logicalType") == "decimal":
        parameters = avro_type.get("connect.parameters") or {}
        precision = parameters.get("connect.decimal.precision")
        scale = int(avro_type.get("scale", 0))
        return ColumnType("decimal", int(precision) if precision is not None else None, scale)
    if avro_type.get("connect.type") in ("int8", "int16"):
        return ColumnType(avro_type["connect.type"])
    if type(avro_type.get("type")) is str and avro_type["type"] not in ("record", "array", "map", "enum", "fixed"):
        return _column_type_of(avro_type["type"])
    if avro_type.get("type") == "array":
        return ColumnType("array", items=_column_type_of(_non_null(avro_type.get("items"))))
    if avro_type.get("type") == "record" and avro_type.get("fields"):
        return ColumnType("struct", fields=tuple((entry["name"], _column_type_of(_non_null(entry.get("type"))))
                                                 for entry in avro_type["fields"]))
    if avro_type.get("type") in ("enum",):
        return ColumnType("string")
    if avro_type.get("type") == "fixed":
        return ColumnType("bytes")
    return ColumnType("json")


def _value_in(value: Any, where: str, variable_decimal_struct: bool = False) -> Value:
    """A value as fastavro reads it, as a change-event value: logical types back to the integers they are written
    as, Debezium's variable-scale decimal to a decimal (or to the struct ``{scale, value}`` that its JSON sends, where
    ``variable_decimal_struct``), records and maps to Structs, arrays to tuples."""
    kind = type(value)
    if kind is dict:
        if set(value) == {"scale", "value"} and type(value["value"]) is bytes:
            if variable_decimal_struct:
                return Struct((("scale", value["scale"]), ("value", value["value"])))
            return _decimal_of(value["scale"], value["value"])
        return Struct(tuple((name, _value_in(item, f"{where}.{name}")) for name, item in value.items()))
    if kind is list:
        return tuple(_value_in(item, f"{where}[{index}]") for index, item in enumerate(value))
    if kind is datetime.date:
        return (value - _EPOCH_DATE).days
    if kind is datetime.datetime:
        moment = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        return (moment - _EPOCH) // _TIME_UNIT[6 if moment.microsecond % 1000 else 3]
    if kind is datetime.time:
        return (datetime.datetime.combine(_MIDNIGHT, value) - _MIDNIGHT) // _TIME_UNIT[3]
    if kind is Decimal or kind in (type(None), bool, int, float, str, bytes):
        return value
    raise DecodeError(NAME, f"a {kind.__name__} value has no change-event form", field=where)


# -- files: JSON lines of the framed key and value, as base64 -----------------------------------------------------

class _FramedLineWriter(FileWriter):
    def write(self, messages: list[Any]) -> None:
        for record in messages:
            self.stream.write(json.dumps({"key": _base64(record.key), "value": _base64(record.value)}).encode())
            self.stream.write(b"\n")


def _base64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")
