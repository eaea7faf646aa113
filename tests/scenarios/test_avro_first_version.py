"""Avro envelopes written with version 1 of the schema, as a registry holds it under an older id or an old file
declares it. fastavro's schema resolution took a version 1 bytes value for version 2's string branch (the first
branch bytes promote to): text that was bytes, or an error where the bytes were not UTF-8. Version 1's bodies are
version 2 bodies, and are now read as such; what resolution reads, it reads to the end."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest

import cdcformats as cf
from cdcformats.contract import WriterSchema
from cdcformats.envelopes.avro import record_from_event, writes_canonical_bodies
from cdcformats.schemas import avro_schema

FIRST = (Path(__file__).resolve().parents[1] / "fixtures" / "envelopes" / "change_event.v1.avsc").read_text()
EVENT = cf.ChangeEvent(cf.Op.INSERT, cf.Table("files", schema="docs"), key=(cf.Cell("id", 1),),
                       after=(cf.Cell("id", 1), cf.Cell("blob", b"\xff\x00\x80"), cf.Cell("text", "caf\u00e9"),
                              cf.Cell("digest", b"ok")),
                       attributes=(("checksum", b"\x01\x02"),))


def _written_with_first_version(event: cf.ChangeEvent) -> bytes:
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(json.loads(FIRST)), record_from_event(event))
    return body.getvalue()


def test_bytes_written_with_version_1_read_back_as_bytes() -> None:
    read = cf.codec("avro").decode_written_with(_written_with_first_version(EVENT), WriterSchema("AVRO", FIRST))
    assert read == EVENT
    assert read.after is not None and type(read.after[1].value) is bytes and type(read.after[3].value) is bytes


def test_bytes_after_a_version_1_body_are_refused() -> None:
    with pytest.raises(cf.DecodeError, match="1 bytes left over after the event"):
        cf.codec("avro").decode_written_with(_written_with_first_version(EVENT) + b"\x00", WriterSchema("AVRO", FIRST))


def test_a_container_file_written_with_version_1_reads_its_bytes_as_bytes() -> None:
    stream = io.BytesIO()
    fastavro.writer(stream, fastavro.parse_schema(json.loads(FIRST)), [record_from_event(EVENT)])
    stream.seek(0)
    units = list(cf.codec("avro").read_units(stream))
    assert [unit.events for unit in units] == [[EVENT]]
    assert units[0].messages == (cf.codec("avro").encode_event(EVENT),)  # kept as the canonical body


def test_which_writer_schemas_write_canonical_bodies() -> None:
    canonical = avro_schema()
    assert writes_canonical_bodies(json.loads(FIRST), canonical)
    assert writes_canonical_bodies(canonical, canonical)
    assert not writes_canonical_bodies(canonical, json.loads(FIRST))  # version 1 cannot read nested values
    reordered = json.loads(json.dumps(canonical).replace('"string", "bytes"', '"bytes", "string"'))
    assert reordered != canonical and not writes_canonical_bodies(reordered, canonical)
    renamed = json.loads(json.dumps(canonical).replace('"name": "kind"', '"name": "sort"'))
    assert renamed != canonical and not writes_canonical_bodies(renamed, canonical)
    assert not writes_canonical_bodies("string", canonical) and not writes_canonical_bodies({}, canonical)
