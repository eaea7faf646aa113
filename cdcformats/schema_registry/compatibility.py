"""Schema validation and compatibility checks, by Confluent's rules.

Avro uses Apache Avro's reader/writer compatibility checker (the same algorithm as the Java one Confluent runs).
Protobuf schemas arrive as confluent-kafka's serializers send them, a base64 ``FileDescriptorProto``; they are
compared field by field with the rules of Confluent's Protobuf checker that decide whether a reader can parse a
writer's bytes: the package, every message of the writer present in the reader, and for every field number in both,
the same label (repeated or not) and a wire-compatible type. Protobuf sent as ``.proto`` source text (which only
protoc can parse) is stored, but not checked.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any

from . import errors

LEVELS = ("NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE")
SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")


def canonical(schema_type: str, schema: str) -> str:
    """The form two registrations of the same schema share: for Avro and JSON Schema, the JSON without
    insignificant whitespace and with object keys sorted (the order of fields, an array, is kept)."""
    if schema_type in ("AVRO", "JSON"):
        try:
            return json.dumps(json.loads(schema), separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        except (ValueError, RecursionError) as error:
            raise errors.invalid_schema(f"not JSON: {error}") from None
    return schema


# -- Avro -------------------------------------------------------------------------------------------------------------

def parse_avro(schema: str, references: Sequence[str] = ()) -> Any:
    """The Apache Avro schema of ``schema``; ``references`` are the texts of the schemas it names, in order."""
    import avro.errors
    import avro.name
    import avro.schema

    names = avro.name.Names()
    try:
        for reference in references:
            avro.schema.make_avsc_object(json.loads(reference), names)
        return avro.schema.make_avsc_object(json.loads(schema), names)
    except (ValueError, RecursionError, avro.errors.AvroException) as error:
        raise errors.invalid_schema(str(error)) from None


def _avro_problems(reader: Any, writer: Any) -> list[str]:
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    result = ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return []
    return [f"{message} at {location}" for message, location in zip(result.messages, result.locations)] or [
        "reader cannot read data written with the writer schema"]


# -- Protobuf ---------------------------------------------------------------------------------------------------------

def parse_protobuf(schema: str) -> Any | None:
    """The FileDescriptorProto of a base64 descriptor, or None for .proto source text (not checked)."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    try:
        data = base64.b64decode(schema, validate=True)
    except (binascii.Error, ValueError):
        if "message" in schema or "syntax" in schema:
            return None  # .proto source text
        raise errors.invalid_schema("neither a base64 FileDescriptorProto nor .proto source") from None
    descriptor = descriptor_pb2.FileDescriptorProto()
    try:
        descriptor.ParseFromString(data)
    except DecodeError as error:
        raise errors.invalid_schema(f"not a FileDescriptorProto: {error}") from None
    return descriptor


# Scalar types whose values a reader of one can parse from a writer of another (the protobuf wire rules).
_WIRE_GROUPS = [
    {"TYPE_INT32", "TYPE_UINT32", "TYPE_INT64", "TYPE_UINT64", "TYPE_BOOL"},
    {"TYPE_SINT32", "TYPE_SINT64"},
    {"TYPE_FIXED32", "TYPE_SFIXED32"},
    {"TYPE_FIXED64", "TYPE_SFIXED64"},
    {"TYPE_STRING", "TYPE_BYTES"},
]


def _messages(descriptor: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def walk(prefix: str, messages: Any) -> None:
        for message in messages:
            name = f"{prefix}.{message.name}" if prefix else message.name
            found[name] = message
            walk(name, message.nested_type)

    walk(descriptor.package, descriptor.message_type)
    return found


def _protobuf_problems(reader: Any, writer: Any) -> list[str]:
    from google.protobuf.descriptor_pb2 import FieldDescriptorProto

    type_name = FieldDescriptorProto.Type.Name
    problems = []
    if reader.package != writer.package:
        problems.append(f"PACKAGE_CHANGED: {writer.package!r} -> {reader.package!r}")
    reader_messages = _messages(reader)
    for name, writer_message in _messages(writer).items():
        reader_message = reader_messages.get(name)
        if reader_message is None:
            problems.append(f"MESSAGE_REMOVED: {name}")
            continue
        reader_fields = {field.number: field for field in reader_message.field}
        for field in writer_message.field:
            other = reader_fields.get(field.number)
            if other is None:
                continue
            where = f"{name}.{field.name} (field {field.number})"
            repeated = FieldDescriptorProto.LABEL_REPEATED
            if (field.label == repeated) != (other.label == repeated):
                problems.append(f"FIELD_KIND_CHANGED: {where} repeated <-> singular")
            elif field.type_name or other.type_name:
                if field.type_name != other.type_name or field.type != other.type:
                    problems.append(f"FIELD_NAMED_TYPE_CHANGED: {where} {field.type_name or type_name(field.type)} -> "
                                    f"{other.type_name or type_name(other.type)}")
            elif field.type != other.type and not any(
                    {type_name(field.type), type_name(other.type)} <= group for group in _WIRE_GROUPS):
                problems.append(f"FIELD_SCALAR_KIND_CHANGED: {where} {type_name(field.type)} -> "
                                f"{type_name(other.type)}")
    return problems


# -- both -------------------------------------------------------------------------------------------------------------

def problems(level: str, schema_type: str, new: Any, earlier: Sequence[Any]) -> list[str]:
    """Why ``new`` may not follow ``earlier`` (oldest first, parsed) under ``level``; empty when it may."""
    if level == "NONE" or not earlier or new is None:
        return []
    check: Callable[[Any, Any], list[str]] = _avro_problems if schema_type == "AVRO" else _protobuf_problems
    against = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    found = []
    for old in reversed(against):
        if old is None:
            continue
        if level.startswith(("BACKWARD", "FULL")):
            found += check(new, old)
        if level.startswith(("FORWARD", "FULL")):
            found += check(old, new)
    return found
