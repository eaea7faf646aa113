"""The peer recordings are what Debezium emits today: record again, on a PostgreSQL of this run, and compare with
the committed ones (tests/fixtures/peers), clock readings and log positions blanked.

It needs what ``make peers`` sets up (``make test`` does): the harness and its jars, and PostgreSQL's server
programs. Run by hand without them, it is skipped; under ``make``, which says where the harness is, it fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers import postgres, record, recorded

ROOT = Path(__file__).parents[2]
HARNESS = Path(os.environ.get("CDCFORMATS_PEERS") or Path.home() / ".cache" / "cdcformats" / "peers")


def _ready() -> str | None:
    """Why the recording cannot run here, or None."""
    if not (HARNESS / "classes" / "RecordDebezium.class").exists():
        return f"the peer harness is not built in {HARNESS} (make peers)"
    try:
        postgres.server_programs()
    except postgres.NoPostgres as missing:
        return str(missing)
    return None


def test_a_new_recording_is_the_committed_one(tmp_path: Path) -> None:
    missing = _ready()
    if missing:
        if "CDCFORMATS_PEERS" in os.environ:
            pytest.fail(missing)
        pytest.skip(missing)
    done = subprocess.run([sys.executable, "-m", "tests.peers.record", "--into", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for capture in recorded.captures():
        fresh = [json.loads(line) for line in (tmp_path / f"{capture}.jsonl").read_text("utf-8").splitlines()]
        committed = [json.loads(line)
                     for line in (recorded.POSTGRES / f"{capture}.jsonl").read_text("utf-8").splitlines()]
        assert [record.comparable(item) for item in fresh] == [record.comparable(item) for item in committed], \
            capture
