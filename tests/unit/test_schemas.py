"""The canonical schemas: loaded from the package, and the generated Protobuf code in sync with the .proto."""

from __future__ import annotations

import importlib.util
import io
import json
import re
from pathlib import Path

import fastavro

import cdcformats as cf
from cdcformats import schemas
from cdcformats.contract import FEATURES, WriterSchema
from cdcformats.envelopes.avro import record_from_event
from cdcformats.schema_registry.store import SchemaStore

REPO = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("generate_protobuf", REPO / "scripts" / "generate_protobuf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _without_protoc_version(code: str) -> str:
    """The generated code names the protoc release that wrote it; a patch release of grpcio-tools may differ."""
    code = re.sub(r"# Protobuf Python Version: .*", "", code)
    return re.sub(r"ValidateProtobufRuntimeVersion\([^)]*\)", "", code)


def test_generated_protobuf_code_matches_the_schema(tmp_path: Path) -> None:
    generated = _generator().generate(tmp_path).read_text()
    checked_in = (REPO / "cdcformats" / "schemas" / "change_event_pb2.py").read_text()
    assert _without_protoc_version(generated) == _without_protoc_version(checked_in), \
        "the .proto changed: run `make protobuf` and commit the result"


def test_top_level_schema_folders_are_the_packaged_files() -> None:
    assert (REPO / "avro" / "change_event.avsc").read_text() == schemas.avro_schema_text()
    assert (REPO / "proto" / schemas.PROTO_FILE_NAME).read_text() == schemas.proto_schema_text()


def test_avro_schema_parses_and_names_the_envelope() -> None:
    parsed = fastavro.parse_schema(schemas.avro_schema())
    assert parsed["name"] == schemas.AVRO_SCHEMA_NAME


def test_avro_and_protobuf_enumerate_the_same_ops_and_cell_kinds() -> None:
    from cdcformats.schemas import change_event_pb2 as pb
    avro = schemas.avro_schema()
    op_symbols = avro["fields"][0]["type"]["symbols"]
    assert [f"op.{symbol}" for symbol in op_symbols] == [f for f in FEATURES if f.startswith("op.")]
    assert [name.removeprefix("OP_") for name in pb.Op.keys()[1:]] == op_symbols
    cell = avro["fields"][2]["type"]["items"]
    kinds = next(field["type"]["symbols"] for field in cell["fields"] if field["name"] == "kind")
    assert [name.removeprefix("CELL_KIND_") for name in pb.CellKind.keys()] == kinds


FIRST_VERSIONS = REPO / "tests" / "fixtures" / "envelopes"


def test_a_registry_accepts_each_envelope_over_its_first_version_under_backward(tmp_path: Path) -> None:
    """Version 2 added nested values; each envelope's first version is kept as it was published."""
    store = SchemaStore(tmp_path / "registry.sqlite")
    for format_name, first in (("avro", "change_event.v1.avsc"), ("protobuf", "change_event.v1.proto")):
        current = cf.codec(format_name).writer_schema()
        assert current is not None and (FIRST_VERSIONS / first).read_text() != current.text
        store.set_compatibility("BACKWARD", format_name)
        store.register(format_name, (FIRST_VERSIONS / first).read_text(), current.schema_type)
        assert store.register(format_name, current.text, current.schema_type)["version"] == 2


def test_an_avro_body_of_the_first_version_reads_into_the_same_event() -> None:
    first = (FIRST_VERSIONS / "change_event.v1.avsc").read_text()
    event = cf.ChangeEvent(cf.Op.UPDATE, cf.Table("t"), before=(cf.Cell("id", 1),), after=(cf.Cell("id", 2),),
                           attributes=(("note", "x"),))
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(json.loads(first)), record_from_event(event))
    assert cf.codec("avro").decode_written_with(body.getvalue(), WriterSchema("AVRO", first)) == event
