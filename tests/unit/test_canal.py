"""canal-json on published examples, and the choices its module docstring spells out."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, Op, Source, Table

FIXTURES = Path(__file__).parent.parent / "fixtures" / "canal"
TYPES = {"id": "INTEGER", "name": "VARCHAR(255)", "description": "VARCHAR(512)", "weight": "FLOAT"}
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


def test_events_of_other_formats() -> None:
    codec = cf.codec("canal-json")
    read = ChangeEvent(Op.READ, Table("t"), after=(Cell("id", "1"),))
    assert json.loads(codec.encode_event(read))["type"] == "INSERT"
    assert ("op.READ", "op") in codec.dropped(read)
    reordered = ChangeEvent(Op.UPDATE, Table("t"), before=(Cell("b", "2"), Cell("a", "1")),
                            after=(Cell("a", "1"), Cell("b", "3")))
    assert [feature for feature, _ in codec.dropped(reordered)] == ["before"]
    assert json.loads(codec.encode_event(reordered))["old"] == [{"b": "2"}]
    with pytest.raises(cf.EncodeError, match="UPDATE with its before image"):
        codec.encode_event(ChangeEvent(Op.UPDATE, Table("t"), after=(Cell("a", "1"),)))
    assert "op.UPSERT" in cf.loss("lindorm", "canal-json")
    assert cf.loss("canal-json", "avro") == [] and cf.loss("canal-json", "protobuf") == []


def test_an_update_whose_old_value_types_its_column_reports_the_after_image_retyped() -> None:
    """mysqlType types a column once, for the row and its old value: an untyped after cell would read back typed."""
    codec = cf.codec("canal-json")
    event = ChangeEvent(Op.UPDATE, before=(Cell("a", "x", "VARCHAR"),), after=(Cell("a", "y"),))
    assert ("cell.type", "after (Canal's mysqlType gives a column one type, for its row value and its old value)") in (
        codec.dropped(event))
    assert list(codec.decode(codec.encode([event])))[0].after == (Cell("a", "y", "VARCHAR"),)
