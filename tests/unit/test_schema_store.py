"""The registry store's compatibility rules: Avro by Apache Avro's checker, Protobuf by Confluent's field rules."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from cdcformats.schema_registry.errors import RegistryError
from cdcformats.schema_registry.store import SchemaStore


def avro(*fields: dict) -> str:
    return json.dumps({"type": "record", "name": "R", "fields": list(fields)})


LONG_ID = {"name": "id", "type": "long"}
NOTE_WITH_DEFAULT = {"name": "note", "type": "string", "default": ""}
NOTE = {"name": "note", "type": "string"}


@pytest.fixture
def store(tmp_path: Path) -> SchemaStore:
    return SchemaStore(tmp_path / "registry.sqlite")


@pytest.mark.parametrize("level, second, allowed", [
    ("BACKWARD", avro(LONG_ID, NOTE_WITH_DEFAULT), True),
    ("BACKWARD", avro(LONG_ID, NOTE), False),          # a new reader cannot fill note from old data
    ("FORWARD", avro(LONG_ID, NOTE), True),            # an old reader ignores note
    ("FORWARD", avro(), False),                        # an old reader needs id
    ("FULL", avro(LONG_ID, NOTE_WITH_DEFAULT), True),
    ("FULL", avro(LONG_ID, NOTE), False),
    ("NONE", avro({"name": "id", "type": "string"}), True),
])
def test_avro_levels(store: SchemaStore, level: str, second: str, allowed: bool) -> None:
    store.set_compatibility(level, "s")
    store.register("s", avro(LONG_ID))
    if allowed:
        assert store.register("s", second)["version"] == 2
    else:
        with pytest.raises(RegistryError) as refused:
            store.register("s", second)
        assert refused.value.error_code == 409


def test_transitive_checks_every_earlier_version(store: SchemaStore) -> None:
    store.set_compatibility("BACKWARD", "s")
    store.register("s", avro(LONG_ID))
    store.register("s", avro(LONG_ID, NOTE_WITH_DEFAULT))
    dropped_default = avro(LONG_ID, NOTE)
    assert store.test_compatibility("s", dropped_default) == []  # the latest writes note
    assert store.test_compatibility("s", dropped_default, all_versions=True) == []  # BACKWARD: the latest only
    store.set_compatibility("BACKWARD_TRANSITIVE", "s")
    assert store.test_compatibility("s", dropped_default, all_versions=True) != []  # version 1 has no note
    with pytest.raises(RegistryError):
        store.register("s", dropped_default)
    store.set_compatibility("BACKWARD", "t")
    store.register("t", avro({"name": "id", "type": "int"}))
    store.register("t", avro({"name": "id", "type": "long"}))      # int -> long promotes
    store.set_compatibility("BACKWARD_TRANSITIVE", "t")
    assert store.test_compatibility("t", avro({"name": "id", "type": "float"}), all_versions=True) == []
    assert store.test_compatibility("t", avro({"name": "id", "type": "string"}), all_versions=True) != []


def proto(fields: list[tuple[str, int, int, int]], package: str = "p", extra_message: bool = True) -> str:
    """A base64 FileDescriptorProto with a message M of (name, number, type, label) fields."""
    file = descriptor_pb2.FileDescriptorProto(name="m.proto", package=package, syntax="proto3")
    message = file.message_type.add(name="M")
    for name, number, field_type, label in fields:
        message.field.add(name=name, number=number, type=field_type, label=label)
    if extra_message:
        file.message_type.add(name="Other")
    return base64.b64encode(file.SerializeToString()).decode()


F = descriptor_pb2.FieldDescriptorProto
OPTIONAL, REPEATED = F.LABEL_OPTIONAL, F.LABEL_REPEATED
BASE = [("id", 1, F.TYPE_INT64, OPTIONAL)]


@pytest.mark.parametrize("second, allowed", [
    (proto(BASE + [("note", 2, F.TYPE_STRING, OPTIONAL)]), True),       # a new field
    (proto([("id", 1, F.TYPE_UINT64, OPTIONAL)]), True),                # same varint wire type
    (proto([("id", 1, F.TYPE_STRING, OPTIONAL)]), False),               # scalar kind changed
    (proto([("id", 1, F.TYPE_INT64, REPEATED)]), False),                # label changed
    (proto(BASE, package="q"), False),                                  # package changed
    (proto(BASE, extra_message=False), False),                          # message removed
])
def test_protobuf_rules(store: SchemaStore, second: str, allowed: bool) -> None:
    store.register("s", proto(BASE), "PROTOBUF")
    problems = store.test_compatibility("s", second, "PROTOBUF")
    assert (problems == []) is allowed, problems


def test_ids_are_global_and_whitespace_does_not_make_a_new_schema(store: SchemaStore) -> None:
    first = store.register("a", avro(LONG_ID))
    spaced = json.dumps(json.loads(avro(LONG_ID)), indent=4)
    assert store.register("b", spaced)["id"] == first["id"]
    assert store.register("a", spaced) == first  # already the latest version: nothing new


def test_modes(store: SchemaStore) -> None:
    store.register("a", avro(LONG_ID))
    store.set_mode("READONLY", "a")
    with pytest.raises(RegistryError) as refused:
        store.register("a", avro(LONG_ID, NOTE_WITH_DEFAULT))
    assert refused.value.error_code == 42205
    with pytest.raises(RegistryError) as invalid:
        store.set_mode("SOMETIMES")
    assert invalid.value.error_code == 42204
    store.set_mode("IMPORT", "imported", force=True)
    assert store.register("imported", avro(NOTE), schema_id=500)["id"] == 500


def test_avro_references_resolve_named_types(store: SchemaStore) -> None:
    store.register("address", json.dumps({"type": "record", "name": "Address", "fields": [NOTE]}))
    person = json.dumps({"type": "record", "name": "Person", "fields": [{"name": "home", "type": "Address"}]})
    result = store.register("person", person, references=[{"name": "Address", "subject": "address", "version": 1}])
    assert store.referenced_by("address", 1) == [result["id"]]
    with pytest.raises(RegistryError) as in_use:
        store.delete_subject("address")
    assert in_use.value.error_code == 42206
    with pytest.raises(RegistryError) as unresolved:
        store.register("orphan", person)
    assert unresolved.value.error_code == 42201


def test_bad_requests_are_registry_errors_not_crashes(store: SchemaStore) -> None:
    for call, code in [
        (lambda: store.schema(2**40), 40403),
        (lambda: store.register("a", avro(LONG_ID), references=5), 42201),
        (lambda: store.register("a", avro(LONG_ID), references=[{"name": "x", "subject": "y", "version": 10**30}]),
         42202),
        (lambda: store.register("a", "[" * 100_000), 42201),
        (lambda: store.set_compatibility(None), 42203),
        (lambda: store.version("a", "\u0661"), 42202),
        (lambda: store.register("a", avro(LONG_ID), schema_id=5), 42205),
    ]:
        with pytest.raises(RegistryError) as raised:
            call()
        assert raised.value.error_code == code
    store.set_mode("IMPORT", force=True)
    with pytest.raises(RegistryError) as raised:
        store.register("a", avro(LONG_ID), schema_id=2**40)
    assert raised.value.error_code == 42207


def test_key_order_does_not_make_a_new_schema(store: SchemaStore) -> None:
    first = store.register("a", json.dumps({"type": "record", "name": "R", "fields": [LONG_ID]}))
    reordered = json.dumps({"fields": [{"type": "long", "name": "id"}], "name": "R", "type": "record"})
    assert store.register("b", reordered)["id"] == first["id"]


def test_reading_creates_no_file_and_the_first_write_does(tmp_path: Path) -> None:
    """Found by a user trial: reading through the default registry created an empty registry file (and its
    directory) in the user's data directory."""
    path = tmp_path / "data" / "cdcformats" / "registry.sqlite"
    store = SchemaStore(path)
    assert store.subjects() == [] and store.compatibility() == "BACKWARD"
    with pytest.raises(RegistryError) as missing:
        store.schema(1)
    assert missing.value.error_code == 40403
    assert not store.exists() and not (tmp_path / "data").exists()
    registered = store.register("s", avro(LONG_ID))
    assert store.exists() and path.is_file()
    assert store.schema(registered["id"])["schema"] == avro(LONG_ID)
    store.close()


def test_a_store_reads_a_file_that_another_process_wrote_after_it_was_opened(tmp_path: Path) -> None:
    path = tmp_path / "registry.sqlite"
    reader = SchemaStore(path)
    assert reader.subjects() == []
    writer = SchemaStore(path)
    writer.register("s", avro(LONG_ID))
    assert reader.subjects() == ["s"]
    reader.close()
    writer.close()
