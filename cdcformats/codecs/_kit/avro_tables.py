"""debezium-avro's tables in the schema registry: each table's version as last written (``TableVersion``), its
schema evolved to hold a change and registered under its subjects as the Avro envelope and key records, its changes
written with it, and a change typed as a table of that version gives it back.
"""

from __future__ import annotations

import io
import json
import struct
from dataclasses import dataclass, field
from typing import Any, Protocol

import fastavro
from msgspec.structs import replace

from ...core import typed_text
from ...errors import DecodeError, EncodeError
from ...model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Image, Table, Value
from ...schema_registry.client import address
from ...tables import (
    Column,
    ColumnType,
    SchemaConflict,
    TableSchema,
    cell_type,
    connect_type,
    declared_type,
    table_name,
)
from .avro_columns import (
    ANY_DECIMAL,
    FLOAT,
    NAME,
    avro_name,
    avro_value,
    column_type_name,
    dotted,
    record_fields,
    written_value,
)
from .avro_records import MAGIC, Reader, value_in
from .connect_cells import as_typed, connect_struct, is_connect_float, type_read
from .connect_schema import connect_float
from .debezium_envelope import CODE_OF_OP, SOURCE_FIELDS, TRANSACTION_ATTRIBUTE, write_time

# The types of the fields of ``source`` that say the system, times and table; the position's fields follow them.
_SOURCE_FIELD_TYPES = ("string", "long", "long", "string", "string", "string")
# Debezium's transaction block: the transaction's id, the change's place in it and its place among the table's changes.
_TRANSACTION_FIELDS = (("id", "string"), ("total_order", "long"), ("data_collection_order", "long"))
_TRANSACTION_BLOCK = {"type": "record", "name": "block", "namespace": "event",
                      "fields": [{"name": name, "type": kind} for name, kind in _TRANSACTION_FIELDS],
                      "connect.version": 1, "connect.name": "event.block"}
_NULL = ColumnType("null")
# The column types whose SQL names every source sends values of as the text they are.
_TEXT_TYPES = ("string", "json")


class Registrar(Protocol):
    """The codec that a table version registers its schemas through: its options, its schema registry and its
    subjects."""

    @property
    def config(self) -> dict[str, Any]: ...

    @property
    def registry(self) -> Any: ...

    def subject(self, table: Table | None, is_key: bool = False) -> str: ...


def transaction_block(event: ChangeEvent) -> dict[str, Value] | None:
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


@dataclass
class TableVersion:
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
    # What ``holds_whole`` checks an event against, found once: see ``_plain_columns``.
    _plain: tuple[_PlainColumns | None, _PlainColumns | None, _PlainColumns | None] | None = field(
        default=None, repr=False, compare=False)

    @classmethod
    def registered(cls, codec: Registrar, table: Table | None) -> TableVersion:
        """The table as the latest schema under its value subject has it, or a table with no schema yet."""
        try:
            latest = codec.registry.get_latest_version(codec.subject(table))
        except Exception:  # the registry's "subject not found" (or no such registry yet): a new table
            return cls(table)
        try:
            reader = Reader.of(latest.schema.schema_str, latest.schema_id, "value")
        except DecodeError:
            return cls(table)  # not an envelope this codec reads: its own evolution starts afresh
        return cls(table, reader.table_schema(table), reader.position_schema(), reader.connector,
                   value_id=latest.schema_id)

    def evolved(self, event: ChangeEvent, codec: Registrar, register: bool = True) -> TableVersion:
        """This table, evolved to hold ``event`` (``SchemaConflict`` if it cannot), its new schemas registered."""
        observed = TableSchema.of_event(as_typed(event, self.schema))
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
        evolved = TableVersion(self.table, schema, position, self.connector or event.source.system)
        if register:
            evolved.register(codec, bool(event.key) or self.key_id is not None)
        return evolved

    def register(self, codec: Registrar, with_key: bool) -> None:
        from confluent_kafka.schema_registry import Schema

        assert self.schema is not None and self.position is not None
        namespace = dotted(codec.config["topic_prefix"], self.table)
        defined = {"Value", "Envelope", "Key"}  # the records of the schema's own, which a struct's record is not
        self.value_fields = record_fields(self.schema.columns, frozenset(), defined)
        value_record = {"type": "record", "name": "Value", "namespace": namespace, "fields": self.value_fields,
                        "connect.name": f"{namespace}.Value"}
        connector = avro_name(self.connector) if self.connector else "common"
        source_fields = [{"name": name, "type": ["null", kind], "default": None}
                         for name, kind in zip(SOURCE_FIELDS, _SOURCE_FIELD_TYPES, strict=True)]
        position_fields = record_fields(self.position.columns, frozenset(), defined, set(SOURCE_FIELDS))
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
            key_fields = record_fields(self.schema.key_columns(), frozenset(self.schema.key), {"Key"})
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
        for column, field_name in zip(self.position.columns, self.position_names, strict=True):
            record_source[field_name] = avro_value(position.get(column.name), column.type)
        record: dict[str, Any] = {"before": self.row(event.before), "after": self.row(event.after),
                                  "source": record_source, "transaction": transaction_block(event),
                                  "op": CODE_OF_OP[event.op], "ts_ms": None, "ts_us": None}
        write_time(record, source.capture_time_us)
        return _framed(self.value_id, self.value_schema, record)

    def row(self, image: Image | None) -> dict[str, Any] | None:
        assert self.schema is not None
        if image is None:
            return None
        values = {cell.name: cell.value for cell in reversed(image)}  # the first cell of a column is the one kept
        return {avro_field["name"]: avro_value(values.get(column.name), column.type)
                for column, avro_field in zip(self.schema.columns, self.value_fields, strict=True)}

    def write_key(self, key: Image) -> bytes | None:
        """The framed key record, or None for a table without key columns."""
        assert self.schema is not None
        if self.key_id is None:
            return None
        values = {cell.name: cell.value for cell in key}
        record = {field_name: avro_value(values.get(column.name), column.type)
                  for column, field_name in zip(self.schema.key_columns(), self.key_names, strict=True)}
        return _framed(self.key_id, self.key_schema, record)

    # -- losses -------------------------------------------------------------------------------------------------

    def holds_whole(self, event: ChangeEvent) -> bool:
        """Whether this version holds ``event`` as it is, without evolving (``evolved`` gives this version back),
        and ``typed`` gives it back unchanged: its rows hold every column of the table, in order, its key the key
        columns and its position the position's columns, in order, each cell a put without a type or version, each
        value of its column's plain type (``_plain_columns``). Found without building anything, for the fast path of
        encode (``encode_whole``)."""
        if self._plain is None:
            assert self.schema is not None and self.position is not None
            self._plain = (_plain_columns(self.schema.columns, self.schema.key),
                           _plain_columns(self.schema.key_columns(), self.schema.key),
                           _plain_columns(self.position.columns, (), position=True))
        columns, key_columns, position_columns = self._plain
        if columns is None or key_columns is None or position_columns is None:
            return False
        for image in (event.before, event.after):
            if image is not None and not _holds_cells(image, columns):
                return False
        if not _holds_cells(event.key, key_columns):
            return False
        position = event.source.position
        if len(position) != len(position_columns):
            return False
        for (name, value), (column_name, kinds) in zip(position, position_columns):
            if name != column_name or type(value) not in kinds:
                return False
        return True

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
        position = tuple((name, written_value(value, types[name])) for name, value in sorted(
            event.source.position, key=lambda entry: order.index(entry[0])))
        if position != event.source.position:
            changed["source"] = replace(event.source, position=position)
        return replace(event, **changed) if changed else event


# Each column's name and the kinds of value it holds as they are (``TableVersion.holds_whole``).
_PlainColumns = tuple[tuple[str, tuple[type, ...]], ...]
# The column types whose values are written and typed back as they are, with no cell type: their values' kinds.
_PLAIN_KINDS: dict[ColumnType, type] = {ColumnType("string"): str, ColumnType("int64"): int,
                                        ColumnType("double"): float, ColumnType("boolean"): bool}


def _plain_columns(columns: tuple[Column, ...], key: tuple[str, ...], position: bool = False) -> _PlainColumns | None:
    """Each column's name and the kinds of value that its cells hold as a change that evolves nothing gives them
    back: a value of its plain type, or null where the column is nullable (never in the position, which leaves a
    null out); None where a column has no plain type, a source type, or a nullability that a change of it would
    change (every column but a key column is nullable)."""
    plain = []
    for column in columns:
        kind = _PLAIN_KINDS.get(column.type)
        if (kind is None or column.source_type is not None or column_type_name(column) is not None
                or not column.nullable and column.name not in key
                or position and column.name in SOURCE_FIELDS):
            return None
        plain.append((column.name, (kind,) if position or not column.nullable else (kind, type(None))))
    return tuple(plain)


def _holds_cells(image: Image, columns: _PlainColumns) -> bool:
    """Whether ``image`` is the cells of ``columns``, in order, each a put without a type or version, of a kind of
    value its column holds as it is."""
    if len(image) != len(columns):
        return False
    for cell, (name, kinds) in zip(image, columns):
        if (cell.name != name or type(cell.value) not in kinds or cell.type is not None or cell.version is not None
                or cell.kind is not CellKind.PUT):
            return False
    return True


def _written_cell(cell: Cell, column: Column) -> Cell:
    value = written_value(cell.value, column.type) if cell.kind is CellKind.PUT else None
    if column.type == ANY_DECIMAL and value is not None:  # read back in the form the column's type name gives
        value = value_in(avro_value(value, column.type), cell.name, connect_struct(column.source_type))
    if type(value) is float and column.type == FLOAT and is_connect_float(column_type_name(column)):
        value = connect_float(value)  # as avro_records' _Field.cell reads it
    return Cell(cell.name, value, _written_type(column, value))


def _written_type(column: Column, value: Value) -> str | None:
    """The cell type a value of a column is read back with (``type_read``)."""
    return type_read(column_type_name(column), value)


def _position_schema(event: ChangeEvent) -> TableSchema:
    return TableSchema(None, tuple(Column(name, cell_type(value, None)) for name, value in event.source.position))


def _registered(codec: Registrar, table: Table | None, is_key: bool, schema: Any) -> int:
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
