"""Debezium messages with their schemas (Kafka Connect's JsonConverter, ``schemas.enable=true``), converted with the
real executable as a user converts them (issue 28, problems 8 and 9).

The messages are written by hand in the shapes Debezium's MySQL and PostgreSQL connectors send: the source block
with the connector's own schema (``row`` an int32, ``snapshot`` an ``io.debezium.data.Enum`` with a default,
optional fields holding null), a transaction block, nullable columns holding null, an optional Decimal column. Each
is one compact line, as JsonConverter writes it, so that "written back as it came" is checked byte for byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import Runner


def field(name: str, kind: str, optional: bool = False) -> dict[str, Any]:
    """A field schema as JsonConverter writes it."""
    return {"type": kind, "optional": optional, "field": name}


VALUE_FIELDS = [
    field("id", "int32"), field("first_name", "string"), field("email", "string", True),
    {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
     "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "balance"}]
COMMON_SOURCE_FIELDS = [
    field("version", "string"), field("connector", "string"), field("name", "string"), field("ts_ms", "int64"),
    {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
     "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"},
    field("db", "string"), field("sequence", "string", True)]
MYSQL_SOURCE_FIELDS = [
    *COMMON_SOURCE_FIELDS, field("table", "string", True), field("server_id", "int64"),
    field("gtid", "string", True), field("file", "string"), field("pos", "int64"), field("row", "int32"),
    field("thread", "int64", True), field("query", "string", True)]
TRANSACTION_BLOCK = {"type": "struct", "fields": [
    field("id", "string"), field("total_order", "int64"), field("data_collection_order", "int64")],
    "optional": True, "name": "event.block", "version": 1, "field": "transaction"}


def envelope(value_name: str, source_fields: list[dict[str, Any]], connector: str) -> list[dict[str, Any]]:
    return [
        {"type": "struct", "fields": VALUE_FIELDS, "optional": True, "name": value_name, "field": "before"},
        {"type": "struct", "fields": VALUE_FIELDS, "optional": True, "name": value_name, "field": "after"},
        {"type": "struct", "fields": source_fields, "optional": False,
         "name": f"io.debezium.connector.{connector}.Source", "field": "source"},
        field("op", "string"), field("ts_ms", "int64", True), TRANSACTION_BLOCK]


# MySQL: an insert inside a transaction; the customer has no email (null) and a balance of 12.50.
MYSQL_INSERT = {
    "schema": {"type": "struct", "fields": envelope("dbserver1.inventory.customers.Value", MYSQL_SOURCE_FIELDS,
                                                    "mysql"),
               "optional": False, "name": "dbserver1.inventory.customers.Envelope", "version": 1},
    "payload": {
        "before": None,
        "after": {"id": 1005, "first_name": "Anne", "email": None, "balance": "BOI="},
        "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": 1732606800000,
                   "snapshot": "false", "db": "inventory", "sequence": None, "table": "customers",
                   "server_id": 223344, "gtid": None, "file": "mysql-bin.000003", "pos": 154, "row": 0,
                   "thread": None, "query": None},
        "op": "c", "ts_ms": 1732606800123,
        "transaction": {"id": "file=mysql-bin.000003,pos=154", "total_order": 1, "data_collection_order": 1}}}

# PostgreSQL 2.6+: an update without a transaction block (null), the envelope's schema listing op and the times first.
POSTGRES_SOURCE_FIELDS = [
    *COMMON_SOURCE_FIELDS, field("ts_us", "int64", True), field("ts_ns", "int64", True), field("schema", "string"),
    field("table", "string"), field("txId", "int64", True), field("lsn", "int64", True), field("xmin", "int64", True)]
_pg_fields = envelope("pg.public.customers.Value", POSTGRES_SOURCE_FIELDS, "postgresql")
POSTGRES_UPDATE = {
    "schema": {"type": "struct", "fields": [_pg_fields[3], _pg_fields[4], *_pg_fields[:3], _pg_fields[5]],
               "optional": False, "name": "pg.public.customers.Envelope", "version": 1},
    "payload": {
        "op": "u", "ts_ms": 1732606801500,
        "before": {"id": 1005, "first_name": "Anne", "email": None, "balance": None},
        "after": {"id": 1005, "first_name": "Anne Marie", "email": "annek@noanswer.org", "balance": "Ifw="},
        "source": {"version": "2.7.0.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1732606801234,
                   "snapshot": "false", "db": "shop", "sequence": "[\"24023128\",\"24023128\"]",
                   "ts_us": 1732606801234567, "ts_ns": 1732606801234567000, "schema": "public",
                   "table": "customers", "txId": 780, "lsn": 24023128, "xmin": None},
        "transaction": None}}


def compact(*documents: dict[str, Any]) -> bytes:
    """JSON lines as JsonConverter writes them: compact, in the documents' order."""
    return b"".join(json.dumps(document, separators=(",", ":")).encode() + b"\n" for document in documents)


MESSAGES = compact(MYSQL_INSERT, POSTGRES_UPDATE)


def test_a_message_with_schemas_is_written_back_byte_for_byte(cdcformats: Runner, tmp_path: Path) -> None:
    """Problem 8: the source struct's schema came back rebuilt (its fields reordered, row an int64, snapshot without
    its Enum name, optional flags flipped, a null thread typed string), and the transaction was dropped."""
    (tmp_path / "in.jsonl").write_bytes(MESSAGES)
    ran = cdcformats("convert", "--from", "debezium-json", "--to", "debezium-json", "--option", "schemas=true",
                     "--strict", "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "2 messages read (2 decoded, 0 failed, 0 skipped), 2 events (2 written, 0 refused)" in ran.stderr
    written = (tmp_path / "out.jsonl").read_bytes()
    assert [json.loads(line)["schema"]["fields"][2]["fields"][12] for line in written.splitlines()[:1]] == [
        {"type": "int32", "optional": False, "field": "row"}]
    assert written == MESSAGES


@pytest.mark.parametrize("envelope_format", ["avro", "protobuf"])
def test_a_message_with_schemas_through_a_canonical_envelope_comes_back_as_it_was(
        cdcformats: Runner, tmp_path: Path, envelope_format: str) -> None:
    """Problem 8: through avro or protobuf and back, the order of the source struct's schema fields changed too."""
    (tmp_path / "in.jsonl").write_bytes(MESSAGES)
    there = cdcformats("convert", "--from", "debezium-json", "--to", envelope_format, "--source-option",
                       "schemas=true", "--strict", "in.jsonl", "events.bin")
    assert there.returncode == 0, there.stderr
    back = cdcformats("convert", "--from", envelope_format, "--to", "debezium-json", "--target-option",
                      "schemas=true", "--strict", "events.bin", "out.jsonl")
    assert back.returncode == 0, back.stderr
    assert "2 events (2 written, 0 refused)" in back.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == MESSAGES


def test_written_without_schemas_the_payload_is_as_it_came(cdcformats: Runner, tmp_path: Path) -> None:
    """Problem 8 without the wrapper: the payload lost its transaction and its source's order. --strict refuses,
    since the payload alone has no column types; without it the payload is written as it came, transaction and
    field order included, the Decimal as its text."""
    (tmp_path / "in.jsonl").write_bytes(compact(MYSQL_INSERT))
    strict = cdcformats("convert", "--from", "debezium-json", "--to", "debezium-json", "--source-option",
                        "schemas=true", "--strict", "in.jsonl", "out.jsonl")
    assert strict.returncode == 1
    assert "field after[0].type: debezium-json cannot carry cell.type" in strict.error_line()
    plain = cdcformats("convert", "--from", "debezium-json", "--to", "debezium-json", "--source-option",
                       "schemas=true", "in.jsonl", "out.jsonl")
    assert plain.returncode == 0, plain.stderr
    payload = {**MYSQL_INSERT["payload"], "after": {**MYSQL_INSERT["payload"]["after"], "balance": "12.50"}}
    assert (tmp_path / "out.jsonl").read_bytes() == compact(payload)


def test_what_debezium_json_cannot_write_back_is_declared(tmp_path: Path) -> None:
    """Problem 9, from Python: for real messages, what each configuration of debezium-json writes reads back as the
    event with what ``dropped()`` declares applied, and ``loss()`` names the schema a plain target drops."""
    script = tmp_path / "check.py"
    script.write_text(f"""
import json
import cdcformats as cf
from cdcformats.losses import without

messages = {MESSAGES!r}.splitlines()
schemas = cf.codec("debezium-json", schemas=True)
events = list(schemas.decode(messages))
for options in ({{}}, {{"schemas": True}}, {{"key_columns": ["id"]}}):
    target = cf.codec("debezium-json", **options)
    for event in events:
        assert list(target.decode(target.encode([event]))) == [without(event, target.dropped(event))], options
print(json.dumps([[loss.path for loss in cf.codec("debezium-json").dropped(event)] for event in events]))
print(json.dumps(cf.loss(schemas, "debezium-json")))
""")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    dropped, lost = map(json.loads, ran.stdout.splitlines())
    schema_attribute = "attributes[4]"  # debezium.transaction.* (3), debezium-json.fields.source, then the schema
    assert schema_attribute in dropped[0] and "attributes[2]" in dropped[1]
    assert "attributes.debezium-json.schema.*" in lost
