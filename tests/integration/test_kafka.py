"""Kafka serializers and the bridge, over a Kafka protocol broker of librdkafka's own (its mock cluster, on loopback),
which starts in milliseconds. The bridge, whose consumer groups form seconds sooner on Apache Kafka's own broker, and
what needs that broker (transactions, a group that outlives a killed bridge) are in test_kafka_broker.py."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer, SerializingProducer
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

import cdcformats as cf
from cdcformats.envelopes.avro import event_from_record, record_from_event
from cdcformats.envelopes.protobuf import event_from_proto, proto_from_event
from cdcformats.kafka import ChangeEventDeserializer, ChangeEventKeySerializer, ChangeEventSerializer
from cdcformats.losses import without
from cdcformats.schema_registry import connect
from cdcformats.schemas import avro_schema_text, change_event_pb2
from tests.integration.kafka_topics import consume_all, lindorm_message


@pytest.fixture(scope="module")
def bootstrap() -> Iterator[str]:
    cluster = Producer({"test.mock.num.brokers": 1, "log_level": 0})
    brokers = cluster.list_topics(timeout=10).brokers.values()
    yield ",".join(f"{broker.host}:{broker.port}" for broker in brokers)
    cluster.flush()


SOURCE_MESSAGES = {
    "lindorm": [lindorm_message(n) for n in range(8)],
    "arcion": [line.encode() for line in (Path(cf.__file__).parent / "examples" / "arcion.jsonl").read_text()
               .splitlines()[1:]],
    "ots-json": [b'["k1",null,null,null,"DR"]\n["k1","a",5,"x","U"]', b'["k2","b",null,null,"DA"]'],
}
OPTIONS = {"lindorm": {"key_columns": ["id"]}, "arcion": {"key_columns": ["r_regionkey"]},
           "ots-json": {"primary_key": ["id"]}, "avro": {}, "protobuf": {}}


@pytest.mark.parametrize("target", ["lindorm", "arcion", "ots-json", "avro", "protobuf"])
def test_events_produced_with_our_serializers_decode_equal_in_a_separate_consumer(
        bootstrap: str, tmp_path: Path, target: str) -> None:
    registry = tmp_path / "registry.sqlite"
    source = {"lindorm": "lindorm", "arcion": "arcion", "ots-json": "ots-json"}.get(target, "lindorm")
    events = list(cf.codec(source, **OPTIONS[source]).decode(
        line for message in SOURCE_MESSAGES[source] for line in message.split(b"\n")))
    topic = f"serde-{target}-{uuid.uuid4().hex[:8]}"
    producer = SerializingProducer({
        "bootstrap.servers": bootstrap, "log_level": 0, "key.serializer": ChangeEventKeySerializer(),
        "value.serializer": ChangeEventSerializer(target, registry, **OPTIONS[target])})
    for event in events:
        producer.produce(topic, key=event, value=event)
    producer.produce(topic, key=events[0], value=None)  # a tombstone
    producer.flush()
    received = consume_all(bootstrap, topic, ChangeEventDeserializer(target, registry, **OPTIONS[target]))
    decoded = sorted((message.value() for message in received if message.value() is not None),
                     key=lambda event: event.event_id)
    assert decoded == sorted(events, key=lambda event: event.event_id)
    assert sum(message.value() is None for message in received) == 1
    keys = {message.key() for message in received}
    assert keys == {ChangeEventKeySerializer()(event) for event in events}


def test_debezium_avro_through_a_broker_under_the_topics_subjects_read_by_a_value_deserializer(
        bootstrap: str, tmp_path: Path) -> None:
    """A producer with our serializers registers <topic>-value and <topic>-key, as Confluent's would; a consumer with
    only a value deserializer, ours or confluent-kafka's AvroDeserializer, reads every change, its key cells taken out
    of the row by the registered key schema."""
    registry = str(tmp_path / "registry.sqlite")
    events = list(cf.codec("lindorm", key_columns=["id"]).decode(SOURCE_MESSAGES["lindorm"]))
    topic = f"tpch.orders-{uuid.uuid4().hex[:8]}"
    producer = SerializingProducer({
        "bootstrap.servers": bootstrap, "log_level": 0,
        "key.serializer": ChangeEventKeySerializer("debezium-avro", schema_registry=registry),
        "value.serializer": ChangeEventSerializer("debezium-avro", registry)})
    for event in events:
        producer.produce(topic, key=event, value=event)
    producer.flush()
    assert connect(registry).get_subjects() == [f"{topic}-key", f"{topic}-value"]
    ours = consume_all(bootstrap, topic, ChangeEventDeserializer("debezium-avro", registry))
    target = cf.codec("debezium-avro", schema_registry=registry)
    assert sorted((message.value() for message in ours), key=lambda event: event.event_id) == sorted(
        (without(event, target.dropped(event)) for event in events), key=lambda event: event.event_id)
    theirs = consume_all(bootstrap, topic, AvroDeserializer(connect(registry)))
    assert Counter(message.value()["op"] for message in theirs) == Counter(
        "c" if event.op is cf.Op.UPSERT else "d" for event in events)


def test_a_registry_that_gives_no_schema_id_is_named_in_the_serializers_error(tmp_path: Path) -> None:
    registry = tmp_path / "registry.sqlite"
    with pytest.raises(cf.EncodeError, match=f"the schema registry file {re.escape(str(registry))} \\(no such "
                                              "file\\) gave no schema id under subject orders-value: Subject"):
        ChangeEventSerializer("avro", str(registry), use_latest=True)(EVENT, SerializationContext(
            "orders", MessageField.VALUE))


EVENT = cf.ChangeEvent(cf.Op.UPSERT, cf.Table("orders"), key=(cf.Cell("id", "o-1"),),
                       after=(cf.Cell("id", "o-1"), cf.Cell("amount", __import__("decimal").Decimal("19.90"))),
                       source=cf.Source(commit_time_us=1700000000000000))


def test_confluent_avro_and_ours_read_each_other(tmp_path: Path) -> None:
    registry = connect(tmp_path / "registry.sqlite")  # confluent's serdes take the embedded client too
    context = SerializationContext("orders", MessageField.VALUE)
    ours = ChangeEventSerializer("avro", registry)(EVENT, context)
    theirs = AvroSerializer(registry, avro_schema_text())(record_from_event(EVENT), context)
    assert ours == theirs
    assert event_from_record(AvroDeserializer(registry)(ours, context)) == EVENT
    assert ChangeEventDeserializer("avro", registry)(theirs, context) == EVENT


def test_confluent_protobuf_and_ours_read_each_other(tmp_path: Path) -> None:
    registry = connect(tmp_path / "registry.sqlite")
    context = SerializationContext("orders-pb", MessageField.VALUE)
    ours = ChangeEventSerializer("protobuf", registry)(EVENT, context)
    theirs = ProtobufSerializer(change_event_pb2.ChangeEvent, registry)(proto_from_event(EVENT), context)
    assert ours == theirs
    reader = ProtobufDeserializer(change_event_pb2.ChangeEvent, schema_registry_client=registry)
    assert event_from_proto(reader(ours, context)) == EVENT
    assert ChangeEventDeserializer("protobuf", registry)(theirs, context) == EVENT


def test_avro_written_with_an_evolved_envelope_is_read_by_resolution(tmp_path: Path) -> None:
    registry = connect(tmp_path / "registry.sqlite")
    evolved = json.loads(avro_schema_text())
    evolved["fields"].append({"name": "trace_id", "type": ["null", "string"], "default": None})
    context = SerializationContext("evolving", MessageField.VALUE)
    record = {**record_from_event(EVENT), "trace_id": "abc"}
    framed = AvroSerializer(registry, json.dumps(evolved))(record, context)
    assert ChangeEventDeserializer("avro", registry)(framed, context) == EVENT


def test_bad_frames_are_decode_errors(tmp_path: Path) -> None:
    reader = ChangeEventDeserializer("protobuf", tmp_path / "registry.sqlite")
    for data in (b"", b"\x01\x00\x00\x00\x01", b"\x00\x00\x00\x00\x01\x02\x0e"):
        with pytest.raises(cf.DecodeError):
            reader(data)
