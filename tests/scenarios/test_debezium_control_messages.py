"""Debezium sends more than row changes: heartbeats, and with ``provide.transaction.metadata`` a BEGIN and an END
record per transaction. Read from a topic pattern or a dump of several topics, they arrive among the rows (issue 33:
each failed as "op None is not a row change", and only ``--errors skip``, which hides real errors, got past them)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Runner, jsonl

# As Debezium 3.6's PostgreSQL connector writes them through JsonConverter without schemas.
STREAM = jsonl(
    '{"ts_ms":1795697117982}',
    '{"status":"BEGIN","id":"762:22344936","event_count":null,"data_collections":null,"ts_ms":1795697118394}',
    '{"before":null,"after":{"region":"ap","id":3,"v":"third"},"source":{"version":"3.6.1.Final",'
    '"connector":"postgresql","name":"pg","ts_ms":1795697118394,"snapshot":"false","db":"postgres",'
    '"sequence":"[null,\\"22344936\\"]","ts_us":1795697118394000,"ts_ns":1795697118394000000,"schema":"public",'
    '"table":"composite","txId":762,"lsn":22344936,"xmin":null},"transaction":{"id":"762:22344936",'
    '"total_order":1,"data_collection_order":1},"op":"c","ts_ms":1795697118412,"ts_us":1795697118412000,'
    '"ts_ns":1795697118412000000}',
    '{"status":"END","id":"762:22345200","event_count":1,"data_collections":[{"data_collection":"public.composite",'
    '"event_count":1}],"ts_ms":1795697118394}',
)


def test_control_messages_are_refused_saying_what_they_are(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "pg.jsonl").write_bytes(STREAM)
    ran = cdcformats("convert", "--from", "debezium-json", "--to", "maxwell-json", "pg.jsonl")
    assert ran.returncode == 1
    assert "line 1" in ran.stderr and "a heartbeat changes no row (option skip_control skips it)" in ran.stderr


def test_skip_control_skips_them_and_counts_them(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "pg.jsonl").write_bytes(STREAM)
    ran = cdcformats("convert", "--from", "debezium-json", "--to", "maxwell-json", "pg.jsonl",
                     "--source-option", "skip_control=true")
    assert ran.returncode == 0, ran.stderr
    assert [json.loads(line)["data"] for line in ran.stdout.splitlines()] == [{"region": "ap", "id": 3, "v": "third"}]
    assert "4 messages read (1 decoded, 0 failed, 3 skipped)" in ran.stderr
