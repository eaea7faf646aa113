"""Kafka Connect's own JsonConverter against ``connect-json``, on what Debezium really emitted
(``tests/fixtures/peers/postgres``): JsonConverter reads the rows cdcformats writes from Debezium's change events as
the same Connect data as Debezium's own records of those rows, and cdcformats reads the rows JsonConverter wrote from
Debezium's records as the same cells as the debezium-json decode of the change event.

Debezium's own record of a row, for a sink, is its key record and the ``after`` struct of its envelope (what the
``ExtractNewRecordState`` transform makes the value; with schemas, the ``after`` field's schema and payload taken out
of the envelope are exactly what JsonConverter writes for that struct); of a delete, the tombstone Debezium sends
after it. The Connect data are what ``tests/peers/java/ReadConnectJson.java`` prints: one JVM for the module.

Where the two differ by design (top-level struct names and ``optional`` flags, decimals without schemas), the tests
say so exactly, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cdcformats as cf
from cdcformats.model import Op
from tests.peers import recorded

pytestmark = pytest.mark.slow

PEERS = Path(os.environ.get("CDCFORMATS_PEERS") or Path.home() / ".cache" / "cdcformats" / "peers")
RECORDS = recorded.postgres()
CHANGES = [record for record in RECORDS if record.is_change]
SCHEMAS = [pytest.param(True, id="schemas"), pytest.param(False, id="plain")]


class JsonConverter:
    """ReadConnectJson, one record a line: the Connect data JsonConverter reads from a key and a value."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["java", "-cp", f"{PEERS / 'lib'}/*:{PEERS / 'classes'}", "ReadConnectJson"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8")

    def read(self, schemas: bool, topic: str, key: str | bytes | None, value: str | bytes | None
             ) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        texts = [part.decode() if isinstance(part, bytes) else part for part in (key, value)]
        line = {"schemas": schemas, "topic": topic, "key": texts[0], "value": texts[1]}
        self.process.stdin.write(json.dumps(line) + "\n")
        self.process.stdin.flush()
        read = json.loads(self.process.stdout.readline())
        for part in ("key", "value"):
            assert read[part] is None or "error" not in read[part], f"JsonConverter refused the {part}: {read}"
        return read

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0


@pytest.fixture(scope="module")
def converter() -> Iterator[JsonConverter]:
    assert (PEERS / "classes" / "ReadConnectJson.class").exists(), f"the peer harness is not built in {PEERS}: " \
                                                                   "run `make peers`"
    reader = JsonConverter()
    yield reader
    reader.close()


# -- Debezium's own records --------------------------------------------------------------------------------------------

def envelope(record: recorded.Recorded, schemas: bool) -> dict[str, Any]:
    """The change event's envelope as Debezium's record holds it: with schemas, the wrapper {schema, payload}."""
    text = record.value if schemas else record.value_plain
    assert text is not None
    return json.loads(text)


def payload_of(record: recorded.Recorded) -> dict[str, Any]:
    return envelope(record, False)


def debezium_key(record: recorded.Recorded, schemas: bool) -> str | None:
    return record.key if schemas else record.key_plain


def key_columns(record: recorded.Recorded) -> list[str]:
    """The table's key columns: the fields of Debezium's key (none for a table without a primary key)."""
    return list(json.loads(record.key_plain)) if record.key_plain else []


def after_record(record: recorded.Recorded, schemas: bool) -> str | None:
    """Debezium's ``after`` struct as JsonConverter writes it alone: with schemas, the ``after`` field's schema
    (without its field name) and its payload; None for a change without one (a delete)."""
    document = envelope(record, schemas)
    if not schemas:
        return None if document["after"] is None else json.dumps(document["after"])
    if document["payload"]["after"] is None:
        return None
    [schema] = [field for field in document["schema"]["fields"] if field["field"] == "after"]
    return json.dumps({"schema": {name: part for name, part in schema.items() if name != "field"},
                       "payload": document["payload"]["after"]})


def tombstone_after(record: recorded.Recorded) -> recorded.Recorded:
    """The tombstone Debezium sent after a delete: the next record of the capture, the delete's key and no value."""
    tombstone = RECORDS[RECORDS.index(record) + 1]
    assert (tombstone.topic, tombstone.key, tombstone.value) == (record.topic, record.key, None), tombstone.where
    return tombstone


def debezium_record(record: recorded.Recorded, schemas: bool) -> tuple[str | None, str | None]:
    """Debezium's own record of a row change, as a sink reads it: the key and the ``after`` struct, or for a delete
    its tombstone."""
    if payload_of(record)["op"] == "d":
        tombstone = tombstone_after(record)
        return debezium_key(tombstone, schemas), None
    return debezium_key(record, schemas), after_record(record, schemas)


# -- comparing Connect data --------------------------------------------------------------------------------------------

def assert_same_struct(ours: dict[str, Any] | None, theirs: dict[str, Any] | None, name: str | None,
                       optional: bool, where: str) -> None:
    """The same Connect data, up to the top-level struct's name and ``optional`` flag, which are asserted to be
    ``name`` and ``optional`` on our side: the same value, the same fields in the same order, each with the same
    type, optional flag, name, version, parameters and default (and members, for a nested schema)."""
    if theirs is None:
        assert ours is None, where
        return
    assert ours is not None, where
    assert ours["value"] == theirs["value"], where
    if theirs["schema"] is None:  # schemaless: a map whose entries are the JSON values
        assert ours["schema"] is None, where
        return
    assert (ours["schema"]["name"], ours["schema"]["optional"]) == (name, optional), where
    assert {**ours["schema"], "name": None, "optional": None} == {**theirs["schema"], "name": None, "optional": None}, \
        where


def converted(record: recorded.Recorded, schemas: bool, **options: Any) -> cf.KafkaRecord:
    """Our connect-json record of a recorded change, converted from its debezium-json value, the key columns those of
    Debezium's key."""
    text = record.value if schemas else record.value_plain
    assert text is not None
    [ours] = cf.convert([text.encode()], "debezium-json", "connect-json", schemas=schemas,
                        key_columns=key_columns(record), **options)
    return ours


# -- JsonConverter reads our rows as Debezium's ------------------------------------------------------------------------

@pytest.mark.parametrize("schemas", SCHEMAS)
@pytest.mark.parametrize("record", CHANGES, ids=lambda record: record.where)
def test_jsonconverter_reads_our_row_as_debeziums_own(converter: JsonConverter, record: recorded.Recorded,
                                                      schemas: bool) -> None:
    """Each row change converted from debezium-json to connect-json reads, with JsonConverter, as the same Connect
    data as Debezium's own record of the row: a delete is a tombstone of the same key, a TRUNCATE has no record.

    Top-level structs differ by design, and only there: Debezium names its key and row structs ``<topic>.Key`` and
    ``<topic>.Value`` and marks the row struct optional (it is the optional ``after`` field of its envelope);
    connect-json names them only as ``key_schema_name`` and ``value_schema_name`` say (the change event holds no
    topic), and writes them required, as a record's present key or value is. JsonConverter reads the fields the
    same either way, which is all a sink reads."""
    if payload_of(record)["op"] == "t":
        with pytest.raises(cf.EncodeError, match="this TRUNCATE has no row"):
            converted(record, schemas)
        return
    ours = converted(record, schemas)
    our_data = converter.read(schemas, record.topic, ours.key, ours.value)
    their_key, their_value = debezium_record(record, schemas)
    their_data = converter.read(schemas, record.topic, their_key, their_value)
    assert_same_struct(our_data["key"], their_data["key"], None, False, record.where)
    assert_same_struct(our_data["value"], their_data["value"], None, False, record.where)
    if schemas and their_data["key"] is not None:
        assert their_data["key"]["schema"]["name"] == f"{record.topic}.Key"
    if schemas and their_data["value"] is not None:
        assert (their_data["value"]["schema"]["name"], their_data["value"]["schema"]["optional"]) == \
            (f"{record.topic}.Value", True)


@pytest.mark.parametrize("record", [record for record in CHANGES if payload_of(record)["op"] != "t"],
                         ids=lambda record: record.where)
def test_schema_names_as_debezium_names_them(converter: JsonConverter, record: recorded.Recorded) -> None:
    """With the options key_schema_name and value_schema_name, the structs have Debezium's names."""
    ours = converted(record, True, key_schema_name=f"{record.topic}.Key", value_schema_name=f"{record.topic}.Value")
    our_data = converter.read(True, record.topic, ours.key, ours.value)
    their_data = converter.read(True, record.topic, *debezium_record(record, True))
    key_name = None if their_data["key"] is None else f"{record.topic}.Key"
    assert_same_struct(our_data["key"], their_data["key"], key_name, False, record.where)
    assert_same_struct(our_data["value"], their_data["value"], f"{record.topic}.Value", False, record.where)


def decimal_fields(record: recorded.Recorded) -> set[str]:
    """The row's columns that Debezium types as Connect Decimals."""
    [after] = [field for field in envelope(record, True)["schema"]["fields"] if field["field"] == "after"]
    return {field["field"] for field in after["fields"] if field.get("name") == "org.apache.kafka.connect.data.Decimal"}


@pytest.mark.parametrize("record", [record for record in CHANGES if payload_of(record)["after"] is not None],
                         ids=lambda record: record.where)
def test_typed_rows_written_without_schemas(converter: JsonConverter, record: recorded.Recorded) -> None:
    """Debezium's typed records (with schemas) written as connect-json without schemas read as Debezium's own
    records without schemas, but for decimals: JsonConverter writes a Decimal's unscaled bytes as base64 even without
    a schema, which no reader can scale back; connect-json writes the decimal's text, and declares it
    (``value.decimal``, written as text)."""
    assert record.value is not None
    [event] = cf.codec("debezium-json", key_columns=key_columns(record)).decode_messages(record.value.encode())
    target = cf.codec("connect-json", schemas=False)
    declared = {event.after[int(cell.group(1))].name for loss in target.dropped(event)
                if loss.feature == "value.decimal" and (cell := re.fullmatch(r"after\[(\d+)\]\.value", loss.path))}
    assert declared == {cell.name for cell in event.after if cell.name in decimal_fields(record)
                        and cell.value is not None}
    [ours] = target.encode_messages(cf.without(event, target.dropped(event)))
    our_data = converter.read(False, record.topic, ours.key, ours.value)
    their_data = converter.read(False, record.topic, record.key_plain, after_record(record, False))
    assert our_data["key"] == their_data["key"]
    decimals = {cell.name: cell.value for cell in event.after if cell.name in declared}
    assert {name: value for name, value in our_data["value"]["value"].items() if name not in decimals} == \
        {name: value for name, value in their_data["value"]["value"].items() if name not in decimals}
    for name, value in decimals.items():
        assert our_data["value"]["value"][name] == str(value), name


# -- we read JsonConverter's rows as debezium-json reads the change ----------------------------------------------------

@pytest.mark.parametrize("schemas", SCHEMAS)
@pytest.mark.parametrize("record", [record for record in CHANGES if payload_of(record)["op"] != "t"],
                         ids=lambda record: record.where)
def test_we_read_debeziums_rows_as_its_changes(record: recorded.Recorded, schemas: bool) -> None:
    """Debezium's own record of a row (its key and the ``after`` struct, or its tombstone) decodes with connect-json
    to the cells the debezium-json decode of the change gives: the row as ``after``, the key as the key columns of
    the row (of the before image, for a delete)."""
    text = record.value if schemas else record.value_plain
    assert text is not None
    [change] = cf.codec("debezium-json", key_columns=key_columns(record)).decode_messages(text.encode())
    key, value = debezium_record(record, schemas)
    ours = cf.codec("connect-json", schemas=schemas).decode_message(
        cf.KafkaRecord(key and key.encode(), value and value.encode()))
    assert ours.key == change.key
    if change.op is Op.DELETE:
        assert (ours.op, ours.after) == (Op.DELETE, None)
    else:
        assert (ours.op, ours.after) == (Op.UPSERT, change.after)


@pytest.mark.parametrize("schemas", SCHEMAS)
@pytest.mark.parametrize("record", [record for record in CHANGES if payload_of(record)["op"] != "t"],
                         ids=lambda record: record.where)
def test_debeziums_rows_written_back_as_they_came(converter: JsonConverter, record: recorded.Recorded,
                                                  schemas: bool) -> None:
    """Debezium's own records of rows, read and written back by connect-json, read with JsonConverter as they did:
    the same Connect data, struct names and ``optional`` flags included."""
    key, value = debezium_record(record, schemas)
    [ours] = cf.convert([cf.KafkaRecord(key and key.encode(), value and value.encode())], "connect-json",
                        "connect-json", schemas=schemas)
    assert converter.read(schemas, record.topic, ours.key, ours.value) == \
        converter.read(schemas, record.topic, key, value)


def test_every_kind_of_change_is_recorded() -> None:
    """The recordings hold what the tests above are about: snapshot reads, inserts, updates, deletes (each with its
    tombstone), a TRUNCATE, rows of a table without a key, Decimal columns, and all four captures."""
    ops = {payload_of(record)["op"] for record in CHANGES}
    assert ops == {"r", "c", "u", "d", "t"}
    assert sum(payload_of(record)["op"] == "d" for record in CHANGES) == 5
    assert any(record.key is None for record in CHANGES)
    assert any(decimal_fields(record) for record in CHANGES if payload_of(record)["after"] is not None)
    assert {record.capture for record in CHANGES} == set(recorded.captures())
