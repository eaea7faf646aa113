"""convert() and loss(): streaming, error modes that keep counts, strict mode that names what would be lost."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import fastavro
import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, ConfigurationError, DecodeError, LossyConversionError, Op
from cdcformats.contract import ALL_FEATURES
from cdcformats.convert import configure, dead_letter_writer
from cdcformats.demo import EXAMPLES
from cdcformats.envelopes.avro import AvroCodec
from cdcformats.schema_registry import connect


class AvroWithoutVersions(AvroCodec):
    """A test format that declares it cannot carry cell versions."""

    name = "avro-without-versions"
    carries = ALL_FEATURES - {"cell.version"}


cf.register(AvroWithoutVersions.name, AvroWithoutVersions, replace=True)

EVENTS = [ChangeEvent(Op.INSERT, after=(Cell("id", n),)) for n in range(5)]


def test_convert_is_lazy() -> None:
    consumed = []

    def messages():
        for event in EVENTS:
            consumed.append(event)
            yield cf.codec("avro").encode_event(event)

    stream = cf.convert(messages(), "avro", "protobuf")
    assert consumed == []
    next(stream)
    assert len(consumed) == 1


def test_errors_fail_raises_with_position() -> None:
    messages = [cf.codec("avro").encode_event(EVENTS[0]), b"\x99garbage"]
    with pytest.raises(DecodeError, match=r"^avro: message 2: .*\(input: \\x99garbage\)"):
        list(cf.convert(messages, "avro", "protobuf"))


@pytest.mark.parametrize("errors", ["skip", "dead-letter"])
def test_skip_and_dead_letter_keep_counts_that_add_up(errors: str) -> None:
    good = [cf.codec("avro").encode_event(event) for event in EVENTS]
    messages = good[:2] + [b"\x99bad"] + good[2:] + [b""]
    dead_letters: list[cf.CodecError] = []
    stats = cf.ConversionStats()
    handler = "skip" if errors == "skip" else dead_letters.append
    out = list(cf.convert(messages, "avro", "protobuf", errors=handler, stats=stats))
    assert len(out) == stats.messages_written == stats.events == 5
    assert stats.failed == 2 and stats.messages_read == stats.events + stats.failed == len(messages)
    assert [error.position for error in stats.errors] == [2, 6]
    if errors == "dead-letter":
        assert [error.messages for error in dead_letters] == [(b"\x99bad",), (b"",)]


def test_strict_names_the_event_and_field_that_would_be_lost() -> None:
    events = [EVENTS[0], ChangeEvent(Op.UPSERT, after=(Cell("a", "x"), Cell("b", "y", version=3)))]
    messages = list(cf.codec("avro").encode(events))
    assert len(list(cf.convert(messages, "avro", "avro-without-versions"))) == 2  # not strict: written anyway
    with pytest.raises(LossyConversionError, match=r"event 2: field after\[1\]\.version: .*cannot carry cell.version"):
        list(cf.convert(messages, "avro", "avro-without-versions", strict=True))
    stats = cf.ConversionStats()
    assert len(list(cf.convert(messages, "avro", "avro-without-versions", strict=True, errors="skip",
                               stats=stats))) == 1
    assert stats.failed == 1


def test_loss_lists_what_the_target_cannot_carry() -> None:
    assert cf.loss("avro", "protobuf") == []
    assert cf.loss("protobuf", "avro") == []
    assert cf.loss("avro", "avro-without-versions") == ["cell.version"]
    assert cf.loss("avro-without-versions", "avro") == []


def test_options_go_to_the_codec_that_declares_them() -> None:
    with pytest.raises(ConfigurationError, match="option colour known to neither avro .* nor protobuf"):
        cf.convert([], "avro", "protobuf", colour="red")
    with pytest.raises(ConfigurationError, match="errors must be one of fail, skip or a callable"):
        list(cf.convert([], "avro", "protobuf", errors="ignore"))


# -- counts, file safety, dead letters ----------------------------------------------------------------------------

class AvroRefusingDeletes(AvroCodec):
    """A test target that cannot write a DELETE at all: an encode error for every delete it is given."""

    name = "avro-refusing-deletes"

    def encode_event(self, event: ChangeEvent) -> bytes:
        if event.op is Op.DELETE:
            raise cf.EncodeError(self.name, "no form for a delete", field="op")
        return super().encode_event(event)


cf.register(AvroRefusingDeletes.name, AvroRefusingDeletes, replace=True)

FIXTURES = Path(__file__).parent.parent / "fixtures"
CANAL_LINES = (FIXTURES / "canal" / "flink-canal-data.txt").read_bytes().splitlines()  # 3, 1, 1 (a DELETE), 2 rows
CANAL_DDL = (FIXTURES / "canal" / "tencent-ckafka-create-database.json").read_bytes().strip()


def canal_file(tmp_path: Path) -> Path:
    """Line 1: three rows; 2: blank; 3: a DDL message (skipped); 4: not JSON; 5, 6, 7: one row each, 6 a DELETE."""
    path = tmp_path / "canal.jsonl"
    path.write_bytes(b"\n".join([CANAL_LINES[0], b"", CANAL_DDL, b"{not json", *CANAL_LINES[1:4]]) + b"\n")
    return path


def assert_adds_up(stats: cf.ConversionStats) -> None:
    assert stats.messages_read == stats.messages_decoded + stats.messages_failed + stats.messages_skipped
    assert stats.events == stats.events_written + stats.events_refused


@pytest.mark.parametrize("errors", ["skip", "dead-letter"])
def test_counts_add_up_with_several_rows_a_message(tmp_path: Path, errors: str) -> None:
    letters: list[cf.CodecError] = []
    stats = cf.ConversionStats()
    cf.convert_file(canal_file(tmp_path), tmp_path / "out.avro", "canal-json", "avro-refusing-deletes",
                    errors="skip" if errors == "skip" else letters.append, stats=stats, skip_ddl=True)
    assert_adds_up(stats)
    assert (stats.messages_read, stats.messages_decoded, stats.messages_failed, stats.messages_skipped) == (6, 4, 1, 1)
    assert (stats.events, stats.events_written, stats.events_refused, stats.messages_written) == (7, 6, 1, 6)
    assert [str(error).split(": ")[1] for error in stats.errors] == ["line 4", "line 6"]
    if errors == "dead-letter":  # the delete's dead letter holds its source message, not the event
        assert letters[1].messages == (CANAL_LINES[2],)
    with open(tmp_path / "out.avro", "rb") as file:
        assert len(list(fastavro.reader(file))) == 6


@pytest.mark.parametrize("bad_json, error", [
    (True, r"^canal-json: line 4: not valid JSON"),
    (False, r"^avro-refusing-deletes: line 6: field op: no form for a delete \(input: \{"),
])
def test_a_failed_run_counts_what_it_got_to_and_leaves_the_output_untouched(tmp_path: Path, bad_json: bool,
                                                                             error: str) -> None:
    source = canal_file(tmp_path)
    if not bad_json:
        source.write_bytes(source.read_bytes().replace(b"{not json\n", b"\n"))
    output = tmp_path / "out.avro"
    output.write_bytes(b"the previous output")
    stats = cf.ConversionStats()
    with pytest.raises(cf.CodecError, match=error):
        cf.convert_file(source, output, "canal-json", "avro-refusing-deletes", stats=stats, skip_ddl=True)
    assert_adds_up(stats)
    assert stats.failed == 1 and stats.events_written == (3 if bad_json else 4)
    assert output.read_bytes() == b"the previous output"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["canal.jsonl", "out.avro"]  # no temporary file


def test_an_avro_container_written_to_a_stream_is_complete_after_a_failure(tmp_path: Path) -> None:
    stream = io.BytesIO()
    with pytest.raises(cf.DecodeError):
        cf.convert_file(canal_file(tmp_path), stream, "canal-json", "avro", skip_ddl=True)
    stream.seek(0)
    assert [record["op"] for record in fastavro.reader(stream)] == ["INSERT"] * 3


def test_the_output_cannot_be_the_input(tmp_path: Path) -> None:
    source = canal_file(tmp_path)
    before = source.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(source)
    for output in (source, tmp_path / "link.jsonl", tmp_path / "." / "canal.jsonl"):
        with pytest.raises(ConfigurationError, match="is the input file"):
            cf.convert_file(source, output, "canal-json", "maxwell-json")
    with open(source, "rb") as stream, pytest.raises(ConfigurationError, match="is the input file"):
        cf.convert_file(stream, source, "canal-json", "maxwell-json")
    assert source.read_bytes() == before


def test_a_dead_letter_file_replays_what_the_target_refused(tmp_path: Path) -> None:
    dead = tmp_path / "dead.jsonl"
    with open(dead, "w") as letters:
        cf.convert_file(canal_file(tmp_path), tmp_path / "out.avro", "canal-json", "avro-refusing-deletes",
                        errors=dead_letter_writer(letters, "canal-json"), skip_ddl=True)
    records = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [(record["format"], record["position"]) for record in records] == [("canal-json", 4),
                                                                             ("avro-refusing-deletes", 6)]
    assert [base64.b64decode(record["messages"][0]["base64"]) for record in records] == [b"{not json",
                                                                                          CANAL_LINES[2]]
    stats = cf.ConversionStats()
    cf.convert_file(dead, tmp_path / "replayed.avro", "canal-json", "avro", stats=stats, errors="skip")
    assert (stats.messages_read, stats.messages_failed, stats.events_written) == (2, 1, 1)
    assert str(stats.errors[0]).startswith("canal-json: line 1: not valid JSON")
    with open(tmp_path / "replayed.avro", "rb") as file:
        assert [record["op"] for record in fastavro.reader(file)] == ["DELETE"]
    with pytest.raises(ConfigurationError, match="dead letters hold canal-json messages, not maxwell-json: replay "
                                                 "them with --from canal-json"):
        cf.convert_file(dead, tmp_path / "other.avro", "maxwell-json", "avro", errors="skip")


def test_the_rows_of_one_tablestore_record_are_dead_lettered_and_replayed_together(tmp_path: Path) -> None:
    example = EXAMPLES[2]
    source = tmp_path / "ots.jsonl"
    source.write_bytes(b"\n".join(example.messages()) + b"\n")
    letters: list[cf.CodecError] = []
    stats = cf.ConversionStats()
    cf.convert_file(source, io.BytesIO(), "ots-json", "avro-without-versions", strict=True, errors=letters.append,
                    stats=stats, **example.options)
    assert (stats.messages_read, stats.events, stats.events_refused) == (7, 3, 3)  # 7 rows, 3 records
    assert [len(letter.messages) for letter in letters] == [3, 2, 2]
    assert [letter.position for letter in letters] == [1, 4, 6]
    replayed = [event for letter in letters
                for event in cf.codec("ots-json", **example.options).decode(letter.messages)]
    assert replayed == list(cf.codec("ots-json", **example.options).decode(example.messages()))


def test_options_go_to_the_side_that_declares_them() -> None:
    source, target = configure("arcion", "ots-json", source_options={"mode": "realtime"}, primary_key=["id"],
                               table="t")
    assert source.config["mode"] == "realtime" and target.config["mode"] == "multi_version"
    assert source.config["table"] is not None and target.config["table"] is not None  # both declare it
    with pytest.raises(ConfigurationError, match="option mode given both for both formats and for arcion alone"):
        configure("arcion", "ots-json", source_options={"mode": "realtime"}, mode="realtime", primary_key=["id"])
    with pytest.raises(ConfigurationError, match=r"option colour known to neither arcion \(.*mode.*\) nor ots-json"):
        configure("arcion", "ots-json", colour="red", primary_key=["id"])


@pytest.mark.parametrize("address, fix", [
    ("127.0.0.1:8081", "did you mean http://127.0.0.1:8081?"),
    ("localhost:8081", "did you mean http://localhost:8081?"),
    ("ftp://x", "a registry is a URL"),
])
def test_a_registry_address_is_a_url_or_a_registry_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        address: str, fix: str) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match=re.escape(fix)):
        connect(address)
    assert list(tmp_path.iterdir()) == []  # no registry file of that name
    assert type(connect("mock://registry")).__name__ == "MockSchemaRegistryClient"
    assert type(connect("http://localhost:8081")).__name__ == "SchemaRegistryClient"
    assert type(connect(tmp_path / "new.sqlite")).__name__ == "EmbeddedSchemaRegistryClient"
