"""Tablestore rows converted through the one walk that groups them into records (issue 30: ots decode no longer feeds
the incremental decoder a row at a time). What the walk must keep, seen by a user of ``cdcformats convert``: a row
refused inside a record is dead-lettered alone, at its line, and leaves the record open for the rows that follow; the
rows of one sequence id that cannot be one record are dead-lettered together, once, at the row that breaks it.

These scenarios guard what the rewrite kept: the output and dead letters are the same before and after it (a speed
change has no failing scenario: the project measures speed by benchmarks/model_floor.py, never by timed assertions).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from .conftest import Ran, Runner, jsonl

# A PutRow of k1 with a row whose version DataX would never write as text, a DeleteRow of k2, an UpdateRow of k3
# (a version deleted, a column deleted), as otsstreamreader exports them.
ROWS = jsonl('["k1",null,null,null,"DR"]',
             '["k1","col_a",1700000000001,"a","U"]',
             '["k1","col_x","1700000000002","x","U"]',
             '["k1","col_b",1700000000003,{"base64":"AAE="},"U"]',
             '["k2",null,null,null,"DR"]',
             '["k3","col_a",1700000000004,null,"DO"]',
             '["k3","col_c",null,null,"DA"]')

# With sequence info (isExportSequenceInfo): the second record's second row has another primary key.
SEQUENCED = jsonl('["k1",null,null,null,"DR","0000000001_00001700000000001000_0000000007_shard-a:0000000000"]',
                  '["k1","col_a",1700000000001,"a","U","0000000001_00001700000000001000_0000000007_shard-a:0000000001"]',
                  '["k2",null,null,null,"DR","0000000001_00001700000000002000_0000000008_shard-a:0000000000"]',
                  '["k9","col_a",1700000000002,"b","U","0000000001_00001700000000002000_0000000008_shard-a:0000000001"]',
                  '["k3","col_a",1700000000003,"c","U","0000000001_00001700000000003000_0000000009_shard-a:0000000000"]')


def _lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]


def _converted(cdcformats: Runner, tmp_path: Path, rows: bytes) -> Ran:
    """``rows`` converted to debezium-json, what cannot be dead-lettered to bad.jsonl."""
    (tmp_path / "rows.jsonl").write_bytes(rows)
    ran = cdcformats("convert", "-f", "ots-json", "-t", "debezium-json", "rows.jsonl", "--option",
                     'primary_key=["id"]', "--dead-letter", "bad.jsonl")
    assert ran.returncode == 0, ran.stderr
    return ran


def test_a_bad_row_inside_a_put_row_is_dead_lettered_alone_and_the_record_converts(cdcformats: Runner,
                                                                                    tmp_path: Path) -> None:
    ran = _converted(cdcformats, tmp_path, ROWS)
    assert "7 messages read (6 decoded, 1 failed, 0 skipped), 3 events (3 written, 0 refused)" in ran.stderr
    put, delete, update = _lines(ran.stdout)
    assert (put["op"], put["after"]) == ("c", {"id": "k1", "col_a": "a", "col_b": "AAE="})
    assert (delete["op"], delete["before"]) == ("d", {"id": "k2"})
    assert (update["op"], update["after"]) == ("u", {"id": "k3", "col_a": None, "col_c": None})
    [dead] = _lines((tmp_path / "bad.jsonl").read_bytes())
    assert (dead["position"], dead["field"]) == (3, "timestamp")
    assert dead["reason"] == "expected a version (an integer), got '1700000000002'"
    assert [base64.b64decode(message["base64"]) for message in dead["messages"]] == [ROWS.splitlines()[2]]


def test_rows_of_one_sequence_id_that_are_not_one_record_are_dead_lettered_together(cdcformats: Runner,
                                                                                    tmp_path: Path) -> None:
    ran = _converted(cdcformats, tmp_path, SEQUENCED)
    assert "5 messages read (3 decoded, 2 failed, 0 skipped), 2 events (2 written, 0 refused)" in ran.stderr
    put, update = _lines(ran.stdout)
    assert put["after"] == {"id": "k1", "col_a": "a"}
    assert put["source"] == {"ts_ms": 1700000000001, "epoch": 1, "row_index": 7, "shard_id": "shard-a"}
    assert (update["op"], update["after"]) == ("u", {"id": "k3", "col_a": "c"})
    [dead] = _lines((tmp_path / "bad.jsonl").read_bytes())
    assert (dead["position"], dead["field"]) == (4, "sequenceInfo")
    assert dead["reason"] == "rows of one record (one sequence id) have different primary keys"
    assert [base64.b64decode(message["base64"]) for message in dead["messages"]] == SEQUENCED.splitlines()[2:4]
    # without --dead-letter the first such record stops the run, with the one-line error
    stopped = cdcformats("convert", "-f", "ots-json", "-t", "debezium-json", "rows.jsonl", "--option",
                         'primary_key=["id"]')
    assert stopped.returncode == 1
    assert stopped.error_line().startswith("Error: ots-json: line 4: field sequenceInfo: rows of one record (one "
                                           "sequence id) have different primary keys (input: ")
