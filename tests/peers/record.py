"""Re-records what Debezium emits from a real PostgreSQL, into ``tests/fixtures/peers/postgres``.

    make peers && .venv/bin/python -m tests.peers.record [--into DIR]

A PostgreSQL of its own (``postgres.py``) gets tables holding every common column type, and Debezium's embedded
engine with its PostgreSQL connector (``java/RecordDebezium.java``, pgoutput) captures them: a snapshot, then a
streamed workload of inserts, updates and deletes under both replica identities, an unchanged TOAST value, a key
change, TRUNCATE and columns added and dropped mid-stream. That is the ``precise`` capture
(``decimal.handling.mode=precise``). The ``double`` and ``string`` captures snapshot the same tables afterwards under
the other two decimal modes.

Each capture is one JSON line per record: ``topic``, and ``key`` and ``value`` as Kafka Connect's JsonConverter wrote
them with schemas, ``key_plain`` and ``value_plain`` without (null for a tombstone's value). The recording is exact,
clock readings and log positions included; ``comparable`` blanks those so that two recordings can be compared.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.peers import postgres

FIXTURES = Path(__file__).parents[1] / "fixtures" / "peers" / "postgres"
TOPIC_PREFIX = "pg"
WAIT_SECONDS = 120

# Before the engine starts: the tables and the rows its snapshot reads.
SNAPSHOT = r"""
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');

CREATE TABLE types (
    id serial PRIMARY KEY,
    c_smallint smallint,
    c_integer integer,
    c_bigint bigint,
    c_numeric_10_2 numeric(10, 2),
    c_numeric numeric,
    c_real real,
    c_double double precision,
    c_boolean boolean,
    c_text text,
    c_varchar varchar(20),
    c_char char(4),
    c_bytea bytea,
    c_uuid uuid,
    c_json json,
    c_jsonb jsonb,
    c_int_array integer[],
    c_text_array text[],
    c_date date,
    c_time time,
    c_time_3 time(3),
    c_timestamp timestamp,
    c_timestamp_3 timestamp(3),
    c_timestamptz timestamptz,
    c_interval interval,
    c_mood mood
);

INSERT INTO types (c_smallint, c_integer, c_bigint, c_numeric_10_2, c_numeric, c_real, c_double, c_boolean, c_text,
                   c_varchar, c_char, c_bytea, c_uuid, c_json, c_jsonb, c_int_array, c_text_array, c_date, c_time,
                   c_time_3, c_timestamp, c_timestamp_3, c_timestamptz, c_interval, c_mood)
VALUES (1, 2, 3, 12345.67, 3.14159265358979323846, 1.5, 2.25, true, 'plain text', 'varchar', 'ab', '\x00ff10'::bytea,
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2.5, null]}', '{"b": {"c": true}}', '{1,2,3}',
        '{"x","y z"}', '2024-02-29', '13:45:30.123456', '13:45:30.123', '2024-02-29 13:45:30.123456',
        '2024-02-29 13:45:30.123', '2024-02-29 13:45:30.123456+02', '1 year 2 mons 3 days 04:05:06.789', 'happy'),
       (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       (-32768, -2147483648, -9223372036854775808, -99999999.99, -0.000000000000000000001, -3.4e38, 1.7e308, false,
        E'quote " backslash \\ newline \n tab \t unicode é ☃ 😀', '', '    ', ''::bytea,
        '00000000-0000-0000-0000-000000000000', '[]', '{}', '{}', '{NULL,""}', '0001-01-01', '00:00:00',
        '23:59:59.999', '1970-01-01 00:00:00', '9999-12-31 23:59:59.999', '1969-12-31 23:59:59.999999+00',
        '-1 days -00:00:01', 'sad'),
       (32767, 2147483647, 9223372036854775807, 0, 'NaN', 'NaN', 'Infinity', NULL, 'special floats', NULL, NULL, NULL,
        NULL, 'null', '"a string"', NULL, NULL, '2038-01-19', '24:00:00', NULL, '2262-04-11 23:47:16.854775',
        NULL, 'infinity', '0', 'ok');

CREATE TABLE identity_full (id integer PRIMARY KEY, name text NOT NULL, qty integer);
ALTER TABLE identity_full REPLICA IDENTITY FULL;
INSERT INTO identity_full VALUES (1, 'one', 10), (2, 'two', NULL);

CREATE TABLE toasted (id integer PRIMARY KEY, big text, note text);
ALTER TABLE toasted ALTER COLUMN big SET STORAGE EXTERNAL;

CREATE TABLE composite (region text, id integer, v text, PRIMARY KEY (region, id));
INSERT INTO composite VALUES ('eu', 1, 'first');

CREATE TABLE keyless (name text, qty integer);
ALTER TABLE keyless REPLICA IDENTITY FULL;

CREATE TABLE done (id integer PRIMARY KEY);
"""

# After the snapshot: one transaction per step, in order.
STREAMING = [
    # Inserts, then updates under REPLICA IDENTITY DEFAULT (no before image) and FULL (the whole row before).
    "INSERT INTO types (c_integer, c_text, c_numeric_10_2, c_mood) VALUES (42, 'streamed', 1.05, 'ok')",
    "UPDATE types SET c_text = 'changed', c_integer = NULL WHERE id = 1",
    "UPDATE identity_full SET qty = 11 WHERE id = 1",
    "UPDATE identity_full SET name = 'zwei', qty = 2 WHERE id = 2",
    # A TOAST value the UPDATE leaves alone is not in the WAL: Debezium writes its placeholder.
    "INSERT INTO toasted SELECT 1, string_agg(md5(i::text), '') FROM generate_series(1, 400) AS i",
    "UPDATE toasted SET note = 'only the note changed' WHERE id = 1",
    # Deletes: a key only before image and a tombstone, then a full before image and a tombstone.
    "DELETE FROM types WHERE id = 3",
    "DELETE FROM identity_full WHERE id = 1",
    # Several changes in one transaction, and a key changed (a delete, its tombstone and a create).
    "BEGIN; INSERT INTO composite VALUES ('us', 2, 'second'); UPDATE composite SET v = 'first!' "
    "WHERE region = 'eu' AND id = 1; COMMIT",
    "UPDATE composite SET id = 9 WHERE region = 'us' AND id = 2",
    # A table without a primary key: records without a key.
    "INSERT INTO keyless VALUES ('no key', 1), (NULL, NULL)",
    "UPDATE keyless SET qty = 2 WHERE name = 'no key'",
    "DELETE FROM keyless WHERE name IS NULL",
    # Columns added and dropped mid-stream.
    "ALTER TABLE types ADD COLUMN c_added text DEFAULT 'default'",
    "INSERT INTO types (c_integer, c_added) VALUES (7, 'added')",
    "UPDATE types SET c_added = NULL WHERE id = 2",
    "ALTER TABLE types DROP COLUMN c_char",
    "INSERT INTO types (c_integer, c_text) VALUES (8, 'after the drop')",
    "TRUNCATE identity_full",
]

CONNECTOR = {
    "name": "cdcformats-peers",
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "offset.storage": "org.apache.kafka.connect.storage.MemoryOffsetBackingStore",
    "offset.flush.interval.ms": "0",
    "topic.prefix": TOPIC_PREFIX,
    "plugin.name": "pgoutput",
    "snapshot.mode": "initial",
    # TRUNCATE is skipped unless asked for.
    "skipped.operations": "none",
}

CAPTURES = {
    "precise": {"decimal.handling.mode": "precise"},
    "double": {"decimal.handling.mode": "double"},
    "string": {"decimal.handling.mode": "string"},
    # Control messages: a heartbeat, and transaction metadata (a ``transaction`` block in every change, and the
    # BEGIN and END records of each transaction on a topic of their own). Streaming only, of one table.
    "transactions": {"decimal.handling.mode": "precise", "snapshot.mode": "no_data",
                     "provide.transaction.metadata": "true", "heartbeat.interval.ms": "200",
                     "table.include.list": "public.composite,public.done"},
}

# The changes of the ``transactions`` capture.
TRANSACTIONS = [
    "BEGIN; INSERT INTO composite VALUES ('ap', 3, 'third'); UPDATE composite SET v = NULL WHERE region = 'ap'; "
    "COMMIT",
    "DELETE FROM composite WHERE region = 'ap'",
]


HARNESS = Path(os.environ.get("CDCFORMATS_PEERS") or Path.home() / ".cache" / "cdcformats" / "peers")


def is_built() -> bool:
    return (HARNESS / "classes" / "RecordDebezium.class").exists()


class Engine:
    """The harness running Debezium's engine, its records read as they come."""

    def __init__(self, settings: dict[str, str], workdir: Path) -> None:
        if not is_built():
            raise SystemExit(f"the peer harness is not built in {HARNESS}: run `make peers`")
        properties = workdir / f"{settings['slot.name']}.properties"
        properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()), encoding="utf-8")
        self.log = (workdir / f"{settings['slot.name']}.log").open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            ["java", "-cp", f"{HARNESS / 'lib'}/*:{HARNESS / 'classes'}",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "RecordDebezium", str(properties)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.records: list[dict[str, Any]] = []
        self.heartbeats = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def until(self, arrived: Any, what: str) -> None:
        """Take records until one satisfies ``arrived``."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                raise SystemExit(f"Debezium's engine ended before {what}; see {self.log.name}")
            record = json.loads(line)
            if "error" in record:
                raise SystemExit(f"Debezium's engine failed: {record['error']}")
            if record["topic"].startswith("__debezium-heartbeat") and self.heartbeats:
                continue  # their number depends on timing: the first one stands for them all
            self.heartbeats += record["topic"].startswith("__debezium-heartbeat")
            self.records.append(record)
            if arrived(record):
                return
        raise SystemExit(f"no {what} within {WAIT_SECONDS} s; see {self.log.name}")

    def stop(self) -> list[dict[str, Any]]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT_SECONDS)
        self.log.close()
        return self.records


def _source(record: dict[str, Any]) -> dict[str, Any]:
    value = record["value_plain"]
    return (json.loads(value).get("source") or {}) if value else {}


def capture(server: postgres.Server, name: str, workdir: Path, steps: list[str]) -> list[dict[str, Any]]:
    """Run a capture: wait for the end of its snapshot (or, without one, for its first heartbeat, which says that it
    streams), run ``steps``, and take records until the last one's marker in ``done`` has come."""
    settings = {**CONNECTOR, **server.jdbc(), **CAPTURES[name], "slot.name": f"cdcformats_{name}"}
    engine = Engine(settings, workdir)
    try:
        if settings["snapshot.mode"] == "no_data":
            engine.until(lambda record: record["topic"].startswith("__debezium-heartbeat"), "a heartbeat")
        else:
            engine.until(lambda record: _source(record).get("snapshot") == "last", "the end of the snapshot")
        if steps:
            for step in steps:
                server.run(step)
            marker = len(steps)
            server.run(f"INSERT INTO done VALUES ({marker})")
            engine.until(lambda record: record["topic"] == f"{TOPIC_PREFIX}.public.done"
                         and json.loads(record["key_plain"]) == {"id": marker}, "the last change")
    finally:
        records = engine.stop()
    server.run(f"SELECT pg_drop_replication_slot('cdcformats_{name}')")
    return records


def record_all() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with postgres.running() as server, tempfile.TemporaryDirectory(prefix="cdcformats-debezium-") as workdir:
        server.run(SNAPSHOT)
        steps = {"precise": STREAMING, "transactions": TRANSACTIONS}
        for name in CAPTURES:
            yield name, capture(server, name, Path(workdir), steps.get(name, []))


VOLATILE_SOURCE = ("ts_ms", "ts_us", "ts_ns", "txId", "lsn", "xmin", "sequence")
VOLATILE_ENVELOPE = ("ts_ms", "ts_us", "ts_ns")
VOLATILE_TRANSACTION = ("id",)  # the transaction's id and its end's log position


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its clock readings and log positions blanked, for comparing two recordings."""

    def blank(text: str | None, payload: bool) -> Any:
        if text is None:
            return None
        document = json.loads(text)
        envelope = document.get("payload") if payload else document
        if isinstance(envelope, dict):
            for field in VOLATILE_ENVELOPE:
                if field in envelope:
                    envelope[field] = "…"
            for block, fields in (("source", VOLATILE_SOURCE), ("transaction", VOLATILE_TRANSACTION)):
                if isinstance(envelope.get(block), dict):
                    for field in fields:
                        if field in envelope[block]:
                            envelope[block][field] = "…"
            if record["topic"].endswith(".transaction") and "id" in envelope:  # a BEGIN or END record
                envelope["id"] = "…"
        return document

    return {"topic": record["topic"], "key": blank(record["key"], True), "value": blank(record["value"], True),
            "key_plain": blank(record["key_plain"], False), "value_plain": blank(record["value_plain"], False)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--into", type=Path, default=FIXTURES, help=f"the folder to write to (default {FIXTURES})")
    into = parser.parse_args().into
    into.mkdir(parents=True, exist_ok=True)
    for name, records in record_all():
        path = into / f"{name}.jsonl"
        path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records),
                        encoding="utf-8")
        print(f"{path}: {len(records)} records", file=sys.stderr)


if __name__ == "__main__":
    main()
