"""Debezium's change event envelope, the pieces of it that the formats writing one share: ``debezium-json`` (the
envelope itself, see that module for its spec), ``lindorm-subscription`` (LindormTable's Debezium-style envelope)
and ``paimon-log`` (whose values are debezium-json).

Errors raised here are debezium-json's; a format that reads the envelope as its own relabels them.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import msgspec
from msgspec.structs import replace

from ...core import time_units, typed_text
from ...core.typed_text import json_form
from ...errors import DecodeError
from ...losses import REFUSED, Loss, Refusal
from ...model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Entries, Image, Op, Source, Table, Value
from . import connect_schema
from .json_message import AS_IS_TYPES, cells_of, encode, encode_as_jackson, jackson_float, json_type, value_of

NAME = "debezium-json"
# Envelope fields a reader does not know are kept as these attributes (both formats use the name, so that they hand
# such fields to each other).
FIELD_ATTRIBUTE = "debezium.field."
# The fields of the envelope's ``transaction`` block (``provide.transaction.metadata``) are these attributes.
TRANSACTION_ATTRIBUTE = "debezium.transaction."
SOURCE_FIELDS = ("connector", "ts_ms", "ts_us", "db", "schema", "table")  # with a table: not the position

OP_OF_CODE = {"c": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE, "r": Op.READ, "t": Op.TRUNCATE}
# An UPSERT is the row as it now is, whether or not it existed: Debezium's closest op is a create.
CODE_OF_OP = {**{op: code for code, op in OP_OF_CODE.items()}, Op.UPSERT: "c"}

_MILLISECOND = time_units.MILLISECOND
_PUT = CellKind.PUT
# The parsed JSON values that are cell values as they are (``value_of``), with an integer within 64 bits.
_AS_READ = frozenset({str, bool, float, type(None)})
# The source fields that are not the position, with a table and without one.
_STRUCTURAL, _STRUCTURAL_WITHOUT_TABLE = frozenset(SOURCE_FIELDS), frozenset({"connector", "ts_ms", "ts_us"})
# The source fields that decoding reads as something other than the position, with a table and without one (where
# a field "table" is read as the table): what a position written in ``source`` must not be named.
RESERVED, RESERVED_WITHOUT_TABLE = _STRUCTURAL, _STRUCTURAL_WITHOUT_TABLE | {"table"}


def with_op_code(event: ChangeEvent, code_of_op: dict[Op, str], format_name: str) -> ChangeEvent:
    """An UPSERT is written as a create, the row as it now is, and read back as an INSERT; an op without a code has
    no form (``Refusal``)."""
    if event.op is Op.UPSERT:
        return replace(event, op=Op.INSERT)
    if event.op not in code_of_op:
        raise Refusal(Loss(f"op.{event.op.value}", "op", REFUSED,
                           f"a {event.op.value} has no op code in {format_name}"))
    return event


def position_as_written(event: ChangeEvent, reserved: frozenset[str], schemas: bool) -> ChangeEvent:
    """``event`` with the source position a ``source`` object gives back: a name that repeats keeps its first entry,
    one that decoding reads as another source field is left out; with ``schemas``, a value that only a column
    schema types (``source`` is plain JSON) is written as its text, and a nested value no Connect schema holds as
    its JSON text."""
    position = event.source.position
    written: list[tuple[str, Value]] | None = None  # built only once an entry is written otherwise
    seen: set[str] = set()
    for index, (name, value) in enumerate(position):
        if name in seen or name in reserved:
            if written is None:
                written = list(position[:index])
            continue
        seen.add(name)
        if schemas:
            as_written = typed_text.from_json(json_form(value)) if connect_schema.schema_only_features(value) \
                else value
            as_written = connect_schema.nested_as_read_back(as_written)
            if as_written is not value and written is None:
                written = list(position[:index])
            value = as_written
        if written is not None:
            written.append((name, value))
    return event if written is None else replace(event, source=replace(event.source, position=tuple(written)))


def position_whole(position: Entries, reserved: frozenset[str]) -> bool:
    """Whether a ``source`` object writes ``position`` as it is, and reads it back so (``position_as_written``,
    with or without a schema): each name once and none that decoding reads as another source field (``reserved``),
    each value a JSON scalar. For the fast path of encode (``Codec.encode_whole``)."""
    for name, value in position:
        if name in reserved or type(value) not in AS_IS_TYPES and not connect_schema.is_json_scalar(value):
            return False
    return len(position) < 2 or len({name for name, _ in position}) == len(position)


def canonical_json(value: Value) -> str:
    """A kept field's JSON text as decoding gives it back: JSON text in its canonical form; any other value is the
    JSON value it is as a scalar (text as a JSON string)."""
    if type(value) is str:
        try:
            return encode(msgspec.json.decode(value)).decode()
        except (msgspec.DecodeError, RecursionError):
            pass
    return encode(json_form(value)).decode()


# How to read each column of ``before`` and ``after``, by image and column name (``column_plans``).
ColumnPlans = dict[str, dict[str, connect_schema.FieldPlan]]
_MAX_SCHEMA_TEXTS = 1024  # the most wrapper schemas a codec keeps the plans of


def column_plans(schema: Any) -> ColumnPlans:
    """For the schema wrapper: the plan of each column of ``before`` and ``after`` (``connect_schema.field_plan``),
    by name. A null schema (what JsonConverter writes for a record without one) describes no column: the payload
    reads as without the wrapper."""
    if schema is None:
        return {}
    if type(schema) is not dict or type(schema.get("fields")) is not list:
        raise DecodeError(NAME, "expected a struct schema with fields", field="schema")
    columns: ColumnPlans = {}
    for image in schema["fields"]:
        if type(image) is dict and image.get("field") in ("before", "after") and type(image.get("fields")) is list:
            columns[image["field"]] = {column["field"]: connect_schema.field_plan(column) for column in image["fields"]
                                       if type(column) is dict and type(column.get("field")) is str}
    return columns


class _Wrapper(msgspec.Struct, forbid_unknown_fields=True):
    """An envelope in JsonConverter's schema wrapper, its schema kept as its text: what its plans are found by."""

    payload: Any
    schema: msgspec.Raw


_read_wrapper = msgspec.json.Decoder(_Wrapper).decode
# How JsonConverter's wrapper opens, as it writes it: only a message of bytes that opens so is worth trying as one (a
# wrapper spelt otherwise is read as any JSON is), so that an envelope without one is not parsed twice.
WRAPPER_OPENINGS = (b'{"schema":', b'{"payload":')


class WrapperSchemas:
    """The wrapper schemas a codec has read, each parsed and planned (``column_plans``) once for all the messages
    that repeat its text: a stream has a few."""

    def __init__(self) -> None:
        self._by_text: dict[bytes, tuple[Any, ColumnPlans]] = {}

    def unwrapped(self, message: Any, max_bytes: int) -> tuple[Any, Any, ColumnPlans] | None:
        """The payload, schema and column plans of a message that is exactly a wrapper of a struct schema; None for
        any other message, which the reader of any JSON reads (and tells what is wrong with)."""
        if type(message) is not bytes or not message.startswith(WRAPPER_OPENINGS) or len(message) > max_bytes:
            return None
        try:
            wrapper = _read_wrapper(message)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            return None
        text = bytes(wrapper.schema)
        found = self._by_text.get(text)
        if found is None:
            try:
                schema = msgspec.json.decode(text)
                if schema is None:  # JsonConverter's wrapper of a record without a schema
                    return None
                found = (schema, column_plans(schema))
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError, DecodeError):  # told by the reader of
                return None  # any JSON (a Raw schema is not checked for UTF-8 until it is parsed)
            if len(self._by_text) >= _MAX_SCHEMA_TEXTS:
                self._by_text.clear()
            self._by_text[text] = found
        return wrapper.payload, *found


def image_cells(data: Any, image_name: str, columns: dict[str, connect_schema.FieldPlan]) -> Image | None:
    """An image's cells, each read and typed as its column's plan says, if it has one."""
    if data is None:
        return None
    if type(data) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(data)}", field=image_name)
    where = f"{image_name}."
    if not columns:  # most images without a schema
        return cells_of(data, NAME, where)
    cells = []
    for name, value in data.items():
        kind = type(value)
        if name in columns:
            plan_kind, reads_null, column = columns[name]
            if kind is plan_kind and (kind is not int or INT64_MIN <= value <= INT64_MAX) \
                    or value is None and reads_null:  # a value of the kind its column reads as it is: most
                cells.append(Cell(name, value))
            else:
                cells.append(Cell(name, *connect_schema.read_value(value, column, NAME, where + name)))
        elif kind in _AS_READ or kind is int and INT64_MIN <= value <= INT64_MAX:  # without a call
            cells.append(Cell(name, value))
        else:
            cells.append(Cell(name, value_of(value, NAME, where, name)))
    return tuple(cells)


def read_time(document: dict[str, Any], path: str) -> int | None:
    """Microseconds from ``ts_us`` where it is there, else from ``ts_ms``."""
    field, unit, value = "ts_us", time_units.MICROSECOND, document.get("ts_us")
    if value is None:
        field, unit, value = "ts_ms", time_units.MILLISECOND, document.get("ts_ms")
        if value is None:
            return None
    if type(value) is int and INT64_MIN <= value * unit <= INT64_MAX:  # time_units.to_microseconds, without a call
        return value * unit
    raise DecodeError(NAME, f"expected a 64-bit timestamp, got {value!r}", field=path + field)


def read_source(source: Any, envelope: dict[str, Any] | None = None) -> tuple[Table | None, Source]:
    """The table and the source of a ``source`` object: ``connector`` the system, ``ts_ms`` (``ts_us``) the commit
    time, ``table`` in ``schema`` (``db`` the catalog) or else in ``db``; every other field the position. The
    capture time is the ``envelope``'s."""
    if source is None:
        return None, Source(capture_time_us=None if envelope is None else read_time(envelope, ""))
    if type(source) is not dict:
        raise DecodeError(NAME, f"expected an object or null, got {json_type(source)}", field="source")
    system = source.get("connector")
    if system is not None and type(system) is not str:
        raise DecodeError(NAME, f"expected a string, got {json_type(system)}", field="source.connector")
    table = None
    structural = _STRUCTURAL_WITHOUT_TABLE
    if "table" in source:
        name, db, schema = source["table"], source.get("db"), source.get("schema")
        if type(name) is not str or db is not None and type(db) is not str \
                or schema is not None and type(schema) is not str:
            _table_refused(name, db, schema)
        table = Table(name, schema, db) if "schema" in source else Table(name, db)
        structural = _STRUCTURAL
    position = tuple([entry for entry in source.items() if entry[0] not in structural])
    commit_time_us = source.get("ts_ms")
    if type(commit_time_us) is int and INT64_MIN <= commit_time_us * _MILLISECOND <= INT64_MAX \
            and "ts_us" not in source:  # most times: read_time's, without a call
        commit_time_us *= _MILLISECOND
    else:
        commit_time_us = read_time(source, "source.")
    capture_time_us = None
    if envelope is not None:
        capture_time_us = envelope.get("ts_ms")
        if type(capture_time_us) is int and INT64_MIN <= capture_time_us * _MILLISECOND <= INT64_MAX \
                and "ts_us" not in envelope:  # as the commit time
            capture_time_us *= _MILLISECOND
        elif capture_time_us is not None or "ts_us" in envelope:
            capture_time_us = read_time(envelope, "")
    try:  # most positions: JSON scalars, which the model holds as they are, and checks
        return table, Source(system, position, commit_time_us, capture_time_us)
    except (TypeError, ValueError):  # an array, an object or an integer beyond 64 bits: read, or named
        position = tuple([(field, value_of(value, NAME, "source.", field)) for field, value in position])
    return table, Source(system, position, commit_time_us, capture_time_us)


def _table_refused(name: Any, db: Any, schema: Any) -> NoReturn:
    """Raise the error of a ``source`` whose table, db or schema is not text."""
    for field, value in (("table", name), ("db", db), ("schema", schema)):
        if value is not None and type(value) is not str:
            raise DecodeError(NAME, f"expected a string, got {json_type(value)}", field=f"source.{field}")
    raise DecodeError(NAME, "expected the table name, got null", field="source.table")


def image_fields(cells: Image | None, schemas: bool = False) -> dict[str, Any] | None:
    """An image as its JSON object; with ``schemas``, values as its Connect schema types them."""
    if cells is None:
        return None
    if schemas:
        return {cell.name: value if type(value := cell.value) in AS_IS_TYPES else connect_schema.json_value(value)
                for cell in cells}
    return {cell.name: value if type(value := cell.value) in AS_IS_TYPES else json_form(value) for cell in cells}


def json_struct_schema(values: dict[str, Any], optional: bool, name: str | None) -> dict[str, Any]:
    """The struct schema of an object of JSON scalars, typed from the values."""
    columns = [connect_schema.json_field_schema(column, value) for column, value in values.items()]
    return connect_schema.struct_schema(columns, optional, name)


def envelope_written_whole(event: ChangeEvent) -> bytes | None:
    """The envelope without a schema of an event that it writes as it is, and reads back so, whatever its key and op
    (debezium-json's, and paimon-log's values): no attributes, nor ``key_only``; rows of one cell per column, each a
    put of a JSON scalar without a type or a version; a position of JSON scalars, each name once and none of
    ``source``'s own. Written as debezium-json writes any envelope in its default order, and spelt as Jackson writes
    it; None for any other event.

    The path of every message these formats write: one walk that checks what it writes as it goes, its checks written
    out where they are made, since a call per cell or per event costs more than the check."""
    if event.attributes or event.key_only:
        return None
    document: dict[str, Any] = {}
    for name, image in (("before", event.before), ("after", event.after)):
        if image is None:
            document[name] = None
            continue
        fields: dict[str, Any] = {}
        for cell in image:
            value = cell.value
            if cell.kind is not _PUT or cell.version is not None or cell.type is not None:
                return None
            if type(value) not in AS_IS_TYPES:
                if type(value) is not float or not math.isfinite(value):
                    return None
                value = jackson_float(value)
            fields[cell.name] = value
        if len(fields) != len(image):  # a column twice
            return None
        document[name] = fields
    source, table = event.source, event.table
    system, commit, position = source.system, source.commit_time_us, source.position
    if system is not None or commit is not None or table is not None or position:
        fields = {}
        if system is not None:
            fields["connector"] = system
        if commit is not None:  # write_time, written out
            fields["ts_ms"] = commit // _MILLISECOND
            if commit % _MILLISECOND:
                fields["ts_us"] = commit
        if table is None:
            reserved = RESERVED_WITHOUT_TABLE
        else:
            reserved = RESERVED
            if table.catalog is not None:
                fields["db"], fields["schema"], fields["table"] = table.catalog, table.schema, table.name
            else:
                fields["db"], fields["table"] = table.schema, table.name
        if position:
            own = len(fields)
            for name, value in position:
                if name in reserved or type(value) not in AS_IS_TYPES:  # most entries are neither
                    if name in reserved or type(value) is not float or not math.isfinite(value):
                        return None
                    value = jackson_float(value)  # a finite float, spelt as Jackson spells it
                fields[name] = value
            if len(fields) != own + len(position):  # a name twice
                return None
        document["source"] = fields
    document["op"] = CODE_OF_OP[event.op]
    capture = source.capture_time_us
    if capture is not None:
        document["ts_ms"] = capture // _MILLISECOND
        if capture % _MILLISECOND:
            document["ts_us"] = capture
    return encode_as_jackson(document)


def write_time(document: dict[str, Any], microseconds: int | None) -> None:
    """``ts_ms``, and ``ts_us`` too where the time has microseconds (as Debezium 2 writes them)."""
    if microseconds is not None:
        document["ts_ms"] = microseconds // _MILLISECOND  # time_units.in_unit, without a call: twice an event
        if microseconds % _MILLISECOND:
            document["ts_us"] = microseconds
