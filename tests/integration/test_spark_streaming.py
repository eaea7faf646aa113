"""Spark Structured Streaming from a real Kafka broker into a Delta table (``cdcformats stream``), killed and restarted.

Each query runs as a user runs it, the command line in a process of its own: a streaming session takes Spark's Kafka
source and Delta Lake on its classpath when its JVM starts. The table is then read by a Spark script of its own, which
also computes ``latest_state`` from the same messages: the table must equal it, row for row.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from cdcformats import samples

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "cdcformats.cli"]
ENVIRONMENT = {**os.environ, "PYSPARK_PYTHON": sys.executable}

# Lindorm's change stream written by hand: two orders, versions of a column, deletes of a version, a column and a row.
LINDORM = [
    b'{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id",'
    b'"value":"o-1"},{"type":"DECIMAL","name":"amount","value":"19.90"},{"type":"VARCHAR","name":"status",'
    b'"ts":"1700000000000","value":"NEW"},{"type":"VARCHAR","name":"status","ts":"1700000000500","value":"PAID"}]}',
    b'{"op":"Put","table":"orders","ts":"1700000001000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id",'
    b'"value":"o-2"},{"type":"DECIMAL","name":"amount","value":"5.00"},{"type":"BOOLEAN","name":"gift",'
    b'"value":"true"}]}',
    b'{"op":"Delete","table":"orders","ts":"1700000002000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id",'
    b'"value":"o-1"},{"type":"VARCHAR","name":"status","ts":"1700000000000"}]}',
    b'{"op":"DeleteColumn","table":"orders","ts":"1700000003000","keyOnly":"false","data":[{"type":"VARCHAR",'
    b'"name":"id","value":"o-2"},{"type":"BOOLEAN","name":"gift"}]}',
    b'{"op":"Put","table":"orders","ts":"1700000004000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id",'
    b'"value":"o-3"},{"type":"DECIMAL","name":"amount","value":"7.50"}]}',
    b'{"op":"DeleteFamily","table":"orders","ts":"1700000005000","keyOnly":"true","data":[{"type":"VARCHAR",'
    b'"name":"id","value":"o-3"}]}',
]
NOT_LINDORM = [b"{not json", b'{"op":"Put","table":"orders","data":"no cells"}']

# Reads the table, the dead letters and Delta's log, and computes latest_state from the messages (stdin, one JSON
# string of each message's text per line); prints JSON for the test.
CHECK = r"""
import json, sys
from pathlib import Path
from cdcformats.spark import latest_state
from cdcformats.spark.connectors import streaming_session
from cdcformats.spark.functions import register

table, dead_letters = sys.argv[1], sys.argv[2]
spark = streaming_session("local[2]", "check")
spark.sparkContext.setLogLevel("ERROR")
register(spark, key_columns=["id"])
messages = [json.loads(line).encode() for line in sys.stdin]
frame = spark.createDataFrame([(message,) for message in messages], "value binary").selectExpr(
    "cdc_decode('lindorm', value) AS event")
state = latest_state(frame, typed=True, table="orders", meta_prefix="_cdc_").where("NOT _cdc_deleted").drop(
    "_cdc_deleted")
stored = spark.read.format("delta").load(table)
columns = sorted(set(stored.columns) & set(state.columns))
def rows(frame):
    return sorted(json.dumps(row.asDict(), default=str, sort_keys=True) for row in frame.select(*columns).collect())
versions = [json.loads(line)["txn"]["version"] for log in sorted(Path(table, "_delta_log").glob("*.json"))
            for line in log.read_text().splitlines() if '"txn"' in line]
dead = (spark.read.format("delta").load(dead_letters).select("offset", "error").collect()
        if Path(dead_letters).exists() else [])
print(json.dumps({"expected": rows(state), "stored": rows(stored), "stored_columns": stored.columns,
                  "expected_columns": state.columns, "merged_batches": versions,
                  "dead_letters": [[row["offset"], row["error"]] for row in dead]}))
"""


def produce(bootstrap: str, topic: str, messages: list[bytes]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for message in messages:
        producer.produce(topic, value=message)
    assert producer.flush(30) == 0


def stream_command(bootstrap: str, topic: str, root: Path, *extra: str) -> list[str]:
    return [*CLI, "stream", "-f", "lindorm", "-b", bootstrap, "--topic", topic, "--table", str(root / "table"),
            "--checkpoint", str(root / "checkpoint"), "--option", 'key_columns=["id"]', "--master", "local[2]",
            "--available-now", *extra]


def check(root: Path, messages: list[bytes]) -> dict:
    lines = "".join(json.dumps(message.decode(errors="replace")) + "\n" for message in messages)
    result = subprocess.run([sys.executable, "-c", CHECK, str(root / "table"), str(root / "dead-letters")],
                            input=lines, capture_output=True, text=True, env=ENVIRONMENT, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def batch_lines(stderr: str) -> list[dict]:
    """The counts of each ``batch N: records ...`` line."""
    counted = []
    for line in stderr.splitlines():
        if line.startswith("batch "):
            head, _, rest = line.partition(": ")
            words = rest.replace("dead-lettered", "dead_lettered").replace("other tables", "other_tables").split()
            counted.append({"batch": int(head.split()[1]), **{words[i]: int(words[i + 1])
                                                              for i in range(0, len(words), 2)}})
    return counted


def test_each_batch_applies_deletes_of_rows_and_columns_as_latest_state_does(kafka_broker, tmp_path: Path) -> None:
    """Two records per micro-batch, so that changes apply to what earlier batches left: o-1's version delete, o-2's
    column delete and o-3's row delete each come a batch after the put they undo. Bad records go to the dead-letter
    table and each batch's counts add up."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    messages = [*LINDORM[:3], NOT_LINDORM[0], *LINDORM[3:], NOT_LINDORM[1]]
    produce(kafka_broker.bootstrap_servers, topic, messages)
    result = subprocess.run(stream_command(kafka_broker.bootstrap_servers, topic, tmp_path, "--max-records-per-batch",
                                           "2", "--dead-letters", str(tmp_path / "dead-letters")),
                            capture_output=True, text=True, env=ENVIRONMENT, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    batches = batch_lines(result.stderr)
    assert [batch["records"] for batch in batches] == [2] * (len(messages) // 2)
    assert all(batch["records"] == batch["changes"] + batch["dead_lettered"] + batch["other_tables"]
               + batch["empty"] for batch in batches)
    assert sum(batch["dead_lettered"] for batch in batches) == 2
    assert "applied 6 changes" in result.stderr
    checked = check(tmp_path, messages)
    assert checked["stored"] == checked["expected"]
    assert [json.loads(row)["id"] for row in checked["stored"]] == ["o-1", "o-2"]  # o-3 deleted
    o2 = json.loads(checked["stored"][1])
    assert o2["gift"] is None and o2["amount"] == "5.00"  # the column delete nulled gift; amount stayed
    assert sorted(offset for offset, _ in checked["dead_letters"]) == [3, 7]
    assert all(error.startswith("lindorm: ") for _, error in checked["dead_letters"])


def test_a_query_killed_over_and_over_applies_each_change_once(kafka_broker, tmp_path: Path) -> None:
    """SIGKILL mid-stream, twice, then a run to the end: the table equals latest_state of every message,
    each micro-batch was merged once (Delta's log holds each batch id once) and each bad record is dead-lettered
    once."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    messages = samples.lindorm_orders(400)
    bad_at = set(range(37, len(messages), 101))
    for place in sorted(bad_at):  # each at its place in the final list
        messages.insert(place, NOT_LINDORM[place % 2])
    produce(kafka_broker.bootstrap_servers, topic, messages)
    command = stream_command(kafka_broker.bootstrap_servers, topic, tmp_path, "--max-records-per-batch", "101",
                             "--dead-letters", str(tmp_path / "dead-letters"))
    chance = random.Random(32)
    kills = 0
    for _ in range(2):
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=ENVIRONMENT)
        seen = threading.Event()

        def watch(stream=process.stderr, seen=seen) -> None:
            for line in stream:
                if line.startswith("batch "):
                    seen.set()
        threading.Thread(target=watch, daemon=True).start()
        if not seen.wait(timeout=300):
            process.kill()
            pytest.fail("the query applied no batch within 300 s")
        time.sleep(chance.uniform(0.0, 3.0))  # into the next batch: its decode, its dead letters or its MERGE
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        process.wait(timeout=60)
    assert kills == 2, "the query ended before it was killed: give it more batches"
    final = subprocess.run(command, capture_output=True, text=True, env=ENVIRONMENT, timeout=900)
    assert final.returncode == 0, final.stderr[-3000:]
    assert all(batch["records"] == batch["changes"] + batch["dead_lettered"] + batch["other_tables"]
               + batch["empty"] for batch in batch_lines(final.stderr))
    checked = check(tmp_path, messages)
    assert len(checked["expected"]) > 50
    missing = sorted(set(checked["expected"]) - set(checked["stored"]))
    extra = sorted(set(checked["stored"]) - set(checked["expected"]))
    assert (missing, extra) == ([], []), f"{len(missing)} rows differ from latest_state, e.g. {missing[:2]} {extra[:2]}"
    merged = checked["merged_batches"]
    assert len(merged) == len(set(merged)), f"a batch was merged twice: {merged}"
    offsets = [offset for offset, _ in checked["dead_letters"]]
    assert sorted(offsets) == sorted(bad_at), "each bad record is dead-lettered once"


def test_sigterm_stops_the_query_once_the_batch_in_flight_is_applied(kafka_broker, tmp_path: Path) -> None:
    """A query that runs until stopped ends on SIGTERM between two micro-batches, with its summary and exit code 0:
    not with Py4J's call into the JVM interrupted (Spark unreachable, a traceback, exit 1) nor with a batch cut short
    (the JVM's errors of an interrupted MERGE)."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    produce(kafka_broker.bootstrap_servers, topic, LINDORM)
    command = [part for part in stream_command(kafka_broker.bootstrap_servers, topic, tmp_path,
                                               "--max-records-per-batch", "2") if part != "--available-now"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=ENVIRONMENT)
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("batch 0:"):
            process.send_signal(signal.SIGTERM)  # batch 1 is on its way
            break
    rest = process.stderr.read()
    assert process.wait(timeout=300) == 0, rest[-3000:]
    summary = rest.strip().splitlines()[-1]
    assert summary.startswith("stopped by SIGTERM: applied "), rest[-3000:]
    assert "Traceback" not in rest and "Exception in thread" not in rest and " ERROR " not in rest, rest[-3000:]
    applied = batch_lines("".join(lines) + rest)
    assert [batch["batch"] for batch in applied] == list(range(len(applied)))
    assert sum(batch["records"] for batch in applied) == 2 * len(applied)  # every batch it began, it finished
