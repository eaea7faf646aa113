"""A decimal whose scale no 32-bit integer holds (``1E-2147483648``, which Python's Decimal and the canonical
envelopes carry) converted to debezium-avro, whose decimals keep their scale in an Avro ``int``: written as its text,
as debezium-avro writes a decimal it has no form for, where the conversion used to fail on fastavro's ValueError."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import cdcformats as cf
from tests.scenarios.conftest import Runner


def test_a_decimal_beyond_an_int32_scale_is_written_as_its_text(cdcformats: Runner, tmp_path: Path) -> None:
    events = [cf.ChangeEvent(cf.Op.INSERT, cf.Table("orders", "shop"), (cf.Cell("id", 1),), None,
                             (cf.Cell("id", 1), cf.Cell("tiny", Decimal("1E-2147483648")))),
              cf.ChangeEvent(cf.Op.INSERT, cf.Table("orders", "shop"), (cf.Cell("id", 2),), None,
                             (cf.Cell("id", 2), cf.Cell("tiny", "1E-2147483648")))]
    with (tmp_path / "events.avro").open("wb") as stream:  # what another producer's pipeline wrote
        avro = cf.codec("avro")
        writer = avro.file_writer(stream)
        writer.write([message for event in events for message in avro.encode_messages(event)])
        writer.close()
    ran = cdcformats("convert", "-f", "avro", "-t", "debezium-avro", "events.avro", "out.jsonl",
                     "--registry", str(tmp_path / "registry.sqlite"))
    assert ran.returncode == 0, ran.stderr
    assert "2 events (2 written, 0 refused)" in ran.stderr, ran.stderr
    back = cf.codec("debezium-avro", schema_registry=str(tmp_path / "registry.sqlite"))
    records = [back.record_of_line(line) for line in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert [back.decode_messages(record)[0].after[1].value for record in records] == ["1E-2147483648"] * 2
