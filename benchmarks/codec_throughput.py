"""Decode and encode throughput of each format, one core, as ratios against a floor measured in the same run.

The floor does the same work by hand without cdcformats: msgspec parses the Lindorm JSON and fastavro writes the
canonical Avro record built straight from the parsed dicts. `ratio` is our time over the floor's time (1.0: as fast
as hand-written code; the target for Lindorm -> Avro is at most 1.5).

    .venv/bin/python benchmarks/codec_throughput.py [--messages 100000]
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from typing import Any

import fastavro
import msgspec

import cdcformats as cf
from sample_streams import lindorm_messages
from cdcformats.schemas import avro_schema


# The floor types values by column type as cdcformats does (without its check that the text reads back the same).
_TYPED = {"BIGINT": int, "BOOLEAN": lambda text: text == "true",
          "DECIMAL": lambda text: ("cdcformats.v1.Decimal", {"text": text})}


def _typed(entry: dict[str, Any]) -> Any:
    value = entry.get("value")
    convert = _TYPED.get(entry.get("type", ""))
    return convert(value) if convert is not None and value is not None else value


def floor_lindorm_to_avro(messages: list[bytes]) -> int:
    """msgspec + fastavro by hand: parse, map each entry to a typed cell record, write the canonical Avro body."""
    schema = fastavro.parse_schema(avro_schema())
    decode = msgspec.json.Decoder().decode
    written = 0
    for message in messages:
        document = decode(message)
        cells = [{"name": entry["name"], "value": _typed(entry), "type": entry.get("type"),
                  "version": int(entry["ts"]) if entry.get("ts") else None, "kind": "PUT"}
                 for entry in document["data"]]
        record = {"op": "UPSERT", "table": {"catalog": None, "schema": None, "name": document["table"]}, "key": [],
                  "before": None, "after": cells,
                  "source": {"system": None, "position": [], "commit_time_us": int(document["ts"]) * 1000,
                             "capture_time_us": None},
                  "key_only": False, "attributes": []}
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, record)
        written += len(buffer.getvalue())
    return written


def timed(work: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    count = parser.parse_args().messages
    messages = lindorm_messages(count)
    floor = timed(lambda: floor_lindorm_to_avro(messages))
    rows = [("floor: msgspec + fastavro by hand, lindorm -> avro", floor)]
    lindorm = cf.codec("lindorm", key_columns=["id"])
    events = list(lindorm.decode(messages))
    avro = cf.codec("avro")
    avro_messages = list(avro.encode(events))
    protobuf = cf.codec("protobuf")
    protobuf_messages = list(protobuf.encode(events))
    rows += [
        ("cdcformats convert lindorm -> avro", timed(lambda: sum(1 for _ in cf.convert(messages, lindorm, avro)))),
        ("lindorm decode", timed(lambda: sum(1 for _ in lindorm.decode(messages)))),
        ("lindorm encode", timed(lambda: sum(1 for _ in lindorm.encode(events)))),
        ("avro encode", timed(lambda: sum(1 for _ in avro.encode(events)))),
        ("avro decode", timed(lambda: sum(1 for _ in avro.decode(avro_messages)))),
        ("protobuf encode", timed(lambda: sum(1 for _ in protobuf.encode(events)))),
        ("protobuf decode", timed(lambda: sum(1 for _ in protobuf.decode(protobuf_messages)))),
    ]
    print(f"{count} Lindorm messages of ~{sum(map(len, messages)) // count} bytes, best of 3, one core")
    print(f"{'work':<55} {'seconds':>8} {'events/s':>10} {'ratio':>6}")
    for name, seconds in rows:
        print(f"{name:<55} {seconds:8.3f} {count / seconds:10.0f} {seconds / floor:6.2f}")


if __name__ == "__main__":
    main()
