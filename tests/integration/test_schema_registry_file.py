"""The embedded registry file: shared by many processes, safe against a process killed mid-write, persistent."""

from __future__ import annotations

import json
import multiprocessing
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError

from cdcformats.schema_registry import connect, register_envelope, subject_name
from cdcformats.schema_registry.embedded import EmbeddedSchemaRegistryClient

PROCESSES = 4
SCHEMAS_PER_PROCESS = 25


def _schema(n: int) -> Schema:
    return Schema(json.dumps({"type": "record", "name": f"R{n}", "fields": [{"name": "x", "type": "long"}]}), "AVRO")


def _register_many(path: str, worker: int) -> list[tuple[str, int, int]]:
    """Every worker registers the same shared schemas and some of its own, interleaved."""
    client = connect(path)
    results = []
    for n in range(SCHEMAS_PER_PROCESS):
        shared = n % 5
        subject = f"shared-{shared}-value"
        results.append((subject, shared, client.register_schema(subject, _schema(shared))))
        own = 1000 * (worker + 1) + n
        results.append((f"own-{own}-value", own, client.register_schema(f"own-{own}-value", _schema(own))))
    return results


def test_processes_registering_at_once_get_consistent_ids(tmp_path: Path) -> None:
    path = str(tmp_path / "registry.sqlite")
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        per_worker = pool.starmap(_register_many, [(path, worker) for worker in range(PROCESSES)])
    id_of_schema: dict[int, set[int]] = {}
    for results in per_worker:
        for _, schema_number, schema_id in results:
            id_of_schema.setdefault(schema_number, set()).add(schema_id)
    assert all(len(ids) == 1 for ids in id_of_schema.values()), "one schema got several ids"
    all_ids = [next(iter(ids)) for ids in id_of_schema.values()]
    assert len(set(all_ids)) == len(all_ids) == 5 + PROCESSES * SCHEMAS_PER_PROCESS, "two schemas share an id"
    client = connect(path)
    assert client.get_versions("shared-0-value") == [1]  # registered by every worker, one version
    assert len(client.get_subjects()) == 5 + PROCESSES * SCHEMAS_PER_PROCESS


WRITER = textwrap.dedent('''
    import json, sys
    from confluent_kafka.schema_registry import Schema
    from cdcformats.schema_registry import connect
    client = connect(sys.argv[1])
    n = 0
    while True:
        schema = Schema(json.dumps({"type": "record", "name": f"K{n}", "fields": [{"name": "x", "type": "long"}]}))
        client.register_schema(f"kill-{n}-value", schema)
        n += 1
        if n == 20:
            print("running", flush=True)
''')


def test_a_process_killed_mid_write_leaves_the_file_readable_and_consistent(tmp_path: Path) -> None:
    path = tmp_path / "registry.sqlite"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "running"
    time.sleep(0.3)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        orphans = db.execute("SELECT COUNT(*) FROM versions WHERE schema_id NOT IN (SELECT id FROM schemas)")
        assert orphans.fetchone()[0] == 0
    client = connect(path)
    subjects = client.get_subjects()
    assert len(subjects) >= 20
    for subject in subjects:  # every committed registration is whole
        registered = client.get_latest_version(subject)
        assert client.get_schema(registered.schema_id).schema_str == registered.schema.schema_str
    assert client.register_schema("after-value", _schema(1)) > 0


def test_reopening_the_file_keeps_every_schema_and_id(tmp_path: Path) -> None:
    path = tmp_path / "registry.sqlite"
    with EmbeddedSchemaRegistryClient(path) as client:
        avro = register_envelope(client, "avro", "orders")
        protobuf = register_envelope(client, "protobuf", "orders-pb")
    with EmbeddedSchemaRegistryClient(path) as client:
        assert register_envelope(client, "avro", "orders") == avro
        assert register_envelope(client, "protobuf", "orders-pb") == protobuf
        assert client.get_version("orders-value").schema_id == avro[1]


def test_embedded_errors_are_confluent_errors(tmp_path: Path) -> None:
    client = connect(tmp_path / "registry.sqlite")
    with pytest.raises(SchemaRegistryError) as missing:
        client.get_latest_version("nobody-value")
    assert (missing.value.http_status_code, missing.value.error_code) == (404, 40401)
    with pytest.raises(SchemaRegistryError) as invalid:
        client.register_schema("x-value", Schema("{not json", "AVRO"))
    assert invalid.value.error_code == 42201


def test_subject_names_match_confluent_strategies() -> None:
    from confluent_kafka.schema_registry import (
        record_subject_name_strategy,
        topic_record_subject_name_strategy,
        topic_subject_name_strategy,
    )
    from confluent_kafka.serialization import MessageField, SerializationContext

    for field, is_key in ((MessageField.VALUE, False), (MessageField.KEY, True)):
        context = SerializationContext("orders", field)
        record = "cdcformats.v1.ChangeEvent"
        assert subject_name("topic", "orders", record, is_key) == topic_subject_name_strategy(context, record)
        assert subject_name("record", "orders", record, is_key) == record_subject_name_strategy(context, record)
        assert subject_name("topic-record", "orders", record, is_key) == topic_record_subject_name_strategy(
            context, record)
