"""A single-node Apache Kafka broker on this machine, started and stopped by cdcformats (``cdcformats broker``, the
tests' ``kafka_broker`` fixture).

    from cdcformats.kafka.broker import local_broker

    with local_broker() as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})

It is the real broker, Apache Kafka's own ``kafka.Kafka`` in KRaft mode (one process that is broker and controller),
so transactions, consumer groups and ``read_committed`` behave as in production, which librdkafka's mock cluster
only imitates. Its jars are fetched once with Maven (``cdcformats.core.maven``) into
``$XDG_CACHE_HOME/cdcformats/kafka-<version>/lib`` (``~/.cache`` without XDG_CACHE_HOME; the
environment variable ``CDCFORMATS_KAFKA_HOME`` names another directory to hold ``lib``); ``make kafka`` does it ahead
of time. It needs Java 17 or newer.

Each start formats a fresh storage directory in a temporary directory, removed at stop, unless a directory is given:
then its data is kept and a later start with that directory finds its topics again. It listens on loopback only, on
free ports unless given, and logs to ``server.log`` in its directory, never to the terminal. Stopping sends SIGTERM
(Kafka's controlled shutdown) and SIGKILL after a timeout; on Linux the broker is also sent SIGTERM when the process
that started it dies, so that a killed test run leaves no broker behind.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core import maven
from ..errors import CdcFormatsError

# The one place the broker's version is pinned: the newest 4.x whose jars and dependencies resolve from Maven Central
# (4.4.0 on 2026-11-27).
KAFKA_VERSION = "4.4.0"
# Kafka's broker logs through SLF4J and declares no binding, so without Log4j's it would log nothing at all, its
# errors included.
BROKER_ARTIFACTS = (f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}", "org.slf4j:slf4j-api:2.0.17",
                    "org.apache.logging.log4j:log4j-slf4j2-impl:2.25.5")
HOME_VARIABLE = "CDCFORMATS_KAFKA_HOME"
# The heap's ceiling. Measured with benchmarks/local_broker.py (README, "A local Kafka broker"): the broker's resident
# memory is the same under 128 and 256 MiB, since the heap grows only as far as it needs to (-Xms32m below), and
# 256 leaves room for bigger loads than the tests'.
DEFAULT_HEAP = "256m"
# The JVM's options besides the heap. A small initial heap: the JVM commits and touches -Xms at once otherwise (256
# MiB, whatever the broker needs). The serial collector: one broker with a small heap on a machine of two cores,
# where G1's concurrent threads cost memory and CPU that the clients beside it need. Client compilation only (C1):
# the broker starts sooner and a local broker's load never needs C2's code.
JVM_OPTIONS = ("-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
               "-XX:+ExitOnOutOfMemoryError")
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
HOST = "127.0.0.1"
LOG_FILE = "server.log"
# The broker's log: INFO, as Kafka's own distribution logs, with the request and state-change loggers that write a
# line per request or partition left at WARN.
LOG4J2_PROPERTIES = """\
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
"""
# librdkafka's own lines while the broker is still starting (a refused connection every few milliseconds) go here
# and are shown only where logging is configured.
CLIENT_LOG = logging.getLogger("cdcformats.kafka.broker.client")
CLIENT_LOG.addHandler(logging.NullHandler())


class BrokerError(CdcFormatsError):
    """The local Kafka broker cannot be fetched, started or stopped: Java or Maven missing, a failed fetch, a port in
    use, or a broker that died while starting."""


def kafka_home() -> Path:
    """The directory that holds the broker's jars in ``lib``: $CDCFORMATS_KAFKA_HOME, or the user's cache."""
    if os.environ.get(HOME_VARIABLE):
        return Path(os.environ[HOME_VARIABLE])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "cdcformats" / f"kafka-{KAFKA_VERSION}"


def fetch_jars(home: Path | None = None) -> Path:
    """The directory of the broker's jars (``BROKER_ARTIFACTS`` and their dependencies), fetched with Maven first
    when they are not there yet (``core.maven``: a killed fetch leaves no half ``lib`` behind)."""
    lib = (home or kafka_home()) / "lib"
    try:
        maven.jars(lib, BROKER_ARTIFACTS)
    except maven.FetchError as error:
        raise BrokerError(f"the local Kafka broker's jars (Apache Kafka {KAFKA_VERSION}): {error}; or set "
                          f"{HOME_VARIABLE} to a directory whose lib/ holds them") from None
    return lib


def java_executable() -> str:
    """$JAVA_HOME/bin/java, or java on PATH, as Kafka's own scripts find it."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(Path(java_home) / "bin" / "java", os.X_OK):
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise BrokerError("the local Kafka broker runs on Java 17 or newer, and java is not on PATH (nor JAVA_HOME "
                          "set): install a JDK (apt-get install openjdk-17-jre-headless)")
    return found


def free_port() -> int:
    """A loopback port that nothing listens on now (the broker binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@dataclass
class LocalBroker:
    """A running broker: where clients reach it (``bootstrap_servers``), its directory and its log."""

    directory: Path
    port: int
    controller_port: int
    process: subprocess.Popen[bytes]
    started_seconds: float  # from launching Java (formatting included) until the broker answered
    removes_directory: bool = False
    _log: IO[bytes] | None = field(default=None, repr=False)
    log_start: int = 0  # where in its log file this start's lines begin

    @property
    def bootstrap_servers(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.directory / LOG_FILE

    def resident_bytes(self) -> int:
        """The resident memory (RSS) of the broker's Java process, from /proc (Linux)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
        return int(match.group(1)) * 1024 if match else 0

    def running(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines this start of the broker logged (a kept directory's log holds earlier starts'
        too)."""
        with contextlib.suppress(OSError), self.log_path.open("rb") as log:
            log.seek(self.log_start)
            return "\n".join(log.read().decode(errors="replace").splitlines()[-lines:])
        return ""

    def why_it_stopped(self) -> str:
        """What the broker's log says about why it stopped (or failed to start): one line."""
        return _fatal_line(self.log_tail(1000))  # a shutdown logs some 250 lines after its cause

    def stop(self, timeout: float = STOP_TIMEOUT, keep_directory: bool = False) -> int:
        """Stop the broker: SIGTERM (a controlled shutdown), SIGKILL if it is still running after ``timeout``
        seconds; then remove its temporary directory, unless ``keep_directory`` (a broker that failed: its log says
        why). Returns the process's exit code; stopping again does nothing more."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.removes_directory and not keep_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        return int(self.process.returncode)


def start_broker(directory: str | Path | None = None, *, port: int = 0, controller_port: int = 0,
                 heap: str = DEFAULT_HEAP, timeout: float = START_TIMEOUT) -> LocalBroker:
    """Start a broker and return once it answers clients. ``directory`` keeps its data (and its log) across starts;
    without it a temporary directory is used and removed at stop. A port of 0 is a free one."""
    java = java_executable()
    lib = fetch_jars()
    removes_directory = directory is None
    home = Path(tempfile.mkdtemp(prefix="cdcformats-kafka-")) if directory is None else Path(directory).resolve()
    try:
        home.mkdir(parents=True, exist_ok=True)
        for given in (port, controller_port):
            if given and not _bindable(given):
                # Else the readiness check could take another broker on that port for this one.
                raise BrokerError(f"{HOST}:{given} is in use (another broker?): stop what listens there, or give "
                                  "another port (0: any free one)")
        port = port or free_port()
        controller_port = controller_port or free_port()
        while controller_port == port:
            controller_port = free_port()
        properties = home / "server.properties"
        properties.write_text(_server_properties(home / "data", port, controller_port))
        (home / "log4j2.properties").write_text(LOG4J2_PROPERTIES)
        jvm = [java, f"-Xmx{heap}", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={home / 'log4j2.properties'}",
               "-cp", str(lib / "*")]
        started = time.monotonic()
        if not (home / "data" / "meta.properties").exists():
            _format_storage(jvm, properties)
        cluster_id = _cluster_id(home / "data")
        log = (home / LOG_FILE).open("ab")
        log_start = log.tell()
        try:
            # Its own session: a Ctrl-C in the terminal reaches only the process that started it, which stops the
            # broker in order.
            process = subprocess.Popen([*jvm, "kafka.Kafka", str(properties)], stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent)
        except BaseException:
            log.close()
            raise
    except BaseException:
        if removes_directory:
            shutil.rmtree(home, ignore_errors=True)
        raise
    broker = LocalBroker(home, port, controller_port, process, 0.0, removes_directory, log, log_start)
    try:
        _wait_until_ready(broker, cluster_id, timeout)
    except BrokerError:
        broker.stop(timeout=5, keep_directory=True)  # the log the error names
        raise
    except BaseException:
        broker.stop(timeout=5)
        raise
    broker.started_seconds = time.monotonic() - started
    return broker


@contextlib.contextmanager
def local_broker(directory: str | Path | None = None, **options: Any) -> Iterator[LocalBroker]:
    """``with local_broker() as broker: broker.bootstrap_servers``: a broker for the block, stopped after it (see
    ``start_broker`` for the options)."""
    broker = start_broker(directory, **options)
    try:
        yield broker
    finally:
        broker.stop()


def _server_properties(data: Path, port: int, controller_port: int) -> str:
    # Static voters (controller.quorum.voters) rather than a dynamic quorum: the controller's address is read from
    # this file at every start, so a kept directory starts again on other ports.
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{HOST}:{controller_port}",
        "listeners": f"PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(data),
        "num.partitions": "1",
        # One broker: the internal topics' replication factors, and the in-sync replicas they need, are 1.
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # One partition each rather than 50: the first group or transaction of a run creates its internal topic, and
        # 50 partitions take the broker seconds on two cores; one coordinator serves a local broker's few groups.
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
        # The log cleaner (which compacts the offsets and transactions topics) takes a 128 MiB buffer by default,
        # half of the heap and more than the rest of a local broker's memory; 8 MiB compacts their few keys.
        "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),
        # A group forms as soon as its first member joins, not 3 s later: a restarted bridge resumes at once.
        "group.initial.rebalance.delay.ms": "0",
    }
    return "".join(f"{name}={value}\n" for name, value in settings.items())


def new_cluster_id() -> str:
    """A random cluster id in Kafka's form (a UUID's bytes in URL-safe base64, unpadded). Never one that starts with
    "-", as Kafka's own Uuid.randomUuid avoids too: the storage tool's parser takes such an id for an option, and
    refuses the command (1 start in 64 failed so)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _bindable(port: int) -> bool:
    """Whether a server could listen on the loopback ``port`` now (as Kafka binds: a port some connection has just
    left, in TIME_WAIT, counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _cluster_id(data: Path) -> str:
    """The cluster id a formatted storage directory belongs to (its meta.properties)."""
    for line in (data / "meta.properties").read_text().splitlines():
        name, _, value = line.partition("=")
        if name.strip() == "cluster.id":
            return value.strip()
    raise BrokerError(f"{data / 'meta.properties'} names no cluster.id: not a Kafka storage directory")


def _format_storage(jvm: list[str], properties: Path) -> None:
    """Format the storage directory under a new cluster id, as ``kafka-storage.sh format`` does."""
    cluster_id = new_cluster_id()
    done = subprocess.run([*jvm, "kafka.tools.StorageTool", "format", "--cluster-id", cluster_id, "--config",
                           str(properties)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        raise BrokerError(f"formatting the Kafka broker's storage failed: {lines[-1] if lines else 'no output'}")


def _die_with_parent() -> None:
    """In the broker's process before Java starts: ask Linux to send it SIGTERM when the process that started it
    dies (PR_SET_PDEATHSIG), so that a killed test run or command leaves no broker running. Elsewhere nothing."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def _wait_until_ready(broker: LocalBroker, cluster_id: str, timeout: float) -> None:
    """Until the broker lists itself in the metadata it gives a client (it is unfenced and serving), or it dies, or
    ``timeout`` passes. The metadata must name the cluster of its own storage: another broker that listens on the
    port (taken after the check above) is not this one."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    config: dict[str, Any] = {"bootstrap.servers": broker.bootstrap_servers, "logger": CLIENT_LOG,
                              "reconnect.backoff.max.ms": 100}  # ask again soon after the broker begins to listen
    admin = AdminClient(config)
    deadline = time.monotonic() + timeout
    while True:
        if not broker.running():
            raise BrokerError(f"the Kafka broker exited with code {broker.process.returncode} while starting: "
                              f"{broker.why_it_stopped()} (its log: {broker.log_path})")
        with contextlib.suppress(KafkaException):
            metadata = admin.list_topics(timeout=0.5)
            if metadata.brokers and metadata.cluster_id == cluster_id:
                return
        if time.monotonic() > deadline:
            raise BrokerError(f"the Kafka broker did not answer within {timeout:g} s: {broker.why_it_stopped()} "
                              f"(its log: {broker.log_path})")
        time.sleep(0.1)


def _fatal_line(log: str) -> str:
    """What a broker's log says about why it stopped: the exception after its first ERROR line (the cause: the
    errors after it are the shutdown it led to), or its last ERROR line, or the log's last line."""
    lines = log.splitlines()
    errors = [index for index, line in enumerate(lines) if re.match(r"\[[^]]*\] (ERROR|FATAL) ", line)]
    for index in errors:
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if re.match(r"[\w.$]+(Exception|Error)\b", following):
            return following.strip()
    if errors:
        return re.sub(r"^\[[^]]*\] ", "", lines[errors[-1]]).strip()
    return lines[-1].strip() if lines else "its log is empty"
