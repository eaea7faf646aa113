"""Every example of the original product pages, reproduced exactly (fixtures in tests/fixtures/seeds)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

import cdcformats as cf
from cdcformats import Cell, CellKind, ChangeEvent, DecodeError, Op, Source, Table

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"


def _json_value(message: bytes) -> object:
    return msgspec.json.decode(message)


# -- Lindorm ----------------------------------------------------------------------------------------------------------

TEMPLATE = (SEEDS / "lindorm-streams-template.json").read_bytes()
FILLED = {"<tableName>": "orders", "<defaultVersion>": "1677165953000", "<keyOnly>": "false", "<type>": "BIGINT",
          "<name>": "amount", "<version>": "1677165953001", "<value>": "42"}


def test_lindorm_template_with_its_placeholders_is_refused_at_the_op() -> None:
    with pytest.raises(DecodeError, match=r"^lindorm: message 1: field op: unknown op '<opType>'"):
        list(cf.codec("lindorm").decode([TEMPLATE]))


@pytest.mark.parametrize("op", ["Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"])
def test_lindorm_template_filled_in_round_trips_to_the_same_json(op: str) -> None:
    text = TEMPLATE.decode()
    for placeholder, value in {**FILLED, "<opType>": op}.items():
        text = text.replace(placeholder, value)
    codec = cf.codec("lindorm", key_columns={"orders": ["id"]})  # the template has no key entry
    [event] = codec.decode([text.encode()])
    assert _json_value(codec.encode_event(event)) == json.loads(text)
    cell = Cell("amount", 42, "BIGINT", 1677165953001, {
        "Put": CellKind.PUT, "DeleteFamily": CellKind.PUT, "DeleteColumn": CellKind.DELETE_ALL_VERSIONS}.get(
        op, CellKind.DELETE_VERSION))
    image = (cell,)
    expected_op = {"Put": Op.UPSERT, "DeleteFamily": Op.DELETE}.get(op, Op.UPDATE)
    assert event == ChangeEvent(
        expected_op, Table("orders"),
        before=image if op == "DeleteFamily" else None, after=None if op == "DeleteFamily" else image,
        source=Source(commit_time_us=1677165953000000),
        attributes=(("lindorm.op", op),) if op == "DeleteFamilyVersion" else ())


# -- Arcion -----------------------------------------------------------------------------------------------------------

CURSOR_KEYS = ["extractorId", "timestamp", "extractionTimestamp", "log", "position", "logSeqNum", "slaveServerId", "v"]


@pytest.mark.parametrize("sample", ["snapshot", "insert", "update", "delete"])
def test_arcion_samples_round_trip_to_the_same_json(sample: str) -> None:
    message = (SEEDS / f"arcion-{sample}.json").read_bytes()
    codec = cf.codec("arcion", table="tpch.region", key_columns=["r_regionkey"])
    [event] = codec.decode([message])
    encoded = codec.encode_event(event)
    assert _json_value(encoded) == json.loads(message)
    assert list(_json_value(encoded)) == list(json.loads(message))  # and the same field order


def test_arcion_update_sample_decodes_to_its_event() -> None:
    [event] = cf.codec("arcion", key_columns=["r_regionkey"]).decode([(SEEDS / "arcion-update.json").read_bytes()])
    assert event == ChangeEvent(
        Op.UPDATE, Table("region", "tpch", None), key=(Cell("r_regionkey", "2"),),
        before=(Cell("r_regionkey", "2"), Cell("r_comment", "Test_Replication"), Cell("r_name", "ASIA")),
        after=(Cell("r_regionkey", "2"), Cell("r_comment", "Testing_Replication"), Cell("r_name", "ASIA")),
        source=Source(position=(("extractorId", 0), ("timestamp", 1677166633000),
                                ("extractionTimestamp", 1677146833980), ("log", "log-bin.000001"),
                                ("position", 3620), ("logSeqNum", 1), ("slaveServerId", 1), ("v", 2)),
                      commit_time_us=1677166633000000),  # the cursor's timestamp: the source's commit time
        attributes=(("arcion.namespace_hash", -1732472540), ("arcion.table_hash", 1193131537)))


def test_arcion_samples_typed_by_a_table_schema_still_round_trip() -> None:
    codec = cf.codec("arcion", column_types={"tpch.region": {"r_regionkey": "BIGINT"}}, table="tpch.region")
    for sample in ("snapshot", "insert", "update", "delete"):
        message = (SEEDS / f"arcion-{sample}.json").read_bytes()
        [event] = codec.decode([message])
        image = event.after or event.before
        assert image[0] == Cell("r_regionkey", int(json.loads(message).get("r_regionkey") or (
            json.loads(message)["after"] or json.loads(message)["before"])["r_regionkey"]), "BIGINT")
        assert _json_value(codec.encode_event(event)) == json.loads(message)


def test_arcion_snapshot_row_is_a_read_of_the_configured_table() -> None:
    [event] = cf.codec("arcion", table="tpch.region").decode([(SEEDS / "arcion-snapshot.json").read_bytes()])
    assert event == ChangeEvent(Op.READ, Table("region", "tpch"), after=(
        Cell("r_regionkey", "1"), Cell("r_name", "AMERICA"), Cell("r_comment", "Test_Replication")))


# -- Tablestore -------------------------------------------------------------------------------------------------------

def _seed_rows() -> list[tuple]:
    """The page's rows; a null field is left out of a printed line, so fields are placed by the op's layout."""
    rows = []
    for line in (SEEDS / "ots-stream-reader-rows.txt").read_text().splitlines()[1:]:
        pk1, pk2, *rest = line.split()
        op = rest[-1]
        if op == "U":
            column, timestamp, value = rest[0], int(rest[1]), rest[2]
        elif op == "DO":
            column, timestamp, value = rest[0], int(rest[1]), None
        elif op == "DA":
            column, timestamp, value = rest[0], None, None
        else:
            column, timestamp, value = None, None, None
        rows.append((pk1, pk2, column, timestamp, value, op))
    return rows


def test_the_seven_ots_rows_are_three_records_and_re_encode_to_the_same_rows() -> None:
    rows = _seed_rows()
    assert len(rows) == 7
    codec = cf.codec("ots", primary_key=["pkName1", "pkName2"])
    events = list(codec.decode(rows))

    def key(n: int) -> tuple[Cell, ...]:
        return Cell("pkName1", f"pk1_V{n}"), Cell("pkName2", f"pk2_V{n}")

    assert events == [
        ChangeEvent(Op.UPDATE, key=key(1), after=(
            Cell("col_a", "col_val1", version=1441803688001), Cell("col_a", "col_val2", version=1441803688002),
            Cell("col_b", "col_val3", version=1441803688003))),
        ChangeEvent(Op.UPDATE, key=key(2), after=(
            Cell("col_a", version=1441803688000, kind=CellKind.DELETE_VERSION),
            Cell("col_b", kind=CellKind.DELETE_ALL_VERSIONS))),
        ChangeEvent(Op.UPSERT, key=key(3), after=(Cell("col_a", "col_val1", version=1441803688005),)),
    ]
    assert list(codec.encode(events)) == rows


def test_ots_rows_with_sequence_info_group_exactly_and_come_back_the_same() -> None:
    sequence = "0000000002_00001441803688005000_0000000007_shard-1"
    rows = [(*row, f"{sequence}:{index:010d}") for index, row in enumerate(_seed_rows()[5:])]
    codec = cf.codec("ots", primary_key=["pkName1", "pkName2"], table="orders")
    [event] = codec.decode(rows)
    assert event.source == Source(position=(("epoch", 2), ("row_index", 7), ("shard_id", "shard-1")),
                                  commit_time_us=1441803688005000)
    assert event.table == Table("orders")
    assert list(codec.encode([event])) == rows


def test_ots_json_text_form_carries_the_seed_rows() -> None:
    rows = _seed_rows()
    lines = [msgspec.json.encode(list(row)) for row in rows]
    codec = cf.codec("ots-json", primary_key=["pkName1", "pkName2"])
    assert list(codec.encode(codec.decode(lines))) == lines
