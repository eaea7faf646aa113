"""A field schema whose type is not text, as a producer that builds its Connect schemas by hand can send (found in
session 16's trial): reading the value through it raised Python's TypeError ("unhashable type"), not a decode error,
so that the whole conversion stopped on one bad message. It is now one bad message: its line and field named, and
the rest converted under ``--errors skip``."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Runner

GOOD = {"schema": {"type": "struct", "optional": False, "fields": [
    {"type": "struct", "optional": True, "field": "after",
     "fields": [{"type": "int64", "optional": False, "field": "id"}]},
    {"type": "string", "optional": False, "field": "op"}]},
    "payload": {"after": {"id": 1}, "op": "c"}}
# The column's type an object where Connect writes its name: {"type": {"name": "int64"}}.
BROKEN = json.loads(json.dumps(GOOD).replace('{"type": "int64"', '{"type": {"name": "int64"}'))


def test_a_field_schema_of_no_type_name_is_one_bad_message(cdcformats: Runner, tmp_path: Path) -> None:
    assert BROKEN != GOOD
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(document) for document in (GOOD, BROKEN, GOOD)) + "\n")
    failed = cdcformats("convert", "--from", "debezium-json", "--to", "canal-json", "in.jsonl", "out.jsonl")
    assert failed.returncode != 0
    assert "line 2" in failed.error_line() and "after.id" in failed.error_line(), failed.stderr
    assert "type and name are text" in failed.error_line()
    skipped = cdcformats("convert", "--from", "debezium-json", "--to", "canal-json", "--errors", "skip", "in.jsonl",
                         "out.jsonl")
    assert skipped.returncode == 0, skipped.stderr
    assert "3 messages read (2 decoded, 1 failed, 0 skipped)" in skipped.stderr
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 2


def test_a_connect_record_with_such_a_schema_is_one_bad_record(cdcformats: Runner, tmp_path: Path) -> None:
    value = {"schema": {"type": "struct", "optional": False,
                        "fields": [{"type": ["int64"], "optional": False, "field": "id"}]}, "payload": {"id": 1}}
    (tmp_path / "in.jsonl").write_text(json.dumps({"key": None, "value": value}) + "\n")
    ran = cdcformats("convert", "--from", "connect-json", "--to", "debezium-json", "in.jsonl", "out.jsonl")
    assert ran.returncode != 0
    assert "value.payload.id" in ran.error_line() and "type and name are text" in ran.error_line(), ran.stderr
