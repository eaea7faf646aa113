"""The peer recordings are what Debezium emits today: record again, on a PostgreSQL of this run, and compare with
the committed ones (tests/fixtures/peers), clock readings and log positions blanked.

It needs what ``make peers`` sets up (``make test`` does): the harness and its jars, and PostgreSQL's server
programs. Run by hand without them, it is skipped; under ``make``, which says where the harness is, it fails."""

from __future__ import annotations

import json
from pathlib import Path

from tests.peers import postgres, record, recorded
from tests.peers.rerecord import record_into


def _ready() -> str | None:
    """Why the recording cannot run here, or None."""
    if not record.is_built():
        return f"the peer harness is not built in {record.HARNESS} (make peers)"
    try:
        postgres.server_programs()
    except postgres.NoPostgres as missing:
        return str(missing)
    return None


def test_a_new_recording_is_the_committed_one(tmp_path: Path) -> None:
    record_into("tests.peers.record", tmp_path, _ready())
    for capture in recorded.captures():
        fresh = [json.loads(line) for line in (tmp_path / f"{capture}.jsonl").read_text("utf-8").splitlines()]
        committed = [json.loads(line)
                     for line in (recorded.POSTGRES / f"{capture}.jsonl").read_text("utf-8").splitlines()]
        assert [record.comparable(item) for item in fresh] == [record.comparable(item) for item in committed], \
            capture
