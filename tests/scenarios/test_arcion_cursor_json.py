"""An ``arcion.cursor.json`` attribute that holds something other than a cursor entry's name (here a signalling NaN
decimal, which Python cannot even hash) names no entry: the event is written to arcion like any other, where the
arcion codec used to fail with a TypeError (found by the JVM port of the arcion encoder, which read it so)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import cdcformats as cf
from tests.scenarios.conftest import Runner


def test_a_cursor_json_attribute_that_names_no_entry_is_written_past(cdcformats: Runner, tmp_path: Path) -> None:
    events = [cf.ChangeEvent(cf.Op.INSERT, cf.Table("orders"), (), None, (cf.Cell("id", 1),),
                             cf.Source("arcion", (("position", 7),)),
                             attributes=(("arcion.cursor.json", Decimal("sNaN")),)),
              cf.ChangeEvent(cf.Op.INSERT, cf.Table("orders"), (), None, (cf.Cell("id", 2),))]
    with (tmp_path / "events.avro").open("wb") as stream:  # what another producer's pipeline wrote
        avro = cf.codec("avro")
        writer = avro.file_writer(stream)
        writer.write([message for event in events for message in avro.encode_messages(event)])
        writer.close()
    ran = cdcformats("convert", "-f", "avro", "-t", "arcion", "events.avro", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [message["after"]["id"] for message in written] == [1, 2]
    assert written[0]["cursor"] == {"position": 7}
