"""How near the floors of ``codec_throughput.py`` can a codec come that builds (or reads) the canonical event?

``codec_throughput.py`` measures each format against a bare msgspec parse or write of its JSON. This script writes the
least any codec of the canonical model must do for debezium-json by hand, with no checks and no ``dropped()``: build
the event's cells, table and source out of the parsed document, or build the document out of the event; and prints
both against the same floors, in the same run, next to the ``debezium-json`` codec. What the hand-written codec costs
over the floor is the model's own share, which no work on a codec can take away.

    .venv/bin/python benchmarks/model_floor.py [--messages 20000]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import msgspec
from codec_throughput import timed

import cdcformats as cf
from cdcformats import samples
from cdcformats.model import Cell, ChangeEvent, Image, Op, Source, Table

_parse = msgspec.json.Decoder().decode
_write = msgspec.json.encode
_OP_OF_CODE = {"c": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE, "r": Op.READ}
_CODE_OF_OP = {op: code for code, op in _OP_OF_CODE.items()}
_SOURCE_FIELDS = ("connector", "ts_ms", "db", "schema", "table")


def _image(row: dict[str, Any] | None) -> Image | None:
    return None if row is None else tuple(Cell(name, value) for name, value in row.items())


def decode_by_hand(message: bytes) -> ChangeEvent:
    document = _parse(message)
    source = document["source"]
    table = Table(source["table"], source.get("schema"), source.get("db")) if "table" in source else None
    position = tuple((name, value) for name, value in source.items() if name not in _SOURCE_FIELDS)
    return ChangeEvent(_OP_OF_CODE[document["op"]], table, (), _image(document["before"]), _image(document["after"]),
                       Source(source.get("connector"), position, source.get("ts_ms", 0) * 1000))


def encode_by_hand(event: ChangeEvent) -> bytes:
    table = event.table
    source = {"connector": event.source.system, "ts_ms": (event.source.commit_time_us or 0) // 1000}
    if table is not None:
        source.update(db=table.catalog, schema=table.schema, table=table.name)
    source.update(event.source.position)
    return _write({"before": None if event.before is None else {cell.name: cell.value for cell in event.before},
                   "after": None if event.after is None else {cell.name: cell.value for cell in event.after},
                   "source": source, "op": _CODE_OF_OP.get(event.op, "c")})


def per_event(work: Callable[[], Any], count: int) -> float:
    """Microseconds per event, best of 5, timed as codec_throughput times."""
    return timed(work, repeat=5) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    count = parser.parse_args().messages
    codec = cf.codec("debezium-json")
    messages = list(codec.encode(cf.codec("arcion", key_columns=["r_regionkey"]).decode(samples.arcion_region(count))))
    events = list(codec.decode(messages))
    documents = [_parse(message) for message in messages]
    rows = [
        ("decode", per_event(lambda: [_parse(m) for m in messages], len(messages)),
         per_event(lambda: [decode_by_hand(m) for m in messages], len(messages)),
         per_event(lambda: list(codec.decode(messages)), len(messages))),
        ("encode", per_event(lambda: [_write(d) for d in documents], len(events)),
         per_event(lambda: [encode_by_hand(e) for e in events], len(events)),
         per_event(lambda: list(codec.encode(events)), len(events))),
    ]
    print(f"debezium-json, {len(messages):,} of Arcion's relational changes; microseconds per event, best of 5, "
          "garbage collector off")
    print(f"{'work':<8} {'floor':>7} {'by hand':>8} {'ratio':>6} {'codec':>7} {'ratio':>6}")
    for work, floor, by_hand, ours in rows:
        print(f"{work:<8} {floor:7.2f} {by_hand:8.2f} {by_hand / floor:6.1f} {ours:7.2f} {ours / floor:6.1f}")


if __name__ == "__main__":
    main()
