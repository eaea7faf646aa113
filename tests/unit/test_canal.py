"""canal-json on published examples, and the choices its module docstring spells out."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import Cell, CellKind, ChangeEvent, Op, Source, Table

FIXTURES = Path(__file__).parent.parent / "fixtures" / "canal"
TYPES = {"id": "INTEGER", "name": "VARCHAR(255)", "description": "VARCHAR(512)", "weight": "FLOAT"}
LINDORM_PUT = (b'{"op":"Put","table":"orders","ts":"1700000000000","data":['
               b'{"type":"VARCHAR","name":"id","value":"o-1"},'
               b'{"type":"VARCHAR","name":"status","ts":"1700000000500","value":"PAID"}]}')
SQL_TYPES = ("canal.sqlType", '{"id":4,"name":12,"description":12,"weight":7}')


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def product(id: int, name: str, description: str, weight: float | str) -> tuple[Cell, ...]:
    values = {"id": id, "name": name, "description": description, "weight": weight}
    return tuple(Cell(column, value, TYPES[column]) for column, value in values.items())


def products_event(op: Op, row_id: int, es: int, ts: int, before: tuple[Cell, ...] | None,
                   after: tuple[Cell, ...] | None) -> ChangeEvent:
    return ChangeEvent(op, Table("products2", "inventory"), ((after or before)[0],), before, after,
                       Source(position=(("id", row_id),), commit_time_us=es * 1000, capture_time_us=ts * 1000),
                       attributes=(SQL_TYPES,))


def test_the_flink_documentation_update() -> None:
    codec = cf.codec("canal-json")
    [event] = codec.decode([fixture("flink-docs-update.json")])
    after = product(111, "scooter", "Big 2-wheel scooter", 5.18)
    assert event == ChangeEvent(
        Op.UPDATE, Table("products", "inventory"), key=(Cell("id", 111, "INTEGER"),),
        before=after[:3] + (Cell("weight", 5.15, "FLOAT"),), after=after,
        source=Source(position=(("id", 9),), commit_time_us=1589373560000_000, capture_time_us=1589373560798_000),
        attributes=(SQL_TYPES,))
    written = json.loads(codec.encode_event(event))
    original = json.loads(fixture("flink-docs-update.json"))
    assert written == original and list(written) == list(original)


def test_flink_test_data_one_event_per_row() -> None:
    lines = fixture("flink-canal-data.txt").splitlines()
    events = list(cf.codec("canal-json", skip_ddl=True).decode(lines))
    assert [event.op for event in events] == [Op.INSERT] * 3 + [Op.UPDATE, Op.DELETE, Op.UPDATE, Op.UPDATE]
    assert events[1] == products_event(Op.INSERT, 3, 1589373515000, 1589373515477, None,
                                       product(102, "car battery", "12V car battery", 8.1))
    hammer = product(106, "hammer", "18oz carpenter hammer", 1.0)
    assert events[3] == products_event(Op.UPDATE, 4, 1589373546000, 1589373546301,
                                       hammer[:2] + (Cell("description", "16oz carpenter's hammer", "VARCHAR(512)"),
                                                     hammer[3]), hammer)
    assert events[4] == products_event(Op.DELETE, 10, 1589373563000, 1589373563798,
                                       product(111, "scooter", "Big 2-wheel scooter ", 5.17), None)
    battery = product(102, "car battery", "12V car battery", 5.17)
    assert events[6] == products_event(Op.UPDATE, 11, 1589373753000, 1589373753939,
                                       battery[:3] + (Cell("weight", 8.1, "FLOAT"),), battery)


def test_ddl_is_refused_by_default_and_skipped_on_request() -> None:
    lines = fixture("flink-canal-data.txt").splitlines() + [fixture("tencent-ckafka-create-database.json")]
    errors: list[cf.DecodeError] = []
    events = list(cf.codec("canal-json").decode(lines, on_error=errors.append))
    assert len(events) == 7
    assert [(error.position, error.field) for error in errors] == [(4, "type"), (5, "type")]
    assert len(list(cf.codec("canal-json", skip_ddl=True).decode(lines))) == 7


def test_a_truncate_keeps_its_statement() -> None:
    message = (b'{"data":null,"database":"shop","es":1700000000000,"id":5,"isDdl":true,"mysqlType":null,"old":null,'
               b'"pkNames":null,"sql":"TRUNCATE TABLE `orders`","sqlType":null,"table":"orders",'
               b'"ts":1700000000123,"type":"TRUNCATE"}')
    codec = cf.codec("canal-json")
    [event] = codec.decode([message])
    assert event == ChangeEvent(Op.TRUNCATE, Table("orders", "shop"),
                                source=Source(position=(("id", 5),), commit_time_us=1700000000000_000,
                                              capture_time_us=1700000000123_000),
                                attributes=(("canal.sql", "TRUNCATE TABLE `orders`"),))
    assert codec.encode_event(event) == message


def test_gtid_and_fields_of_other_producers_are_written_back() -> None:
    message = (b'{"data":[{"id":"7","flag":"1"}],"database":"main","es":1697652000000,'
               b'"gtid":"eb682fa3-4bb9-11ec-9342-02373ee17996:1-8122380830","id":41127228,"isDdl":false,'
               b'"mysqlType":{"id":"bigint(20)","flag":"tinyint(1)"},"old":null,"pkNames":["id"],"sql":"",'
               b'"sqlType":{"id":-5,"flag":-7},"table":"items","ts":1697652000103,"type":"DELETE",'
               b'"canalId":"canal-server-0:11111","comment":null}')
    codec = cf.codec("canal-json")
    [event] = codec.decode([message])
    assert event.source.position == (("id", 41127228), ("gtid", "eb682fa3-4bb9-11ec-9342-02373ee17996:1-8122380830"))
    assert event.before == (Cell("id", 7, "bigint(20)"), Cell("flag", 1, "tinyint(1)"))
    assert event.attributes[1:] == (("canal.field.canalId", '"canal-server-0:11111"'), ("canal.field.comment", "null"))
    assert codec.encode_event(event) == message


def test_old_values_that_were_null_and_columns_the_row_lacks() -> None:
    message = (b'{"data":[{"id":"1","note":"set"}],"mysqlType":{"id":"int(11)"},'
               b'"old":[{"note":null,"gone":"x"}],"table":"t","type":"UPDATE"}')
    [event] = cf.codec("canal-json").decode([message])
    assert event.before == (Cell("id", 1, "int(11)"), Cell("note", None), Cell("gone", "x"))
    assert event.after == (Cell("id", 1, "int(11)"), Cell("note", "set"))


def test_values_are_typed_only_where_they_read_back_the_same() -> None:
    message = b'{"data":[{"n":"007","d":"1.50","f":"1e3"}],"mysqlType":{"n":"int","d":"decimal(10,2)","f":"float"},' \
              b'"table":"t","type":"INSERT"}'
    [event] = cf.codec("canal-json").decode([message])
    assert event.after == (Cell("n", "007", "int"), Cell("d", Decimal("1.50"), "decimal(10,2)"),
                           Cell("f", "1e3", "float"))


@pytest.mark.parametrize("message, field", [
    (b'{"type": "SNAPSHOT", "data": []}', "type"),  # unknown: refused even with skip_ddl
    (b'{"type": ["INSERT"]}', "type"),
    (b'{"type": "INSERT", "isDdl": true, "data": [{}]}', "isDdl"),
    (b'{"type": "INSERT", "data": {"id": "1"}}', "data"),
    (b'{"type": "INSERT", "data": [{"geo": {"x": 1}}]}', "data[0].geo"),
    (b'{"type": "UPDATE", "data": [{"id": "1"}, {"id": "2"}], "old": [{}]}', "old"),
    (b'{"type": "DELETE", "data": [{"id": "1"}], "old": [{"id": "2"}]}', "old"),
    (b'{"type": "TRUNCATE", "data": [{"id": "1"}]}', "data"),
    (b'{"type": "INSERT", "data": [], "es": "soon"}', "es"),
    (b'{"type": "INSERT", "data": [], "id": 100000000000000000000}', "id"),
    (b'{"type": "INSERT", "data": [], "database": "db"}', "table"),
    (b'{"type": "INSERT", "data": [], "pkNames": "id"}', "pkNames"),
    (b'{"type": "INSERT", "data": [], "mysqlType": {"id": 4}}', "mysqlType.id"),
    (b'{"type": "INSERT", "data": [], "sql": 1}', "sql"),
])
def test_what_is_refused_is_named(message: bytes, field: str) -> None:
    with pytest.raises(cf.DecodeError) as error:
        list(cf.codec("canal-json", skip_ddl=True).decode([message]))
    assert error.value.field == field and error.value.position == 0


def written(event: ChangeEvent, **options: object) -> tuple[dict, ChangeEvent]:
    """The message canal-json writes for ``event``, and the event it reads back, which is the event with what
    ``dropped()`` reports applied."""
    codec = cf.codec("canal-json", **options)
    [message] = codec.encode([event])
    [back] = codec.decode([message])
    assert back == cf.without(event, codec.dropped(event)) and codec.dropped(back) == []
    return json.loads(message), back


def test_events_of_other_formats() -> None:
    codec = cf.codec("canal-json")
    read = ChangeEvent(Op.READ, Table("t"), after=(Cell("id", "1"),))
    assert written(read)[0]["type"] == "INSERT"
    assert codec.dropped(read) == [cf.Loss("op.READ", "op", Op.INSERT, "written as INSERT")]
    init = cf.codec("canal-json", read_type="INIT")  # a snapshot row, as Flink CDC writes it
    assert json.loads(next(iter(init.encode([read]))))["type"] == "INIT" and init.dropped(read) == []
    assert list(init.decode(init.encode([read]))) == [read] and "op.READ" in cf.loss(init, cf.codec("canal-json"))
    reordered = ChangeEvent(Op.UPDATE, Table("t"), before=(Cell("b", "2"), Cell("a", "1")),
                            after=(Cell("a", "1"), Cell("b", "3")))
    assert [(loss.feature, loss.path, loss.written) for loss in codec.dropped(reordered)] == [
        ("before", "before", (Cell("a", "1"), Cell("b", "2")))]
    assert written(reordered)[0]["old"] == [{"b": "2"}]
    assert "op.UPSERT" in cf.loss("lindorm", "canal-json")
    assert cf.loss("canal-json", "avro") == [] and cf.loss("canal-json", "protobuf") == []


def test_an_update_whose_old_value_types_its_column_reports_the_after_image_retyped() -> None:
    """mysqlType types a column once, for the row and its old value: an untyped after cell would read back typed."""
    codec = cf.codec("canal-json")
    event = ChangeEvent(Op.UPDATE, before=(Cell("a", "x", "VARCHAR"),), after=(Cell("a", "y"),))
    assert [(loss.feature, loss.path, loss.written) for loss in codec.dropped(event)] == [
        ("cell.type", "after[0].type", "VARCHAR")]
    assert written(event)[1].after == (Cell("a", "y", "VARCHAR"),)


def test_a_lindorm_put_loses_its_cell_versions() -> None:
    """Issue 13: lindorm -> canal-json refused an ordinary Put ("a cell version has no form in a Canal row")."""
    put = list(cf.codec("lindorm").decode([LINDORM_PUT]))[0]
    assert any(cell.version is not None for cell in put.after)
    message, back = written(put)
    assert message["type"] == "INSERT" and all(cell.version is None for cell in back.after)
    assert "cell.version" in cf.loss("lindorm", "canal-json")


def test_a_deleted_column_is_the_column_set_to_null_and_values_come_back_as_text() -> None:
    event = ChangeEvent(Op.UPDATE, Table("t"), after=(
        Cell("id", 7, "bigint"), Cell("n", 5), Cell("gone", "x", version=3, kind=CellKind.DELETE_ALL_VERSIONS),
        Cell("raw", b"\xe9t\xe9")))
    message, back = written(event)
    assert message["data"] == [{"id": "7", "n": "5", "gone": None, "raw": "\xe9t\xe9"}] and message["old"] == [{}]
    assert back.after == (Cell("id", 7, "bigint"), Cell("n", "5"), Cell("gone"), Cell("raw", "\xe9t\xe9"))
    assert back.before == back.after  # an UPDATE without its before image: old with no columns, nothing changed


@pytest.mark.parametrize("event, type_name", [
    (ChangeEvent(Op.UPSERT, Table("t"), key=(Cell("id", "1"),)), "INSERT"),
    (ChangeEvent(Op.INSERT, Table("t"), key=(Cell("id", "1"),), before=(Cell("id", "1"),)), "INSERT"),
    (ChangeEvent(Op.DELETE, Table("t"), key=(Cell("id", "1"),)), "DELETE"),
    (ChangeEvent(Op.DELETE, Table("t")), "DELETE"),
])
def test_a_change_without_the_row_canal_needs_writes_its_key_cells(event: ChangeEvent, type_name: str) -> None:
    message, back = written(event)
    assert message["type"] == type_name and message["old"] is None
    assert message["data"] == [{cell.name: cell.value for cell in event.key}]
    assert message["pkNames"] == ([cell.name for cell in event.key] or None) and back.key == event.key


def test_key_cells_outside_the_row_go_into_the_row() -> None:
    """A Tablestore primary key is not in the row image: Canal reads the key out of the row by pkNames."""
    event = ChangeEvent(Op.UPSERT, key=(Cell("id", "k1"),), after=(Cell("name", "x", version=1441803688001),))
    message, back = written(event)
    assert message["pkNames"] == ["id"] and message["data"][0]["id"] == "k1"
    assert back.key == (Cell("id", "k1"),) and back.after[0] == Cell("id", "k1")


def test_what_has_no_form_is_refused_and_declared() -> None:
    codec = cf.codec("canal-json")
    no_new_row = ChangeEvent(Op.UPDATE, Table("t"), before=(Cell("id", "1"),))
    [loss] = [loss for loss in codec.dropped(no_new_row) if loss.written is cf.REFUSED]
    assert loss.path == "after"
    with pytest.raises(cf.EncodeError, match="new row"):
        list(codec.encode([no_new_row]))
    assert "shape UPDATE(before present; cells PUT)" in cf.loss("aliyun-json", "canal-json")
    truncate = ChangeEvent(Op.TRUNCATE, None, key=(Cell("id", "1"),), before=(Cell("id", "1"),))
    assert written(truncate)[1] == ChangeEvent(Op.TRUNCATE, None)
