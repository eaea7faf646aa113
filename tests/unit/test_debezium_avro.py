"""``debezium-avro``: what it writes reads back as ``without(event, dropped(event))``, and as confluent-kafka's own
AvroDeserializer reads it; a table's schema evolves version by version in the registry; a record Debezium's own
AvroConverter writes for a MySQL table reads as the change it is."""

from __future__ import annotations

import io
import itertools
import json
import math
import struct
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf
from cdcformats.losses import REFUSED, refused, without
from cdcformats.schema_registry import connect
from tests.property.configurations import CONFIGURATIONS
from tests.property.strategies import events, tables, values

NAME = "debezium-avro"
CARRIES = cf.codec(NAME, schema_registry="mock://carries").carries
_UNIQUE = itertools.count()


# One registry for the tests, an embedded registry file of this process: it refuses an invalid schema (a union with
# null twice) and an incompatible version as a real registry does, which confluent-kafka's mock:// client never does.
REGISTRY = connect(Path(tempfile.mkdtemp(prefix="debezium-avro-tests-")) / "registry.sqlite")


def fresh_codec() -> cf.Codec:
    """A codec whose subjects are its own (a topic prefix of its own), so that each example starts from no schema."""
    return cf.codec(NAME, schema_registry=REGISTRY, topic_prefix=f"test{next(_UNIQUE)}")


def schema_id(framed: bytes) -> int:
    assert framed[:1] == b"\x00"
    return struct.unpack(">I", framed[1:5])[0]


# -- 1. round trip, and confluent-kafka's reading of what is written ------------------------------------------------

def _field_names(registry: Any, framed: bytes, record: str | None) -> dict[str, str]:
    """Column name -> Avro field name of the row (``record`` "Value" inside the envelope) or key (``None``) schema
    the framed bytes were written with."""
    schema = json.loads(registry.get_schema(schema_id(framed)).schema_str)
    if record is not None:
        envelope = {entry["name"]: entry for entry in schema["fields"]}
        schema = next(branch for branch in envelope["before"]["type"] if branch != "null")
    return {entry.get("cdcformats.column", entry["name"]): entry["name"] for entry in schema["fields"]}


def _unscaled(value: Decimal) -> tuple[int, int]:
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    return int("".join(map(str, digits)) or "0") * (-1 if sign else 1), -exponent


def _java_bytes(number: int) -> bytes:
    """BigInteger.toByteArray(): the minimal two's complement, big-endian."""
    return number.to_bytes((number if number >= 0 else ~number).bit_length() // 8 + 1, "big", signed=True)


def _same(read: Any, written: cf.Value, where: str) -> None:
    """What confluent's reader gives for a written cell value, for the kinds where it is the same Python value."""
    if type(written) is Decimal:
        unscaled, scale = _unscaled(written)
        if type(read) is dict:  # io.debezium.data.VariableScaleDecimal
            assert read == {"scale": scale, "value": _java_bytes(unscaled)}, where
        else:
            assert type(read) is Decimal and read.as_tuple() == written.as_tuple(), (where, read, written)
    elif type(written) is float:
        # A Connect float (a single) is held as Java prints it (3.4e38); confluent gives the single (3.3999...e38).
        single = struct.unpack("<f", struct.pack("<f", written))[0] if abs(written) <= 3.5e38 else written
        assert type(read) is float and (repr(read) in (repr(written), repr(single))
                                        or math.isnan(read) and math.isnan(written)), (where, read, written)
    elif type(written) is tuple:  # an Avro array
        assert type(read) is list and len(read) == len(written), (where, read, written)
        for index, (read_item, item) in enumerate(zip(read, written, strict=True)):
            _same(read_item, item, f"{where}[{index}]")
    elif type(written) is cf.Struct:  # an Avro record: its fields by name, in order
        assert type(read) is dict and list(read) == [name for name, _ in written.fields], (where, read, written)
        for name, item in written.fields:
            _same(read[name], item, f"{where}.{name}")
    else:
        assert type(read) is type(written) and read == written, (where, read, written)


def _confluent_read(deserializer: AvroDeserializer, framed: bytes, part: MessageField) -> Any:
    """confluent-kafka's reading, which refuses a message of the framing alone ("Expecting data framing of length 6
    bytes or more"), though a record whose fields are all null has an empty Avro body: that one is read with the
    writer schema by fastavro instead, as confluent's reader would."""
    if len(framed) == 5:
        schema = json.loads(deserializer._registry.get_schema(schema_id(framed)).schema_str)
        return fastavro.schemaless_reader(io.BytesIO(b""), fastavro.parse_schema(schema), None)
    return deserializer(framed, SerializationContext("any-topic", part))


def check_confluent_reads(codec: cf.Codec, record: cf.KafkaRecord, written: cf.ChangeEvent) -> None:
    registry = codec.registry
    deserializer = AvroDeserializer(registry)
    value = _confluent_read(deserializer, record.value, MessageField.VALUE)
    names = _field_names(registry, record.value, "Value")
    for image_name in ("before", "after"):
        image = getattr(written, image_name)
        if image is None:
            assert value[image_name] is None
            continue
        assert [names[cell.name] for cell in image] == list(value[image_name]), image_name
        for index, cell in enumerate(image):
            _same(value[image_name][names[cell.name]], cell.value, f"{image_name}[{index}]")
    if record.key is None:
        assert not written.key
        return
    key = _confluent_read(deserializer, record.key, MessageField.KEY)
    key_names = _field_names(registry, record.key, None)
    assert [key_names[cell.name] for cell in written.key] == list(key)
    for index, cell in enumerate(written.key):
        _same(key[key_names[cell.name]], cell.value, f"key[{index}]")


def check_encodes(codec: cf.Codec, event: cf.ChangeEvent, confluent: bool = True) -> list[cf.KafkaRecord]:
    """Encode ``event`` with ``codec`` (its state so far): refused with a REFUSED loss, or read back as its form."""
    losses = codec.dropped(event)
    refusal = refused(losses)
    try:
        records = list(codec.encode([event]))
    except cf.EncodeError as error:
        assert refusal is not None, f"refused {event} without a REFUSED loss: {error}"
        assert refusal.written is REFUSED
        return []
    assert refusal is None, f"wrote {event} although dropped() refuses it: {refusal}"
    written = without(event, losses)
    assert list(codec.decode(records)) == [written], losses
    assert len(records) == 1
    if confluent:
        check_confluent_reads(codec, records[0], written)
    return records


@given(event=st.builds(lambda event, table: replace(event, table=table), events(CARRIES), tables(CARRIES)))
def test_drawn_events_read_back_as_their_form_here_and_in_confluents_reader(event: cf.ChangeEvent) -> None:
    check_encodes(fresh_codec(), event)


TYPED_SOURCES = ["debezium-json+schemas+keys", "canal-json", "aliyun-json", "lindorm", "arcion+keys"]


@pytest.mark.parametrize("source", TYPED_SOURCES)
@settings(max_examples=200)  # a stream of changes per example, each also read by confluent's reader
@given(data=st.data())
def test_typed_source_streams_read_back_as_their_form_here_and_in_confluents_reader(source: str,
                                                                                    data: st.DataObject) -> None:
    configuration = CONFIGURATIONS[source]
    messages = data.draw(configuration.messages)
    decoded = list(configuration.codec().decode(messages, on_error=lambda _: None))
    codec = fresh_codec()  # one codec for the stream: its tables evolve from change to change
    for event in decoded:
        check_encodes(codec, event)


# -- 2. evolution of one table over a stream ------------------------------------------------------------------------

TABLE = cf.Table("orders", "shop")
VALUE_SUBJECT = "cdcformats.shop.orders-value"
KEY_SUBJECT = "cdcformats.shop.orders-key"


def _row(id_value: int, id_type: str, **cells: tuple[cf.Value, str]) -> cf.ChangeEvent:
    return cf.ChangeEvent(cf.Op.INSERT, TABLE, key=(cf.Cell("id", id_value, id_type),),
                          after=(cf.Cell("id", id_value, id_type),
                                 *(cf.Cell(name, value, type_name) for name, (value, type_name) in cells.items())),
                          source=cf.Source("mysql", (("file", "binlog.000003"), ("pos", 100 + id_value % 1000))))


AMOUNT = "decimal(10,2)"
STREAM = [
    _row(1, "INT", amount=(Decimal("12.50"), AMOUNT)),  # (i) version 1
    _row(2, "INT", amount=(Decimal("3.00"), AMOUNT), note=("gift", "VARCHAR")),  # (ii) a column added: version 2
    _row(2**40, "BIGINT", amount=(Decimal("0.99"), AMOUNT), note=(None, "VARCHAR")),  # (iii) int32 -> int64: 3
    _row(4, "BIGINT", note=("no amount", "VARCHAR")),  # (iv) amount left out: stays, null; nothing registered
    _row(5, "BIGINT", amount=("abc", "VARCHAR"), note=("bad", "VARCHAR")),  # (v) decimal -> string: refused
    _row(6, "BIGINT", amount=(Decimal("7.25"), AMOUNT), note=("after", "VARCHAR")),  # written as before
    cf.ChangeEvent(cf.Op.DELETE, TABLE, key=(cf.Cell("id", 6, "BIGINT"),),
                   before=(cf.Cell("id", 6, "BIGINT"), cf.Cell("amount", Decimal("7.25"), AMOUNT)),
                   source=cf.Source("mysql", (("file", "binlog.000003"), ("pos", 900)))),
]
REFUSED_INDEX = 4


def _versions(registry: Any, subject: str) -> list[tuple[int, int]]:
    return [(version, registry.get_version(subject, version).schema_id)
            for version in registry.get_versions(subject)]


def check_evolution(registry_option: Any) -> None:
    codec = cf.codec(NAME, schema_registry=registry_option)
    records: list[cf.KafkaRecord] = []
    written: list[cf.ChangeEvent] = []
    errors: list[cf.EncodeError] = []
    for index, event in enumerate(STREAM):
        losses = codec.dropped(event)
        try:
            (record,) = codec.encode([event])
        except cf.EncodeError as error:
            assert index == REFUSED_INDEX, error
            assert refused(losses) is not None
            errors.append(error)
            continue
        records.append(record)
        written.append(without(event, losses))
    assert len(errors) == 1 and len(records) == len(STREAM) - 1, "only (v) is refused; the changes after it go on"
    message = str(errors[0])
    for part in ("shop.orders", "amount", "decimal(10,2)", "string"):
        assert part in message, (part, message)

    registry = codec.registry
    value_versions = _versions(registry, VALUE_SUBJECT)
    key_versions = _versions(registry, KEY_SUBJECT)
    assert [version for version, _ in value_versions] == [1, 2, 3]
    assert [version for version, _ in key_versions] == [1, 2]
    value_ids = [schema_id(record.value) for record in records]
    key_ids = [schema_id(record.key) for record in records]
    v1, v2, v3 = (schema for _, schema in value_versions)
    k1, k2 = (schema for _, schema in key_versions)
    # (i) v1; (ii) v2; (iii), (iv), the row after (v) and the delete: v3. The key widened with (iii).
    assert value_ids == [v1, v2, v3, v3, v3, v3]
    assert key_ids == [k1, k1, k2, k2, k2, k2]
    assert len({v1, v2, v3, k1, k2}) == 5
    value_schemas = [json.loads(registry.get_schema(id_).schema_str) for id_ in (v1, v2, v3)]
    rows = [[entry["name"] for entry in schema["fields"][0]["type"][1]["fields"]] for schema in value_schemas]
    assert rows == [["id", "amount"], ["id", "amount", "note"], ["id", "amount", "note"]]
    assert json.loads(registry.get_schema(k2).schema_str)["fields"][0]["type"]["type"] == "long"
    schemas = codec.table_schemas(TABLE)  # type: ignore[attr-defined]  # a debezium-avro codec's
    assert [(version, schema.names, schema.key) for version, schema in schemas] == [
        (1, ("id", "amount"), ("id",)), (2, ("id", "amount", "note"), ("id",)), (3, ("id", "amount", "note"), ("id",))]
    assert [str(column.type) for column in schemas[-1][1].columns] == ["int64", "decimal(10,2)", "string"]
    assert codec.table_schema(TABLE) == schemas[-1][1]  # type: ignore[attr-defined]
    assert codec.table_schemas(cf.Table("never", "shop")) == []  # type: ignore[attr-defined]

    # (iv) is written with amount null, in the table's column order.
    assert [(cell.name, cell.value) for cell in written[3].after or ()] == [
        ("id", 4), ("amount", None), ("note", "no amount")]
    assert list(cf.codec(NAME, schema_registry=registry_option).decode(records)) == written

    # A codec started afresh on the same registry continues from the latest version.
    again = cf.codec(NAME, schema_registry=registry_option)
    event = _row(7, "BIGINT", amount=(Decimal("1.00"), AMOUNT), note=("restart", "VARCHAR"))
    (record,) = again.encode([event])
    assert schema_id(record.value) == v3 and schema_id(record.key) == k2
    assert _versions(again.registry, VALUE_SUBJECT) == value_versions
    assert _versions(again.registry, KEY_SUBJECT) == key_versions
    assert list(again.decode([record])) == [without(event, again.dropped(event))]


def test_a_table_evolves_version_by_version_in_a_registry_file(tmp_path: Path) -> None:
    check_evolution(str(tmp_path / "registry.sqlite"))


def test_a_codec_restarted_on_a_registry_writes_a_keyless_table_with_its_latest_version(tmp_path: Path) -> None:
    """A new codec starts from the latest registered version: with no key to register, it still needs the schema it
    writes with (it crashed with "zip() argument 2 is shorter than argument 1")."""
    path = str(tmp_path / "registry.sqlite")
    event = cf.ChangeEvent(cf.Op.INSERT, TABLE, after=(cf.Cell("id", 1, "INT"), cf.Cell("note", "x", "VARCHAR")))
    (first,) = cf.codec(NAME, schema_registry=path).encode([event])
    again = cf.codec(NAME, schema_registry=path)
    (second,) = again.encode([event])
    assert second == first
    assert again.registry.get_versions(VALUE_SUBJECT) == [1]
    assert list(again.decode([second])) == [without(event, again.dropped(event))]


# -- 3. a record as Debezium's AvroConverter writes it for a MySQL table --------------------------------------------

_NAMESPACE = "dbserver1.inventory.orders"
_VALUE = {
    "type": "record", "name": "Value", "namespace": _NAMESPACE, "connect.name": f"{_NAMESPACE}.Value", "fields": [
        {"name": "id", "type": "int"},
        {"name": "amount", "type": {"type": "bytes", "scale": 2, "precision": 10, "connect.version": 1,
                                    "connect.parameters": {"scale": "2", "connect.decimal.precision": "10"},
                                    "connect.name": "org.apache.kafka.connect.data.Decimal",
                                    "logicalType": "decimal"}},
        {"name": "order_date", "type": {"type": "int", "connect.version": 1,
                                        "connect.name": "io.debezium.time.Date"}},
        {"name": "created", "type": ["null", {"type": "long", "connect.version": 1,
                                              "connect.name": "io.debezium.time.MicroTimestamp"}],
         "default": None},
        {"name": "note", "type": ["null", "string"], "default": None},
    ]}
_OPTIONAL_STRING = {"type": ["null", "string"], "default": None}
DEBEZIUM_ENVELOPE = {
    "type": "record", "name": "Envelope", "namespace": _NAMESPACE, "connect.version": 1,
    "connect.name": f"{_NAMESPACE}.Envelope", "fields": [
        {"name": "before", "type": ["null", _VALUE], "default": None},
        {"name": "after", "type": ["null", "Value"], "default": None},
        {"name": "source", "type": {
            "type": "record", "name": "Source", "namespace": "io.debezium.connector.mysql",
            "connect.name": "io.debezium.connector.mysql.Source", "fields": [
                {"name": "version", "type": "string"},
                {"name": "connector", "type": "string"},
                {"name": "name", "type": "string"},
                {"name": "ts_ms", "type": "long"},
                {"name": "snapshot", "type": [{"type": "string", "connect.version": 1,
                                               "connect.parameters": {"allowed": "true,last,false,incremental"},
                                               "connect.default": "false", "connect.name": "io.debezium.data.Enum"},
                                              "null"], "default": "false"},
                {"name": "db", "type": "string"},
                {"name": "sequence", **_OPTIONAL_STRING},
                {"name": "table", **_OPTIONAL_STRING},
                {"name": "server_id", "type": "long"},
                {"name": "gtid", **_OPTIONAL_STRING},
                {"name": "file", "type": "string"},
                {"name": "pos", "type": "long"},
                {"name": "row", "type": "int"},
                {"name": "thread", "type": ["null", "long"], "default": None},
                {"name": "query", **_OPTIONAL_STRING},
            ]}},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
        {"name": "transaction", "type": ["null", {
            "type": "record", "name": "block", "namespace": "event", "connect.version": 1,
            "connect.name": "event.block", "fields": [
                {"name": "id", "type": "string"},
                {"name": "total_order", "type": "long"},
                {"name": "data_collection_order", "type": "long"}]}], "default": None},
    ]}
DEBEZIUM_KEY = {"type": "record", "name": "Key", "namespace": _NAMESPACE, "connect.name": f"{_NAMESPACE}.Key",
                "fields": [{"name": "id", "type": "int"}]}


def _confluent_framed(schema_id_: int, schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    body = io.BytesIO()
    body.write(b"\x00" + struct.pack(">I", schema_id_))
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), record)
    return body.getvalue()


@pytest.mark.parametrize("registry_kind", ["mock", "file"])
def test_a_record_debeziums_avro_converter_writes_for_mysql_reads_as_its_change(registry_kind: str,
                                                                                   tmp_path: Path) -> None:
    target = f"mock://debezium-mysql-{next(_UNIQUE)}" if registry_kind == "mock" else str(tmp_path / "r.sqlite")
    registry = connect(target)
    value_id = registry.register_schema(f"{_NAMESPACE}-value", Schema(json.dumps(DEBEZIUM_ENVELOPE), "AVRO"))
    key_id = registry.register_schema(f"{_NAMESPACE}-key", Schema(json.dumps(DEBEZIUM_KEY), "AVRO"))
    before = {"id": 1001, "amount": Decimal("19.99"), "order_date": 19844, "created": 1714550400123456,
              "note": "first"}
    after = {**before, "amount": Decimal("24.50"), "note": None}
    value = {"before": before, "after": after,
             "source": {"version": "2.5.0.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": 1714550401000,
                        "snapshot": "false", "db": "inventory", "sequence": None, "table": "orders",
                        "server_id": 223344, "gtid": None, "file": "mysql-bin.000003", "pos": 154, "row": 0,
                        "thread": 7, "query": None},
             "op": "u", "ts_ms": 1714550401234,
             "transaction": {"id": "file=mysql-bin.000003,pos=154", "total_order": 3, "data_collection_order": 1}}
    record = cf.KafkaRecord(_confluent_framed(key_id, DEBEZIUM_KEY, {"id": 1001}),
                            _confluent_framed(value_id, DEBEZIUM_ENVELOPE, value))

    def image(row: dict[str, Any]) -> tuple[cf.Cell, ...]:
        return (cf.Cell("id", row["id"], "int32"), cf.Cell("amount", row["amount"]),
                cf.Cell("order_date", row["order_date"], "io.debezium.time.Date"),
                cf.Cell("created", row["created"], "io.debezium.time.MicroTimestamp"), cf.Cell("note", row["note"]))

    expected = cf.ChangeEvent(
        cf.Op.UPDATE, cf.Table("orders", "inventory"), key=(cf.Cell("id", 1001, "int32"),),
        before=image(before), after=image(after),
        source=cf.Source("mysql", (("version", "2.5.0.Final"), ("name", "dbserver1"), ("snapshot", "false"),
                                   ("server_id", 223344), ("file", "mysql-bin.000003"), ("pos", 154), ("row", 0),
                                   ("thread", 7)),
                         commit_time_us=1714550401000 * 1000, capture_time_us=1714550401234 * 1000),
        attributes=(("debezium.transaction.id", "file=mysql-bin.000003,pos=154"),
                    ("debezium.transaction.total_order", 3), ("debezium.transaction.data_collection_order", 1)))
    # confluent-kafka's mock:// clients do not share their schemas: the client itself is the option
    codec = cf.codec(NAME, schema_registry=registry if registry_kind == "mock" else target)
    assert list(codec.decode([record])) == [expected]
    assert [type(cell.value) for cell in expected.after or ()] == [int, Decimal, int, int, type(None)]


# -- 4. tombstones and unframed records -----------------------------------------------------------------------------

def test_a_tombstone_holds_no_change_and_an_unframed_value_is_a_decode_error() -> None:
    codec = fresh_codec()
    event = cf.ChangeEvent(cf.Op.DELETE, TABLE, key=(cf.Cell("id", 1, "INT"),), before=(cf.Cell("id", 1, "INT"),))
    (record,) = codec.encode([event])
    assert list(codec.decode([record, cf.KafkaRecord(record.key, None)])) == [without(event, codec.dropped(event))]
    assert list(codec.decode([cf.KafkaRecord(record.key, None)])) == []

    for value in (b'{"op": "c"}', b"\x00\x00", b"", b"\x01" + record.value[1:]):
        with pytest.raises(cf.DecodeError) as raised:
            list(codec.decode([cf.KafkaRecord(record.key, value)]))
        assert raised.value.field == "value", raised.value
        assert "field value" in str(raised.value)
    with pytest.raises(cf.DecodeError) as raised:
        list(codec.decode([cf.KafkaRecord(b"not framed", record.value)]))
    assert raised.value.field == "key"


def test_the_kafka_serializers_write_debezium_avro_into_the_registry_they_are_given(tmp_path: Path) -> None:
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from cdcformats.kafka import ChangeEventKeySerializer, ChangeEventSerializer
    from cdcformats.schema_registry import connect

    registry_file = tmp_path / "registry.sqlite"
    event = cf.ChangeEvent(cf.Op.INSERT, cf.Table("orders", "shop"), key=(cf.Cell("id", 7),),
                           after=(cf.Cell("id", 7), cf.Cell("note", "gift")))
    value = ChangeEventSerializer("debezium-avro", schema_registry=str(registry_file))(event)
    key = ChangeEventKeySerializer("debezium-avro", schema_registry=str(registry_file))(event)
    registry = connect(registry_file)
    assert registry.get_subjects() == ["cdcformats.shop.orders-key", "cdcformats.shop.orders-value"]
    read = AvroDeserializer(registry)
    assert read(value, SerializationContext("orders", MessageField.VALUE))["after"] == {"id": 7, "note": "gift"}
    assert read(key, SerializationContext("orders", MessageField.KEY)) == {"id": 7}


# -- 5. the transaction block ---------------------------------------------------------------------------------------

def test_debezium_jsons_transaction_block_is_written_and_read_back_and_a_partial_one_is_reported() -> None:
    message = json.dumps({
        "before": None, "after": {"id": 1, "note": "x"},
        "source": {"connector": "postgresql", "ts_ms": 1714550401000, "db": "shop", "schema": "public",
                   "table": "orders", "lsn": 24023128},
        "op": "c", "ts_ms": 1714550401234,
        "transaction": {"id": "571:24023128", "total_order": 2, "data_collection_order": 1}}).encode()
    (event,) = cf.codec("debezium-json", key_columns=["id"]).decode([message])
    codec = fresh_codec()
    assert all(loss.feature != "attributes" for loss in codec.dropped(event))
    (record,) = codec.encode([event])
    envelope = fastavro.schemaless_reader(io.BytesIO(record.value[5:]), fastavro.parse_schema(
        json.loads(codec.registry.get_schema(schema_id(record.value)).schema_str)), None)
    assert envelope["transaction"] == {"id": "571:24023128", "total_order": 2, "data_collection_order": 1}
    (back,) = codec.decode([record])
    assert back == without(event, codec.dropped(event))
    assert back.attributes == event.attributes

    partial = replace(event, attributes=event.attributes[:1])  # no total_order: no block Debezium reads
    losses = [loss for loss in codec.dropped(partial) if loss.feature == "attributes"]
    assert [loss.path for loss in losses] == ["attributes[0]"] and "debezium.transaction.id" in losses[0].why
    (record,) = codec.encode([partial])
    (back,) = codec.decode([record])
    assert back.attributes == () and back == without(partial, codec.dropped(partial))


def test_a_key_cell_repeated_is_left_out_before_the_key_is_typed() -> None:
    """Found by the conversion matrix: the rows' losses counted the key after the repeated cell was taken away, and
    named a key cell that ``without()`` had already removed."""
    deleted = cf.CellKind.DELETE_ALL_VERSIONS
    event = cf.ChangeEvent(cf.Op.INSERT, cf.Table(""),
                           key=(cf.Cell("r_regionkey", None, kind=deleted), cf.Cell("r_regionkey", None, kind=deleted),
                                cf.Cell("name", None, kind=deleted)),
                           after=(cf.Cell("id", None, kind=deleted), cf.Cell("name", 0, "TINYINT")))
    codec = fresh_codec()
    losses = codec.dropped(event)
    assert [loss.path for loss in losses if loss.feature in ("cell.repeated", "cell.type")] == ["key[1]", "key[2].type"]
    check_encodes(codec, event)


def test_nested_values_are_typed_arrays_and_records_or_else_their_json_text() -> None:
    table = cf.Table("docs", "shop")
    first = cf.ChangeEvent(cf.Op.INSERT, table, key=(cf.Cell("id", 1),), after=(
        cf.Cell("id", 1), cf.Cell("tags", ("a", "b")),
        cf.Cell("address", cf.Struct((("city", "Oslo"), ("geo", (59.9, 10.7)))))))
    second = cf.ChangeEvent(cf.Op.INSERT, table, key=(cf.Cell("id", 2),), after=(
        cf.Cell("id", 2), cf.Cell("tags", ()), cf.Cell("address", cf.Struct((("zip", "0150"), ("city", None)))),
        cf.Cell("mixed", (1, "a")), cf.Cell("odd-name", cf.Struct((("a-b", 1),)))))
    codec = fresh_codec()
    for event in (first, second):
        check_encodes(codec, event)
    schema = codec.table_schema(table)  # type: ignore[attr-defined]
    assert [str(column.type) for column in schema.columns] == [
        "int64", "array<string>", "struct<city:string,geo:array<double>,zip:string>", "string", "string"]
    losses = {loss.path: loss for loss in codec.dropped(second)}
    assert losses["after[3].value"].written == '[1,"a"]' and losses["after[3].value"].feature == "value.nested"
    assert losses["after[4].value"].written == '{"a-b":1}'
    (record,) = codec.encode([second])
    (back,) = codec.decode([record])
    assert back.after is not None and back.after[2].value == cf.Struct((("city", None), ("geo", None), ("zip", "0150")))
    envelope = json.loads(codec.registry.get_schema(schema_id(record.value)).schema_str)
    row = {entry["name"]: entry["type"] for entry in envelope["fields"][0]["type"][1]["fields"]}
    assert row["tags"] == ["null", {"type": "array", "items": ["null", "string"]}]
    assert row["address"][1]["type"] == "record" and row["address"][1]["name"] == "address"


# Debezium 3.x's PostgreSQL envelope as its AvroConverter registers it: a required key column with a Connect default,
# optional columns whose union puts "null" second, the snapshot Enum, ts_us and ts_ns in source and envelope, and the
# transaction block between source and op.
_PG = "demo.public.users"
_PG_TIMESTAMP = {"type": "long", "connect.version": 1, "connect.default": 0,
                 "connect.name": "io.debezium.time.MicroTimestamp"}
_OPTIONAL_LONG = {"type": ["null", "long"], "default": None}
POSTGRES_ENVELOPE = {
    "type": "record", "name": "Envelope", "namespace": _PG, "connect.version": 2, "connect.name": f"{_PG}.Envelope",
    "fields": [
        {"name": "before", "type": ["null", {"type": "record", "name": "Value", "connect.name": f"{_PG}.Value",
                                             "fields": [
            {"name": "id", "type": {"type": "int", "connect.default": 0}, "default": 0},
            {"name": "email", "type": ["null", "string"], "default": None},
            {"name": "created_at", "type": [_PG_TIMESTAMP, "null"], "default": 0}]}], "default": None},
        {"name": "after", "type": ["null", "Value"], "default": None},
        {"name": "source", "type": {
            "type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql",
            "connect.name": "io.debezium.connector.postgresql.Source", "fields": [
                {"name": "version", "type": "string"}, {"name": "connector", "type": "string"},
                {"name": "name", "type": "string"}, {"name": "ts_ms", "type": "long"},
                {"name": "snapshot", "type": [{"type": "string", "connect.version": 1,
                                               "connect.parameters": {"allowed": "true,last,false,incremental"},
                                               "connect.default": "false", "connect.name": "io.debezium.data.Enum"},
                                              "null"], "default": "false"},
                {"name": "db", "type": "string"}, {"name": "sequence", **_OPTIONAL_STRING},
                {"name": "ts_us", **_OPTIONAL_LONG}, {"name": "ts_ns", **_OPTIONAL_LONG},
                {"name": "schema", "type": "string"}, {"name": "table", "type": "string"},
                {"name": "txId", **_OPTIONAL_LONG}, {"name": "lsn", **_OPTIONAL_LONG},
                {"name": "xmin", **_OPTIONAL_LONG}]}},
        {"name": "transaction", "type": ["null", {
            "type": "record", "name": "block", "namespace": "event", "connect.version": 1,
            "connect.name": "event.block", "fields": [
                {"name": "id", "type": "string"}, {"name": "total_order", "type": "long"},
                {"name": "data_collection_order", "type": "long"}]}], "default": None},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", **_OPTIONAL_LONG}, {"name": "ts_us", **_OPTIONAL_LONG}, {"name": "ts_ns", **_OPTIONAL_LONG},
    ]}


def test_a_record_of_debezium_3s_postgres_envelope_reads_as_its_change_and_writes_back() -> None:
    value_id = REGISTRY.register_schema(f"pg{next(_UNIQUE)}-value", Schema(json.dumps(POSTGRES_ENVELOPE), "AVRO"))
    row = {"id": 7, "email": "ann@example.com", "created_at": 1714550400123456}
    value = {"before": None, "after": row,
             "source": {"version": "3.0.0.Final", "connector": "postgresql", "name": "demo", "ts_ms": 1714550401000,
                        "snapshot": "false", "db": "shop", "sequence": '["24023128","24023128"]',
                        "ts_us": 1714550401000123, "ts_ns": 1714550401000123456, "schema": "public",
                        "table": "users", "txId": 571, "lsn": 24023128, "xmin": None},
             "transaction": {"id": "571:24023128", "total_order": 1, "data_collection_order": 1},
             "op": "c", "ts_ms": 1714550401234, "ts_us": 1714550401234567, "ts_ns": 1714550401234567890}
    codec = fresh_codec()
    (event,) = codec.decode([cf.KafkaRecord(None, _confluent_framed(value_id, POSTGRES_ENVELOPE, value))])
    assert event.op is cf.Op.INSERT and event.table == cf.Table("users", "public", "shop")
    assert event.after == (cf.Cell("id", 7, "int32"), cf.Cell("email", "ann@example.com"),
                           cf.Cell("created_at", 1714550400123456, "io.debezium.time.MicroTimestamp"))
    assert event.source == cf.Source("postgresql", (
        ("version", "3.0.0.Final"), ("name", "demo"), ("snapshot", "false"), ("sequence", '["24023128","24023128"]'),
        ("ts_ns", 1714550401000123456), ("txId", 571), ("lsn", 24023128)),
        commit_time_us=1714550401000123, capture_time_us=1714550401234567)
    assert event.attributes == (("debezium.transaction.id", "571:24023128"), ("debezium.transaction.total_order", 1),
                                ("debezium.transaction.data_collection_order", 1))
    # Written again as a table of this codec's own, and read back as dropped() says.
    check_encodes(codec, event)


def test_a_change_without_a_table_is_written_as_the_table_of_no_name() -> None:
    """An Arcion snapshot row names no table: its subjects are the topic prefix's own, and it reads back tableless."""
    codec = fresh_codec()
    snapshot = cf.ChangeEvent(cf.Op.READ, None, key=(cf.Cell("r_regionkey", "1"),),
                              after=(cf.Cell("r_regionkey", "1"), cf.Cell("r_name", "AMERICA")))
    assert refused(codec.dropped(snapshot)) is None
    (record,) = check_encodes(codec, snapshot)
    prefix = codec.config["topic_prefix"]
    assert codec.subject(None) == f"{prefix}-value"  # type: ignore[attr-defined]
    assert [schema.names for _, schema in codec.table_schemas(None)] == [  # type: ignore[attr-defined]
        ("r_regionkey", "r_name")]
    envelope = json.loads(codec.registry.get_schema(schema_id(record.value)).schema_str)
    assert envelope["namespace"] == prefix
    assert "requires table" not in cf.loss("arcion", codec)


def test_a_connect_time_beyond_an_int32_is_written_as_a_long() -> None:
    """Found by the conversion matrix: fastavro refused 2**31 for the time(3) column's Avro int."""
    connect_time = ('{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,'
                    '"field":"name"}')
    event = cf.ChangeEvent(cf.Op.INSERT, TABLE, after=(cf.Cell("id", None), cf.Cell("name", 2**31, connect_time)))
    check_encodes(fresh_codec(), event)


def test_a_key_column_named_op_is_read_as_a_key_column() -> None:
    """Found by the conversion matrix: a key record was told from an envelope by its lack of a field "op", so the key
    of a table whose key column is called op was read as no key."""
    codec = fresh_codec()
    event = cf.ChangeEvent(cf.Op.INSERT, TABLE, key=(cf.Cell("op", 1),), after=(cf.Cell("op", 1), cf.Cell("x", "a")))
    assert codec.dropped(event) == []
    assert list(codec.decode(codec.encode([event]))) == [event]


# -- 6. columns of nulls only ---------------------------------------------------------------------------------------

_OPTIONAL_DECIMAL = json.dumps({"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
                                "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "10"}})


def _row_fields(registry: Any, framed: bytes) -> dict[str, Any]:
    """Column name -> Avro type of the row schema the framed value was written with."""
    envelope = json.loads(registry.get_schema(schema_id(framed)).schema_str)
    row = next(branch for branch in envelope["fields"][0]["type"] if branch != "null")
    return {entry.get("cdcformats.column", entry["name"]): entry["type"] for entry in row["fields"]}


@pytest.mark.parametrize("type_name, avro_type", [
    ("VARCHAR", ["null", {"type": "string", "connect.parameters": {"__debezium.source.column.type": "VARCHAR"}}]),
    ("text", ["null", {"type": "string", "connect.parameters": {"__debezium.source.column.type": "text"}}]),
    ("DOUBLE", ["null", {"type": "double", "connect.parameters": {"__debezium.source.column.type": "DOUBLE"}}]),
    ("int32", ["null", "int"]),
    (_OPTIONAL_DECIMAL, ["null", {"type": "bytes", "scale": 2, "precision": 10, "connect.version": 1,
                                  "connect.parameters": {"scale": "2", "connect.decimal.precision": "10",
                                                         "__debezium.source.column.type": _OPTIONAL_DECIMAL},
                                  "connect.name": "org.apache.kafka.connect.data.Decimal",
                                  "logicalType": "decimal"}]),
    ("date", {"type": "null", "connect.parameters": {"__debezium.source.column.type": "date"}}),
    (None, "null"),
])
def test_a_column_of_nulls_has_its_declared_type_or_else_avros_null(type_name: str | None, avro_type: Any) -> None:
    """Found by a user trial: a null column with a type name was written as ["null", {"type": "null"}], which every
    registry refuses ("null type already in Union"). A declared type whose values come as that type from every source
    types the column; an SQL date (text from Canal) or no type leaves it Avro's null, which a value widens later."""
    codec = fresh_codec()
    event = cf.ChangeEvent(cf.Op.INSERT, TABLE, key=(cf.Cell("id", 1, "INT"),),
                           after=(cf.Cell("id", 1, "INT"), cf.Cell("x", None, type_name)))
    (record,) = check_encodes(codec, event)
    assert _row_fields(codec.registry, record.value)["x"] == avro_type

    later = cf.ChangeEvent(cf.Op.INSERT, TABLE, key=(cf.Cell("id", 2, "INT"),),
                           after=(cf.Cell("id", 2, "INT"), cf.Cell("x", "2024-05-01", type_name)))
    if avro_type == "null" or type(avro_type) is dict:  # a null column: the type of a value follows
        (second,) = check_encodes(codec, later)
        assert schema_id(second.value) != schema_id(record.value)
        assert _row_fields(codec.registry, second.value)["x"][0] == "null"


def test_a_null_column_of_a_canal_stream_takes_the_type_of_its_first_value_in_a_registry_file(tmp_path: Path
                                                                                                ) -> None:
    """A Canal ``date`` column, null first and then its text, and a ``double`` column added later as null: each
    version registers (the registry file checks every version's compatibility), and confluent's reader reads each."""
    def canal(row_id: int, row: dict[str, str | None], types: dict[str, str]) -> bytes:
        return json.dumps({"data": [{"id": str(row_id), **row}], "database": "shop", "table": "people",
                           "type": "INSERT", "es": 1700000000000, "ts": 1700000000100, "isDdl": False,
                           "pkNames": ["id"], "mysqlType": {"id": "int(11)", **types}, "old": None}).encode()

    messages = [canal(1, {"born": None}, {"born": "date"}),
                canal(2, {"born": "2024-05-01"}, {"born": "date"}),
                canal(3, {"born": None, "score": None}, {"born": "date", "score": "double"}),
                canal(4, {"born": "2024-05-02", "score": "1.5"}, {"born": "date", "score": "double"})]
    codec = cf.codec(NAME, schema_registry=tmp_path / "registry.sqlite")
    records = [check_encodes(codec, event)[0] for event in cf.codec("canal-json").decode(messages)]
    fields = [_row_fields(codec.registry, record.value) for record in records]
    assert [str(entry.get("born")) for entry in fields] == [
        str({"type": "null", "connect.parameters": {"__debezium.source.column.type": "date"}}),
        *[str(["null", {"type": "string", "connect.parameters": {"__debezium.source.column.type": "date"}}])] * 3]
    assert "score" not in fields[1] and fields[2]["score"] == fields[3]["score"] == [
        "null", {"type": "double", "connect.parameters": {"__debezium.source.column.type": "double"}}]
    assert codec.registry.get_versions("cdcformats.shop.people-value") == [1, 2, 3]


_NULL_FIRST_TYPES = st.sampled_from([None, "VARCHAR", "text", "DOUBLE", "int(11)", "bigint unsigned",
                                     "decimal(10,2)", "date", "datetime(6)", "varbinary(16)", "geometry", "int32",
                                     "io.debezium.time.Date", _OPTIONAL_DECIMAL])


@st.composite
def null_first_streams(draw: st.DrawFn) -> list[cf.ChangeEvent]:
    """Changes of one table whose columns, each of one declared type, are null in the first change and then null or
    any value: what a nullable column of a real table sends."""
    columns = draw(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), _NULL_FIRST_TYPES), min_size=1,
                            max_size=4, unique_by=lambda column: column[0]))
    rows = draw(st.lists(st.lists(st.none() | values(CARRIES), min_size=len(columns), max_size=len(columns)),
                         min_size=1, max_size=4))
    rows[0] = [None] * len(columns)
    return [cf.ChangeEvent(cf.Op.INSERT, TABLE, key=(cf.Cell("id", number),), after=(
        cf.Cell("id", number), *(cf.Cell(name, value, type_name) for (name, type_name), value in zip(columns, row))))
        for number, row in enumerate(rows)]


@given(stream=null_first_streams())
def test_columns_null_first_read_back_here_and_in_confluents_reader(stream: list[cf.ChangeEvent]) -> None:
    codec = fresh_codec()
    for event in stream:
        check_encodes(codec, event)


# -- 7. Kafka's serializers: subjects named after the topic, the value read alone ----------------------------------

def test_the_serializers_name_subjects_after_the_topic_they_write_to(tmp_path: Path) -> None:
    """Found by a user trial: the serializers registered Debezium's per-table subject, cdcformats.tpch.region-value,
    for a producer writing to tpch.region; Confluent's serializers register <topic>-value there."""
    from cdcformats.kafka import ChangeEventKeySerializer, ChangeEventSerializer

    registry_file = tmp_path / "registry.sqlite"
    event = cf.ChangeEvent(cf.Op.INSERT, cf.Table("region", "tpch"), key=(cf.Cell("r_regionkey", 1, "int32"),),
                           after=(cf.Cell("r_regionkey", 1, "int32"), cf.Cell("r_name", "ASIA", "string")))
    value = ChangeEventSerializer(NAME, schema_registry=str(registry_file))(
        event, SerializationContext("tpch.region", MessageField.VALUE))
    key = ChangeEventKeySerializer(NAME, schema_registry=str(registry_file))(
        event, SerializationContext("tpch.region", MessageField.KEY))
    registry = connect(registry_file)
    assert registry.get_subjects() == ["tpch.region-key", "tpch.region-value"]
    read = AvroDeserializer(registry)
    assert read(value, SerializationContext("tpch.region", MessageField.VALUE))["after"] == {
        "r_regionkey": 1, "r_name": "ASIA"}
    assert read(key, SerializationContext("tpch.region", MessageField.KEY)) == {"r_regionkey": 1}

    by_record = ChangeEventSerializer(NAME, schema_registry=str(registry_file), subject_name_strategy="record")
    by_record(event, SerializationContext("other", MessageField.VALUE))
    assert "cdcformats.tpch.region.Envelope" in registry.get_subjects()


def test_the_value_deserializer_reads_debezium_avro_with_its_key_from_the_key_schema_or_key_columns(
        tmp_path: Path) -> None:
    """Found by a user trial: ChangeEventDeserializer("debezium-avro") was refused, though Debezium's value holds the
    whole row and most consumers are written with a value deserializer."""
    from cdcformats.kafka import ChangeEventDeserializer, ChangeEventKeySerializer, ChangeEventSerializer

    registry_file = str(tmp_path / "registry.sqlite")
    key = (cf.Cell("r_regionkey", 1, "int32"),)
    inserted = cf.ChangeEvent(cf.Op.INSERT, cf.Table("region", "tpch"), key=key,
                              after=(*key, cf.Cell("r_name", "ASIA", "string"), cf.Cell("r_comment", None, "string")))
    deleted = cf.ChangeEvent(cf.Op.DELETE, cf.Table("region", "tpch"), key=key, before=inserted.after)
    context = SerializationContext("tpch.region", MessageField.VALUE)
    serialize = ChangeEventSerializer(NAME, schema_registry=registry_file)
    values = [serialize(event, context) for event in (inserted, deleted)]
    ChangeEventKeySerializer(NAME, schema_registry=registry_file)(inserted, SerializationContext(
        "tpch.region", MessageField.KEY))

    deserialize = ChangeEventDeserializer(NAME, schema_registry=registry_file)
    assert [deserialize(value, context) for value in values] == [inserted, deleted]
    assert deserialize(None, context) is None
    by_option = ChangeEventDeserializer(NAME, schema_registry=registry_file, key_columns=["r_name"])
    assert [event.key for event in map(by_option, values, [context] * 2)] == [(inserted.after[1],)] * 2
    # Without a topic, the key subject is Debezium's per-table one, which holds nothing here: no key.
    assert deserialize(values[0]).key == ()
    with pytest.raises(cf.ConfigurationError, match="reads the record key and value together"):
        ChangeEventDeserializer("connect-json")


# -- 8. the registry an error names -----------------------------------------------------------------------------------

def test_a_schema_that_cannot_be_fetched_names_the_registry_and_reading_creates_no_file(tmp_path: Path) -> None:
    written = cf.codec(NAME, schema_registry=tmp_path / "written.sqlite")
    (record,) = written.encode([cf.ChangeEvent(cf.Op.INSERT, TABLE, after=(cf.Cell("id", 1),))])
    elsewhere = tmp_path / "elsewhere" / "registry.sqlite"
    with pytest.raises(cf.DecodeError) as missing:
        list(cf.codec(NAME, schema_registry=elsewhere).decode([record]))
    assert f"schema id 1 cannot be fetched from the schema registry file {elsewhere} (no such file)" in str(
        missing.value)
    assert not elsewhere.parent.exists()
