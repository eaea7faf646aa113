"""canal-json against what Canal really emits (tests/fixtures/peers/mariadb/canal.jsonl, Canal 1.1.7 on MariaDB
10.11): every message reads, DDL and statements as the codec documents; a row message is written back byte for byte
(one of several rows as its own message); and each row change goes to debezium-json and back, losing only what the
conversion declares."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

import cdcformats as cf
from tests.peers import record_canal

MESSAGES = record_canal.recorded()
ROW_TYPES = {"INSERT", "UPDATE", "DELETE", "TRUNCATE"}
ROWS = [(number, message) for number, message in enumerate(MESSAGES, 1) if json.loads(message)["type"] in ROW_TYPES]
OTHERS = [(number, message) for number, message in enumerate(MESSAGES, 1)
          if json.loads(message)["type"] not in ROW_TYPES]
CANAL = cf.codec("canal-json")
SKIPPING = cf.codec("canal-json", skip_ddl=True)


def _rows(message: str) -> list[dict[str, Any]]:
    """A row message as one message per row, as Canal would have sent each row alone: ``data`` and ``old`` narrowed
    to that row, and an ``old`` entry without the columns whose value is the row's (Canal lists in each entry the
    columns that changed in any row of the statement; the codec's normal form leaves the unchanged ones out)."""
    document = json.loads(message)
    if not document["data"]:
        return [document]
    narrowed = []
    for index, row in enumerate(document["data"]):
        old = document["old"][index] if document["old"] else None
        narrowed.append({**document, "data": [row], "old": None if old is None else
                         [{name: value for name, value in old.items() if row.get(name, value) != value or
                           name not in row}]})
    return narrowed


def test_the_recording_holds_what_the_workload_made() -> None:
    documents = [json.loads(message) for message in MESSAGES]
    assert {document["type"] for document in documents} == \
        {"INSERT", "UPDATE", "DELETE", "TRUNCATE", "QUERY", "CREATE", "ALTER", "CINDEX", "RENAME", "ERASE"}
    assert {document["isDdl"] for document in documents if document["type"] in ROW_TYPES - {"TRUNCATE"}} == {False}
    assert {document["isDdl"] for document in documents if document["type"] not in ROW_TYPES | {"QUERY"}} == {True}
    assert any(len(document["data"] or ()) > 1 and document["type"] == "UPDATE" for document in documents)
    assert any(document["pkNames"] is None and document["data"] for document in documents)  # the keyless table
    assert any(_rows(message) != [json.loads(message)] for _, message in ROWS if json.loads(message)["old"])


def test_every_row_message_reads_one_event_a_row() -> None:
    for number, message in ROWS:
        document = json.loads(message)
        events = CANAL.decode_messages(message.encode())
        assert [event.op.value for event in events] == [document["type"]] * max(len(document["data"] or ()), 1), \
            number
        assert all(CANAL.dropped(event) == [] for event in events), number


def test_every_number_column_reads_as_numbers() -> None:
    """Canal's table-meta history names MySQL's integer types with their attributes ("int unsigned") and MEDIUMINT,
    and Canal spells numbers as Java does ("-3.4E38", "0.000000000001"): each value is a number of its column's
    kind, but for an unsigned BIGINT beyond 64 bits, which stays its text."""
    kinds = {"tinyint": int, "smallint": int, "mediumint": int, "int": int, "bigint": int, "float": float,
             "double": float, "decimal": Decimal}
    seen = set()
    for _, message in ROWS:
        for event in CANAL.decode_messages(message.encode()):
            for cell in (event.before or ()) + (event.after or ()):
                kind = kinds.get(cell.type.split("(")[0].split()[0]) if cell.type else None
                if cell.value is not None and kind:
                    seen.add(cell.type)
                    assert type(cell.value) is kind or cell.value == "18446744073709551615", (cell, message)
    assert seen >= {"tinyint unsigned", "mediumint", "mediumint unsigned", "int unsigned", "bigint unsigned", "float",
                    "double", "decimal(38,12)"}


def test_ddl_and_statements_are_refused_naming_their_type_or_skipped() -> None:
    """CREATE, ALTER, CINDEX, RENAME, ERASE (isDdl) and QUERY, the statement MariaDB logs before its rows, change no
    row: a one-line refusal naming the type, or, with skip_ddl, nothing."""
    for number, message in OTHERS:
        type_name = json.loads(message)["type"]
        with pytest.raises(cf.DecodeError, match=f"field type: type '{type_name}' is not a row change"):
            CANAL.decode_messages(message.encode())
        assert SKIPPING.decode_messages(message.encode()) == [], number


def test_every_row_message_is_written_back_as_canal_sent_it() -> None:
    """Byte for byte where the message holds one row; a message of several rows as one message a row."""
    several = 0
    for number, message in ROWS:
        written = [written.decode() for event in CANAL.decode_messages(message.encode())
                   for written in CANAL.encode_messages(event)]
        if len(json.loads(message)["data"] or ()) <= 1:
            assert written == [message], number
        else:
            several += 1
            assert [json.loads(text) for text in written] == _rows(message), number
    assert several == 5


@pytest.mark.parametrize("schemas", [True, False], ids=["schemas", "plain"])
def test_each_row_change_goes_to_debezium_json_and_back(schemas: bool) -> None:
    """Back as the event with what debezium-json declares dropped (the key, which a Kafka record's key holds, and
    Canal's sqlType; without schemas also the column types), and then to canal-json again as declared there."""
    debezium = cf.codec("debezium-json", schemas=schemas)
    for number, message in ROWS:
        for event in CANAL.decode_messages(message.encode()):
            back = [again for written in debezium.encode_messages(event) for again in debezium.decode_messages(written)]
            assert back == [cf.without(event, debezium.dropped(event))], number
            canal_again = [again for written in CANAL.encode_messages(back[0])
                           for again in CANAL.decode_messages(written)]
            assert canal_again == [cf.without(back[0], CANAL.dropped(back[0]))], number
            if schemas:
                assert {loss.feature for loss in debezium.dropped(event)} <= {"key", "attributes"}, number
                assert CANAL.dropped(back[0]) == [], number


def test_canal_json_through_debezium_json_with_schemas_loses_only_the_key_and_canal_s_own_fields() -> None:
    """What a user converting Canal's messages to debezium-json and back sees: each row message as it came, but for
    ``pkNames``, ``sqlType`` and a TRUNCATE's ``sql``, which debezium-json's value has no place for."""
    debezium = cf.codec("debezium-json", schemas=True)
    for number, message in ROWS:
        written = [json.loads(canal) for event in CANAL.decode_messages(message.encode())
                   for dbz in debezium.encode_messages(event) for again in debezium.decode_messages(dbz)
                   for canal in CANAL.encode_messages(again)]
        assert written == [{**row, "pkNames": None, "sqlType": None, "sql": ""} for row in _rows(message)], number
