"""SQL type names as sources send them (issue 30, one SQL type table): a PostgreSQL source's ``int8`` and ``double
precision`` and an Oracle source's ``NUMBER`` given to arcion's ``column_types``, and a MySQL column of
``decimal(0)`` in Canal's ``mysqlType``, as the typed tables (``debezium-avro``) read it."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Runner, jsonl

# Arcion Replicant's NATIVE message of a PostgreSQL table: every value is text.
ARCION_POSTGRES_ROW = jsonl(
    '{"tableName":{"namespace":{"catalog":null,"schema":"public","hash":-1732472540},"name":"accounts",'
    '"hash":1193131537},"opType":"I","cursor":{"extractorId":0,"timestamp":1677165953000,"lsn":"0/16B3748"},'
    '"before":null,"after":{"id":"8","balance":"2.5","owner":"Ann","limit":"007"}}')
POSTGRES_TYPES = 'column_types={"id": "int8", "balance": "double precision", "owner": "text", "limit": "int8"}'


def test_postgres_type_names_type_arcions_text_as_their_values(cdcformats: Runner, tmp_path: Path) -> None:
    """Before: int8 and double precision were no types of typed_text's own table, though tables.py declared them:
    the values stayed text ("8", "2.5") in debezium-json."""
    (tmp_path / "in.jsonl").write_bytes(ARCION_POSTGRES_ROW)
    ran = cdcformats("convert", "-f", "arcion", "-t", "debezium-json", "--source-option", POSTGRES_TYPES,
                     "in.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["after"] == {"id": 8, "balance": 2.5, "owner": "Ann", "limit": "007"}
    assert "1 event (1 written, 0 refused)" in ran.stderr


def test_arcion_with_postgres_type_names_writes_its_messages_back_as_they_came(cdcformats: Runner,
                                                                             tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(ARCION_POSTGRES_ROW)
    ran = cdcformats("convert", "-f", "arcion", "-t", "arcion", "--option", POSTGRES_TYPES, "--strict", "in.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == json.loads(ARCION_POSTGRES_ROW)


def test_an_oracle_number_is_a_connect_decimal_in_debezium_json(cdcformats: Runner, tmp_path: Path) -> None:
    """Before: NUMBER(10,2) declared decimal(10,2) to the typed tables, but typed_text left its text "19.90" as text,
    so Debezium's schema said string."""
    (tmp_path / "in.jsonl").write_bytes(jsonl(
        '{"tableName":{"namespace":{"catalog":null,"schema":"SHOP","hash":1},"name":"ORDERS","hash":2},'
        '"opType":"I","cursor":{"extractorId":0,"timestamp":1677165953000,"scn":4711},"before":null,'
        '"after":{"ID":"1","AMOUNT":"19.90"}}'))
    ran = cdcformats("convert", "-f", "arcion", "-t", "debezium-json", "--target-option", "schemas=true",
                     "--source-option", 'column_types={"ID": "NUMBER(10)", "AMOUNT": "NUMBER(10,2)"}', "in.jsonl")
    assert ran.returncode == 0, ran.stderr
    message = json.loads(ran.stdout)
    after = next(field for field in message["schema"]["fields"] if field["field"] == "after")
    amount = next(field for field in after["fields"] if field["field"] == "AMOUNT")
    assert (amount["name"], amount["parameters"]["scale"]) == ("org.apache.kafka.connect.data.Decimal", "2")
    assert message["payload"]["after"]["AMOUNT"] == "B8Y="  # 1990, big-endian: 19.90 at scale 2


def test_a_mysql_decimal_of_no_digits_is_converted_to_debezium_avro(cdcformats: Runner, tmp_path: Path) -> None:
    """Before: "Error: decimal precision 0 is not positive (ValueError; ...)", and nothing was written."""
    (tmp_path / "in.jsonl").write_bytes(jsonl(
        '{"data":[{"id":"1","price":"5"}],"database":"shop","es":1700000000000,"id":7,"isDdl":false,'
        '"mysqlType":{"id":"int(11)","price":"decimal(0)"},"old":null,"pkNames":["id"],"sql":"",'
        '"sqlType":{"id":4,"price":3},"table":"orders","ts":1700000000123,"type":"INSERT"}'))
    ran = cdcformats("convert", "-f", "canal-json", "-t", "debezium-avro", "--registry", "registry.sqlite",
                     "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "1 event (1 written, 0 refused)" in ran.stderr
    back = cdcformats("convert", "-f", "debezium-avro", "-t", "canal-json", "--registry", "registry.sqlite",
                      "out.jsonl")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout)["data"] == [{"id": "1", "price": "5"}]
