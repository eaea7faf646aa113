"""The registry over HTTP, driven by confluent-kafka's own SchemaRegistryClient, serializers and deserializers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

import cdcformats as cf
from cdcformats.envelopes.avro import record_from_event
from cdcformats.envelopes.protobuf import proto_from_event
from cdcformats.schema_registry import envelope_schema, register_envelope
from cdcformats.schemas import avro_schema_text, change_event_pb2

EVENT = cf.ChangeEvent(cf.Op.UPDATE, cf.Table("region", "tpch"), key=(cf.Cell("id", 2),),
                       before=(cf.Cell("name", "ASIA"),), after=(cf.Cell("name", "Asia", version=7),),
                       source=cf.Source(position=(("position", 3620),)))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``cdcformats registry serve`` in a child process."""

    def __init__(self, db: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cdcformats.cli", "registry", "serve", "--db", str(db), "--port", str(self.port),
             *extra], env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert self.process.poll() is None, self.process.stdout.read().decode()
                time.sleep(0.1)
        raise AssertionError("the registry server did not start")

    def stop(self) -> str:
        self.process.terminate()
        output, _ = self.process.communicate(timeout=30)
        return output.decode()

    def client(self, **config: object) -> SchemaRegistryClient:
        return SchemaRegistryClient({"url": self.url, "max.retries": 0, **config})


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path / "registry.sqlite")
    yield running
    running.stop()


def _avro(fields: list[dict]) -> Schema:
    return Schema(json.dumps({"type": "record", "name": "Row", "namespace": "test", "fields": fields}), "AVRO")


ROW_V1 = _avro([{"name": "id", "type": "long"}])
ROW_V2 = _avro([{"name": "id", "type": "long"}, {"name": "note", "type": "string", "default": ""}])
ROW_INCOMPATIBLE = _avro([{"name": "id", "type": "long"}, {"name": "note", "type": "string"}])


def test_the_same_schema_under_two_subjects_has_one_id(server: Server) -> None:
    first = server.client().register_schema("orders-value", ROW_V1)
    second = server.client().register_schema("refunds-value", ROW_V1)  # a new client: nothing cached
    assert first == second
    assert server.client().register_schema("other-value", ROW_V2) != first


def test_an_incompatible_change_is_refused_with_the_registry_error_code(server: Server) -> None:
    client = server.client()
    client.register_schema("orders-value", ROW_V1)
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("orders-value", ROW_INCOMPATIBLE)
    assert refused.value.http_status_code == 409 and refused.value.error_code == 409
    assert client.test_compatibility("orders-value", ROW_V2) is True
    assert client.test_compatibility("orders-value", ROW_INCOMPATIBLE) is False
    client.register_schema("orders-value", ROW_V2)
    assert client.get_versions("orders-value") == [1, 2]
    client.set_compatibility("orders-value", "NONE")
    assert client.get_compatibility("orders-value") == "NONE"
    assert client.get_compatibility() == "BACKWARD"
    client.register_schema("orders-value", ROW_INCOMPATIBLE)
    assert client.get_versions("orders-value") == [1, 2, 3]


def test_versions_lookup_and_deletes_behave_as_confluent_documents(server: Server) -> None:
    client = server.client()
    schema_id = client.register_schema("orders-value", ROW_V1)
    client.register_schema("orders-value", ROW_V2)
    found = server.client().lookup_schema("orders-value", ROW_V1)
    assert (found.schema_id, found.version, found.subject) == (schema_id, 1, "orders-value")
    assert server.client().get_latest_version("orders-value").version == 2
    assert server.client().get_version("orders-value", 1).schema_id == schema_id
    with pytest.raises(SchemaRegistryError) as missing:
        server.client().get_version("orders-value", 9)
    assert missing.value.error_code == 40402
    with pytest.raises(SchemaRegistryError) as missing:
        server.client().get_versions("nobody-value")
    assert missing.value.error_code == 40401
    with pytest.raises(SchemaRegistryError) as not_soft_deleted:
        client.delete_version("orders-value", 2, permanent=True)
    assert not_soft_deleted.value.error_code == 40407
    assert client.delete_version("orders-value", 2) == 2
    assert client.get_versions("orders-value") == [1]
    assert client.get_versions("orders-value", deleted=True) == [1, 2]
    assert client.delete_subject("orders-value") == [1]
    assert "orders-value" not in client.get_subjects()
    assert "orders-value" in client.get_subjects(deleted=True)
    assert server.client().get_schema(schema_id).schema_str == ROW_V1.schema_str  # ids outlive subjects
    assert client.delete_subject("orders-value", permanent=True) == [1, 2]
    assert "orders-value" not in client.get_subjects(deleted=True)


def test_confluent_avro_serde_and_ours_read_each_other(server: Server) -> None:
    context = SerializationContext("changes", MessageField.VALUE)
    serializer = AvroSerializer(server.client(), avro_schema_text(), conf={"auto.register.schemas": True})
    framed = serializer(record_from_event(EVENT), context)
    subject, schema_id = register_envelope(server.client(), "avro", "changes")
    assert subject == "changes-value"
    assert framed[:5] == b"\x00" + schema_id.to_bytes(4, "big")
    assert cf.codec("avro").decode_message(framed[5:]) == EVENT
    record = AvroDeserializer(server.client())(framed, context)
    assert record["after"][0]["version"] == 7


def test_confluent_protobuf_serde_and_ours_read_each_other(server: Server) -> None:
    context = SerializationContext("changes-pb", MessageField.VALUE)
    serializer = ProtobufSerializer(change_event_pb2.ChangeEvent, server.client())
    framed = serializer(proto_from_event(EVENT), context)
    subject, schema_id = register_envelope(server.client(), "protobuf", "changes-pb")
    assert framed[:6] == b"\x00" + schema_id.to_bytes(4, "big") + b"\x00"  # message index [0]: one 0x00 byte
    assert cf.codec("protobuf").decode_message(framed[6:]) == EVENT
    message = ProtobufDeserializer(change_event_pb2.ChangeEvent, schema_registry_client=server.client())(
        framed, context)
    assert message == proto_from_event(EVENT)
    assert server.client().get_schema(schema_id).schema_type == "PROTOBUF"
    assert server.client().get_schema(schema_id).schema_str == envelope_schema("protobuf").schema_str


def test_restarting_keeps_every_schema_and_id(tmp_path: Path) -> None:
    db = tmp_path / "registry.sqlite"
    first = Server(db)
    ids = {subject: first.client().register_schema(subject, schema)
           for subject, schema in (("a-value", ROW_V1), ("b-value", ROW_V2))}
    first.stop()
    second = Server(db)
    try:
        client = second.client()
        assert {subject: client.lookup_schema(subject, schema).schema_id
                for subject, schema in (("a-value", ROW_V1), ("b-value", ROW_V2))} == ids
        assert client.register_schema("c-value", ROW_V1) == ids["a-value"]
    finally:
        second.stop()


def test_basic_auth_is_required_when_configured_and_never_logged(tmp_path: Path) -> None:
    secret = "s3cret-Pa55"
    server = Server(tmp_path / "registry.sqlite", "--user", "alice", env={"CDCFORMATS_REGISTRY_PASSWORD": secret})
    try:
        with pytest.raises(SchemaRegistryError) as refused:
            server.client().get_subjects()
        assert refused.value.http_status_code == 401
        with pytest.raises(SchemaRegistryError):
            server.client(**{"basic.auth.user.info": "alice:wrong"}).get_subjects()
        client = server.client(**{"basic.auth.user.info": f"alice:{secret}"})
        client.register_schema("a-value", ROW_V1)
        assert client.get_subjects() == ["a-value"]
    finally:
        output = server.stop()
    assert "GET /subjects" in output and secret not in output and "alice" not in output


def test_oversized_requests_are_refused(tmp_path: Path) -> None:
    server = Server(tmp_path / "registry.sqlite", "--max-request-bytes", "1000")
    try:
        big = _avro([{"name": f"field_{n}", "type": "long"} for n in range(100)])
        with pytest.raises(SchemaRegistryError) as refused:
            server.client().register_schema("a-value", big)
        assert refused.value.http_status_code == 413
        assert server.client().register_schema("a-value", ROW_V1) >= 1
    finally:
        server.stop()


def test_the_server_listens_on_loopback_by_default(server: Server) -> None:
    with urllib.request.urlopen(f"{server.url}/schemas/types") as response:
        assert json.load(response) == ["AVRO", "PROTOBUF", "JSON"]
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{server.url}/schemas/ids/999")
    assert json.load(missing.value) == {"error_code": 40403, "message": "Schema 999 not found"}


def test_connect_gives_confluent_clients_for_urls_and_the_cli_registers_envelopes(server: Server) -> None:
    from click.testing import CliRunner

    from cdcformats.cli import main
    from cdcformats.schema_registry import connect

    client = connect(server.url, **{"max.retries": 0})
    assert isinstance(client, SchemaRegistryClient)
    result = CliRunner().invoke(main, ["schemas", "register", "--registry", server.url, "--format", "protobuf",
                                       "--topic", "orders"])
    assert result.exit_code == 0, result.output
    format_name, subject, schema_id = result.output.split()
    assert (format_name, subject) == ("protobuf", "orders-value")
    assert client.get_latest_version("orders-value").schema_id == int(schema_id)
    avro = CliRunner().invoke(main, ["schemas", "register", "--registry", server.url, "--topic", "payments"])
    assert avro.exit_code == 0 and avro.output.split()[:2] == ["avro", "payments-value"]  # the default
    refused = CliRunner().invoke(main, ["schemas", "register", "--registry", server.url, "--topic", "orders", "-f",
                                        "avro", "-f", "protobuf"])
    assert refused.exit_code == 2 and "one topic subject holds one schema" in refused.output


def test_subjects_are_decoded_once(server: Server) -> None:
    client = server.client()
    client.register_schema("a%41", ROW_V1)  # a subject with a literal percent sign
    client.register_schema("ex/common.proto", ROW_V1)  # and one with a slash
    assert sorted(client.get_subjects()) == ["a%41", "ex/common.proto"]
    assert client.get_versions("a%41") == [1]


def test_raw_schema_endpoints_return_the_schema_itself(server: Server) -> None:
    avro_id = server.client().register_schema("a-value", ROW_V1)
    protobuf_id = register_envelope(server.client(), "protobuf", "p")[1]
    with urllib.request.urlopen(f"{server.url}/schemas/ids/{avro_id}/schema") as response:
        assert json.load(response) == json.loads(ROW_V1.schema_str)
    with urllib.request.urlopen(f"{server.url}/subjects/p-value/versions/latest/schema") as response:
        assert response.read().decode() == envelope_schema("protobuf").schema_str
    with urllib.request.urlopen(f"{server.url}/schemas/ids/{protobuf_id}/schema") as response:
        assert response.read().decode() == envelope_schema("protobuf").schema_str
