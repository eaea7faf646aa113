"""The local broker's parts that need no Java: its cluster ids, its settings, where its jars go and what it says when
Maven, Java or the broker fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdcformats.errors import CdcFormatsError
from cdcformats.kafka import broker
from cdcformats.kafka.broker import BrokerError, fetch_jars, java_executable, kafka_home, new_cluster_id


def test_no_cluster_id_starts_with_a_dash_which_the_storage_tool_takes_for_an_option() -> None:
    ids = [new_cluster_id() for _ in range(3000)]  # one in 64 would, without the rule: ~47 here
    assert not [cluster_id for cluster_id in ids if cluster_id.startswith("-")]
    assert {len(cluster_id) for cluster_id in ids} == {22} and len(set(ids)) == len(ids)


def test_one_node_settings_replicate_the_internal_topics_once(tmp_path: Path) -> None:
    settings = dict(line.split("=", 1) for line in broker._server_properties(tmp_path, 9092, 9093).splitlines())
    assert settings["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert settings["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert {settings[name] for name in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor",
                                        "transaction.state.log.min.isr")} == {"1"}
    assert settings["group.initial.rebalance.delay.ms"] == "0"
    assert settings["log.dirs"] == str(tmp_path)


def test_the_jars_go_to_the_users_cache_or_where_the_environment_says(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    monkeypatch.delenv(broker.HOME_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert kafka_home() == tmp_path / "cache" / "cdcformats" / f"kafka-{broker.KAFKA_VERSION}"
    monkeypatch.setenv(broker.HOME_VARIABLE, str(tmp_path / "kafka"))
    assert kafka_home() == tmp_path / "kafka"


def test_without_maven_the_fetch_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    with pytest.raises(BrokerError, match=r"jars \(Apache Kafka .*\): Maven \(mvn\) is needed once .* install it"):
        fetch_jars(tmp_path / "kafka")
    assert not (tmp_path / "kafka" / "lib").exists()
    assert issubclass(BrokerError, CdcFormatsError)  # the command line shows it as one line


def test_a_failed_fetch_leaves_no_lib_behind_and_quotes_mavens_error(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    # a Maven that fails as it does offline, after writing part of the jars
    fake = tmp_path / "bin" / "mvn"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nfor a; do case $a in -DoutputDirectory=*) mkdir -p ${a#*=}; touch ${a#*=}/half.jar;; "
                    "esac; done\necho '[ERROR] Failed to execute goal on project kafka-broker: Could not resolve "
                    "dependencies'\necho '[ERROR] -> [Help 1]'\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    with pytest.raises(BrokerError, match=r"from Maven Central: Failed to execute goal on project kafka-broker: Could "
                                          r"not resolve dependencies; or set CDCFORMATS_KAFKA_HOME"):
        fetch_jars(tmp_path / "kafka")
    assert list((tmp_path / "kafka").iterdir()) == []  # no lib, no half-fetched directory


def test_without_java_the_broker_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(BrokerError, match=r"runs on Java 17 or newer, and java is not on PATH"):
        java_executable()


def test_why_a_broker_stopped_is_the_exception_its_log_ends_with() -> None:
    log = ("[2026-11-27 14:29:56,603] INFO starting (kafka.server.KafkaRaftServer)\n"
           "[2026-11-27 14:29:57,001] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)\n"
           "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:9092: Address already in "
           "use.\n\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:734)\n")
    assert broker._fatal_line(log) == ("org.apache.kafka.common.KafkaException: Socket server failed to bind to "
                                       "127.0.0.1:9092: Address already in use.")
    assert broker._fatal_line("[x] ERROR no exception follows (kafka.Kafka$)\n") == \
        "ERROR no exception follows (kafka.Kafka$)"
    assert broker._fatal_line("") == "its log is empty"


def test_the_cause_is_the_first_error_not_the_shutdown_it_led_to() -> None:
    log = ("[t] ERROR Unable to start acceptor for PLAINTEXT (kafka.network.DataPlaneAcceptor)\n"
           "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:9092: Address already in "
           "use.\n\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:615)\n"
           "[t] ERROR [BrokerServer id=1] Received a fatal error while waiting (kafka.server.BrokerServer)\n"
           "java.lang.RuntimeException: Unable to start acceptor for PLAINTEXT\n")
    assert broker._fatal_line(log).endswith("failed to bind to 127.0.0.1:9092: Address already in use.")


def test_stop_kills_a_broker_that_ignores_sigterm_and_removes_its_temporary_directory(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    directory = tmp_path / "broker"
    directory.mkdir()
    # a stand-in for a broker whose controlled shutdown hangs: it ignores SIGTERM (and so does the sleep it becomes)
    stubborn = subprocess.Popen(["sh", "-c", "trap '' TERM; echo ready; exec sleep 60"], stdout=subprocess.PIPE)
    assert stubborn.stdout is not None and stubborn.stdout.readline() == b"ready\n"  # its trap is set
    started = time.monotonic()
    code = broker.LocalBroker(directory, 1, 2, stubborn, 0.0, removes_directory=True).stop(timeout=0.5)
    assert code == -signal.SIGKILL
    assert time.monotonic() - started < 10
    assert not directory.exists()
