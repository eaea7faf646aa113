"""The ``cdcformats`` executable as a user runs it: pipes and a terminal, files a failed run must not damage, one-line
errors with the exit codes click uses, dead letters replayed (the README's examples: test_readme.py)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import fastavro
import pytest

import cdcformats.examples
from tests.scenarios.conftest import read_terminal

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
CDCFORMATS = str(BIN / "cdcformats")
EXAMPLES = Path(cdcformats.examples.__path__[0])
ARCION_OPTIONS = ["--option", 'key_columns=["r_regionkey"]', "--option", "table=tpch.region"]
LINDORM_LINES = (EXAMPLES / "lindorm.jsonl").read_bytes().splitlines()


def run(*arguments: str, cwd: Path, **settings: object) -> subprocess.CompletedProcess[str]:
    settings.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([CDCFORMATS, *arguments], cwd=cwd, capture_output="stdout" not in settings, text=True,
                          timeout=60, **settings)  # type: ignore[call-overload]


def one_line_error(result: subprocess.CompletedProcess[str], exit_code: int) -> str:
    """The error of a run that failed as a user should see it: the exit code, one "Error:" line, no traceback."""
    assert result.returncode == exit_code, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_pipe_in_and_out_with_stderr_on_a_terminal(tmp_path: Path) -> None:
    region = tmp_path / "region.avro"
    assert run("convert", "--from", "arcion", "--to", "avro", str(EXAMPLES / "arcion.jsonl"), str(region),
               *ARCION_OPTIONS, cwd=tmp_path).returncode == 0
    terminal, stderr = pty.openpty()
    with open(region, "rb") as source, open(tmp_path / "out.jsonl", "wb") as output:
        cat = subprocess.Popen(["cat"], stdin=source, stdout=subprocess.PIPE)
        converter = subprocess.run([CDCFORMATS, "convert", "--from", "avro", "--to", "arcion"], stdin=cat.stdout,
                                   stdout=output, stderr=stderr, timeout=60)
        cat.wait()
    os.close(stderr)
    shown = read_terminal(terminal)
    assert converter.returncode == 0, shown
    assert b"Traceback" not in shown and b"avro -> arcion: 4 messages read" in shown
    assert (tmp_path / "out.jsonl").read_bytes() == (EXAMPLES / "arcion.jsonl").read_bytes()


def test_a_failed_run_leaves_files_as_they_were(tmp_path: Path) -> None:
    source = tmp_path / "orders.jsonl"
    source.write_bytes(b"\n".join(LINDORM_LINES[:2] + [b"", b'{"op": "Nope"}'] + LINDORM_LINES[2:]) + b"\n")
    output = tmp_path / "orders.avro"
    output.write_bytes(b"yesterday's output")
    failed = run("convert", "--from", "lindorm", "--to", "avro", str(source), str(output), cwd=tmp_path)
    assert one_line_error(failed, 1).startswith("Error: lindorm: line 4: field op: unknown op 'Nope'")
    assert ("3 messages read (2 decoded, 1 failed, 0 skipped), 2 events (2 converted, 0 refused), stopped before the "
            f"end: nothing written, {output} is as it was") in failed.stderr
    assert output.read_bytes() == b"yesterday's output"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["orders.avro", "orders.jsonl"]

    before = source.read_bytes()
    same = run("convert", "--from", "lindorm", "--to", "lindorm", str(source), str(tmp_path / "." / source.name),
               cwd=tmp_path)
    assert one_line_error(same, 2) == f"Error: OUT {tmp_path / '.' / source.name} is IN: give another file"
    assert source.read_bytes() == before

    with open(tmp_path / "stdout.avro", "wb") as stdout:  # stdout cannot be replaced: the container is completed
        streamed = run("convert", "--from", "lindorm", "--to", "avro", str(source), cwd=tmp_path, stdout=stdout,
                       stderr=subprocess.PIPE)
    assert streamed.returncode == 1
    with open(tmp_path / "stdout.avro", "rb") as file:
        assert len(list(fastavro.reader(file))) == 2


def test_dead_letters_are_implied_by_the_flag_and_replay(tmp_path: Path) -> None:
    refused = run("convert", "--from", "arcion", "--to", "lindorm", str(EXAMPLES / "arcion.jsonl"), "exact.jsonl",
                  "--strict", "--dead-letter", "refused.jsonl", *ARCION_OPTIONS, cwd=tmp_path)
    assert refused.returncode == 0, refused.stderr
    match = re.search(r"(\d+) events \((\d+) written, (\d+) refused\)", refused.stderr)
    assert match is not None and int(match[3]) >= 1 and int(match[1]) == int(match[2]) + int(match[3])
    letters = (tmp_path / "refused.jsonl").read_text().splitlines()
    assert len(letters) == int(match[3])
    replayed = run("convert", "--from", "arcion", "--to", "lindorm", "refused.jsonl", "rest.jsonl", *ARCION_OPTIONS,
                   cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert f"{len(letters)} messages read ({len(letters)} decoded" in replayed.stderr
    assert len((tmp_path / "rest.jsonl").read_bytes().splitlines()) == len(letters)
    assert one_line_error(run("convert", "--from", "lindorm", "--to", "avro", "refused.jsonl", "x.avro",
                              cwd=tmp_path), 2) == (
        "Error: the dead letters hold arcion messages, not lindorm: replay them with --from arcion")


def test_errors_are_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    bridge = ["bridge", "--from", "lindrom", "--to", "avro", "--source-topic", "a", "--target-topic", "b",
              "--bootstrap-servers", "127.0.0.1:1"]
    assert "unknown format 'lindrom'" in one_line_error(run(*bridge, cwd=tmp_path), 2)
    assert "Traceback" in run("--debug", *bridge, cwd=tmp_path).stderr
    assert one_line_error(run("schemas", "register", "--format", "avro", "--topic", "t", "--registry",
                              "127.0.0.1:8081", cwd=tmp_path), 2).startswith(
        "Error: schema registry '127.0.0.1:8081': did you mean http://127.0.0.1:8081?")
    assert list(tmp_path.iterdir()) == []
    assert one_line_error(run("schemas", "register", "--format", "avro", "--topic", "t", "--registry",
                              "http://127.0.0.1:1", cwd=tmp_path), 1).startswith(
        "Error: cannot reach the schema registry http://127.0.0.1:1: ")
    option = run("convert", "--from", "arcion", "--to", "ots-json", str(EXAMPLES / "arcion.jsonl"),
                 "--option", "colour=red", "--option", "primary_key=[\"r_regionkey\"]", cwd=tmp_path)
    assert re.match(r"Error: option colour known to neither arcion \(.*mode.*\) nor ots-json \(.*\)$",
                    one_line_error(option, 2))
    assert "--errors dead-letter needs --dead-letter FILE" in one_line_error(
        run("convert", "--from", "avro", "--to", "protobuf", "--errors", "dead-letter", cwd=tmp_path), 2)


def test_the_bridge_stops_within_the_idle_timeout_when_no_broker_answers(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run("bridge", "--from", "lindorm", "--to", "avro", "--source-topic", "a", "--target-topic", "b",
                 "--bootstrap-servers", "127.0.0.1:1", "--idle-timeout", "3", cwd=tmp_path)
    assert time.monotonic() - started < 20
    assert one_line_error(result, 1).startswith("Error: no answer from the Kafka brokers at 127.0.0.1:1 within 3 s")


def test_a_transactional_id_without_exactly_once_is_refused_before_anything_connects(tmp_path: Path) -> None:
    result = run("bridge", "-b", "127.0.0.1:1", "--source-topic", "orders", "-f", "lindorm", "--target-topic",
                 "orders.json", "-t", "debezium-json", "--transactional-id", "orders-bridge", cwd=tmp_path)
    assert one_line_error(result, 2) == ("Error: a transactional id is for the exactly-once bridge: add exactly_once "
                                         "(--exactly-once)")
