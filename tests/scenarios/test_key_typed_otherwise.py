"""A Connect record whose key declares a column with another schema than its value does (found by the conversion
matrix, session 19: a key field typed as an empty struct, the value's field as a Connect Decimal). debezium-avro
took the key's struct schema for Debezium's variable-scale decimal, wrote the decimal as the struct ``{scale,
value}`` that such a column's JSON sends, and then failed on it with Python's ValueError ("a nested value ... has no
column type") instead of converting. A struct schema now says a decimal reads back as that struct only where it is
the variable-scale decimal's own."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from pathlib import Path

import cdcformats as cf
from cdcformats.contract import KafkaRecord

from .conftest import Runner

KEY = {"schema": {"type": "struct", "optional": False, "fields": [
    {"type": "struct", "fields": [], "optional": False, "field": "price"}]}, "payload": {"price": None}}
VALUE = {"schema": {"type": "struct", "optional": False, "fields": [
    {"type": "bytes", "optional": False, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
     "parameters": {"scale": "2"}, "field": "price"}]},
    "payload": {"price": base64.b64encode((1250).to_bytes(2, "big")).decode()}}


def test_a_column_the_key_types_otherwise_converts_to_debezium_avro(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps({"key": KEY, "value": VALUE}) + "\n")
    ran = cdcformats("convert", "-f", "connect-json", "-t", "debezium-avro", "--option",
                     f"schema_registry={tmp_path / 'registry.sqlite'}", "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "1 event (1 written, 0 refused)" in ran.stderr
    [line] = (tmp_path / "out.jsonl").read_text().splitlines()
    record = json.loads(line)
    back = cf.codec("debezium-avro", schema_registry=str(tmp_path / "registry.sqlite")).decode_messages(
        KafkaRecord(base64.b64decode(record["key"]), base64.b64decode(record["value"])))
    [event] = back
    assert [cell.value for cell in event.after if cell.name == "price"] == [Decimal("12.50")]
