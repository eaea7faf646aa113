"""Regression tests of issue 13 for the formats that read the key out of the row (Lindorm, Arcion) and Tablestore as
targets: each writes another format's event in its closest form, reports what differs as ``Loss`` entries, and
refuses only a change it has no form for, which ``cf.loss`` declares beforehand."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

import cdcformats as cf
from cdcformats import REFUSED, Cell, CellKind, ChangeEvent, EncodeError, Loss, Op, Source, Table
from cdcformats.cli import main
from cdcformats.codecs.ots import wall_clock_ms

EXAMPLES = Path(cf.__file__).parent / "examples"


def round_trip(codec: cf.Codec, event: ChangeEvent) -> list[ChangeEvent]:
    return list(codec.decode(codec.encode([event])))


def test_arcion_to_lindorm_writes_inserts_reads_and_updates_as_puts() -> None:
    result = CliRunner().invoke(main, ["convert", "--from", "arcion", "--to", "lindorm", str(EXAMPLES / "arcion.jsonl"),
                                       "-", "--option", 'key_columns=["r_regionkey"]'])
    assert result.exit_code == 0, result.output
    ops = [msgspec.json.decode(line)["op"] for line in result.stdout_bytes.splitlines()]
    assert ops == ["Put", "Put", "Put", "DeleteFamily"]  # the snapshot row, the I, the U, the D


def test_a_relational_insert_is_a_lindorm_put_and_dropped_says_so() -> None:
    lindorm = cf.codec("lindorm", key_columns=["id"])
    insert = ChangeEvent(Op.INSERT, Table("orders"), key=(Cell("id", "o-1"),),
                         after=(Cell("id", "o-1"), Cell("status", "new")))
    assert [loss[:3] for loss in lindorm.dropped(insert)] == [("op.INSERT", "op", Op.UPSERT)]
    assert round_trip(lindorm, insert) == [ChangeEvent(Op.UPSERT, Table("orders"), key=insert.key, after=insert.after)]
    update = ChangeEvent(Op.UPDATE, Table("orders"), key=insert.key, before=insert.after,
                         after=(Cell("id", "o-1"), Cell("status", "paid")))
    assert [loss[:3] for loss in lindorm.dropped(update)] == [("op.UPDATE", "op", Op.UPSERT),
                                                              ("before", "before", None)]
    debezium_insert = b'{"before": null, "after": {"id": 1, "status": "new"}, "source": {}, "op": "c"}'
    [message] = cf.convert([debezium_insert], "debezium-json", "lindorm")
    assert msgspec.json.decode(message)["op"] == "Put"


def test_tablestore_key_cells_go_into_the_lindorm_row() -> None:
    rows = (EXAMPLES / "ots-json.jsonl").read_bytes().splitlines()
    for options in ({}, {"key_columns": ["pk1", "pk2"]}):
        lindorm = cf.codec("lindorm", **options)
        messages = list(cf.convert(rows, cf.codec("ots-json", primary_key=["pk1", "pk2"]), lindorm))
        for message in messages:
            names = [entry["name"] for entry in msgspec.json.decode(message)["data"]]
            assert names[:2] == ["pk1", "pk2"]
        if options:
            assert [event.key for event in lindorm.decode(messages)][0] == (Cell("pk1", "pk1_V1"),
                                                                            Cell("pk2", "pk2_V1"))
    update = ChangeEvent(Op.UPDATE, key=(Cell("pk", "k"),),
                         after=(Cell("col", None, None, 5, CellKind.DELETE_VERSION),))
    lindorm = cf.codec("lindorm")
    # a Delete of one column, its row key entry written too; without key_columns it reads back as a deletion
    assert msgspec.json.decode(lindorm.encode_messages(update)[0])["op"] == "Delete"
    assert round_trip(lindorm, update) == [ChangeEvent(Op.UPDATE, after=(
        Cell("pk", "k", kind=CellKind.DELETE_VERSION), Cell("col", None, None, 5, CellKind.DELETE_VERSION)))]


@pytest.mark.parametrize("target, options", [("lindorm", {}), ("arcion", {"table": "t"}),
                                             ("ots", {"primary_key": ["id"]}), ("ots-json", {"primary_key": ["id"]})])
def test_a_truncate_is_refused_and_declared(target: str, options: dict) -> None:
    codec = cf.codec(target, **options)
    truncate = ChangeEvent(Op.TRUNCATE, Table("t"), key=(Cell("id", 1),), source=Source(commit_time_us=1000))
    assert codec.dropped(truncate)[-1][:3] == ("op.TRUNCATE", "op", REFUSED)
    with pytest.raises(EncodeError):
        list(codec.encode([truncate]))
    assert "op.TRUNCATE" in cf.loss("debezium-json", codec)


def test_tablestore_needs_its_primary_key_and_says_so_beforehand() -> None:
    ots = cf.codec("ots", primary_key=["id"])
    assert "requires key" in cf.loss("arcion", "ots", primary_key=["id"])
    keyless = ChangeEvent(Op.INSERT, after=(Cell("name", "x"),), source=Source(commit_time_us=5000))
    assert ots.dropped(keyless) == [Loss("requires key", "key", REFUSED, ots.dropped(keyless)[0].why)]
    with pytest.raises(EncodeError, match="primary key"):
        list(ots.encode([keyless]))


def test_relational_images_into_tablestore() -> None:
    ots = cf.codec("ots", primary_key=["id"])
    time = Source(commit_time_us=1_700_000_000_123_456)
    insert = ChangeEvent(Op.INSERT, after=(Cell("id", 1), Cell("name", "x")), source=time)
    assert list(ots.encode([insert])) == [(1, None, None, None, "DR"), (1, "name", 1_700_000_000_123, "x", "U")]
    update = ChangeEvent(Op.UPDATE, before=(Cell("id", 1), Cell("name", "x")),
                         after=(Cell("id", 1), Cell("name", "y")), source=time)
    assert list(ots.encode([update])) == [(1, "name", 1_700_000_000_123, "y", "U")]  # an UpdateRow, no before
    delete = ChangeEvent(Op.DELETE, before=(Cell("id", 1), Cell("name", "y")))
    assert list(ots.encode([delete])) == [(1, None, None, None, "DR")]
    assert round_trip(ots, delete) == [ChangeEvent(Op.DELETE, key=(Cell("id", 1),))]


def test_arcion_needs_a_table_for_a_realtime_message_and_writes_an_upsert_as_an_insert() -> None:
    upsert = ChangeEvent(Op.UPSERT, after=(Cell("id", "1"),))
    arcion = cf.codec("arcion")
    assert "requires table" in cf.loss("lindorm", arcion)
    with pytest.raises(EncodeError, match="option table"):
        list(arcion.encode([upsert]))
    named = cf.codec("arcion", table="tpch.region")
    assert "requires table" not in cf.loss("lindorm", named)
    [message] = named.encode([upsert])
    assert msgspec.json.decode(message)["opType"] == "I"
    assert round_trip(named, upsert) == [ChangeEvent(Op.INSERT, Table("region", "tpch"), after=upsert.after)]


def test_tablestore_dates_a_cell_that_nothing_dates_at_the_time_of_writing_or_the_option() -> None:
    undated = ChangeEvent(Op.UPSERT, key=(Cell("id", 1),), after=(Cell("name", "x"),))  # no version, no commit time
    ots = cf.codec("ots", primary_key=["id"])
    assert "requires source.commit_time" not in cf.loss("arcion", ots)
    before = wall_clock_ms()
    [loss] = ots.dropped(undated)
    assert loss.feature == "cell.version" and loss.path == "after[0].version"
    assert before <= loss.written <= wall_clock_ms()  # the time of writing, as Tablestore stamps such a write
    with pytest.raises(cf.LossyConversionError, match="cell.version"):
        list(cf.convert(cf.codec("avro").encode([undated]), "avro", ots, strict=True))
    ots.clock = lambda: 1_234  # the clock a conversion reads, fixed: what dropped() says is what encode writes
    assert list(ots.encode([undated])) == [(1, None, None, None, "DR"), (1, "name", 1_234, "x", "U")]
    assert round_trip(ots, undated) == [cf.without(undated, ots.dropped(undated))]
    fixed = cf.codec("ots-json", primary_key=["id"], default_version=7)
    assert list(fixed.encode([undated]))[1] == b'[1,"name",7,"x","U"]'
    committed = ChangeEvent(Op.UPSERT, key=undated.key, after=undated.after, source=Source(commit_time_us=5_000_000))
    assert list(fixed.encode([committed]))[1] == b'[1,"name",5000,"x","U"]'  # the commit time comes first
