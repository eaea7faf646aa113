"""OUT and the dead-letter file as a user names them: devices, FIFOs, links, the process's own stdout, one file given
twice, and runs ended by a signal or a bad message. Nothing may be destroyed, and the summary never counts a message
as written unless it is in a file that stays."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from .conftest import CDCFORMATS, Runner, jsonl

# Lindorm Streams messages as Lindorm writes them: two Puts, one with a null VARCHAR, and a Delete.
ORDERS = jsonl(
    '{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":['
    '{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"DECIMAL","name":"amount","value":"19.90"},'
    '{"type":"VARCHAR","name":"note","value":null}]}',
    '{"op":"Put","table":"orders","ts":"1700000000500","keyOnly":"false","data":['
    '{"type":"VARCHAR","name":"id","value":"o-2"},{"type":"DECIMAL","name":"amount","value":"5.00"}]}',
    '{"op":"Delete","table":"orders","ts":"1700000001000","keyOnly":"true","data":['
    '{"type":"VARCHAR","name":"id","value":"o-1"}]}',
)
KEYED = ["--option", 'key_columns=["id"]']


def lindorm_to_debezium(cdcformats: Runner, out: str, *more: str) -> object:
    return cdcformats("convert", "--from", "lindorm", "--to", "debezium-json", "orders.jsonl", out, *KEYED, *more)


@pytest.fixture
def orders(tmp_path: Path) -> Path:
    path = tmp_path / "orders.jsonl"
    path.write_bytes(ORDERS)
    return path


def test_a_link_to_a_file_stays_a_link_and_its_target_gets_the_output(cdcformats: Runner, tmp_path: Path,
                                                                       orders: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "target.jsonl"
    target.write_text("yesterday\n")
    target.chmod(0o640)
    (tmp_path / "out.jsonl").symlink_to(target)
    ran = lindorm_to_debezium(cdcformats, "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "out.jsonl").is_symlink()
    assert [json.loads(line)["source"]["ts_ms"] for line in target.read_text().splitlines()] == [
        1700000000000, 1700000000500, 1700000001000]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(path.name for path in (tmp_path / "real").iterdir()) == ["target.jsonl"]


def test_a_link_to_a_file_not_there_yet_creates_the_target(cdcformats: Runner, tmp_path: Path, orders: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "out.jsonl").symlink_to(tmp_path / "real" / "new.jsonl")
    ran = lindorm_to_debezium(cdcformats, "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "out.jsonl").is_symlink()
    assert len((tmp_path / "real" / "new.jsonl").read_text().splitlines()) == 3


def test_a_fifo_is_written_into(cdcformats: Runner, tmp_path: Path, orders: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()))
    reader.start()
    ran = lindorm_to_debezium(cdcformats, "out.fifo")
    reader.join(timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert len(read[0].splitlines()) == 3


def test_a_link_to_the_process_stdout_writes_to_stdout(cdcformats: Runner, tmp_path: Path, orders: Path) -> None:
    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")  # what /dev/stdout is
    ran = lindorm_to_debezium(cdcformats, "stdout")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "stdout").is_symlink() and os.readlink(tmp_path / "stdout") == "/proc/self/fd/1"
    assert len(ran.stdout.splitlines()) == 3


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_character_device_is_written_into_and_stays_a_device(cdcformats: Runner, tmp_path: Path,
                                                               orders: Path) -> None:
    null, full = tmp_path / "null", tmp_path / "full"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # what /dev/full is: every write fails with ENOSPC
    ran = lindorm_to_debezium(cdcformats, "null", "--dead-letter", "null")  # one sink named twice loses nothing
    assert ran.returncode == 0, ran.stderr
    assert stat.S_ISCHR(null.lstat().st_mode)
    failed = lindorm_to_debezium(cdcformats, "full")
    assert failed.returncode == 1
    assert failed.error_line().startswith("Error: ") and "No space left on device" in failed.error_line()
    assert stat.S_ISCHR(full.lstat().st_mode)


@pytest.mark.parametrize("spelling", ["o.jsonl", "./o.jsonl", "link.jsonl"])
def test_out_and_the_dead_letter_file_must_differ(cdcformats: Runner, tmp_path: Path, orders: Path,
                                                  spelling: str) -> None:
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "o.jsonl")
    ran = lindorm_to_debezium(cdcformats, "o.jsonl", "--dead-letter", spelling)
    assert ran.returncode == 2
    assert ran.error_line() == f"Error: --dead-letter {spelling} is OUT: give another file"
    assert not (tmp_path / "o.jsonl").exists()


def test_dead_letters_and_out_both_stay(cdcformats: Runner, tmp_path: Path, orders: Path) -> None:
    orders.write_bytes(ORDERS + b'{"op":"Nope","table":"orders","data":[]}\n')
    ran = lindorm_to_debezium(cdcformats, "o.jsonl", "--dead-letter", "bad.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "4 messages read (3 decoded, 1 failed, 0 skipped)" in ran.stderr
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 3
    [letter] = (tmp_path / "bad.jsonl").read_text().splitlines()
    assert json.loads(letter)["position"] == 4


def test_a_failed_run_counts_nothing_as_written(cdcformats: Runner, tmp_path: Path, orders: Path) -> None:
    orders.write_bytes(ORDERS + b'{"op":"Nope","table":"orders","data":[]}\n')
    (tmp_path / "o.jsonl").write_text("yesterday\n")
    ran = lindorm_to_debezium(cdcformats, "o.jsonl")
    assert ran.returncode == 1
    assert "3 events (3 converted, 0 refused), stopped before the end: nothing written, o.jsonl is as it was" \
        in ran.stderr
    assert "messages written" not in ran.stderr
    assert (tmp_path / "o.jsonl").read_text() == "yesterday\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["o.jsonl", "orders.jsonl"]


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("signal_number", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                                          (signal.SIGHUP, 129)])
def test_a_signal_leaves_no_partial_file(tmp_path: Path, orders: Path, signal_number: int, exit_code: int) -> None:
    lines = ORDERS.splitlines(keepends=True)
    orders.write_bytes(b"".join(lines[:2]) * 200_000)  # a run of several seconds
    out = tmp_path / "out.avro"
    out.write_bytes(b"yesterday")
    # As a terminal starts it: a command that a script starts in the background inherits SIGINT ignored (POSIX), and
    # so would this one when the tests themselves run in the background.
    converting = subprocess.Popen([CDCFORMATS, "convert", "--from", "lindorm", "--to", "avro", "orders.jsonl",
                                   "out.avro", *KEYED], cwd=tmp_path, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible)
    deadline = time.monotonic() + 60
    while not any(path.name.endswith(".partial") for path in tmp_path.iterdir()):  # mid-run: writing its output
        assert converting.poll() is None and time.monotonic() < deadline, "the run ended before it was signalled"
        time.sleep(0.05)
    converting.send_signal(signal_number)
    _, stderr = converting.communicate(timeout=60)
    assert converting.returncode == exit_code, stderr
    assert "Traceback" not in stderr.decode()
    assert f"Error: stopped by {signal.Signals(signal_number).name}" in stderr.decode()
    assert "nothing written, out.avro is as it was" in stderr.decode()
    assert out.read_bytes() == b"yesterday"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["orders.jsonl", "out.avro"]


def test_a_reader_that_goes_away_ends_the_run_as_sigpipe_would(tmp_path: Path, orders: Path) -> None:
    orders.write_bytes(ORDERS * 20_000)
    pipeline = subprocess.run(f"'{CDCFORMATS}' convert --from lindorm --to debezium-json orders.jsonl "
                              "--option 'key_columns=[\"id\"]' | head -1; exit ${PIPESTATUS[0]}", shell=True,
                              executable="/bin/bash", cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert pipeline.returncode == 128 + signal.SIGPIPE, pipeline.stderr
    assert len(pipeline.stdout.splitlines()) == 1
    assert "Traceback" not in pipeline.stderr and "Error" not in pipeline.stderr
