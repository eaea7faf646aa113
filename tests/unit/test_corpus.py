"""The public conformance corpus (issue 14): real messages published by other projects and vendors, in
tests/fixtures/corpus (see its README.md and each source's PROVENANCE.md).

``manifest.json`` there names every file the corpus reads, relative to the corpus directory (a few are the examples
already kept beside the format's own tests), with the format that reads it, the codec options, the file's layout
(``lines``: one message per line, the default; ``file``: the whole file is one message) and what it holds
(``expect``: row changes, the default; ``"not a row change"``: DDL, logical-decoding messages, markers; or
``"refused"``: a message beyond what the canonical model holds, with the ``field`` the refusal names and ``why``).

Every row change must decode to at least one event, come back as the same events after encode and decode, and
convert to debezium-json, Avro and Protobuf without an error. A message that is not a row change by design must be
refused with a ``DecodeError`` that says why, never crash the decoder. Each failure names the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import cdcformats as cf
from cdcformats import ChangeEvent, DecodeError

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
MANIFEST: dict[str, dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
NOT_A_ROW_CHANGE = "not a row change"
TARGETS = ("debezium-json", "avro", "protobuf")

ROW_FILES = sorted(name for name, entry in MANIFEST.items() if entry.get("expect", "row changes") == "row changes")
OTHER_FILES = sorted(name for name, entry in MANIFEST.items() if entry.get("expect") == NOT_A_ROW_CHANGE)
REFUSED_FILES = sorted(name for name, entry in MANIFEST.items() if entry.get("expect") == "refused")


def messages(name: str) -> Iterator[tuple[str, bytes]]:
    """The messages of a corpus file, each with where it is (``file:line``, or the file for a whole-file message)."""
    layout = MANIFEST[name].get("layout", "lines")
    data = (CORPUS / name).read_bytes()
    if layout == "file":
        yield name, data
    elif layout == "lines":
        for number, line in enumerate(data.splitlines(), 1):
            if line.strip():
                yield f"{name}:{number}", line
    else:
        raise AssertionError(f"{name}: unknown layout {layout!r} in manifest.json")


def codec(name: str) -> cf.Codec:
    entry = MANIFEST[name]
    return cf.codec(entry["format"], **entry.get("options", {}))


def decoded(name: str, message: bytes) -> list[ChangeEvent]:
    return list(codec(name).decode([message]))


def failure(where: str, error: BaseException) -> str:
    return f"{where}: {type(error).__name__}: {error}"


def check_each(name: str, check: Callable[[bytes], None]) -> None:
    """Run ``check(message)`` on every message of the file and report every one that fails, with where it is, not
    just the first."""
    failures = []
    count = 0
    for where, message in messages(name):
        count += 1
        try:
            check(message)
        except Exception as error:  # a crash is a finding too, reported with its line
            failures.append(failure(where, error))
    assert count, f"{name}: no messages"
    assert not failures, f"{len(failures)} of {count} messages failed:\n" + "\n".join(failures)


# -- the manifest -----------------------------------------------------------------------------------------------------

def test_the_manifest_names_every_corpus_file_and_only_existing_ones() -> None:
    on_disk = {path.relative_to(CORPUS).as_posix() for path in CORPUS.rglob("*")
               if path.is_file() and path.suffix in {".json", ".jsonl"} and path.name != "manifest.json"}
    assert sorted(on_disk - set(MANIFEST)) == [], "corpus files that manifest.json does not name"
    assert sorted(name for name in MANIFEST if not (CORPUS / name).is_file()) == [], "missing files"
    for name, entry in MANIFEST.items():
        assert entry["format"] in cf.formats(), name
        assert entry.get("expect", "row changes") in {"row changes", NOT_A_ROW_CHANGE, "refused"}, name
        assert entry.get("expect") != "refused" or (entry.get("field") and entry.get("why")), name


# -- row changes ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ROW_FILES)
def test_every_message_decodes(name: str) -> None:
    def check(message: bytes) -> None:
        events = decoded(name, message)
        assert events, "decoded to no event"

    check_each(name, check)


@pytest.mark.parametrize("name", ROW_FILES)
def test_every_message_round_trips_to_the_same_events(name: str) -> None:
    def check(message: bytes) -> None:
        events = decoded(name, message)
        again = list(codec(name).decode(codec(name).encode(events)))
        assert again == events, f"decode -> encode -> decode differs:\n  first:  {events}\n  second: {again}"

    check_each(name, check)


@pytest.mark.parametrize("name", ROW_FILES)
@pytest.mark.parametrize("target", TARGETS)
def test_every_message_converts(name: str, target: str) -> None:
    def check(message: bytes) -> None:
        assert list(cf.convert([message], codec(name), target)), f"nothing written as {target}"

    check_each(name, check)


def ordered(message: bytes) -> Any:
    """A JSON message as nested (name, value) lists: equal only where the fields come in the same order too."""
    return json.loads(message, object_pairs_hook=list)


@pytest.mark.parametrize("name", [name for name in ROW_FILES if MANIFEST[name]["format"] == "debezium-json"])
def test_every_debezium_message_is_written_back_as_it_came(name: str) -> None:
    """Issue 28: a Debezium message, with its schema or without, comes back as the same JSON, its fields in their
    order: the source's, the envelope schema's, a null transaction."""
    def check(message: bytes) -> None:
        written = b"".join(codec(name).encode(decoded(name, message)))
        assert ordered(written) == ordered(message), f"written back as {written[:400]!r}"

    check_each(name, check)


# -- messages that are not row changes --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", OTHER_FILES)
def test_what_is_not_a_row_change_is_refused_with_a_reason(name: str) -> None:
    form = MANIFEST[name]["format"]

    def check(message: bytes) -> None:
        try:
            events = decoded(name, message)
        except DecodeError as error:
            assert error.format == form, f"refused by {error.format}, not {form}"
            assert error.reason.strip(), "refused without a reason"
            return
        raise AssertionError(f"expected a DecodeError, decoded to {len(events)} event(s): {events}")

    check_each(name, check)


@pytest.mark.parametrize("name", REFUSED_FILES)
def test_what_the_model_cannot_hold_is_refused_naming_the_field(name: str) -> None:
    entry = MANIFEST[name]

    def check(message: bytes) -> None:
        with pytest.raises(DecodeError) as error:
            decoded(name, message)
        assert (error.value.format, error.value.field) == (entry["format"], entry["field"]), entry["why"]

    check_each(name, check)
