"""``protobuf``: the canonical change event as a Protobuf message, one serialized ``cdcformats.v1.ChangeEvent`` per
message.

The schema is ``proto/cdcformats/v1/change_event.proto``; it carries every canonical event exactly. A message is the
bare serialized message, without the schema-registry framing (the Kafka serializers add that). A ``Value`` with no
field set, or a cell without a value, is null. Unknown fields are ignored, as Protobuf readers do, so that a newer
writer's additions do not break an older reader. Nested values are the ``Array`` and ``Struct`` messages of the
``Value`` oneof, added in version 2 of the schema (new fields only, so a registry accepts it over version 1, and a
reader of version 1 sees a nested value as null).

Messages are written and read by ``protobuf_body``, by hand for this schema: building upb's message objects field by
field from Python, or reading them so, cost fifteen times what upb's own serializing and parsing did. upb stays the
reference: ``read_event`` reads only the layout standard writers write and hands any other message (fields reordered
or repeated, unknown fields...) to ``parse_event``, upb and ``event_from_proto``, so that every message gives the
event or the error it gave before; ``write_event`` writes the bytes ``proto_from_event`` serializes to. Property
tests check both.

A file is a sequence of length-delimited messages, each preceded by its size as a varint: what Java's
``writeDelimitedTo`` / ``parseDelimitedFrom`` and Go's ``protodelim`` read and write.

Written from other formats: every event, exactly; nothing is dropped or refused.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, BinaryIO

from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import EncodeError as ProtobufEncodeError

from ..contract import Codec, DecodedUnit, FileWriter, JvmDecoder, JvmEncoder, WriterSchema, in_file
from ..errors import DecodeError, EncodeError
from ..model import Cell, CellKind, ChangeEvent, Image, Op, Source, Struct, Table, Value
from ..schemas import change_event_pb2 as pb
from .protobuf_body import Unhandled, read_event, write_event
from .varint import read_varint, varint

_OP_TO_PROTO = {op: pb.Op.Value(f"OP_{op.value}") for op in Op}
_OP_FROM_PROTO = {number: op for op, number in _OP_TO_PROTO.items()}
_KIND_TO_PROTO = {kind: pb.CellKind.Value(f"CELL_KIND_{kind.value}") for kind in CellKind}
_KIND_FROM_PROTO = {number: kind for kind, number in _KIND_TO_PROTO.items()}


NAME = "protobuf"


class ProtobufCodec(Codec):
    name = NAME
    description = "canonical change event, Protobuf binary (message cdcformats.v1.ChangeEvent)"

    @classmethod
    def writer_schema(cls) -> WriterSchema:
        """The envelope's file descriptor, base64-encoded, as Confluent's ProtobufSerializer registers it."""
        return WriterSchema("PROTOBUF", base64.standard_b64encode(pb.DESCRIPTOR.serialized_pb).decode("ascii"))

    def decode_message(self, message: bytes) -> ChangeEvent:
        if type(message) is not bytes:
            if not isinstance(message, (bytes, bytearray, memoryview)):
                raise DecodeError(self.name, f"expected bytes, got {type(message).__name__}")
            message = bytes(message)
        try:
            return read_event(message)
        except Unhandled:  # laid out otherwise, or refused: the reference decides, and says why
            return parse_event(message)

    def jvm_decoder(self) -> JvmDecoder:
        """The bare message, read as ``decode_message`` reads it (``ChangeEventDeserializer.jvm_decoder`` adds the
        framing)."""
        return JvmDecoder("cdcformats.jvm.decoders.ProtobufEnvelopeDecoder")

    def jvm_encoder(self) -> JvmEncoder:
        return JvmEncoder("cdcformats.jvm.encoders.ProtobufEnvelopeEncoder")

    def encode_event(self, event: ChangeEvent) -> bytes:
        try:
            return write_event(event)
        except ValueError:  # a str that is not valid Unicode: the reference fails on it too, with the error it gave
            pass
        try:
            return proto_from_event(event).SerializeToString()
        except (ProtobufEncodeError, ValueError) as error:  # ValueError: a str that is not valid Unicode
            raise EncodeError(self.name, str(error)) from None


    # -- files: length-delimited messages ---------------------------------------------------------------------------

    file_unit = "record"

    def read_units(self, stream: BinaryIO) -> Iterator[DecodedUnit]:
        return in_file(self.decode_units(_delimited_messages(stream)), self.file_unit)

    def file_writer(self, stream: BinaryIO) -> FileWriter:
        return _DelimitedWriter(stream)


class _DelimitedWriter(FileWriter):
    def write(self, messages: list[Any]) -> None:
        for message in messages:
            self.stream.write(varint(len(message)) + message)


def _delimited_messages(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Each message of a length-delimited stream, with its 1-based number; a truncated one raises DecodeError
    (nothing after it is framed)."""
    unit = ProtobufCodec.file_unit
    position = 1
    while True:
        try:
            size = read_varint(stream)
        except ValueError as error:
            raise DecodeError(NAME, f"the message size {error}").in_file(unit, position) from None
        if size is None:
            return
        message = stream.read(size)
        if len(message) != size:
            raise DecodeError(NAME, f"the file ends {size - len(message)} bytes into a message"
                              ).in_file(unit, position)
        yield position, message
        position += 1


# -- event -> message -------------------------------------------------------------------------------------------------

def _value_out(value: Value) -> pb.Value | None:
    kind = type(value)
    if value is None:
        return None
    if kind is bool:
        return pb.Value(bool_value=value)
    if kind is int:
        return pb.Value(int_value=value)
    if kind is float:
        return pb.Value(double_value=value)
    if kind is str:
        return pb.Value(string_value=value)
    if kind is bytes:
        return pb.Value(bytes_value=value)
    if type(value) is tuple:  # a null item is a Value with no field set: a repeated field holds no absent message
        return pb.Value(array_value=pb.Array(items=[_value_out(item) or pb.Value() for item in value]))
    if type(value) is Struct:
        return pb.Value(struct_value=pb.Struct(fields=_entries_out(value.fields)))
    return pb.Value(decimal_value=str(value))


def _cells_out(cells: Image) -> list[pb.Cell]:
    return [pb.Cell(name=cell.name, value=_value_out(cell.value), type=cell.type, version=cell.version,
                    kind=_KIND_TO_PROTO[cell.kind]) for cell in cells]


def _entries_out(entries: tuple[tuple[str, Value], ...]) -> list[pb.Entry]:
    return [pb.Entry(name=name, value=_value_out(value)) for name, value in entries]


def proto_from_event(event: ChangeEvent) -> pb.ChangeEvent:
    """The Protobuf message of an event."""
    table = event.table
    source = event.source
    return pb.ChangeEvent(
        op=_OP_TO_PROTO[event.op],
        table=None if table is None else pb.Table(catalog=table.catalog, schema=table.schema, name=table.name),
        key=_cells_out(event.key),
        before=None if event.before is None else pb.Image(cells=_cells_out(event.before)),
        after=None if event.after is None else pb.Image(cells=_cells_out(event.after)),
        source=pb.Source(system=source.system, position=_entries_out(source.position),
                         commit_time_us=source.commit_time_us, capture_time_us=source.capture_time_us),
        key_only=event.key_only,
        attributes=_entries_out(event.attributes),
    )


# -- message -> event -------------------------------------------------------------------------------------------------

def parse_event(data: bytes) -> ChangeEvent:
    """The event of a serialized message, parsed by upb and mapped by ``event_from_proto``: the reference that
    ``protobuf_body.read_event`` leaves every message it does not read to, and is checked against."""
    proto = pb.ChangeEvent()
    try:
        proto.ParseFromString(data)
    except ProtobufDecodeError as error:
        raise DecodeError(NAME, f"not a canonical Protobuf change event ({error})") from None
    try:
        return event_from_proto(proto)
    except ValueError as error:  # what the model refuses: a struct naming a field twice
        raise DecodeError(NAME, str(error)) from None


def _value_in(value: pb.Value, path: str) -> Value:
    kind = value.WhichOneof("kind")
    if kind is None:
        return None
    if kind == "decimal_value":
        try:
            return Decimal(value.decimal_value)
        except InvalidOperation:
            raise DecodeError("protobuf", f"not a decimal: {value.decimal_value!r}", field=path) from None
    if kind == "array_value":
        return tuple(_value_in(item, f"{path}[{index}]") for index, item in enumerate(value.array_value.items))
    if kind == "struct_value":
        return Struct(_entries_in(value.struct_value.fields, f"{path}.fields"))
    return getattr(value, kind)


def _optional(message: Any, field: str) -> Any:
    return getattr(message, field) if message.HasField(field) else None


def _cells_in(cells: Any, path: str) -> Image:
    result = []
    for index, cell in enumerate(cells):
        kind = _KIND_FROM_PROTO.get(cell.kind)
        if kind is None:
            raise DecodeError("protobuf", f"unknown cell kind {cell.kind}", field=f"{path}[{index}].kind")
        result.append(Cell(cell.name, _value_in(cell.value, f"{path}[{index}].value"), _optional(cell, "type"),
                           _optional(cell, "version"), kind))
    return tuple(result)


def _entries_in(entries: Any, path: str) -> tuple[tuple[str, Value], ...]:
    return tuple((entry.name, _value_in(entry.value, f"{path}[{index}].value")) for index, entry in enumerate(entries))


def event_from_proto(proto: pb.ChangeEvent) -> ChangeEvent:
    """The event of a parsed Protobuf message."""
    op = _OP_FROM_PROTO.get(proto.op)
    if op is None:
        raise DecodeError("protobuf", f"unknown or missing op {proto.op}", field="op")
    table = proto.table
    source = proto.source
    return ChangeEvent(
        op=op,
        table=Table(table.name, _optional(table, "schema"), _optional(table, "catalog"))
        if proto.HasField("table") else None,
        key=_cells_in(proto.key, "key"),
        before=_cells_in(proto.before.cells, "before") if proto.HasField("before") else None,
        after=_cells_in(proto.after.cells, "after") if proto.HasField("after") else None,
        source=Source(_optional(source, "system"), _entries_in(source.position, "source.position"),
                      _optional(source, "commit_time_us"), _optional(source, "capture_time_us")),
        key_only=proto.key_only,
        attributes=_entries_in(proto.attributes, "attributes"),
    )
