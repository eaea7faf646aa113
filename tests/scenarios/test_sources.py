"""Sources that a first real use could not convert (issue 28): Arcion into Tablestore, Lindorm deletes without their
key columns, and Maxwell's bootstrap and schema-change messages."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .conftest import Runner, jsonl

# Arcion Replicant's NATIVE messages for a MySQL source, as its docs show them: the cursor's timestamp is the commit
# time of the change in milliseconds.
_TABLE_NAME = ('{"namespace": {"catalog": null, "schema": "tpch", "hash": -1732472540}, "name": "region", '
               '"hash": 1193131537}')
ARCION_REALTIME = jsonl(
    f'{{"tableName": {_TABLE_NAME}, "opType": "I", "cursor": {{"extractorId": 0, "timestamp": 1677166633000, '
    '"extractionTimestamp": 1677166633980, "log": "log-bin.000001", "position": 3620, "logSeqNum": 1, '
    '"slaveServerId": 1, "v": 2}, "before": null, '
    '"after": {"r_regionkey": "5", "r_name": "ANTARCTICA", "r_comment": "cold"}}',
    f'{{"tableName": {_TABLE_NAME}, "opType": "U", "cursor": {{"extractorId": 0, "timestamp": 1677166634000, '
    '"extractionTimestamp": 1677166634410, "log": "log-bin.000001", "position": 3920, "logSeqNum": 2, '
    '"slaveServerId": 1, "v": 2}, "before": {"r_regionkey": "5", "r_name": "ANTARCTICA", "r_comment": "cold"}, '
    '"after": {"r_regionkey": "5", "r_name": "ANTARCTICA", "r_comment": "very cold"}}',
    f'{{"tableName": {_TABLE_NAME}, "opType": "D", "cursor": {{"extractorId": 0, "timestamp": 1677166635000, '
    '"extractionTimestamp": 1677166635120, "log": "log-bin.000001", "position": 4210, "logSeqNum": 3, '
    '"slaveServerId": 1, "v": 2}, "before": {"r_regionkey": "5", "r_name": "ANTARCTICA", "r_comment": "very cold"}, '
    '"after": null}',
)
# Snapshot rows: bare rows, which carry no time at all.
ARCION_SNAPSHOT = jsonl('{"r_regionkey": "1", "r_name": "AMERICA", "r_comment": "hs use ironic"}',
                        '{"r_regionkey": "2", "r_name": "ASIA", "r_comment": "ges. thinly even pinto beans"}')


def _rows(stdout: bytes) -> list[list]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_arcion_realtime_messages_go_to_tablestore_rows_dated_by_their_commit_time(cdcformats: Runner,
                                                                                  tmp_path: Path) -> None:
    (tmp_path / "region.jsonl").write_bytes(ARCION_REALTIME)
    ran = cdcformats("convert", "--from", "arcion", "--to", "ots-json", "region.jsonl",
                     "--option", 'primary_key=["r_regionkey"]')
    assert ran.returncode == 0, ran.stderr
    assert _rows(ran.stdout) == [
        ["5", None, None, None, "DR"],  # the insert: a PutRow of the row
        ["5", "r_name", 1677166633000, "ANTARCTICA", "U"], ["5", "r_comment", 1677166633000, "cold", "U"],
        ["5", "r_name", 1677166634000, "ANTARCTICA", "U"], ["5", "r_comment", 1677166634000, "very cold", "U"],
        ["5", None, None, None, "DR"],  # the delete: a DeleteRow
    ]
    assert "3 messages read (3 decoded, 0 failed, 0 skipped), 3 events (3 written, 0 refused), 6 messages " \
           "written" in ran.stderr
    # and the cursor, whose timestamp is now the commit time too, is written back to Arcion as it came
    back = cdcformats("convert", "--from", "arcion", "--to", "arcion", "--strict", "region.jsonl")
    assert back.returncode == 0, back.stderr
    assert [json.loads(line) for line in back.stdout.splitlines()] == \
        [json.loads(line) for line in ARCION_REALTIME.splitlines()]


def test_arcion_snapshot_rows_go_to_tablestore_at_the_time_of_writing_or_at_the_option_default_version(
        cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "region.jsonl").write_bytes(ARCION_SNAPSHOT)
    started = time.time_ns() // 1_000_000
    ran = cdcformats("convert", "--from", "arcion", "--to", "ots-json", "region.jsonl",
                     "--option", 'primary_key=["r_regionkey"]')
    ended = time.time_ns() // 1_000_000
    assert ran.returncode == 0, ran.stderr
    versions = [row[2] for row in _rows(ran.stdout) if row[4] == "U"]
    assert len(versions) == 4 and all(started <= version <= ended for version in versions)  # as Tablestore stamps
    fixed = cdcformats("convert", "--from", "arcion", "--to", "ots-json", "region.jsonl",
                       "--option", 'primary_key=["r_regionkey"]', "--option", "default_version=1700000000000")
    assert fixed.returncode == 0, fixed.stderr
    assert {row[2] for row in _rows(fixed.stdout) if row[4] == "U"} == {1700000000000}


def test_tuple_ots_has_no_file_form_and_the_error_names_ots_json(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "region.jsonl").write_bytes(ARCION_REALTIME)
    ran = cdcformats("convert", "--from", "arcion", "--to", "ots", "region.jsonl",
                     "--option", 'primary_key=["r_regionkey"]')
    assert ran.returncode != 0 and ran.stdout == b""
    assert "no file form" in ran.error_line() and "use ots-json" in ran.error_line()


# A Lindorm Streams DeleteColumn of the column score of the row uid=u1, and a Put before it.
LINDORM = jsonl(
    '{"op": "Put", "table": "scores", "ts": "1677165950000", "keyOnly": "false", "data": ['
    '{"type": "VARCHAR", "name": "uid", "ts": "", "value": "u1"}, {"type": "BIGINT", "name": "score", "ts": "", '
    '"value": "42"}]}',
    '{"op": "DeleteColumn", "table": "scores", "ts": "1677165953000", "keyOnly": "false", "data": ['
    '{"type": "VARCHAR", "name": "uid", "ts": "", "value": "u1"}, {"type": "BIGINT", "name": "score", "ts": ""}]}',
)


def test_a_lindorm_delete_column_without_key_columns_is_refused_naming_the_option(cdcformats: Runner,
                                                                                 tmp_path: Path) -> None:
    (tmp_path / "scores.jsonl").write_bytes(LINDORM)
    ran = cdcformats("convert", "--from", "lindorm", "--to", "debezium-json", "scores.jsonl")
    assert ran.returncode == 1
    error = ran.error_line()
    assert error.startswith("Error: debezium-json: line 2: field key:") and "key_columns" in error
    assert "2 messages read (2 decoded, 0 failed, 0 skipped), 2 events (1 written, 1 refused)" in ran.stderr
    skipped = cdcformats("convert", "--from", "lindorm", "--to", "debezium-json", "scores.jsonl", "--errors", "skip")
    assert skipped.returncode == 0 and len(skipped.stdout.splitlines()) == 1  # the Put; the delete counted refused
    assert "1 refused" in skipped.stderr
    keyed = cdcformats("convert", "--from", "lindorm", "--to", "debezium-json", "scores.jsonl",
                       "--option", 'key_columns=["uid"]')
    assert keyed.returncode == 0, keyed.stderr
    delete_column = json.loads(keyed.stdout.splitlines()[1])
    assert delete_column["op"] == "u" and delete_column["after"] == {"uid": "u1", "score": None}


# Maxwell's bootstrap of a table (the rows between bootstrap-start and bootstrap-complete), a row change, and a
# schema change of output_ddl, as Maxwell's docs show them.
MAXWELL = jsonl(
    '{"database": "shop", "table": "orders", "type": "bootstrap-start", "ts": 1450557744, "data": {}}',
    '{"database": "shop", "table": "orders", "type": "bootstrap-insert", "ts": 1450557744, '
    '"data": {"id": 1, "total": 9.5}}',
    '{"database": "shop", "table": "orders", "type": "bootstrap-insert", "ts": 1450557744, '
    '"data": {"id": 2, "total": 3.25}}',
    '{"database": "shop", "table": "orders", "type": "bootstrap-complete", "ts": 1450557744, "data": {}}',
    '{"database": "shop", "table": "orders", "type": "insert", "ts": 1450557750, "xid": 940752, "commit": true, '
    '"data": {"id": 3, "total": 1.5}}',
    '{"type": "table-alter", "database": "shop", "table": "orders", "ts": 1450557760, "sql": "ALTER TABLE orders '
    'ADD COLUMN note TEXT", "old": {"database": "shop", "table": "orders", "columns": []}, '
    '"def": {"database": "shop", "table": "orders", "columns": []}}',
)


# DataWorks' messages for Kafka: a row, then the heartbeat it writes periodically so that consumers see its progress.
DATAWORKS = jsonl(
    '{"schema": {"dataColumn": [{"name": "id", "type": "LONG"}, {"name": "val", "type": "DOUBLE"}], '
    '"primaryKey": ["id"], "source": {"dbType": "MySQL", "dbName": "bigdata_test", "tableName": "sync_test_table"}}, '
    '"payload": {"before": null, "after": {"dataColumn": {"id": 1, "val": 2.5}}, "sequenceId": "1731663842292000001", '
    '"timestamp": {"eventTime": 1731662097000, "systemTime": 1731663848979, "checkpointTime": 1731662097000}, '
    '"op": "INSERT", "ddl": null}, "version": "0.0.1"}',
    '{"schema": {"dataColumn": null, "primaryKey": null, "source": null}, "payload": {"before": null, "after": null, '
    '"sequenceId": null, "timestamp": {"eventTime": 1731662160000, "systemTime": 1731663910000, '
    '"checkpointTime": 1731662160000}, "op": "MHEARTBEAT", "ddl": null}, "version": "0.0.1"}',
)


@pytest.mark.parametrize("source, messages, refusal, ops, counts, other_type", [
    ("maxwell-json", MAXWELL, "line 1: field type: bootstrap-start", ["r", "r", "c"],
     "6 messages read (3 decoded, 0 failed, 3 skipped), 3 events (3 written, 0 refused)",
     '{"database": "shop", "table": "orders", "type": "upsert", "data": {"id": 4}}'),
    ("aliyun-json", DATAWORKS, "line 2: field payload.op: op 'MHEARTBEAT'", ["c"],
     "2 messages read (1 decoded, 0 failed, 1 skipped), 1 event (1 written, 0 refused)",
     '{"schema": {}, "payload": {"op": "MBEAT"}}'),
])
def test_messages_that_change_no_row_are_skipped_with_skip_ddl_and_counted(
        cdcformats: Runner, tmp_path: Path, source: str, messages: bytes, refusal: str, ops: list[str], counts: str,
        other_type: str) -> None:
    (tmp_path / "in.jsonl").write_bytes(messages)
    refused = cdcformats("convert", "--from", source, "--to", "debezium-json", "in.jsonl")
    assert refused.returncode == 1
    assert refusal in refused.error_line() and "option skip_ddl skips" in refused.error_line()
    ran = cdcformats("convert", "--from", source, "--to", "debezium-json", "in.jsonl", "--option", "skip_ddl=true")
    assert ran.returncode == 0, ran.stderr
    assert [json.loads(line)["op"] for line in ran.stdout.splitlines()] == ops
    assert counts in ran.stderr
    # a type the format does not write is still an error under skip_ddl
    (tmp_path / "other.jsonl").write_bytes(jsonl(other_type))
    other = cdcformats("convert", "--from", source, "--to", "debezium-json", "other.jsonl", "--option", "skip_ddl=true")
    assert other.returncode == 1 and "line 1: field" in other.error_line()
