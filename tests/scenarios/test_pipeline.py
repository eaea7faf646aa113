"""``convert``, ``bridge`` and ``spark-convert`` run one conversion pipeline (issue 30): a Canal topic or file with a
message of two rows, a DDL message skipped by ``skip_ddl``, a broken message and a TRUNCATE that Maxwell cannot
write counts as ``convert`` counts it (4 messages read: 2 decoded, 1 failed, 1 skipped; 3 events: 2 written, 1
refused), and each writes both rows of the two-row message.

Before, the bridge did not count the DDL message at all (its counts did not add up to what it consumed), and
``spark-convert`` read one change per row, so it refused the two-row message and the DDL message as errors, and
under ``--errors skip`` called what it left out "dead-lettered"."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from .conftest import CDCFORMATS, Runner, jsonl

MYSQL_TYPES = {"id": "int", "name": "varchar(20)"}
CANAL = jsonl(
    json.dumps({"data": [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}], "database": "shop", "table": "orders",
                "type": "INSERT", "pkNames": ["id"], "isDdl": False, "es": 1700000000000, "ts": 1700000000001,
                "old": None, "mysqlType": MYSQL_TYPES, "sql": ""}),
    json.dumps({"data": None, "database": "shop", "table": "orders", "type": "ALTER", "isDdl": True,
                "sql": "ALTER TABLE orders ADD c int", "es": 1700000000002, "ts": 1700000000003, "pkNames": None,
                "old": None}),
    '{"data": [{"id": "3"',
    json.dumps({"data": None, "database": "shop", "table": "orders", "type": "TRUNCATE", "pkNames": ["id"],
                "isDdl": False, "es": 1700000000004, "ts": 1700000000005, "old": None, "mysqlType": MYSQL_TYPES,
                "sql": ""}))


@pytest.mark.slow
def test_the_bridge_counts_a_skipped_ddl_message_and_dead_letters_the_rest(tmp_path: Path) -> None:
    from confluent_kafka import Consumer, Producer

    cluster = Producer({"test.mock.num.brokers": 1, "log_level": 0})
    bootstrap = ",".join(f"{broker.host}:{broker.port}" for broker in cluster.list_topics(timeout=10).brokers.values())
    run = uuid.uuid4().hex[:8]
    for line in CANAL.splitlines():
        cluster.produce(f"in-{run}", value=line)
    cluster.flush()
    ran = subprocess.run(
        [CDCFORMATS, "bridge", "-b", bootstrap, "--source-topic", f"in-{run}", "-f", "canal-json", "--target-topic",
         f"out-{run}", "-t", "maxwell-json", "--dead-letter-topic", f"dead-{run}", "--source-option",
         "skip_ddl=true", "--idle-timeout", "3", "--progress-interval", "0", "--group-id", f"bridge-{run}"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    # read 4 = decoded 2 (3 events: 2 written, 1 refused) + failed 1 + skipped 1 (the DDL message)
    assert ran.stderr.splitlines()[-1] == "consumed 4  produced 2  tombstones 0  skipped 1  dead-lettered 2"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{run}", "auto.offset.reset": "earliest",
                         "log_level": 0})
    consumer.subscribe([f"dead-{run}"])
    dead: list[bytes] = []
    for _ in range(60):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            dead.append(message.value())
        if len(dead) == 2:
            break
    consumer.close()
    # the broken message, and the TRUNCATE's (keyless, so on any partition of the topic: in any order)
    assert sorted(dead) == sorted([CANAL.splitlines()[2], CANAL.splitlines()[3]])


@pytest.mark.slow
def test_spark_convert_writes_every_row_of_a_message_and_says_what_it_left_out(cdcformats: Runner,
                                                                               tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(CANAL)
    ran = cdcformats("spark-convert", "-f", "canal-json", "-t", "maxwell-json", "in.jsonl", "out", "--errors", "skip",
                     "--master", "local[1]", "--option", "skip_ddl=true", timeout=300)
    import pyarrow.parquet as pq

    assert ran.returncode == 0, ran.stderr
    assert "4 rows in: 2 written, 0 dead-lettered, 2 left out, 1 without a change" in ran.stderr
    values = pq.read_table(tmp_path / "out").column("value").to_pylist()
    assert sorted(json.loads(value)["data"]["id"] for value in values) == [1, 2]
