"""What a format rewrites of the messages its own producers send, and what converting them to another format drops:
``cf.loss`` declares it before any data flows (a schemaless Connect record's array of mixed values, written with a
schema as its JSON text; a Canal float's text that Lindorm writes otherwise, without its type), and aliyun-json
writes an update whose old row lacks a column (MySQL's minimal row image) back as it came."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import Runner, jsonl


def declared_loss(tmp_path: Path, source: str, target: str) -> list[str]:
    """What ``cf.loss`` answers, asked as a user asks it: in a Python process of its own."""
    script = f"import json, cdcformats as cf; print(json.dumps(cf.loss({source!r}, {target!r})))"
    ran = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         check=True)
    return json.loads(ran.stdout)


# DataWorks' update of one message, from a binlog of minimal row images: the old row holds the key only, the new one
# the changed column first, in the order of schema.dataColumn.
ALIYUN_UPDATE = {
    "schema": {"dataColumn": [{"name": "status", "type": "STRING"}, {"name": "id", "type": "LONG"}],
               "primaryKey": ["id"], "source": {"dbType": "MySQL", "dbName": "shop", "tableName": "orders"}},
    "payload": {"before": {"dataColumn": {"id": 7}}, "after": {"dataColumn": {"status": "PAID", "id": 7}},
                "sequenceId": "1731663842292000001",
                "timestamp": {"eventTime": 1731662097000, "systemTime": 1731663848979}, "op": "UPDATE_AFTER"}}


def test_aliyun_writes_an_update_of_a_minimal_old_row_back_as_it_came(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "orders.jsonl").write_bytes(jsonl(json.dumps(ALIYUN_UPDATE)))
    ran = cdcformats("convert", "-f", "aliyun-json", "-t", "aliyun-json", "--strict", "orders.jsonl")
    assert ran.returncode == 0 and "1 written" in ran.stderr, ran.stderr
    written = json.loads(ran.stdout)
    # The new row in its own order: the changed column before the key, as the schema lists them.
    assert list(written["payload"]["after"]["dataColumn"]) == ["status", "id"]
    assert [column["name"] for column in written["schema"]["dataColumn"]] == ["status", "id"]
    assert written["payload"]["before"] == {"dataColumn": {"id": 7}}


# A record of a sink connector's topic written without a schema ("schema": null in JsonConverter's envelope), whose
# tags column is a JSON array of a number and a string.
CONNECT_SCHEMALESS = {"schema": None, "payload": {"id": 3, "tags": [1, "gift"]}}


def test_loss_declares_the_array_of_mixed_values_that_connect_json_writes_as_text(cdcformats: Runner,
                                                                                 tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_bytes(jsonl(json.dumps({"key": None, "value": CONNECT_SCHEMALESS})))
    ran = cdcformats("convert", "-f", "connect-json", "-t", "connect-json", "records.jsonl")
    assert ran.returncode == 0 and "1 written" in ran.stderr, ran.stderr
    value = json.loads(ran.stdout)["value"]
    assert value["payload"]["tags"] == '[1,"gift"]'  # a field schema types no such array: its JSON text
    assert "value.nested" in declared_loss(tmp_path, "connect-json", "connect-json")
    strict = cdcformats("convert", "-f", "connect-json", "-t", "connect-json", "--strict", "records.jsonl")
    assert strict.returncode == 1 and "connect-json cannot carry value.nested" in strict.error_line(), strict.stderr


# Canal's row of a FLOAT column holding ten million: Canal writes every value as text, this one as MySQL prints it.
CANAL_INSERT = ('{"data": [{"id": "1", "weight": "10000000.0"}], "database": "shop", "es": 1700000000000, "id": 4, '
                '"isDdl": false, "mysqlType": {"id": "int(11)", "weight": "float"}, "old": null, "pkNames": ["id"], '
                '"sql": "", "sqlType": {"id": 4, "weight": 7}, "table": "parcels", "ts": 1700000000123, '
                '"type": "INSERT"}')


def test_loss_declares_the_typed_float_that_lindorm_writes_without_its_type(cdcformats: Runner,
                                                                             tmp_path: Path) -> None:
    (tmp_path / "parcels.jsonl").write_bytes(jsonl(CANAL_INSERT))
    strict = cdcformats("convert", "-f", "canal-json", "-t", "lindorm", "--strict", "parcels.jsonl")
    assert strict.returncode == 1 and "lindorm cannot carry" in strict.error_line(), strict.stderr
    plain = cdcformats("convert", "-f", "canal-json", "-t", "lindorm", "parcels.jsonl")
    assert plain.returncode == 0 and "1 written" in plain.stderr, plain.stderr
    assert "value.off_type" in declared_loss(tmp_path, "canal-json", "lindorm")
