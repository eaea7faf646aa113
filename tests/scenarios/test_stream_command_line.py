"""``cdcformats stream`` given what a user mistypes: a broker that is not there, a format that does not exist, dead
letters without a table for them. Each is one line naming what to fix, before Spark starts (which takes seconds)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def stream(tmp_path: Path, *arguments: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    ran = subprocess.run([sys.executable, "-m", "cdcformats.cli", "stream", "--topic", "orders", "--table",
                          str(tmp_path / "table"), "--checkpoint", str(tmp_path / "checkpoint"), *arguments],
                         capture_output=True, text=True, timeout=120)
    return ran, time.monotonic() - started


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_broker_that_does_not_answer_is_one_line_after_the_connect_timeout(tmp_path: Path) -> None:
    ran, seconds = stream(tmp_path, "-f", "lindorm", "-b", f"127.0.0.1:{closed_port()}", "--available-now")
    assert ran.returncode == 1
    assert ran.stderr.startswith("Error: no answer from the Kafka brokers at 127.0.0.1:"), ran.stderr
    assert "check the bootstrap servers" in ran.stderr and len(ran.stderr.splitlines()) == 1, ran.stderr
    assert seconds < 60  # the 30 s connect timeout, and no Spark
    assert not (tmp_path / "table").exists() and not (tmp_path / "checkpoint").exists()


def test_an_unknown_format_is_named_with_the_known_ones(tmp_path: Path) -> None:
    ran, _ = stream(tmp_path, "-f", "lindrom", "-b", "127.0.0.1:9092")
    assert ran.returncode == 2 and "lindrom" in ran.stderr and "lindorm" in ran.stderr, ran.stderr
    assert len(ran.stderr.splitlines()) == 1, ran.stderr


def test_dead_letters_need_a_table_for_them(tmp_path: Path) -> None:
    ran, _ = stream(tmp_path, "-f", "lindorm", "-b", "127.0.0.1:9092", "--errors", "dead-letter")
    assert ran.returncode == 2 and "--dead-letters PATH" in ran.stderr, ran.stderr


def test_a_schema_with_a_type_that_does_not_exist_names_the_column_and_the_types(tmp_path: Path) -> None:
    ran, _ = stream(tmp_path, "-f", "lindorm", "-b", "127.0.0.1:9092", "--schema", '{"id": "strin"}')
    assert ran.returncode == 2, ran.stderr
    assert "Invalid value for --schema: column id: unknown column type 'strin'; expected one of" in ran.stderr


@pytest.mark.parametrize("option", ["--table", "--checkpoint", "--dead-letters"])
def test_a_device_or_a_file_is_no_table_and_is_left_as_it_is(tmp_path: Path, option: str) -> None:
    file = tmp_path / "orders.jsonl"
    file.write_text("kept\n")
    for path in ("/dev/null", str(file)):
        ran = subprocess.run([sys.executable, "-m", "cdcformats.cli", "stream", "-f", "lindorm", "-b",
                              "127.0.0.1:9092", "--topic", "orders", "--table", str(tmp_path / "table"),
                              "--checkpoint", str(tmp_path / "checkpoint"), option, path],
                             capture_output=True, text=True, timeout=60)
        assert ran.returncode == 2, ran.stderr
        assert f"Invalid value for {option}: {path} is not a directory" in ran.stderr
    assert file.read_text() == "kept\n" and Path("/dev/null").is_char_device()
