"""How far ahead of confluent-kafka's own Avro serdes do cdcformats' Kafka serdes stay, on the same envelope?

Both sides write (and read) the canonical Avro envelope in Confluent's wire format, through one embedded registry
file: ``ChangeEventSerializer("avro")`` takes each ``ChangeEvent``, confluent-kafka's ``AvroSerializer`` the
envelope's record (``record_from_event``), built before the clock starts; ``ChangeEventDeserializer("avro")`` gives
back each ``ChangeEvent``, confluent-kafka's ``AvroDeserializer`` the record (a dict), not turned into an event.
So confluent's side is timed doing less than ours. ``lead`` is confluent's time over ours; issue 30 keeps it at
least 4 x both ways (``!`` marks a lead under it). Times are microseconds per event, the median of 5 runs with the
garbage collector off.

    .venv/bin/python benchmarks/kafka_serdes.py [--messages 20000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from model_floor import median_seconds, region_changes

from cdcformats.envelopes.avro import record_from_event
from cdcformats.kafka import ChangeEventDeserializer, ChangeEventSerializer
from cdcformats.schema_registry import connect
from cdcformats.schemas import avro_schema_text

LEAD_BOUND = 4.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000, help="Arcion messages to convert (default 20000)")
    arguments = parser.parse_args()
    events = region_changes(arguments.messages)
    with tempfile.TemporaryDirectory(prefix="kafka-serdes-") as directory:
        registry = connect(Path(directory) / "registry.sqlite")
        context = SerializationContext("tpch.region", MessageField.VALUE)
        ours_write = ChangeEventSerializer("avro", registry)
        theirs_write = AvroSerializer(registry, avro_schema_text())
        ours_read = ChangeEventDeserializer("avro", registry)
        theirs_read = AvroDeserializer(registry)
        records = [record_from_event(event) for event in events]
        framed = [ours_write(event, context) for event in events]
        assert framed == [theirs_write(record, context) for record in records]  # the same bytes, or no comparison
        times = {
            "serialize": (median_seconds(lambda: [ours_write(event, context) for event in events]),
                          median_seconds(lambda: [theirs_write(record, context) for record in records])),
            "deserialize": (median_seconds(lambda: [ours_read(data, context) for data in framed]),
                            median_seconds(lambda: [theirs_read(data, context) for data in framed])),
        }
    print(f"{len(events):,} of Arcion's tpch.region changes as the canonical Avro envelope in Confluent's wire format; "
          f"microseconds per event, median of 5 runs, garbage collector off; lead >= {LEAD_BOUND} x ('!' = under)")
    print(f"{'':<12} {'cdcformats':>11} {'confluent':>10} {'lead':>7}")
    for name, (ours, theirs) in times.items():
        lead = theirs / ours
        print(f"{name:<12} {ours / len(events) * 1e6:11.2f} {theirs / len(events) * 1e6:10.2f} "
              f"{lead:6.2f}{'!' if lead < LEAD_BOUND else ' '}")


if __name__ == "__main__":
    main()
