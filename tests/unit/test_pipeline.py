"""The one conversion pipeline that ``convert()``, the Kafka bridge and the Spark job run: the same messages, error
mode and strictness give the same counts, the same messages written and the same dead letters in each.

The bridge runs on records shaped as confluent-kafka consumes them and a producer that keeps what it is given; the
Spark job's partition function runs on an Arrow batch, as ``mapInArrow`` hands it one. Neither needs a broker or a
Spark session: what is compared is the pipeline, not the transport."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

import cdcformats as cf
from cdcformats.errors import CodecError
from cdcformats.kafka.bridge import Bridge, progress_line
from cdcformats.spark.job import _partition_converter, summary


def canal(kind: str, rows: list[dict[str, str]] | None, **more: Any) -> bytes:
    return json.dumps({"data": rows, "database": "shop", "table": "orders", "type": kind, "pkNames": ["id"],
                       "isDdl": False, "es": 1700000000000, "ts": 1700000000001, "old": None,
                       "mysqlType": {"id": "int", "name": "varchar(20)"}, **more}).encode()


DDL = json.dumps({"data": None, "database": "shop", "table": "orders", "type": "ALTER", "isDdl": True,
                  "sql": "ALTER TABLE orders ADD c int", "es": 1, "ts": 2, "pkNames": None, "old": None}).encode()
BROKEN = b'{"data": ['
TRUNCATE = canal("TRUNCATE", None)
MESSAGES = [canal("INSERT", [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}]),  # two events
            BROKEN,  # the source refuses it
            DDL,  # no change, under skip_ddl
            canal("UPDATE", [{"id": "1", "name": "c"}], old=[{"name": "a"}]),
            TRUNCATE,  # maxwell-json cannot write it; the one event that debezium-json writes under strict
            canal("DELETE", [{"id": "2", "name": "b"}])]
# maxwell-json refuses the TRUNCATE (an EncodeError); under strict, debezium-json refuses every row change, whose
# cell types it drops.
TARGETS = {"maxwell-json": False, "debezium-json": True}
EXPECTED = {  # (written, refused) events of the 5 that the 4 decoded messages hold
    "maxwell-json": (4, 1), "debezium-json": (1, 4)}


class Consumed:
    """A record as confluent-kafka's consumer gives it."""

    def __init__(self, offset: int, value: bytes | None, key: bytes | None = None) -> None:
        self._offset, self._value, self._key = offset, value, key

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def topic(self) -> str:
        return "in"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset


class Producer:
    """Keeps what it is asked to produce, by topic."""

    def __init__(self) -> None:
        self.topics: dict[str, list[bytes | None]] = {}

    def produce(self, topic: str, key: bytes | None = None, value: bytes | None = None, **_: Any) -> None:
        self.topics.setdefault(topic, []).append(value)


def by_convert(target: str, errors: str) -> tuple[dict[str, int], list[bytes], list[bytes]]:
    stats, dead = cf.ConversionStats(), []
    written = list(cf.convert(MESSAGES, "canal-json", target, skip_ddl=True, strict=TARGETS[target],
                              errors=dead.append if errors == "dead-letter" else errors, stats=stats))
    return stats.counts(), written, [error.messages[0] for error in dead]


def a_bridge(target: str, errors: str) -> Bridge:
    return Bridge("in", "canal-json", "out", target, "localhost:9", errors=errors, strict=TARGETS[target],
                  dead_letter_topic="dead" if errors == "dead-letter" else None, source_options={"skip_ddl": True})


def by_bridge(target: str, errors: str) -> tuple[dict[str, int], list[bytes], list[bytes]]:
    bridge, producer = a_bridge(target, errors), Producer()
    bridge.convert([Consumed(n, message) for n, message in enumerate(MESSAGES)], producer, lambda *_: None)
    return bridge.counts.counts(), producer.topics.get("out", []), producer.topics.get("dead", [])


def spark_partition(target: str, errors: str) -> list[dict[str, Any]]:
    convert = _partition_converter("canal-json", target, (("skip_ddl", "true"), ("strict", str(TARGETS[target])
                                                                                  .lower())), errors, keyed=False)
    batch = pa.RecordBatch.from_pydict({"value": pa.array(MESSAGES, pa.binary())})
    return [row for result in convert(iter([batch])) for row in result.to_pylist()]


def by_spark(target: str, errors: str) -> tuple[dict[str, int], list[bytes], list[bytes]]:
    rows = spark_partition(target, errors)
    *results, last = rows
    assert all(row["counts"] is None for row in results)  # a partition's counts come last, once
    return (json.loads(last["counts"]), [row["value"] for row in results if row["error"] is None],
            [row["error"]["raw"] for row in results if row["error"] is not None])


@pytest.mark.parametrize("errors", ["skip", "dead-letter"])
@pytest.mark.parametrize("target", TARGETS)
def test_convert_the_bridge_and_the_spark_job_count_write_and_dead_letter_alike(target: str, errors: str) -> None:
    counts, written, dead = by_convert(target, errors)
    events_written, events_refused = EXPECTED[target]
    assert counts == {"messages_read": 6, "messages_decoded": 4, "messages_failed": 1, "messages_skipped": 1,
                      "events": 5, "events_written": events_written, "events_refused": events_refused,
                      "messages_written": events_written, "tombstones": 0,
                      "dead_lettered": 1 + events_refused if errors == "dead-letter" else 0}
    # The dead letters hold the source messages, one for each error: the broken one, and the message of each event
    # refused (the INSERT of two rows twice, under strict).
    refused = [TRUNCATE] if target == "maxwell-json" else [MESSAGES[0], MESSAGES[0], MESSAGES[3], MESSAGES[5]]
    assert sorted(dead) == (sorted([BROKEN, *refused]) if errors == "dead-letter" else [])
    assert by_bridge(target, errors) == (counts, written, dead)
    assert by_spark(target, errors) == (counts, written, dead)


@pytest.mark.parametrize("target", TARGETS)
def test_fail_stops_the_three_at_the_same_error(target: str) -> None:
    with pytest.raises(CodecError) as converting:
        by_convert(target, "fail")
    bridge = a_bridge(target, "fail")
    with pytest.raises(CodecError) as bridging:
        bridge.convert([Consumed(n, message) for n, message in enumerate(MESSAGES)], Producer(), lambda *_: None)
    with pytest.raises(CodecError) as sparking:
        spark_partition(target, "fail")
    # strict refuses the first event; else the broken message is the first error
    first = converting.value
    assert (first.format, first.reason) == (("debezium-json", "debezium-json cannot carry key: not written") if
                                            TARGETS[target] else ("canal-json", first.reason))
    for other in (bridging.value, sparking.value):
        assert (type(other), other.format, other.reason, other.field) == (
            type(first), first.format, first.reason, first.field)
    assert bridge.counts.failed == 1


def test_each_adapter_says_its_counts_in_its_own_line() -> None:
    counts = cf.ConversionStats(messages_read=7, messages_decoded=4, messages_failed=1, messages_skipped=2, events=6,
                                events_written=5, events_refused=1, messages_written=5, tombstones=1,
                                dead_lettered=1)
    assert progress_line(counts) == "consumed 7  produced 5  tombstones 1  skipped 2  dead-lettered 1"
    assert summary(counts) == "7 rows in: 5 written, 1 dead-lettered, 1 left out, 2 without a change"


def test_a_tombstone_holds_no_change_and_the_bridge_passes_it_on() -> None:
    bridge, producer = a_bridge("maxwell-json", "fail"), Producer()
    bridge.convert([Consumed(0, MESSAGES[3], b"k"), Consumed(1, None, b"k")], producer, lambda *_: None)
    assert (bridge.counts.messages_read, bridge.counts.messages_skipped, bridge.counts.tombstones) == (2, 1, 1)
    assert producer.topics["out"][-1] is None
    # In the Spark job, a null row is a message without a change, as a tombstone is.
    convert = _partition_converter("canal-json", "maxwell-json", (), "fail", keyed=False)
    (result,) = convert(iter([pa.RecordBatch.from_pydict({"value": pa.array([None], pa.binary())})]))
    assert json.loads(result.to_pylist()[-1]["counts"])["messages_skipped"] == 1


def test_the_partitions_counts_add_up_into_the_jobs() -> None:
    total, part = cf.ConversionStats(), by_convert("maxwell-json", "skip")[0]
    for _ in range(2):
        total.add(cf.ConversionStats(**part))
    assert total.counts() == {name: 2 * count for name, count in part.items()}
