"""The serializers and the bridge on Apache Kafka's own broker (the session's ``kafka_broker``, from
cdcformats.kafka.broker): what librdkafka's mock cluster only imitates, transactions and consumer groups that outlive
a killed process, and confluent-kafka's serializers reading ours through a topic and ours reading theirs."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, SerializingProducer, TopicPartition
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

import cdcformats as cf
from cdcformats.contract import KafkaRecord
from cdcformats.envelopes.avro import event_from_record, record_from_event
from cdcformats.envelopes.protobuf import event_from_proto, proto_from_event
from cdcformats.kafka import ChangeEventDeserializer, ChangeEventKeySerializer, ChangeEventSerializer
from cdcformats.kafka.bridge import Bridge
from cdcformats.kafka.broker import LocalBroker
from cdcformats.schema_registry import connect
from cdcformats.schemas import change_event_pb2
from tests.integration.kafka_topics import consume_all, lindorm_message, run_bridge, topics_of_a_run

LINDORM = cf.codec("lindorm", key_columns=["id"])
MALFORMED = b'{"op": "Put", "data": ['


def produce_inputs(bootstrap: str, topic: str, count: int, malformed: set[int]) -> dict[int, bytes]:
    """``count`` Lindorm messages into ``topic``, those numbered in ``malformed`` cut short; by number."""
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0, "linger.ms": 20})
    inputs = {}
    for n in range(count):
        inputs[n] = MALFORMED + str(n).encode() if n in malformed else lindorm_message(n)
        producer.produce(topic, key=f"o-{n % 50}".encode(), value=inputs[n])
    producer.flush()
    return inputs


def expected_event_ids(inputs: dict[int, bytes], malformed: set[int]) -> set[str]:
    return {LINDORM.decode_message(value).event_id for n, value in inputs.items() if n not in malformed}


# -- confluent-kafka's serializers and ours, through the broker --------------------------------------------------------

EVENTS = list(LINDORM.decode(lindorm_message(n) for n in range(40)))


@pytest.mark.parametrize("schema_format", ["avro", "protobuf"])
def test_confluents_serializers_and_ours_read_each_others_messages_through_the_broker(
        kafka_broker: LocalBroker, tmp_path: Path, schema_format: str) -> None:
    """One topic, half its messages written by confluent-kafka's AvroSerializer/ProtobufSerializer and half by ours,
    with one registry; both deserializers read every message back to the event it was written from."""
    registry = connect(tmp_path / "registry.sqlite")
    topic = f"mixed-{schema_format}-{topics_of_a_run()['group']}"
    if schema_format == "avro":
        from cdcformats.schemas import avro_schema_text

        theirs_writer, to_theirs = AvroSerializer(registry, avro_schema_text()), record_from_event
        theirs_reader, from_theirs = AvroDeserializer(registry), event_from_record
    else:
        theirs_writer = ProtobufSerializer(change_event_pb2.ChangeEvent, registry)
        to_theirs, from_theirs = proto_from_event, event_from_proto
        theirs_reader = ProtobufDeserializer(change_event_pb2.ChangeEvent, schema_registry_client=registry)
    ours_writer = ChangeEventSerializer(schema_format, registry)
    producer = SerializingProducer({"bootstrap.servers": kafka_broker.bootstrap_servers, "log_level": 0,
                                    "key.serializer": ChangeEventKeySerializer()})
    for n, event in enumerate(EVENTS):
        context = SerializationContext(topic, MessageField.VALUE)
        value = ours_writer(event, context) if n % 2 else theirs_writer(to_theirs(event), context)
        producer.produce(topic, key=event, value=value)
    producer.flush()

    ours = consume_all(kafka_broker.bootstrap_servers, topic, ChangeEventDeserializer(schema_format, registry))
    assert [message.value() for message in ours] == EVENTS  # one partition: in the order written
    theirs = consume_all(kafka_broker.bootstrap_servers, topic, theirs_reader)
    assert [from_theirs(message.value()) for message in theirs] == EVENTS
    # the same schema under the one subject: both wrote one registered id
    assert len({message.value()[1:5] for message in consume_all(kafka_broker.bootstrap_servers, topic)}) == 1


# -- the bridge, between formats (here rather than on the mock cluster, whose consumer groups form seconds slower) --

def test_the_bridge_writes_and_reads_formats_whose_key_is_part_of_the_message(kafka_broker: LocalBroker) -> None:
    """lindorm -> paimon-log (upsert: deletes become tombstones with the key) -> lindorm again."""
    bootstrap = kafka_broker.bootstrap_servers
    run = uuid.uuid4().hex[:8]
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    inputs = [lindorm_message(n) for n in range(30)]
    for value in inputs:
        producer.produce(f"lindorm-{run}", value=value)
    producer.produce(f"lindorm-{run}", key=b"o-1", value=None)  # a tombstone in Lindorm's key form
    producer.flush()
    lindorm = cf.codec("lindorm", key_columns=["id"])
    to_log = Bridge(f"lindorm-{run}", "lindorm", f"log-{run}", "paimon-log", bootstrap, group_id=f"a-{run}",
                    source_options={"key_columns": ["id"]}, target_options={"changelog_mode": "upsert"},
                    idle_timeout=3)
    counts = to_log.run()
    # Deletes are the log's tombstones; the source's own tombstone has no key in the log's form, so it is skipped.
    assert (counts.messages_read, counts.messages_written, counts.tombstones, counts.messages_skipped) == (31, 30, 0, 1)

    log = [KafkaRecord(message.key(), message.value()) for message in consume_all(bootstrap, f"log-{run}")]
    events = list(cf.codec("paimon-log", changelog_mode="upsert").decode(log))
    expected = [lindorm.decode_message(value) for value in inputs]
    def key(event: cf.ChangeEvent) -> tuple:  # the log's JSON key has the values, not Lindorm's type names
        return tuple((cell.name, cell.value) for cell in event.key)

    assert Counter((event.op, key(event)) for event in events) == Counter(
        (cf.Op.DELETE if event.op is cf.Op.DELETE else cf.Op.UPSERT, key(event)) for event in expected)

    back = Bridge(f"log-{run}", "paimon-log", f"back-{run}", "lindorm", bootstrap, group_id=f"b-{run}",
                  source_options={"changelog_mode": "upsert"}, idle_timeout=3).run()
    assert (back.messages_read, back.messages_written, back.tombstones) == (30, 30, 0)  # each tombstone: a delete


def test_the_bridge_converts_every_row_of_a_canal_message(kafka_broker: LocalBroker, tmp_path: Path) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    run = uuid.uuid4().hex[:8]
    lines = (Path(__file__).parent.parent / "fixtures" / "canal" / "flink-canal-data.txt").read_bytes().splitlines()
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    for line in lines:
        producer.produce(f"canal-{run}", value=line)
    producer.flush()
    counts = Bridge(f"canal-{run}", "canal-json", f"avro-{run}", "avro", bootstrap, group_id=f"c-{run}",
                    schema_registry=tmp_path / "registry.sqlite", source_options={"skip_ddl": True},
                    idle_timeout=3).run()
    rows = list(cf.codec("canal-json", skip_ddl=True).decode(lines))
    assert counts.messages_read == len(lines) and counts.messages_written == len(rows) > len(lines)


# -- the bridge, at least once ----------------------------------------------------------------------------------------

def test_the_bridge_killed_mid_run_and_restarted_loses_nothing_and_counts_its_duplicates(
        kafka_broker: LocalBroker, tmp_path: Path) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    topics = topics_of_a_run()
    registry = tmp_path / "registry.sqlite"
    malformed = {n for n in range(INPUTS) if n % 100 == 37}  # 1%
    inputs = produce_inputs(bootstrap, topics["source"], INPUTS, malformed)

    first = run_bridge(bootstrap, registry, topics)
    consumed = _killed_once_past(first, INPUTS // 5)
    assert consumed < INPUTS  # killed mid-run
    second = run_bridge(bootstrap, registry, topics, "--idle-timeout", "3")
    _, errors = second.communicate(timeout=300)
    assert second.returncode == 0, errors

    reader = ChangeEventDeserializer("avro", registry)
    delivered = consume_all(bootstrap, topics["target"])
    copies: Counter[str] = Counter()
    bytes_by_id: dict[str, set[bytes]] = {}
    for message in delivered:
        event_id = reader(message.value()).event_id
        copies[event_id] += 1
        bytes_by_id.setdefault(event_id, set()).add(message.value())
    assert set(copies) == expected_event_ids(inputs, malformed), "an input message is missing from the target topic"
    assert all(len(variants) == 1 for variants in bytes_by_id.values()), "a replayed message converted differently"
    dead = consume_all(bootstrap, topics["dead"])
    assert {message.value() for message in dead} == {inputs[n] for n in malformed}
    headers = dict(dead[0].headers())
    assert headers["cdcformats.error"].startswith(b"lindorm: message 1: not valid JSON")
    assert re.fullmatch(rb"in-\w+/\d+/\d+", headers["cdcformats.origin"])
    # At least once: what the killed run produced after its last commit is produced again, never less. The
    # duplicates are the records beyond one per input; they are the batch in flight at the kill, at most.
    duplicates = len(delivered) + len(dead) - INPUTS
    assert 0 <= duplicates <= BATCH_SIZE, f"{duplicates} duplicates"


def test_the_bridge_stops_cleanly_on_sigterm_with_its_offsets_committed(kafka_broker: LocalBroker,
                                                                       tmp_path: Path) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    topics = topics_of_a_run()
    produce_inputs(bootstrap, topics["source"], 300, set())
    bridge = run_bridge(bootstrap, tmp_path / "registry.sqlite", topics)
    assert bridge.stderr is not None
    for line in bridge.stderr:
        if line.startswith("consumed 300 "):
            break
    bridge.send_signal(signal.SIGTERM)
    _, rest = bridge.communicate(timeout=60)
    assert bridge.returncode == 0, rest
    again = run_bridge(bootstrap, tmp_path / "registry.sqlite", topics, "--idle-timeout", "2")
    _, lines = again.communicate(timeout=120)
    assert again.returncode == 0, lines
    assert set(re.findall(r"consumed (\d+)", lines)) == {"0"}  # nothing left to replay: all was committed
    assert len(consume_all(bootstrap, topics["target"])) == 300


# -- the bridge, exactly once -----------------------------------------------------------------------------------------

INPUTS = 10_000
BATCH_SIZE = 500  # the bridge's default
KILLS = 4


STUCK_SECONDS = 120


def _killed_once_past(bridge: subprocess.Popen, consumed: int, once: Callable[[], None] = lambda: None) -> int:
    """SIGKILL ``bridge`` once its progress line has counted at least ``consumed`` messages and ``once`` has
    returned; the count it had reached. A bridge that gets nowhere for two minutes is killed and fails the test, which
    would otherwise wait on its output for ever."""
    assert bridge.stderr is not None
    stuck = threading.Timer(STUCK_SECONDS, bridge.kill)
    stuck.start()
    reached = 0
    try:
        for line in bridge.stderr:
            counted = re.match(r"consumed (\d+)", line)
            if counted:
                reached = int(counted.group(1))
                if reached >= consumed:
                    break
        else:
            raise AssertionError(f"the bridge ended (code {bridge.wait()}) before consuming {consumed}, having "
                                 f"consumed {reached}")
    finally:
        stuck.cancel()
    once()
    bridge.send_signal(signal.SIGKILL)
    bridge.wait()
    return reached


def _records_of_the_next_transaction(bootstrap: str, topic: str) -> Callable[[], None]:
    """A wait until the target topic's log grows: the bridge, which has just printed its progress after committing a
    batch, has written records of the next batch into its open transaction. A kill then finds it mid-transaction,
    not between two (where nothing would be left to abort)."""
    def wait() -> None:
        # read_uncommitted: its watermark is the log's end, where a read_committed one's is the last commit
        watcher = Consumer({"bootstrap.servers": bootstrap, "group.id": "watcher", "log_level": 0,
                            "isolation.level": "read_uncommitted"})
        partition = TopicPartition(topic, 0)
        # The commit's marker may land after the progress line, one offset: records are two or more.
        committed_end = watcher.get_watermark_offsets(partition, timeout=10, cached=False)[1] + 1
        # A bridge that joined its group beside the one killed before it waits for that member's session to end
        # and for the rebalance, which a loaded machine makes long: past the deadline, the kill lands where it does
        # (the test still needs one kill inside a transaction, which it checks at the end).
        deadline = time.monotonic() + 60
        while (watcher.get_watermark_offsets(partition, timeout=10, cached=False)[1] <= committed_end
               and time.monotonic() < deadline):
            time.sleep(0.05)
        watcher.close()
    return wait


def test_the_exactly_once_bridge_killed_over_and_over_delivers_every_change_once(kafka_broker: LocalBroker,
                                                                                 tmp_path: Path) -> None:
    """Killed with SIGKILL four times mid-stream (each kill inside a transaction, once it has written), then run to
    the end:
    a read_committed consumer sees every converted change once and every malformed message in the dead-letter topic
    once. Losses and duplicates are counted by event id (target) and by source message (dead letters)."""
    bootstrap = kafka_broker.bootstrap_servers
    topics = topics_of_a_run()
    registry = tmp_path / "registry.sqlite"
    malformed = {n for n in range(INPUTS) if n % 100 == 37}
    inputs = produce_inputs(bootstrap, topics["source"], INPUTS, malformed)
    exactly_once = ("--exactly-once",)

    for _ in range(KILLS):
        # a run consumes from the last committed batch on, and counts from 0: some batches, then the kill
        _killed_once_past(run_bridge(bootstrap, registry, topics, *exactly_once), 3 * BATCH_SIZE // 2,
                          _records_of_the_next_transaction(bootstrap, topics["target"]))
    last = run_bridge(bootstrap, registry, topics, *exactly_once, "--idle-timeout", "3")
    _, errors = last.communicate(timeout=300)
    assert last.returncode == 0, errors
    assert int(re.findall(r"consumed (\d+)", errors)[-1]) < INPUTS  # the killed runs got somewhere

    reader = ChangeEventDeserializer("avro", registry)
    seen = Counter(reader(message.value()).event_id
                   for message in consume_all(bootstrap, topics["target"], isolation="read_committed"))
    expected = expected_event_ids(inputs, malformed)
    lost, duplicated = expected - set(seen), {event_id for event_id, copies in seen.items() if copies > 1}
    assert (len(lost), len(duplicated), len(set(seen) - expected)) == (0, 0, 0)
    dead = Counter(message.value() for message in consume_all(bootstrap, topics["dead"], isolation="read_committed"))
    assert dead == Counter(inputs[n] for n in malformed)
    # What the killed runs had produced into their open transactions is in the log, aborted: a reader that does not
    # skip aborted records sees more than one copy of some changes.
    everything = consume_all(bootstrap, topics["target"])
    assert len(everything) > sum(seen.values())


def test_a_dead_letter_of_the_exactly_once_bridge_is_written_once_with_its_error(kafka_broker: LocalBroker,
                                                                                 tmp_path: Path) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    topics = topics_of_a_run()
    inputs = produce_inputs(bootstrap, topics["source"], 20, {13})
    counts = Bridge(topics["source"], "lindorm", topics["target"], "avro", bootstrap, group_id=topics["group"],
                    dead_letter_topic=topics["dead"], schema_registry=tmp_path / "registry.sqlite",
                    source_options={"key_columns": ["id"]}, exactly_once=True, idle_timeout=2).run()
    assert (counts.messages_read, counts.dead_lettered) == (20, 1)
    [dead] = consume_all(bootstrap, topics["dead"], isolation="read_committed")
    assert dead.value() == inputs[13]
    headers = dict(dead.headers())
    assert headers["cdcformats.error"].startswith(b"lindorm: message 1: not valid JSON")
    assert headers["cdcformats.origin"] == f"{topics['source']}/0/13".encode()
    assert len(consume_all(bootstrap, topics["target"], isolation="read_committed")) == 19


def test_an_error_inside_a_transaction_aborts_it_and_a_restart_converts_the_batch_again(
        kafka_broker: LocalBroker, tmp_path: Path) -> None:
    """errors="fail": the bad message stops the bridge; the changes converted before it in its batch are in the
    aborted transaction, and its offsets stayed uncommitted, so a restart that skips errors converts them, once."""
    bootstrap = kafka_broker.bootstrap_servers
    topics = topics_of_a_run()
    produce_inputs(bootstrap, topics["source"], 20, {15})
    registry = tmp_path / "registry.sqlite"

    def bridge(errors: str) -> Bridge:
        return Bridge(topics["source"], "lindorm", topics["target"], "avro", bootstrap, group_id=topics["group"],
                      schema_registry=registry, source_options={"key_columns": ["id"]}, exactly_once=True,
                      errors=errors, idle_timeout=2)

    with pytest.raises(cf.DecodeError, match="not valid JSON"):
        bridge("fail").run()
    assert consume_all(bootstrap, topics["target"], isolation="read_committed") == []
    counts = bridge("skip").run()
    assert (counts.messages_read, counts.messages_written) == (20, 19)
    assert len(consume_all(bootstrap, topics["target"], isolation="read_committed")) == 19


def test_a_second_exactly_once_bridge_of_the_same_group_and_topic_fences_the_first_which_says_so(
        kafka_broker: LocalBroker, tmp_path: Path) -> None:
    """Both derive one transactional id from the group and the source topic: the second's start fences the first,
    which stops with one error line; the second goes on, and read_committed readers still see each change once."""
    bootstrap = kafka_broker.bootstrap_servers
    topics = topics_of_a_run()
    registry = tmp_path / "registry.sqlite"
    inputs = produce_inputs(bootstrap, topics["source"], 2000, set())
    feeding = threading.Event()

    def feed() -> None:  # input keeps coming, so that the first bridge is inside a transaction when it is fenced
        producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
        n = len(inputs)
        while not feeding.is_set():
            inputs[n] = lindorm_message(n)
            producer.produce(topics["source"], key=f"o-{n % 50}".encode(), value=inputs[n])
            n += 1
            if n % 100 == 0:
                producer.flush()
                time.sleep(0.01)
        producer.flush()

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        first = run_bridge(bootstrap, registry, topics, "--exactly-once")
        assert first.stderr is not None
        for line in first.stderr:
            if line.startswith("consumed "):
                break
        second = run_bridge(bootstrap, registry, topics, "--exactly-once", "--idle-timeout", "3")
        _, first_errors = first.communicate(timeout=60)
    finally:
        feeding.set()
        feeder.join()
    _, second_errors = second.communicate(timeout=120)
    assert first.returncode == 1, first_errors
    [error] = [line for line in first_errors.splitlines() if line.startswith("Error: ")]
    fenced = (f"Error: another producer with the transactional id '{topics['group']}/{topics['source']}' started "
              "(another bridge of the same group and source topic?), and fenced this one: ")
    # When the second's start aborts the first's transaction while the first is committing it, Kafka 4.4 can answer
    # the commit with an unexpected server error rather than PRODUCER_FENCED (1 run in 10 or so; librdkafka calls it
    # "Unknown broker error"), and the first's abort then succeeds: it stops all the same, and says what it was told.
    raced = "Error: a transaction of the exactly-once bridge failed and was aborted: EndTxn commit failed: "
    assert error.startswith((fenced, raced)), error
    assert "Traceback" not in first_errors
    assert second.returncode == 0, second_errors

    reader = ChangeEventDeserializer("avro", registry)
    seen = Counter(reader(message.value()).event_id
                   for message in consume_all(bootstrap, topics["target"], isolation="read_committed"))
    assert set(seen) == {LINDORM.decode_message(value).event_id for value in inputs.values()}
    assert set(seen.values()) == {1}


def test_a_broker_started_on_the_port_of_another_is_not_taken_for_it(kafka_broker: LocalBroker,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The other broker answers on the port, but of another cluster: the new one is not ready until its own does,
    and it dies of the bind error, which is what its error says."""
    from cdcformats.kafka import broker

    monkeypatch.setattr(broker, "_bindable", lambda port: True)  # as if the port were taken after the check
    cause = (r"exited with code 1 while starting: org\.apache\.kafka\.common\.KafkaException: Socket server failed "
             rf"to bind to 127\.0\.0\.1:{kafka_broker.port}: Address already in use\.")
    with pytest.raises(broker.BrokerError, match=cause) as failed:
        broker.start_broker(port=kafka_broker.port)
    assert kafka_broker.running()
    # A broker that failed keeps its temporary directory, for the log its error names; the test has read it.
    log = Path(re.search(r"\(its log: (.+)\)$", str(failed.value)).group(1))  # type: ignore[union-attr]
    assert log.name == "server.log" and "Address already in use" in log.read_text()
    shutil.rmtree(log.parent)
