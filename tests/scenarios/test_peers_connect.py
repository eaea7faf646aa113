"""Debezium's records of rows as a sink reads them (Kafka Connect's JsonConverter, ``schemas.enable=true``; the value
is the ``after`` struct of the envelope, as Debezium's ``ExtractNewRecordState`` makes it), converted with the real
executable as ``connect-json`` (issue: real peers in the tests).

Debezium names its key and row structs after the topic, ``<prefix>.<schema>.<table>.Key`` and ``.Value``, and marks
the row struct optional (it is the optional ``after`` field of its envelope): the records below are written by hand
in that shape, each one compact line as JsonConverter writes it, with a tombstone after the delete.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import Runner


def key(id_: int) -> dict[str, Any]:
    return {"schema": {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "id"}],
                       "optional": False, "name": "pg.public.orders.Key"},
            "payload": {"id": id_}}


def row(id_: int, note: str | None) -> dict[str, Any]:
    return {"schema": {"type": "struct", "fields": [
        {"type": "int32", "optional": False, "default": 0, "field": "id"},
        {"type": "string", "optional": True, "field": "note"},
        {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1, "field": "due"}],
        "optional": True, "name": "pg.public.orders.Value"},
        "payload": {"id": id_, "note": note, "due": 19782}}


RECORDS = [{"key": key(1), "value": row(1, "first")}, {"key": key(2), "value": row(2, None)},
           {"key": key(2), "value": None}]


def lines(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records).encode()


def test_debeziums_rows_come_back_with_their_struct_names(cdcformats: Runner) -> None:
    """Written back, a record keeps the names Debezium gave its key and row structs, and the row struct stays
    optional: before, connect-json wrote them unnamed and required, whatever the record said."""
    ran = cdcformats("convert", "-f", "connect-json", "-t", "connect-json", stdin=lines(RECORDS))
    assert ran.returncode == 0, ran.stderr
    assert [json.loads(line) for line in ran.stdout.splitlines()] == RECORDS
    assert "3 messages read (3 decoded, 0 failed, 0 skipped), 3 events (3 written, 0 refused)" in ran.stderr


def test_debeziums_rows_through_avro_and_back(cdcformats: Runner, tmp_path: Path) -> None:
    """Through the canonical Avro envelope and back, with --strict: nothing is lost on the way, the struct names and
    flags included."""
    (tmp_path / "in.jsonl").write_bytes(lines(RECORDS))
    there = cdcformats("convert", "--strict", "-f", "connect-json", "-t", "avro", "in.jsonl", "events.avro")
    assert there.returncode == 0, there.stderr
    back = cdcformats("convert", "--strict", "-f", "avro", "-t", "connect-json", "events.avro", "out.jsonl")
    assert back.returncode == 0, back.stderr
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == RECORDS
    assert [record["value"]["schema"]["name"] for record in written[:2]] == ["pg.public.orders.Value"] * 2


def test_the_option_names_the_structs_instead(cdcformats: Runner) -> None:
    """value_schema_name renames the row struct a record came with; the rest of its schema stays as it came."""
    ran = cdcformats("convert", "-f", "connect-json", "-t", "connect-json", "--target-option",
                     "value_schema_name=orders.Row", stdin=lines(RECORDS[:1]))
    assert ran.returncode == 0, ran.stderr
    [written] = [json.loads(line) for line in ran.stdout.splitlines()]
    assert written["key"] == RECORDS[0]["key"]
    assert written["value"]["schema"] == {**RECORDS[0]["value"]["schema"], "name": "orders.Row"}
