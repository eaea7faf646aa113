"""debezium-avro and the schema registry as a user meets them (issue 28, "First real use"): nullable columns from
Lindorm, Canal and Debezium; the Kafka serializers' subjects and the value deserializer; which registry an error
names; and a read that must leave the user's data directory alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import Runner, jsonl

# A short Python program, run by the venv's interpreter as a producer or consumer would: it reads every record of a
# debezium-avro file with confluent-kafka's own AvroDeserializer, against the registry the file was written into.
CONFLUENT_READS = """
import base64, json, sys
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from cdcformats.schema_registry import connect

read = AvroDeserializer(connect(sys.argv[2]))
for line in open(sys.argv[1]):
    value = base64.b64decode(json.loads(line)["value"])
    print(json.dumps(read(value, SerializationContext("any", MessageField.VALUE))["after"], default=str))
"""


def python(program: str, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", program, *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def converted_and_read(cdcformats: Runner, tmp_path: Path, source: str, messages: bytes) -> list[dict]:
    """``messages`` converted from ``source`` to debezium-avro in a registry file, then each record's row as
    confluent-kafka's AvroDeserializer reads it."""
    (tmp_path / "in.jsonl").write_bytes(messages)
    ran = cdcformats("convert", "--from", source, "--to", "debezium-avro", "--registry", "registry.sqlite",
                     "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    count = len(messages.splitlines())
    assert f"{count} event{'' if count == 1 else 's'} ({count} written, 0 refused)" in ran.stderr
    read = python(CONFLUENT_READS, "out.jsonl", "registry.sqlite", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    return [json.loads(line) for line in read.stdout.splitlines()]


def test_a_lindorm_put_with_a_null_varchar_and_a_new_null_double_column(cdcformats: Runner, tmp_path: Path) -> None:
    """Before: the registry refused ["null", {"type": "null"}] ("null type already in Union"), in a 2 KB error."""
    messages = jsonl(
        '{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":['
        '{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"VARCHAR","name":"note","value":null}]}',
        '{"op":"Put","table":"orders","ts":"1700000001000","keyOnly":"false","data":['
        '{"type":"VARCHAR","name":"id","value":"o-2"},{"type":"VARCHAR","name":"note","value":"gift"},'
        '{"type":"DOUBLE","name":"score","value":null}]}')
    assert converted_and_read(cdcformats, tmp_path, "lindorm", messages) == [
        {"id": "o-1", "note": None}, {"id": "o-2", "note": "gift", "score": None}]
    back = cdcformats("convert", "--from", "debezium-avro", "--to", "lindorm", "--registry", "registry.sqlite",
                      "out.jsonl")
    assert back.returncode == 0, back.stderr
    assert [[cell.get("value") for cell in json.loads(line)["data"]] for line in back.stdout.splitlines()] == [
        ["o-1", None], ["o-2", "gift", None]]


def test_a_canal_insert_with_a_null_text_column(cdcformats: Runner, tmp_path: Path) -> None:
    messages = jsonl(
        '{"data":[{"id":"1","body":null}],"database":"shop","table":"notes","type":"INSERT","es":1700000000000,'
        '"ts":1700000000100,"isDdl":false,"pkNames":["id"],"mysqlType":{"id":"int(11)","body":"text"},'
        '"sqlType":{"id":4,"body":2005},"old":null,"id":1,"sql":""}')
    assert converted_and_read(cdcformats, tmp_path, "canal-json", messages) == [{"id": 1, "body": None}]


def test_a_debezium_message_whose_schema_declares_an_optional_decimal(cdcformats: Runner, tmp_path: Path) -> None:
    decimal = {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
               "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "balance"}
    row = {"type": "struct", "optional": True, "name": "shop.public.accounts.Value",
           "fields": [{"type": "int32", "optional": False, "field": "id"}, decimal]}
    source = {"type": "struct", "optional": False, "name": "io.debezium.connector.postgresql.Source", "fields": [
        {"type": "string", "optional": False, "field": "connector"}, {"type": "int64", "optional": False,
                                                                      "field": "ts_ms"},
        {"type": "string", "optional": False, "field": "db"}, {"type": "string", "optional": False, "field": "schema"},
        {"type": "string", "optional": False, "field": "table"}, {"type": "int64", "optional": True, "field": "lsn"}]}
    message = {"schema": {"type": "struct", "optional": False, "name": "shop.public.accounts.Envelope", "fields": [
        {**row, "field": "before"}, {**row, "field": "after"}, {**source, "field": "source"},
        {"type": "string", "optional": False, "field": "op"}, {"type": "int64", "optional": True, "field": "ts_ms"}]},
        "payload": {"before": None, "after": {"id": 1, "balance": None}, "op": "c", "ts_ms": 1700000000100,
                    "source": {"connector": "postgresql", "ts_ms": 1700000000000, "db": "shop", "schema": "public",
                               "table": "accounts", "lsn": 123}}}
    assert converted_and_read(cdcformats, tmp_path, "debezium-json", jsonl(json.dumps(message))) == [
        {"id": 1, "balance": None}]
    subject = json.loads(python(
        "from cdcformats.schema_registry import connect; r = connect('registry.sqlite'); "
        "print(r.get_latest_version('cdcformats.public.accounts-value').schema.schema_str)", cwd=tmp_path).stdout)
    row_fields = subject["fields"][0]["type"][1]["fields"]
    assert row_fields[1]["type"][1]["logicalType"] == "decimal" and row_fields[1]["type"][1]["scale"] == 2


PRODUCER = """
import cdcformats as cf
from cdcformats.kafka import ChangeEventKeySerializer, ChangeEventSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from cdcformats.schema_registry import connect

event = cf.ChangeEvent(cf.Op.INSERT, cf.Table("region", "tpch"), key=(cf.Cell("r_regionkey", 0, "int32"),),
                       after=(cf.Cell("r_regionkey", 0, "int32"), cf.Cell("r_name", "AFRICA", "string")))
ChangeEventSerializer("debezium-avro", schema_registry="registry.sqlite")(
    event, SerializationContext("tpch.region", MessageField.VALUE))
ChangeEventKeySerializer("debezium-avro", schema_registry="registry.sqlite")(
    event, SerializationContext("tpch.region", MessageField.KEY))
print(" ".join(connect("registry.sqlite").get_subjects()))
"""


def test_the_serializers_register_the_subjects_of_the_topic_they_write_to(tmp_path: Path) -> None:
    """Before: cdcformats.tpch.region-value, Debezium's per-table subject, for a producer writing to tpch.region."""
    ran = python(PRODUCER, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["tpch.region-key", "tpch.region-value"]


CONSUMER = """
import cdcformats as cf
from cdcformats.kafka import ChangeEventDeserializer, ChangeEventKeySerializer, ChangeEventSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

key = (cf.Cell("r_regionkey", 0, "int32"),)
event = cf.ChangeEvent(cf.Op.UPDATE, cf.Table("region", "tpch"), key=key,
                       before=(*key, cf.Cell("r_name", "AFRICA", "string")),
                       after=(*key, cf.Cell("r_name", "ASIA", "string")))
value_context = SerializationContext("tpch.region", MessageField.VALUE)
value = ChangeEventSerializer("debezium-avro", schema_registry="registry.sqlite")(event, value_context)
ChangeEventKeySerializer("debezium-avro", schema_registry="registry.sqlite")(
    event, SerializationContext("tpch.region", MessageField.KEY))
read = ChangeEventDeserializer("debezium-avro", schema_registry="registry.sqlite")(value, value_context)
print(read == event, [(cell.name, cell.value) for cell in read.key], read.after[1].value)
"""


def test_a_value_deserializer_reads_debezium_avro_with_its_key(tmp_path: Path) -> None:
    """Before: ChangeEventDeserializer("debezium-avro") was refused ("reads the record key and value together")."""
    ran = python(CONSUMER, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split(maxsplit=1) == ["True", "[('r_regionkey', 0)] ASIA\n"]


def _written_elsewhere(cdcformats: Runner, tmp_path: Path) -> None:
    """out.jsonl: a debezium-avro file whose schemas are in another registry (elsewhere.sqlite)."""
    (tmp_path / "in.jsonl").write_bytes(jsonl(
        '{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":['
        '{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"VARCHAR","name":"note","value":"x"}]}'))
    wrote = cdcformats("convert", "--from", "lindorm", "--to", "debezium-avro", "--registry", "elsewhere.sqlite",
                       "in.jsonl", "out.jsonl")
    assert wrote.returncode == 0, wrote.stderr


def test_a_file_written_with_another_registry_fails_naming_the_registry_it_asked(cdcformats: Runner,
                                                                                 tmp_path: Path) -> None:
    """Before: "schema id 1 cannot be fetched: Schema 1 not found", which registry unsaid."""
    _written_elsewhere(cdcformats, tmp_path)
    ran = cdcformats("convert", "--from", "debezium-avro", "--to", "debezium-json", "--registry", "here.sqlite",
                     "out.jsonl")
    assert ran.returncode == 1
    assert f"cannot be fetched from the schema registry file {tmp_path / 'here.sqlite'} (no such file)" in \
        ran.error_line()
    assert not (tmp_path / "here.sqlite").exists()


def test_reading_with_the_default_registry_creates_no_file(cdcformats: Runner, tmp_path: Path) -> None:
    """Before: the read created an empty ~/.local/share/cdcformats/schema-registry.sqlite."""
    _written_elsewhere(cdcformats, tmp_path)
    data_home = tmp_path / "data-home"
    ran = cdcformats("convert", "--from", "debezium-avro", "--to", "debezium-json", "out.jsonl",
                     env={"CDCFORMATS_SCHEMA_REGISTRY": "", "XDG_DATA_HOME": str(data_home)})
    assert not data_home.exists()
    assert ran.returncode == 1
    default_file = data_home / "cdcformats" / "schema-registry.sqlite"
    assert f"the schema registry file {default_file} (no such file)" in ran.error_line()
