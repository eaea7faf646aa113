"""The Canal recording is what Canal emits today: record again, on a MariaDB of this run, and compare with the
committed one (tests/fixtures/peers/mariadb/canal.jsonl), clock readings and batch ids blanked.

It needs what ``make peers`` sets up (``make test`` does): Canal's jars and the harness, and MariaDB's server. Run by
hand without them, it is skipped; under ``make``, which says where the harnesses are, it fails."""

from __future__ import annotations

from pathlib import Path

from tests.peers import mariadb, record_canal
from tests.peers.rerecord import record_into


def _ready() -> str | None:
    """Why the recording cannot run here, or None."""
    if not record_canal.is_built():
        return f"Canal's peer harness is not built in {record_canal.HARNESS} (make peers)"
    try:
        mariadb.server_program()
    except mariadb.NoMariaDB as missing:
        return str(missing)
    return None


def test_a_new_recording_is_the_committed_one(tmp_path: Path) -> None:
    record_into("tests.peers.record_canal", tmp_path, _ready())
    fresh = (tmp_path / record_canal.FIXTURE.name).read_text("utf-8").splitlines()
    assert [record_canal.comparable(message) for message in fresh] == \
        [record_canal.comparable(message) for message in record_canal.recorded()]
