"""maxwell-json on published examples, and the choices its module docstring spells out."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source, Table

FIXTURES = Path(__file__).parent.parent / "fixtures" / "maxwell"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def lines(name: str) -> list[bytes]:
    return [line for line in fixture(name).splitlines() if line.strip()]


def row(**values: object) -> tuple[Cell, ...]:
    return tuple(Cell(name, value) for name, value in values.items())


def at(seconds: int, *position: tuple[str, object]) -> Source:
    return Source(position=position, commit_time_us=seconds * 1_000_000)


E_TABLE = Table("e", "test")
E_INSERTED = row(id=1, m=4.2341, c="2016-10-21 05:33:37.523000", comment="I am a creature of light.")
E_UPDATED = row(id=1, m=5.444, c="2016-10-21 05:33:54.631000", comment="I am a creature of light.")


def test_the_dataformat_insert() -> None:
    event = cf.codec("maxwell-json").decode_message(fixture("dataformat-insert.json"))
    assert event == ChangeEvent(
        Op.INSERT, E_TABLE, after=E_INSERTED,
        source=at(1477053217, ("xid", 23396), ("commit", True), ("position", "master.000006:800911"),
                  ("server_id", 23042), ("thread_id", 108)))


def test_the_dataformat_update_puts_the_old_values_back() -> None:
    event = cf.codec("maxwell-json").decode_message(fixture("dataformat-update.json"))
    assert event == ChangeEvent(Op.UPDATE, E_TABLE, before=E_INSERTED, after=E_UPDATED, source=at(1477053234))


def test_the_dataformat_delete() -> None:
    event = cf.codec("maxwell-json", key_columns=["id"]).decode_message(fixture("dataformat-delete.json"))
    assert event == ChangeEvent(Op.DELETE, E_TABLE, key=(Cell("id", 1),), before=E_UPDATED)


def test_a_schema_change_is_refused_as_no_row_change() -> None:
    with pytest.raises(cf.DecodeError, match="table-create is a schema change") as error:
        list(cf.codec("maxwell-json").decode([fixture("dataformat-table-create.json")]))
    assert error.value.field == "type" and error.value.position == 0


def test_datetimes_stay_text_and_sets_are_kept_as_json() -> None:
    codec = cf.codec("maxwell-json")
    datetime, sets = codec.decode(lines("dataformat-types.jsonl"))
    assert datetime == ChangeEvent(Op.INSERT, Table("test_datetime"), after=row(dtcol="0000-00-00 00:00:00"))
    assert sets == ChangeEvent(Op.INSERT, Table("test_sets"), after=(Cell("setcol", '["b_val","c_val"]', "JSON"),))
    assert json.loads(codec.encode_event(sets))["data"] == {"setcol": ["b_val", "c_val"]}


def test_the_readme_insert_and_update() -> None:
    insert, update = cf.codec("maxwell-json").decode(lines("readme.jsonl"))
    table = Table("maxwell", "test")
    assert insert == ChangeEvent(Op.INSERT, table, after=row(id=1, daemon="Stanislaw Lem"),
                                 source=at(1449786310, ("xid", 940752), ("commit", True)))
    assert update == ChangeEvent(Op.UPDATE, table, before=row(id=1, daemon="Stanislaw Lem"),
                                 after=row(id=1, daemon="Firebus!  Firebus!"),
                                 source=at(1449786341, ("xid", 940786), ("commit", True)))


def test_a_bootstrap_reads_rows_and_refuses_its_markers() -> None:
    errors: list[cf.DecodeError] = []
    events = list(cf.codec("maxwell-json").decode(lines("bootstrap.jsonl"), on_error=errors.append))
    table = Table("barTable", "fooDB")
    assert events == [
        ChangeEvent(Op.INSERT, table, after=row(txt="hello"), source=at(1450557598, ("xid", 13))),
        ChangeEvent(Op.INSERT, table, after=row(txt="bootstrap!"), source=at(1450557598, ("xid", 13))),
        ChangeEvent(Op.READ, table, after=row(txt="hello"), source=at(1450557744)),
        ChangeEvent(Op.READ, table, after=row(txt="bootstrap!"), source=at(1450557744)),
    ]
    assert [(error.position, error.field) for error in errors] == [(2, "type"), (5, "type")]
    assert "bootstrap-start marks a bootstrap" in errors[0].reason


# Flink's test data: (type, ts, xid, xoffset or None when it is the commit row, data, old)
FLINK_ROWS = [
    ("insert", 1596684883, 7125, 0, (101, "scooter", "Small 2-wheel scooter", 3.14), {}),
    ("insert", 1596684883, 7125, 1, (102, "car battery", "12V car battery", 8.1), {}),
    ("insert", 1596684883, 7125, 2,
     (103, "12-pack drill bits", "12-pack of drill bits with sizes ranging from #40 to #3", 0.8), {}),
    ("insert", 1596684883, 7125, 3, (104, "hammer", "12oz carpenter's hammer", 0.75), {}),
    ("insert", 1596684883, 7125, 4, (105, "hammer", "14oz carpenter's hammer", 0.875), {}),
    ("insert", 1596684883, 7125, 5, (106, "hammer", "16oz carpenter's hammer", 1.0), {}),
    ("insert", 1596684883, 7125, 6, (107, "rocks", "box of assorted rocks", 5.3), {}),
    ("insert", 1596684883, 7125, 7, (108, "jacket", "water resistent black wind breaker", 0.1), {}),
    ("insert", 1596684883, 7125, None, (109, "spare tire", "24 inch spare tire", 22.2), {}),
    ("update", 1596684893, 7152, None, (106, "hammer", "18oz carpenter hammer", 1.0),
     {"description": "16oz carpenter's hammer"}),
    ("update", 1596684897, 7169, None, (107, "rocks", "box of assorted rocks", 5.1), {"weight": 5.3}),
    ("insert", 1596684900, 7186, None, (110, "jacket", "water resistent white wind breaker", 0.2), {}),
    ("insert", 1596684904, 7201, None, (111, "scooter", "Big 2-wheel scooter ", 5.18), {}),
    ("update", 1596684906, 7216, None, (110, "jacket", "new water resistent white wind breaker", 0.5),
     {"description": "water resistent white wind breaker", "weight": 0.2}),
    ("update", 1596684912, 7235, None, (111, "scooter", "Big 2-wheel scooter ", 5.17), {"weight": 5.18}),
    ("delete", 1596684914, 7250, None, (111, "scooter", "Big 2-wheel scooter ", 5.17), {}),
    ("update", 1596684928, 7291, 0, (101, "scooter", "Small 2-wheel scooter", 5.17), {"weight": 3.14}),
    ("update", 1596684928, 7291, None, (102, "car battery", "12V car battery", 5.17), {"weight": 8.1}),
    ("delete", 1596684938, 7322, 0, (102, "car battery", "12V car battery", 5.17), {}),
    ("delete", 1596684938, 7322, None,
     (103, "12-pack drill bits", "12-pack of drill bits with sizes ranging from #40 to #3", 0.8), {}),
]


def flink_event(row_type: str, ts: int, xid: int, xoffset: int | None, values: tuple, old: dict) -> ChangeEvent:
    data = row(**dict(zip(("id", "name", "description", "weight"), values)))
    position = (("xid", xid), ("xoffset", xoffset)) if xoffset is not None else (("xid", xid), ("commit", True))
    before, after = (data, None) if row_type == "delete" else (None, data)
    if row_type == "update":
        before = tuple(Cell(cell.name, old.get(cell.name, cell.value)) for cell in data)
    op = {"insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE}[row_type]
    return ChangeEvent(op, Table("product", "test"), (data[0],), before, after, at(ts, *position))


def test_flinks_test_data_with_primary_key_columns() -> None:
    codec = cf.codec("maxwell-json")
    assert list(codec.decode(lines("flink-maxwell-data.txt"))) == [flink_event(*values) for values in FLINK_ROWS]


def test_flinks_test_data_written_back_adds_only_the_key_values() -> None:
    codec = cf.codec("maxwell-json")
    for line in lines("flink-maxwell-data.txt"):
        original = json.loads(line)
        written = json.loads(codec.encode_event(codec.decode_message(line)))
        assert written.pop("primary_key") == [original["data"]["id"]]
        assert written == original


def test_primary_key_is_the_key_even_where_data_disagrees() -> None:
    # The shape of the example in Flink's maxwell format page, whose key values are not the row's.
    message = (b'{"database":"test","table":"e","type":"update","ts":1477053217,"primary_key":[1,"2016-10-21"],'
               b'"primary_key_columns":["id","c"],"data":{"id":111,"weight":5.15},"old":{"weight":5.18}}')
    event = cf.codec("maxwell-json").decode_message(message)
    assert event.key == row(id=1, c="2016-10-21")
    assert json.loads(cf.codec("maxwell-json").encode_event(event)) == json.loads(message)


def test_key_columns_name_the_values_of_primary_key_or_read_them_out_of_data() -> None:
    codec = cf.codec("maxwell-json", key_columns={"e": ["id"]})
    with_values = codec.decode_message(b'{"table":"e","type":"insert","primary_key":[7],"data":{"id":1}}')
    assert with_values.key == (Cell("id", 7),) and with_values.attributes == ()
    from_data = codec.decode_message(b'{"table":"e","type":"insert","data":{"id":1}}')
    assert from_data.key == (Cell("id", 1),)
    other_table = codec.decode_message(b'{"table":"f","type":"insert","primary_key":[7],"data":{"id":1}}')
    assert other_table.key == () and other_table.attributes == (("maxwell.field.primary_key", "[7]"),)


def test_other_fields_are_kept_and_written_back() -> None:
    message = (b'{"database":"d","table":"t","query":"INSERT INTO t VALUES (1)","type":"insert","ts":1,'
               b'"schema_id":4,"push_timestamp":1638500000.123456,"primary_key_columns":[],"data":{"id":1}}')
    codec = cf.codec("maxwell-json")
    event = codec.decode_message(message)
    assert event.attributes == (("maxwell.field.query", '"INSERT INTO t VALUES (1)"'),
                                ("maxwell.field.schema_id", "4"),
                                ("maxwell.field.push_timestamp", "1638500000.123456"))
    assert json.loads(codec.encode_event(event)) == json.loads(message)


@pytest.mark.parametrize("message, field", [
    (b'{"type": "table-alter", "table": "e", "data": {}}', "type"),
    (b'{"type": "INSERT", "data": {}}', "type"),
    (b'{"type": "insert"}', "data"),
    (b'{"type": "insert", "data": {"id": 1}, "old": {"id": 2}}', "old"),
    (b'{"type": "insert", "database": "test", "data": {}}', "table"),  # the field to add
    (b'{"type": "insert", "table": 7, "data": {}}', "table"),
    (b'{"type": "insert", "ts": 1477053217000000000, "data": {}}', "ts"),
    (b'{"type": "insert", "ts": "1477053217", "data": {}}', "ts"),
    (b'{"type": "insert", "xid": {"a": 1}, "data": {}}', "xid"),
    (b'{"type": "insert", "primary_key_columns": "id", "data": {}}', "primary_key_columns"),
    (b'{"type": "insert", "primary_key_columns": ["id"], "primary_key": [1, 2], "data": {}}', "primary_key"),
    (b'{"type": "insert", "data": {"id": 99999999999999999999}}', "data.id"),
])
def test_what_is_refused_is_named(message: bytes, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("maxwell-json").decode([message]))
    assert error.value.field == field


def written(event: ChangeEvent, **options: object) -> tuple[dict, ChangeEvent]:
    """The message maxwell-json writes for ``event``, and the event it reads back, which is the event with what
    ``dropped()`` reports applied."""
    codec = cf.codec("maxwell-json", **options)
    [message] = codec.encode([event])
    [back] = codec.decode([message])
    assert back == cf.without(event, codec.dropped(event)) and codec.dropped(back) == []
    return json.loads(message), back


def test_other_formats_written_as_maxwell() -> None:
    upsert = ChangeEvent(Op.UPSERT, Table("t"), key=(Cell("id", 1),), after=row(id=1, photo=b"\x89PNG",
                                                                              price=Decimal("3.10")))
    assert written(upsert)[0] == {
        "table": "t", "type": "insert", "primary_key": [1], "primary_key_columns": ["id"],
        "data": {"id": 1, "photo": "iVBORw==", "price": "3.10"}}
    key_only_delete = ChangeEvent(Op.DELETE, Table("t"), key=(Cell("id", 1),))
    assert written(key_only_delete)[0]["data"] == {"id": 1}
    assert {"op.UPSERT", "op.TRUNCATE", "table.catalog", "cell.version", "cell.type", "cell.kind.DELETE_VERSION",
            "value.bytes", "value.decimal", "value.float_nonfinite", "source.system", "source.capture_time",
            "source.time.sub_ms", "key_only", "attributes"} <= set(cf.loss("avro", "maxwell-json"))


def test_a_lindorm_delete_is_an_update_that_sets_the_column_to_null() -> None:
    """Issue 13: maxwell-json stopped at the first Lindorm Delete or DeleteColumn (an UPDATE whose after image holds
    deleted cells): a deleted column in a relational image is the column set to null in an update."""
    delete_column = ChangeEvent(Op.UPDATE, Table("orders"), after=(
        Cell("id", "o-1", "VARCHAR"), Cell("status", None, "VARCHAR", 1700000000500, cf.CellKind.DELETE_VERSION),
        Cell("note", None, kind=cf.CellKind.DELETE_ALL_VERSIONS)))
    message, back = written(delete_column)
    assert message["type"] == "update" and message["data"] == {"id": "o-1", "status": None, "note": None}
    assert back.after == back.before == row(id="o-1", status=None, note=None)  # no before image: nothing changed


@pytest.mark.parametrize("event, row_type, data", [
    (ChangeEvent(Op.READ, Table("t"), key=(Cell("id", 1),)), "bootstrap-insert", {"id": 1}),
    (ChangeEvent(Op.INSERT, Table("t"), before=row(id=1)), "insert", {}),
    (ChangeEvent(Op.DELETE, Table("t"), after=row(id=1)), "delete", {}),
    (ChangeEvent(Op.UPDATE, Table("t"), after=row(id=1, a=2)), "update", {"id": 1, "a": 2}),
])
def test_a_change_without_the_row_maxwell_needs(event: ChangeEvent, row_type: str, data: dict) -> None:
    """A missing row is the key cells (none: an empty row); an update without before image changed nothing."""
    message, _ = written(event)
    assert message["type"] == row_type and message["data"] == data and "old" not in message


def test_key_cells_outside_the_row_go_into_the_row() -> None:
    """A Tablestore primary key is not in the row image; Paimon reads the key values out of data by
    primary_key_columns."""
    event = ChangeEvent(Op.UPSERT, key=(Cell("id", "k1"),), after=(Cell("name", "x", version=1441803688001),))
    message, back = written(event)
    assert message["data"] == {"id": "k1", "name": "x"} and message["primary_key_columns"] == ["id"]
    assert back.key == (Cell("id", "k1"),)


def test_what_has_no_form_is_refused_and_declared() -> None:
    codec = cf.codec("maxwell-json")
    with pytest.raises(cf.EncodeError, match="no row change for a TRUNCATE"):
        list(codec.encode([ChangeEvent(Op.TRUNCATE, Table("t"))]))
    assert "op.TRUNCATE" in cf.loss("canal-json", "maxwell-json")
    with pytest.raises(cf.EncodeError, match="new row"):
        list(codec.encode([ChangeEvent(Op.UPDATE, Table("t"), before=row(id=1))]))
    assert "shape UPDATE(before present; cells PUT)" in cf.loss("aliyun-json", "maxwell-json")


def test_sub_second_commit_times_are_reported_lost() -> None:
    """What dropped() reports: the commit time written, in whole seconds (floored, as every format floors a time
    it cannot write whole)."""
    event = ChangeEvent(Op.INSERT, Table("t"), after=(), source=Source(commit_time_us=1_500_000))
    assert cf.codec("maxwell-json").dropped(event) == [
        cf.Loss("source.commit_time", "source.commit_time_us", 1_000_000, "written as 1000000")]
    assert written(event)[0]["ts"] == 1


def test_maxwell_json_to_avro_and_back_is_exact() -> None:
    messages = lines("flink-maxwell-data.txt") + lines("dataformat-types.jsonl")
    avro = list(cf.convert(messages, "maxwell-json", "avro"))
    codec = cf.codec("maxwell-json")
    assert list(cf.convert(avro, "avro", "maxwell-json")) == list(codec.encode(codec.decode(messages)))
