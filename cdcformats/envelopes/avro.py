"""``avro``: the canonical change event in Avro binary, one schemaless body per message.

The schema is ``avro/change_event.avsc`` (record ``cdcformats.v1.ChangeEvent``); it carries every canonical event
exactly. A message is the bare Avro body, without an object-container header and without the schema-registry framing
(the Kafka serializers add that). ``avro_body`` writes and reads the body; fastavro reads files, and bodies written
with another version of the envelope. A file is an Avro object container file (readable by any Avro tool); one
written with another version of the envelope is read through schema resolution. Values are a union of null, boolean,
long, double, string, bytes, a ``Decimal`` record holding the exact decimal text, so that any precision and scale
survive, and the nested values: an ``Array`` record of values and a ``Struct`` record of ``Entry`` records (name,
value), each member a value of the same union.

Version 2 of the schema added the ``Array`` and ``Struct`` branches (and moved the definition of ``Entry`` into
``Struct``, where the union first needs it). A reader of version 2 reads everything version 1 wrote, so a registry
under BACKWARD compatibility (Confluent's default) accepts it over version 1.

Written from other formats: every event, exactly; nothing is dropped or refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from io import BufferedReader, BytesIO, RawIOBase, UnsupportedOperation
from typing import Any, BinaryIO

import fastavro

from ..contract import Codec, DecodedUnit, FileWriter, JvmDecoder, JvmEncoder, WriterSchema
from ..errors import DecodeError, EncodeError
from ..model import Cell, CellKind, ChangeEvent, Image, Op, Source, Struct, Table, Value
from ..schemas import avro_schema, avro_schema_text
from .avro_body import BodyError, TrailingBytes, read_event, write_event
from .varint import varint

NAME = "avro"
_DECIMAL_RECORD = "cdcformats.v1.Decimal"
_ARRAY_RECORD = "cdcformats.v1.Array"
_STRUCT_RECORD = "cdcformats.v1.Struct"


class AvroCodec(Codec):
    name = NAME
    description = "canonical change event, Avro binary body (schema cdcformats.v1.ChangeEvent)"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.schema = fastavro.parse_schema(avro_schema())

    def decode_message(self, message: bytes) -> ChangeEvent:
        if not isinstance(message, (bytes, bytearray, memoryview)):
            raise DecodeError(self.name, f"expected bytes, got {type(message).__name__}")
        try:
            return read_event(message)
        except TrailingBytes as error:
            raise DecodeError(self.name, str(error)) from None
        except BodyError as error:
            raise DecodeError(self.name, f"not a canonical Avro change event ({error})") from None
        except (TypeError, ValueError, InvalidOperation) as error:  # an event the model refuses
            raise DecodeError(self.name, str(error) or type(error).__name__) from None

    @classmethod
    def writer_schema(cls) -> WriterSchema:
        return WriterSchema("AVRO", avro_schema_text())

    resolves_writer_schemas = True

    def decode_written_with(self, message: bytes, writer_schema: WriterSchema) -> ChangeEvent:
        """Decode a body written with another version of the envelope, through Avro schema resolution into the
        canonical one."""
        writer = _parsed_writer_schema(writer_schema.text)
        if writer is None:  # written with the canonical schema itself
            return self.decode_message(message)
        stream = BytesIO(message)
        try:
            record = fastavro.schemaless_reader(stream, writer, self.schema)
        except Exception as error:  # as in decode_message
            raise DecodeError(self.name, f"cannot be read with its writer schema ({type(error).__name__}: {error})"
                              ) from None
        if stream.tell() != len(message):  # fastavro stops at the record's end, whatever follows it
            raise DecodeError(self.name, f"{len(message) - stream.tell()} bytes left over after the event")
        assert isinstance(record, dict)  # the top level of the change-event schema is a record
        try:
            return event_from_record(record)
        except (TypeError, ValueError, InvalidOperation, RecursionError) as error:  # RecursionError: deep values
            raise DecodeError(self.name, str(error) or type(error).__name__) from None

    def jvm_decoder(self) -> JvmDecoder:
        """The bare body, read as ``decode_message`` reads it (``ChangeEventDeserializer.jvm_decoder`` adds the
        framing)."""
        return JvmDecoder("cdcformats.jvm.decoders.AvroEnvelopeDecoder")

    def jvm_encoder(self) -> JvmEncoder:
        return JvmEncoder("cdcformats.jvm.encoders.AvroEnvelopeEncoder")

    def encode_event(self, event: ChangeEvent) -> bytes:
        try:
            return write_event(event)
        except UnicodeEncodeError as error:  # a str that is not valid Unicode (a lone surrogate)
            raise EncodeError(self.name, f"{type(error).__name__}: {error}") from None

    # -- files: Avro object container files -----------------------------------------------------------------------

    file_unit = "record"

    def read_units(self, stream: BinaryIO) -> Iterator[DecodedUnit]:
        """Each record of an object container file, with its body as the message (what ``decode_message`` reads, so
        that a dead letter replays), numbered from 1. A body written with another version of the envelope is read
        through schema resolution, and kept as the canonical body of what it resolved to."""
        try:
            blocks = fastavro.block_reader(_telling(stream))
        except Exception as error:  # fastavro's own errors for a file that is not a container of this schema
            raise DecodeError(self.name, f"not an Avro container file of change events ({error})") from None
        writer_schema = fastavro.parse_schema(blocks.writer_schema)
        canonical = writes_canonical_bodies(json.loads(blocks.metadata["avro.schema"]), avro_schema())
        reader_schema = None if canonical else self.schema
        number = 0
        while True:
            try:
                block = next(blocks)
            except StopIteration:
                return
            except Exception as error:  # a corrupt block: nothing after it can be trusted
                raise _corrupt(error).in_file(self.file_unit, number + 1) from None
            data = block.bytes_.getvalue()  # type: ignore[attr-defined]  # fastavro's stub leaves out Block.bytes_
            bodies = BytesIO(data)
            for _ in range(block.num_records):
                number += 1
                start = bodies.tell()
                try:
                    record = fastavro.schemaless_reader(bodies, writer_schema, reader_schema)
                except Exception as error:  # as for a corrupt block
                    raise _corrupt(error).in_file(self.file_unit, number) from None
                assert isinstance(record, dict)  # the top level of the change-event schema is a record
                body = data[start:bodies.tell()] if canonical else self._canonical_body(record)
                try:
                    event = event_from_record(record)
                except (TypeError, ValueError, InvalidOperation) as error:
                    yield DecodedUnit(number, (body,), [], DecodeError(self.name, str(error), raw=body
                                                                       ).in_file(self.file_unit, number))
                    continue
                yield DecodedUnit(number, (body,), [event])

    def _canonical_body(self, record: dict[str, Any]) -> bytes:
        body = BytesIO()
        fastavro.schemaless_writer(body, self.schema, record)
        return body.getvalue()

    def file_writer(self, stream: BinaryIO) -> FileWriter:
        return _ContainerWriter(stream, self.schema)


class _ContainerWriter(FileWriter):
    """An object container file, written block by block: fastavro writes the header, and each block is the bodies
    ``encode_event`` wrote (so that an event that cannot be written is refused alone, not half-written into a
    block), framed as the Avro specification says: count, size, bodies, sync marker."""

    def __init__(self, stream: BinaryIO, schema: Any) -> None:
        super().__init__(stream)
        header = BytesIO()
        fastavro.writer(header, schema, [])
        stream.write(header.getvalue())
        self.sync_marker = header.getvalue()[-16:]
        self.block: list[bytes] = []
        self.size = 0

    def write(self, messages: list[Any]) -> None:
        for body in messages:
            self.block.append(body)
            self.size += len(body)
        if self.size >= _BLOCK_BYTES:
            self._write_block()

    def close(self) -> None:
        if self.block:
            self._write_block()

    def _write_block(self) -> None:
        # Avro longs are zigzag varints; counts and sizes are never negative, so zigzag is a doubling.
        self.stream.write(varint(len(self.block) << 1) + varint(self.size << 1))
        self.stream.writelines(self.block)
        self.stream.write(self.sync_marker)
        self.block, self.size = [], 0


def _telling(stream: BinaryIO) -> BinaryIO:
    """``stream``, able to say where it is: fastavro's block reader asks, and a pipe cannot answer."""
    try:
        stream.tell()
    except (OSError, UnsupportedOperation):
        return BufferedReader(_PositionCounter(stream))
    return stream


class _PositionCounter(RawIOBase):
    def __init__(self, stream: BinaryIO) -> None:
        super().__init__()
        self.stream = stream
        self.position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        buffer[:len(data)] = data
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position


def _corrupt(error: Exception) -> DecodeError:
    return DecodeError(AvroCodec.name, f"corrupt container file ({type(error).__name__}: {error})")


_BLOCK_BYTES = 64 * 1024


def writes_canonical_bodies(writer: Any, reader: Any) -> bool:
    """Whether every body the schema ``writer`` writes is a body of the schema ``reader`` that holds the same values:
    the same records with the same fields in order, of the same types, each union of the writer's the first branches
    of the reader's at the same place (version 1 of the envelope, whose value unions version 2 extended); names are
    compared without their namespaces (a file's schema, as fastavro writes it, qualifies them). Such bodies
    are read as they were written, not through resolution: fastavro resolves each union branch to the reader's first
    that it promotes to, which takes version 1's bytes for version 2's string."""
    compared: set[tuple[str, str]] = set()  # records already being compared: a record may hold itself

    def short(name: Any) -> str:
        return name.rsplit(".", 1)[-1] if type(name) is str else ""

    def records(schema: Any, found: dict[str, Any]) -> dict[str, Any]:
        """Each record a schema defines, by its name: one schema may define a record where the other names it."""
        if type(schema) is list:
            for branch in schema:
                records(branch, found)
        elif type(schema) is dict and schema.get("type") == "record":
            found[short(schema.get("name"))] = schema
            fields = schema.get("fields")
            for field in fields if type(fields) is list else ():
                records(field.get("type") if type(field) is dict else None, found)
        elif type(schema) is dict:
            records(schema.get("type"), found)
            records(schema.get("items"), found)
        return found

    writer_records = records(writer, {})
    reader_records = records(reader, {})

    def same(written: Any, read: Any) -> bool:
        written = writer_records.get(short(written), written) if type(written) is str else written
        read = reader_records.get(short(read), read) if type(read) is str else read
        if type(written) is list:
            return type(read) is list and len(written) <= len(read) and all(map(same, written, read))
        if type(written) is not dict or type(read) is not dict or written.get("type") != read.get("type"):
            return written == read
        if written["type"] == "record":
            names = (short(written.get("name")), short(read.get("name")))
            if names in compared:
                return True
            compared.add(names)
            fields, read_fields = written.get("fields"), read.get("fields")
            return names[0] == names[1] and type(fields) is list and type(read_fields) is list and len(
                fields) == len(read_fields) and all(
                type(field) is dict and type(read_field) is dict and field.get("name") == read_field.get("name")
                and same(field.get("type"), read_field.get("type")) for field, read_field in zip(fields, read_fields))
        if written["type"] == "array":
            return same(written.get("items"), read.get("items"))
        if written["type"] == "enum":
            return short(written.get("name")) == short(read.get("name")) and written.get("symbols") == read.get(
                "symbols")
        return written == read

    return same(writer, reader)


@lru_cache(maxsize=64)
def _parsed_writer_schema(text: str) -> Any:
    """A registered version of the envelope, parsed by fastavro; None when its bodies are the canonical envelope's
    (``writes_canonical_bodies``)."""
    try:
        writer = json.loads(text)
        return None if writes_canonical_bodies(writer, avro_schema()) else fastavro.parse_schema(writer)
    except Exception as error:  # a registry may hold anything under an id: JSON errors, fastavro's schema errors
        raise DecodeError(NAME, f"the writer schema is not an Avro schema ({type(error).__name__}: {error})",
                          field="schema id") from None


# -- event -> Avro record, for fastavro (the reference that avro_body is checked against) ---------------------------

def _value_out(value: Value) -> Any:
    if type(value) is Decimal:
        return (_DECIMAL_RECORD, {"text": str(value)})
    if type(value) is tuple:
        return (_ARRAY_RECORD, {"items": [_value_out(item) for item in value]})
    if type(value) is Struct:
        return (_STRUCT_RECORD, {"fields": _entries_out(value.fields)})
    return value


def _cells_out(cells: Image) -> list[dict[str, Any]]:
    return [{"name": cell.name, "value": _value_out(cell.value), "type": cell.type, "version": cell.version,
             "kind": cell.kind.value} for cell in cells]


def _entries_out(entries: tuple[tuple[str, Value], ...]) -> list[dict[str, Any]]:
    return [{"name": name, "value": _value_out(value)} for name, value in entries]


def record_from_event(event: ChangeEvent) -> dict[str, Any]:
    """The Avro record (as fastavro writes it) of an event."""
    table = event.table
    source = event.source
    return {
        "op": event.op.value,
        "table": None if table is None else {"catalog": table.catalog, "schema": table.schema, "name": table.name},
        "key": _cells_out(event.key),
        "before": None if event.before is None else _cells_out(event.before),
        "after": None if event.after is None else _cells_out(event.after),
        "source": {"system": source.system, "position": _entries_out(source.position),
                   "commit_time_us": source.commit_time_us, "capture_time_us": source.capture_time_us},
        "key_only": event.key_only,
        "attributes": _entries_out(event.attributes),
    }


# -- Avro record -> event ---------------------------------------------------------------------------------------------

def _value_in(value: Any) -> Value:
    if type(value) is dict:  # a record of the value union: Decimal, Array or Struct, told apart by their fields
        if "text" in value:
            return Decimal(value["text"])
        if "items" in value:
            return tuple(_value_in(item) for item in value["items"])
        return Struct(_entries_in(value["fields"]))
    return value


def _cells_in(cells: list[dict[str, Any]]) -> Image:
    return tuple(Cell(cell["name"], _value_in(cell["value"]), cell["type"], cell["version"], CellKind(cell["kind"]))
                 for cell in cells)


def _entries_in(entries: list[dict[str, Any]]) -> tuple[tuple[str, Value], ...]:
    return tuple((entry["name"], _value_in(entry["value"])) for entry in entries)


def event_from_record(record: dict[str, Any]) -> ChangeEvent:
    """The event of an Avro record as fastavro reads it."""
    table = record["table"]
    source = record["source"]
    return ChangeEvent(
        op=Op(record["op"]),
        table=None if table is None else Table(table["name"], table["schema"], table["catalog"]),
        key=_cells_in(record["key"]),
        before=None if record["before"] is None else _cells_in(record["before"]),
        after=None if record["after"] is None else _cells_in(record["after"]),
        source=Source(source["system"], _entries_in(source["position"]), source["commit_time_us"],
                      source["capture_time_us"]),
        key_only=record["key_only"],
        attributes=_entries_in(record["attributes"]),
    )
