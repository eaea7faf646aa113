"""Files of each format (JSON lines, Avro container files, length-delimited Protobuf) and `cdcformats convert`."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from click.testing import CliRunner

import cdcformats as cf
from cdcformats.cli import main
from cdcformats.demo import EXAMPLES

LINDORM = EXAMPLES[0]


def lindorm_events() -> list[cf.ChangeEvent]:
    return list(cf.codec("lindorm", key_columns=["id"]).decode(LINDORM.messages()))


@pytest.mark.parametrize("example, name", [(EXAMPLES[0], "lindorm"), (EXAMPLES[1], "arcion"), (EXAMPLES[0], "avro"),
                                           (EXAMPLES[1], "protobuf")])
def test_a_file_reads_back_what_was_written(example: Any, name: str) -> None:
    """Each file form holds what the format writes (the example's own events, or any, for the envelopes)."""
    codec = cf.codec(name, **(example.options if name == example.format else {}))
    events = list(cf.codec(example.format, **example.options).decode(example.messages())) * 50
    file = io.BytesIO()
    assert sum(codec.write_file(file, events)) == len(events)
    file.seek(0)
    back = list(codec.read_file(file))
    assert back == [codec.decode_message(codec.encode_event(event)) for event in events]


def test_avro_files_are_container_files_any_avro_reader_reads() -> None:
    file = io.BytesIO()
    list(cf.codec("avro").write_file(file, lindorm_events() * 3000))
    file.seek(0)
    records = list(fastavro.reader(file))
    assert len(records) == 15000 and records[0]["op"] == "UPSERT" and records[4]["op"] == "DELETE"


def test_a_truncated_protobuf_file_is_a_decode_error_naming_the_message() -> None:
    file = io.BytesIO()
    list(cf.codec("protobuf").write_file(file, lindorm_events()))
    truncated = io.BytesIO(file.getvalue()[:-3])
    with pytest.raises(cf.DecodeError, match="record 5: the file ends 3 bytes into a message"):
        list(cf.codec("protobuf").read_file(truncated))


def test_tuple_formats_have_no_file_form() -> None:
    with pytest.raises(cf.ConfigurationError, match="no file form: use ots-json"):
        cf.codec("ots", primary_key=["id"]).read_file(io.BytesIO())


def write_input(tmp_path: Path, extra: list[bytes]) -> Path:
    path = tmp_path / "orders.jsonl"
    path.write_bytes(b"\n".join(LINDORM.messages() + extra) + b"\n")
    return path


def test_convert_command_round_trip(tmp_path: Path) -> None:
    source = write_input(tmp_path, [])
    runner = CliRunner()
    result = runner.invoke(main, ["convert", "--from", "lindorm", "--to", "protobuf", str(source),
                                  str(tmp_path / "orders.pb"), "--option", 'key_columns=["id"]'])
    assert result.exit_code == 0, result.output
    assert ("lindorm -> protobuf: 5 messages read (5 decoded, 0 failed, 0 skipped), 5 events (5 written, 0 refused), "
            "5 messages written") in result.stderr
    back = runner.invoke(main, ["convert", "--from", "protobuf", "--to", "lindorm", str(tmp_path / "orders.pb")])
    assert back.exit_code == 0
    assert back.stdout_bytes.splitlines() == LINDORM.messages()


def test_convert_command_fails_with_exit_code_1_and_the_error(tmp_path: Path) -> None:
    source = write_input(tmp_path, [b'{"op": "Nope"}'])
    result = CliRunner().invoke(main, ["convert", "--from", "lindorm", "--to", "avro", str(source),
                                       str(tmp_path / "out.avro")])
    assert result.exit_code == 1
    assert "Error: lindorm: line 6: field op: unknown op 'Nope'" in result.stderr
    assert "6 messages read (5 decoded, 1 failed, 0 skipped), 5 events" in result.stderr
    assert not (tmp_path / "out.avro").exists() and list(tmp_path.iterdir()) == [source]


def test_convert_command_dead_letters_keep_the_raw_input(tmp_path: Path) -> None:
    bad = [b'{"op": "Nope"}', b"\xff not json"]
    source = write_input(tmp_path, bad)
    result = CliRunner().invoke(main, ["convert", "--from", "lindorm", "--to", "avro", str(source),
                                       str(tmp_path / "out.avro"), "--dead-letter", str(tmp_path / "dead.jsonl")])
    assert result.exit_code == 0, result.output
    assert "7 messages read (5 decoded, 2 failed, 0 skipped), 5 events (5 written, 0 refused)" in result.stderr
    letters = [json.loads(line) for line in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert [base64.b64decode(message["base64"]) for letter in letters for message in letter["messages"]] == bad
    assert [letter["position"] for letter in letters] == [6, 7]
    assert {letter["source_format"] for letter in letters} == {"lindorm"}
    with open(tmp_path / "out.avro", "rb") as file:
        assert len(list(fastavro.reader(file))) == 5


def test_convert_command_strict_refuses_lossy_events(tmp_path: Path) -> None:
    source = tmp_path / "region.jsonl"
    source.write_bytes(b"\n".join(EXAMPLES[1].messages()) + b"\n")
    result = CliRunner().invoke(main, ["convert", "--from", "arcion", "--to", "lindorm", str(source), "--strict",
                                       "--errors", "skip", "--option", "table=tpch.region"])
    assert result.exit_code == 0
    events = list(cf.codec("arcion", table="tpch.region").decode(EXAMPLES[1].messages()))
    refused = sum(1 for event in events if cf.codec("lindorm").dropped(event))
    assert refused > 0
    assert f"{len(events):,} events ({len(events) - refused:,} written, {refused} refused)" in result.stderr


def test_convert_command_with_a_progress_bar_and_the_long_flag_names(tmp_path: Path) -> None:
    source = write_input(tmp_path, [])
    result = CliRunner().invoke(main, ["convert", "--source-format", "lindorm", "--target-format", "arcion",
                                       str(source), str(tmp_path / "out.jsonl"), "--progress",
                                       "--option", 'key_columns=["id"]'])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 5
