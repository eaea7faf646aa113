"""Messages that the readers which keep a part as its text, or read typed rows, took for JSON until Python's own error
came out of them (issue 30; the first found by the JVM parity property): a JsonConverter wrapper whose schema (read
once for every message that repeats it, as its text) holds a byte that is no UTF-8, in debezium-json,
lindorm-subscription and connect-json; a connect-json payload of such a byte, or nested deeper than any reader goes,
in a message or in a line of its file form; an ots-json row of such a byte. Each stopped the whole conversion, even
with ``--errors skip``; each is now one bad message, as the reader of any JSON makes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Runner

SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"type": "struct", "optional": True, "field": "after", "fields": [{"type": "int64", "optional": False,
                                                                      "field": "id"}]},
    {"type": "string", "optional": False, "field": "op"}]}
GOOD = json.dumps({"schema": SCHEMA, "payload": {"after": {"id": 1}, "op": "c"}}, separators=(",", ":")).encode()
# The same message, a column's name in its schema holding a byte that is no UTF-8.
BROKEN = GOOD.replace(b'"field":"id"', b'"field":"i\xffd"', 1)


@pytest.mark.parametrize("format_name", ["debezium-json", "lindorm-subscription"])
def test_a_wrapper_schema_of_bytes_that_are_not_utf8_is_one_bad_message(cdcformats: Runner, tmp_path: Path,
                                                                         format_name: str) -> None:
    assert BROKEN != GOOD
    (tmp_path / "in.jsonl").write_bytes(b"\n".join([GOOD, BROKEN, GOOD]) + b"\n")
    failed = cdcformats("convert", "--from", format_name, "--to", "maxwell-json", "in.jsonl", "out.jsonl")
    assert failed.returncode == 1
    assert failed.error_line().startswith(f"Error: {format_name}: line 2: not valid JSON"), failed.stderr
    skipped = cdcformats("convert", "--from", format_name, "--to", "maxwell-json", "--errors", "skip", "in.jsonl",
                         "out.jsonl")
    assert skipped.returncode == 0, skipped.stderr
    assert "3 messages read (2 decoded, 1 failed, 0 skipped)" in skipped.stderr
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 2


CONNECT_SCHEMA = b'{"type":"struct","optional":false,"fields":[{"type":"string","optional":false,"field":"id"}]}'
# A record's value with a schema whose text, or whose payload, holds a byte that is no UTF-8, or a payload nested
# deeper than any reader goes: each raised Python's UnicodeDecodeError or RecursionError out of connect-json.
CONNECT_VALUES = {
    "schema": b'{"schema":' + CONNECT_SCHEMA.replace(b'"id"', b'"i\xffd"') + b',"payload":{"id":"a"}}',
    "payload": b'{"schema":' + CONNECT_SCHEMA + b',"payload":{"id":"\xff"}}',
    "nesting": b'{"schema":' + CONNECT_SCHEMA + b',"payload":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("broken", sorted(CONNECT_VALUES))
def test_a_connect_record_that_is_no_json_is_one_bad_record(cdcformats: Runner, tmp_path: Path, broken: str) -> None:
    good = b'{"schema":' + CONNECT_SCHEMA + b',"payload":{"id":"a"}}'
    # connect-json's file form: a record a line, its value the JSON itself
    lines = [b'{"key":null,"value":' + value + b"}" for value in (good, CONNECT_VALUES[broken], good)]
    (tmp_path / "in.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    ran = cdcformats("convert", "--from", "connect-json", "--to", "maxwell-json", "--errors", "skip", "in.jsonl",
                     "out.jsonl")
    assert "Traceback" not in ran.stderr
    assert ran.returncode == 0, ran.stderr
    assert "3 messages read (2 decoded, 1 failed, 0 skipped)" in ran.stderr


def test_a_tablestore_row_of_bytes_that_are_not_utf8_is_one_bad_row(cdcformats: Runner, tmp_path: Path) -> None:
    """ots-json's reader of rows of scalars let Python's UnicodeDecodeError out (found beside the wrapper's)."""
    (tmp_path / "in.jsonl").write_bytes(b'["k","c",1,"a","U"]\n["k","c",2,"\xff","U"]\n["j","c",3,"b","U"]\n')
    ran = cdcformats("convert", "--from", "ots-json", "--to", "maxwell-json", "--errors", "skip", "in.jsonl",
                     "out.jsonl", "--option", 'primary_key=["k"]')
    assert ran.returncode == 0, ran.stderr
    assert "3 messages read (2 decoded, 1 failed, 0 skipped)" in ran.stderr
