"""``cdcformats broker`` in one shell and ``cdcformats bridge --exactly-once`` in another, as a user runs them: what
trying them showed.

- A second ``cdcformats broker`` on a port in use printed "started" and the first broker's address, since the first
  answered its readiness check, and only then died of the bind error: now it refuses the port before it starts, and
  checks that the broker answering is its own (by cluster id).
- A bridge whose broker went away went silent, as one with no input does, for ever: now it says that no broker
  answers, and that it waits.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from cdcformats.kafka.broker import KAFKA_VERSION
from tests.scenarios.conftest import CDCFORMATS, Runner


def test_a_broker_on_a_port_in_use_says_so_and_prints_no_address(cdcformats: Runner) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = cdcformats("broker", "--port", str(port))
    assert ran.returncode == 1
    assert ran.error_line() == (f"Error: 127.0.0.1:{port} is in use (another broker?): stop what listens there, or "
                                "give another port (0: any free one)")
    assert ran.stdout == b""


def _as_a_terminal_starts_it() -> None:
    # a process that a script starts in the background inherits SIGINT ignored (POSIX); a terminal's does not
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _line_matching(stream, pattern: str, timeout: float = 60) -> str:
    """The first line of ``stream`` that matches ``pattern``, read within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    for line in stream:
        if re.search(pattern, line):
            return line
        assert time.monotonic() < deadline, f"no line matching {pattern!r} within {timeout} s"
    raise AssertionError(f"the stream ended before a line matching {pattern!r}")


@pytest.mark.slow
def test_a_bridge_says_when_its_broker_goes_away_and_both_stop_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    broker = subprocess.Popen([CDCFORMATS, "broker", "--port", "0"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_as_a_terminal_starts_it)
    bridge = None
    try:
        assert broker.stdout is not None and broker.stderr is not None
        address = broker.stdout.readline().strip()
        assert re.fullmatch(r"127\.0\.0\.1:\d+", address), broker.stderr.read()
        assert broker.stderr.readline().startswith(f"Apache Kafka {KAFKA_VERSION} broker at {address}, started in ")
        kept = broker.stderr.readline()
        assert kept.startswith("topics removed at stop; log: "), kept
        directory = Path(kept.split("log: ")[1].strip()).parent
        assert directory.is_dir()
        producer = Producer({"bootstrap.servers": address, "log_level": 0})
        for n in range(20):
            producer.produce("orders", value=json.dumps({
                "op": "Put", "table": "orders", "ts": str(1700000000000 + n),
                "data": [{"type": "VARCHAR", "name": "id", "value": f"o-{n}"}]}).encode())
        producer.flush()

        bridge = subprocess.Popen(
            [CDCFORMATS, "bridge", "-b", address, "--source-topic", "orders", "-f", "lindorm", "--target-topic",
             "orders.json", "-t", "debezium-json", "--exactly-once", "--progress-interval", "0"],
            cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=_as_a_terminal_starts_it)
        assert bridge.stderr is not None
        _line_matching(bridge.stderr, r"^consumed 20 ")

        broker.send_signal(signal.SIGINT)  # Ctrl-C in the broker's shell
        _, broker_said = broker.communicate(timeout=60)
        assert broker.returncode == 0, broker_said
        assert broker_said.strip() == "broker stopped (SIGINT)"
        assert not directory.exists()  # its temporary directory went with it

        line = _line_matching(bridge.stderr, r"answers", timeout=30)
        assert line.startswith(f"no Kafka broker at {address} answers (")
        assert line.rstrip().endswith("waiting for one, as long as it takes (Ctrl-C stops)")
        bridge.send_signal(signal.SIGINT)  # and Ctrl-C in the bridge's
        _, rest = bridge.communicate(timeout=60)
        assert bridge.returncode == 0, rest
        assert "Traceback" not in rest and "Error" not in rest
    finally:
        for process in (broker, bridge):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()

