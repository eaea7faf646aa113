"""Re-records what Alibaba Canal emits from a real MariaDB, into ``tests/fixtures/peers/mariadb/canal.jsonl``.

    make peers && .venv/bin/python -m tests.peers.record_canal [--into DIR]

A MariaDB of its own (``mariadb.py``, binlog in row format, full row images) runs a workload of every common MySQL
column type, nulls and extreme values, inserts, updates and deletes (one row and several per statement, and several
statements in one transaction), columns added and dropped, a table without a primary key, and DDL: CREATE, ALTER,
TRUNCATE, RENAME, CREATE INDEX, DROP. Canal 1.1.7's embedded server (``canal/java/RecordCanal.java``) reads the binlog
from where the workload starts, and each flat message that canal.deployer's Kafka producer would write
(``canal.mq.flatMessage=true``) is one line of the recording, exactly as fastjson2 wrote it.

MariaDB logs each row event's statement too (``binlog_annotate_row_events``, on by default): Canal emits it as a
message of type QUERY before the rows, which the recording keeps, as a Kafka topic would. The recording is exact,
clock readings and batch ids included; ``comparable`` blanks those so that two recordings can be compared.
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
from pathlib import Path
from typing import Any

from tests.peers import mariadb

FIXTURE = Path(__file__).parents[1] / "fixtures" / "peers" / "mariadb" / "canal.jsonl"
DATABASE = "shop"
WAIT_SECONDS = 120

# One step a client run, in order; each is a transaction of its own unless it says otherwise.
WORKLOAD = [
    f"CREATE DATABASE {DATABASE}",
    f"""CREATE TABLE {DATABASE}.types (
        id int AUTO_INCREMENT PRIMARY KEY,
        c_tinyint tinyint, c_tinyint_u tinyint unsigned, c_bool boolean,
        c_smallint smallint, c_smallint_u smallint unsigned,
        c_mediumint mediumint, c_mediumint_u mediumint unsigned,
        c_int int, c_int_u int unsigned,
        c_bigint bigint, c_bigint_u bigint unsigned,
        c_decimal decimal(10, 2), c_decimal_wide decimal(38, 12),
        c_float float, c_double double,
        c_bit bit(10),
        c_char char(4), c_varchar varchar(40), c_text text,
        c_blob blob, c_varbinary varbinary(8), c_binary binary(4),
        c_json json,
        c_enum enum('sad', 'ok', 'happy'), c_set set('a', 'b', 'c'),
        c_date date, c_time time, c_time_3 time(3), c_datetime datetime, c_datetime_6 datetime(6),
        c_timestamp timestamp NULL, c_timestamp_3 timestamp(3) NULL, c_year year
    ) DEFAULT CHARSET = utf8mb4""",
    # Typical values, every column null, then the extremes of each type.
    f"""INSERT INTO {DATABASE}.types (c_tinyint, c_tinyint_u, c_bool, c_smallint, c_smallint_u, c_mediumint,
        c_mediumint_u, c_int, c_int_u, c_bigint, c_bigint_u, c_decimal, c_decimal_wide, c_float, c_double, c_bit,
        c_char, c_varchar, c_text, c_blob, c_varbinary, c_binary, c_json, c_enum, c_set, c_date, c_time, c_time_3,
        c_datetime, c_datetime_6, c_timestamp, c_timestamp_3, c_year)
    VALUES (1, 2, true, 3, 4, 5, 6, 7, 8, 9, 10, 12345.67, 3.141592653589, 1.5, 2.25, b'101',
        'ab', 'varchar', 'plain text', x'00ff10', x'cafe', x'01', '{{"a": [1, 2.5, null]}}', 'happy', 'a,c',
        '2024-02-29', '13:45:30', '13:45:30.123', '2024-02-29 13:45:30', '2024-02-29 13:45:30.123456',
        '2024-02-29 13:45:30', '2024-02-29 13:45:30.123', 2024)""",
    f"INSERT INTO {DATABASE}.types () VALUES ()",
    f"""INSERT INTO {DATABASE}.types (c_tinyint, c_tinyint_u, c_bool, c_smallint, c_smallint_u, c_mediumint,
        c_mediumint_u, c_int, c_int_u, c_bigint, c_bigint_u, c_decimal, c_decimal_wide, c_float, c_double, c_bit,
        c_char, c_varchar, c_text, c_blob, c_varbinary, c_binary, c_json, c_enum, c_set, c_date, c_time, c_time_3,
        c_datetime, c_datetime_6, c_timestamp, c_timestamp_3, c_year)
    VALUES (-128, 255, false, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,
        18446744073709551615, -99999999.99, 0.000000000001, -3.4e38, 1.7e308, b'1111111111',
        '', 'quote " backslash \\\\ newline \\n tab \\t', 'unicode é ☃ 😀', x'', x'00', x'00000000', '[]', 'sad',
        '', '1000-01-01', '-838:59:59', '838:59:59.999', '1000-01-01 00:00:00', '9999-12-31 23:59:59.999999',
        '1970-01-01 00:00:01', '2038-01-19 03:14:07.999', 1901),
        (0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.5, 0, 0, b'0', '    ', NULL, '', NULL, NULL, NULL, 'null',
        'ok', 'a,b,c', '0000-00-00', '00:00:00', NULL, '0000-00-00 00:00:00', NULL, NULL, NULL, 0)""",
    # Updates: several columns, one to null; then several rows in one statement.
    f"UPDATE {DATABASE}.types SET c_varchar = 'changed', c_int = NULL, c_json = '{{\"b\": true}}' WHERE id = 1",
    f"UPDATE {DATABASE}.types SET c_text = 'both', c_year = 2000 WHERE id IN (2, 3)",
    # Rows that change different columns: Canal's old entries list the columns changed in any row of the message.
    f"UPDATE {DATABASE}.types SET c_int = IF(id = 2, 1, c_int), c_smallint = IF(id = 3, 1, c_smallint) "
    "WHERE id IN (2, 3)",
    f"DELETE FROM {DATABASE}.types WHERE id = 4",
    # Several statements in one transaction, one of them a multi-row insert.
    f"""BEGIN;
        CREATE TABLE {DATABASE}.orders (region char(2), id int, note varchar(20), PRIMARY KEY (region, id));
        COMMIT;
        BEGIN;
        INSERT INTO {DATABASE}.orders VALUES ('eu', 1, 'first'), ('us', 2, 'second'), ('ap', 3, NULL);
        UPDATE {DATABASE}.orders SET note = 'first!' WHERE region = 'eu';
        UPDATE {DATABASE}.orders SET id = 9 WHERE region = 'us';
        DELETE FROM {DATABASE}.orders WHERE region = 'ap';
        COMMIT""",
    # A table without a primary key.
    f"CREATE TABLE {DATABASE}.keyless (name varchar(20), qty int)",
    f"INSERT INTO {DATABASE}.keyless VALUES ('no key', 1), (NULL, NULL)",
    f"UPDATE {DATABASE}.keyless SET qty = 2 WHERE name = 'no key'",
    f"DELETE FROM {DATABASE}.keyless WHERE name IS NULL",
    # Columns added and dropped mid-stream.
    f"ALTER TABLE {DATABASE}.types ADD COLUMN c_added varchar(20) DEFAULT 'default'",
    f"INSERT INTO {DATABASE}.types (c_int, c_added) VALUES (70, 'added')",
    f"UPDATE {DATABASE}.types SET c_added = NULL WHERE id = 2",
    f"ALTER TABLE {DATABASE}.types DROP COLUMN c_char",
    f"INSERT INTO {DATABASE}.types (c_int, c_text) VALUES (80, 'after the drop')",
    # More DDL.
    f"CREATE INDEX by_note ON {DATABASE}.orders (note)",
    f"TRUNCATE TABLE {DATABASE}.keyless",
    f"RENAME TABLE {DATABASE}.keyless TO {DATABASE}.renamed",
    f"DROP TABLE {DATABASE}.renamed",
]

# The last step: a row of its own, whose message says that everything before it has come.
DONE = f"CREATE TABLE {DATABASE}.done (id int PRIMARY KEY); INSERT INTO {DATABASE}.done VALUES (1)"


# Where `make peers` puts Canal's jars and the compiled harness (outside git).
HARNESS = Path(os.environ.get("CDCFORMATS_PEERS_CANAL") or Path.home() / ".cache" / "cdcformats" / "peers-canal")


def is_built() -> bool:
    return (HARNESS / "classes" / "RecordCanal.class").exists()


def recorded() -> list[str]:
    """The committed recording: each message as Canal wrote it, in order."""
    return FIXTURE.read_text(encoding="utf-8").splitlines()


def _is_done(message: dict[str, Any]) -> bool:
    return message.get("table") == "done" and message.get("type") == "INSERT"


def record(server: mariadb.Server, workdir: Path) -> list[str]:
    """Canal's messages of the workload, from its first step to the ``done`` row, each as Canal wrote it."""
    if not is_built():
        raise SystemExit(f"Canal's peer harness is not built in {HARNESS}: run `make peers`")
    journal, position = server.binlog_position()
    timestamp = int(server.run("SELECT UNIX_TIMESTAMP()")) * 1000  # Canal's table-meta history starts there
    settings = {"host": "127.0.0.1", "port": server.port, "user": mariadb.USER, "password": mariadb.PASSWORD,
                "journal": journal, "position": position, "timestamp": timestamp, "filter": ".*\\\\..*"}
    properties = workdir / "canal.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()), encoding="utf-8")
    with (workdir / "canal.log").open("w", encoding="utf-8") as log:
        # Canal writes a TIMESTAMP column in the JVM's time zone: UTC, as the server's.
        process = subprocess.Popen(
            ["java", "-Duser.timezone=UTC", "-cp", f"{HARNESS / 'lib'}/*:{HARNESS / 'classes'}", "RecordCanal",
             str(properties)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, encoding="utf-8",
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        messages: list[str] = []
        try:
            for step in [*WORKLOAD, DONE]:
                server.run(step)
            deadline = time.monotonic() + WAIT_SECONDS
            while not (messages and _is_done(json.loads(messages[-1]))):
                if time.monotonic() > deadline:
                    raise SystemExit(f"no message of the last step within {WAIT_SECONDS} s; see {log.name}")
                try:
                    line = lines.get(timeout=1)
                except queue.Empty:
                    continue
                if line is None:
                    raise SystemExit(f"Canal's server ended before the last step; see {log.name}")
                messages.append(line.rstrip("\n"))
        finally:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=WAIT_SECONDS)
    return messages


def record_all() -> list[str]:
    with mariadb.running() as server, tempfile.TemporaryDirectory(prefix="cdcformats-canal-") as workdir:
        return record(server, Path(workdir))


# What differs from one recording to the next: when the statement ran (es), when Canal built the message (ts), and
# the batch that happened to hold it (id).
VOLATILE = ("es", "ts", "id")


def comparable(message: str) -> dict[str, Any]:
    """The message with its clock readings and batch id blanked, for comparing two recordings."""
    document = json.loads(message)
    for field in VOLATILE:
        if field in document:
            document[field] = "…"
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--into", type=Path, default=FIXTURE.parent,
                        help=f"the folder to write canal.jsonl to (default {FIXTURE.parent})")
    into = parser.parse_args().into
    into.mkdir(parents=True, exist_ok=True)
    messages = record_all()
    path = into / FIXTURE.name
    path.write_text("".join(message + "\n" for message in messages), encoding="utf-8")
    print(f"{path}: {len(messages)} messages", file=sys.stderr)


if __name__ == "__main__":
    main()
