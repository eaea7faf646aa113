"""What Debezium really emits, converted to every target format: the recorded records of Debezium's PostgreSQL
connector (``tests/fixtures/peers``, read by ``tests/peers/recorded.py``), with schemas and without.

1. Each row change decodes with ``debezium-json`` and is written by every registered format, configured as the
   conversion matrix configures it (``tests/property/test_matrix.py``): the target either writes it so that it reads
   back as the event with what its ``dropped()`` declares applied, or refuses it with a refusal that ``cf.loss``
   declared. ``debezium-avro`` writes each capture in order, as a Kafka Connect sink would, so that each table's schema
   evolves in the registry record by record.
2. The typed targets (``debezium-avro``, and the canonical envelopes ``avro`` and ``protobuf``) give back the type name
   and the value of every cell that Debezium's schema declared, as ``debezium-json`` read them.
3. confluent-kafka's own ``AvroDeserializer`` reads what ``debezium-avro`` wrote as Debezium's payload says
   (``value_plain``, ``key_plain``), its Connect types mapped as confluent maps the Avro types they are written as:
   bytes as bytes, decimals as ``Decimal``, Debezium's variable-scale decimal as its ``{scale, value}`` record, floats
   as single precision.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import given

import cdcformats as cf
from cdcformats import EncodeError
from cdcformats.losses import refused, without
from cdcformats.model import value_key
from cdcformats.schema_registry import connect
from tests.peers import recorded
from tests.property.native_connect import debezium_real_wrapped
from tests.property.test_matrix import TARGETS, check_target, target_codec

CHANGES = [record for record in recorded.postgres() if record.is_change]
# Each table's key columns, as the records' keys name them (a table without a key has none).
KEY_COLUMNS = {record.topic.rpartition(".")[2]: list(json.loads(record.key_plain))
               for record in CHANGES if record.key_plain is not None and json.loads(record.key_plain) is not None}
# How a record's value is read: with Connect schemas (JsonConverter's schemas.enable=true), so also with the key
# columns its key names, and without schemas: the part of the record, and the codec.
PARTS = {"value": ("value", cf.codec("debezium-json", schemas=True)),
         "value+keys": ("value", cf.codec("debezium-json", schemas=True, key_columns=KEY_COLUMNS)),
         "value_plain": ("value_plain", cf.codec("debezium-json"))}
TYPED_TARGETS = ("debezium-avro", "avro", "protobuf")
# The registry of the property below, each example's subjects under a topic prefix of its own.
PROPERTY_REGISTRY = connect(Path(tempfile.mkdtemp(prefix="peer-targets-")) / "registry.sqlite")
_PREFIXES = itertools.count()


def decoded(record: recorded.Recorded, part: str) -> cf.ChangeEvent:
    field, codec = PARTS[part]
    text = getattr(record, field)
    assert text is not None, record.where
    events = codec.decode_messages(text.encode())
    assert len(events) == 1, f"{record.where}: {len(events)} events"
    return events[0]


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """A registry file of the test's own: it refuses an incompatible version as a real registry does."""
    return tmp_path / "registry.sqlite"


def in_order(target_name: str, part: str, registry: Path) -> Iterator[tuple[recorded.Recorded, cf.Codec]]:
    """Each row change, with the codec of ``target_name`` that writes it: for ``debezium-avro`` one codec per capture
    (and part), under a topic prefix of its own, fed its records in the order Debezium emitted them."""
    format_name, options = TARGETS[target_name]
    if format_name != "debezium-avro":
        codec = target_codec(format_name, **options)
        yield from ((record, codec) for record in CHANGES)
        return
    for capture in recorded.captures():
        codec = target_codec(format_name, schema_registry=connect(registry),
                             topic_prefix=f"{capture}_{part.replace('+', '_')}")
        yield from ((record, codec) for record in recorded.postgres(capture) if record.is_change)


def test_every_registered_format_is_a_target() -> None:
    # The formats a fresh interpreter has: this process may hold formats that other tests registered.
    listed = subprocess.run([sys.executable, "-c", "import cdcformats as cf; print(' '.join(cf.formats()))"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert {format_name for format_name, _ in TARGETS.values()} == set(listed)
    assert CHANGES and all(record.value is not None for record in CHANGES)
    assert {record.capture for record in CHANGES} == set(recorded.captures())


# -- 1. every target writes each change, or refuses it as it declared ---------------------------------------------

@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("target_name", TARGETS)
def test_every_target_writes_each_recorded_change_or_declares_its_refusal(target_name: str, part: str,
                                                                          registry: Path) -> None:
    failures = []
    for record, target in in_order(target_name, part, registry):
        try:
            check_target(PARTS[part][1], target, target_name, decoded(record, part))
        except AssertionError as error:
            failures.append(f"{record.where}: {str(error).splitlines()[0][:400]}")
    assert not failures, f"{len(failures)} of {len(CHANGES)} {part} records:\n" + "\n".join(failures)


# -- 2. the typed targets keep Debezium's types ----------------------------------------------------------------------

def cells_by_name(event: cf.ChangeEvent, image: str) -> dict[str, cf.Cell] | None:
    cells = getattr(event, image)
    return None if cells is None else {cell.name: cell for cell in cells}


@pytest.mark.parametrize("part", ["value", "value+keys"])
@pytest.mark.parametrize("target_name", TYPED_TARGETS)
def test_typed_targets_give_back_the_type_and_value_of_every_cell(target_name: str, part: str,
                                                                   registry: Path) -> None:
    """Each cell that the record's schema typed comes back with its type name and value (``debezium-avro`` also
    gives back the columns an earlier version of the table had, null)."""
    differences = []
    for record, target in in_order(target_name, part, registry):
        event = decoded(record, part)
        try:
            [back] = target.decode(list(target.encode([event])))
        except EncodeError as error:
            differences.append(f"{record.where}: refused: {error}")
            continue
        for image in ("key", "before", "after"):
            sent, got = cells_by_name(event, image), cells_by_name(back, image)
            if (sent is None) != (got is None):
                differences.append(f"{record.where}: {image} {'absent' if got is None else 'added'}")
                continue
            for name, cell in (sent or {}).items():
                read = (got or {}).get(name)
                if read is None or read.type != cell.type or value_key(read.value) != value_key(cell.value):
                    differences.append(f"{record.where}: {image}.{name} {cell.type} {cell.value!r} came back as "
                                       f"{read and read.type} {read and read.value!r}")
            extra = [cell for name, cell in (got or {}).items() if name not in (sent or {})]
            if image == "key" or any(cell.value is not None for cell in extra):
                differences += [f"{record.where}: {image}.{cell.name} added" for cell in extra]
    assert not differences, "\n".join(differences)


# -- 3. confluent-kafka reads debezium-avro as Debezium's payload says -------------------------------------------

def as_confluent_reads(value: Any, schema: dict[str, Any]) -> Any:
    """A JSON value of Debezium's payload without schemas, as confluent-kafka's AvroDeserializer gives the Avro value
    of its Connect type (``schema``, the field's schema in the record with schemas)."""
    if value is None:
        return None
    kind, name = schema["type"], schema.get("name")
    if name == "org.apache.kafka.connect.data.Decimal":
        unscaled = int.from_bytes(base64.b64decode(value), "big", signed=True)
        return Decimal(unscaled).scaleb(-int(schema["parameters"]["scale"]))
    if kind == "bytes":
        return base64.b64decode(value)
    if kind in ("float", "double"):
        number = float(value)  # JsonConverter writes NaN and the infinities as text
        return struct.unpack("<f", struct.pack("<f", number))[0] if kind == "float" else number
    if kind == "array":
        return [as_confluent_reads(item, schema["items"]) for item in value]
    if kind == "struct":
        return {field["field"]: as_confluent_reads(value.get(field["field"]), field) for field in schema["fields"]}
    return value


def same(left: Any, right: Any) -> bool:
    """Equal values of equal Python types, floats by their bits (every NaN alike)."""
    if type(left) is not type(right):
        return False
    if type(left) in (float, Decimal):
        return value_key(left) == value_key(right)
    if type(left) is dict:
        return left.keys() == right.keys() and all(same(left[name], right[name]) for name in left)
    if type(left) is list:
        return len(left) == len(right) and all(map(same, left, right))
    return bool(left == right)


def row_differences(read: dict[str, Any] | None, payload: dict[str, Any] | None, schema: dict[str, Any]
                    ) -> list[str]:
    """Where confluent's row differs from Debezium's: a column of an earlier version of the table that the row
    does not have may be there, null (a typed row holds every column of its table)."""
    if read is None or payload is None:
        return [] if read is payload else [f"{read!r} for {payload!r}"]
    fields = {field["field"]: field for field in schema["fields"]}
    found = [f"{name}: {read.get(name, 'missing')!r} for {payload[name]!r}" for name in payload
             if not same(read.get(name), as_confluent_reads(payload[name], fields[name]))]
    return found + [f"{name}: {value!r} added" for name, value in read.items()
                    if name not in payload and value is not None]


def test_confluent_reads_debezium_avro_as_debezium_wrote_the_change(registry: Path) -> None:
    read_value, read_key = AvroDeserializer(connect(registry)), AvroDeserializer(connect(registry))
    differences = []
    for record, target in in_order("debezium-avro", "value+keys", registry):
        [written] = target.encode([decoded(record, "value+keys")])
        assert record.value is not None and record.value_plain is not None
        envelope = json.loads(record.value)["schema"]
        row_schemas = {field["field"]: field for field in envelope["fields"]}
        read = read_value(written.value, SerializationContext(record.topic, MessageField.VALUE))
        payload = json.loads(record.value_plain)
        assert read["op"] == payload["op"], record.where
        for image in ("before", "after"):
            differences += [f"{record.where}: {image}.{found}"
                            for found in row_differences(read[image], payload[image], row_schemas[image])]
        if record.key_plain is not None and json.loads(record.key_plain) is not None:
            assert record.key is not None and written.key is not None, record.where
            key = read_key(written.key, SerializationContext(record.topic, MessageField.KEY))
            differences += [f"{record.where}: key.{found}" for found in row_differences(
                key, json.loads(record.key_plain), json.loads(record.key)["schema"])]
    assert not differences, "\n".join(differences)


def test_the_floats_that_debezium_wrote_are_compared_as_their_single_precision() -> None:
    """The mapping above is no identity: a Connect float is a single, NaN is text without schemas."""
    assert as_confluent_reads(-3.4e38, {"type": "float"}) == -3.3999999521443642e38
    assert math.isnan(as_confluent_reads("NaN", {"type": "double"}))
    assert as_confluent_reads("EtaH", {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                                       "parameters": {"scale": "2"}}) == Decimal("12345.67")


@given(document=debezium_real_wrapped())
def test_debezium_avro_gives_back_every_cell_of_a_change_in_debeziums_shape(document: dict[str, Any]) -> None:
    """Part 2 as a property, over changes in the shapes of Debezium's connectors (``native_connect``): each cell
    comes back from ``debezium-avro`` with the type name and value ``debezium-json`` read, but for what ``dropped()``
    declares (the strategy also draws columns no connector writes, such as an INT column of Connect int64 holding
    2^31, whose cell type debezium-avro declares it writes otherwise)."""
    [event] = cf.codec("debezium-json", schemas=True).decode_messages(json.dumps(document).encode())
    target = cf.codec("debezium-avro", schema_registry=PROPERTY_REGISTRY, topic_prefix=f"p{next(_PREFIXES)}")
    losses = target.dropped(event)
    if refused(losses) is not None:  # a decimal beyond its precision, say: declared, not written
        return
    expected = without(event, losses)
    [back] = target.decode(list(target.encode([event])))
    for image in ("before", "after"):
        assert getattr(back, image) == getattr(expected, image), image


def test_a_connect_float_that_java_prints_otherwise_is_declared_as_read_back() -> None:
    """A Connect float column reads back as Java prints its single (``debezium-json``'s value of it): a cell of that
    type holding the single's exact value comes back otherwise, as ``dropped()`` says."""
    codec = cf.codec("debezium-avro", schema_registry=PROPERTY_REGISTRY, topic_prefix=f"p{next(_PREFIXES)}")
    event = cf.ChangeEvent(cf.Op.INSERT, cf.Table("readings", "public"),
                           after=(cf.Cell("id", 1, "int32"), cf.Cell("c_real", 0.10000000149011612, "float")))
    [loss] = codec.dropped(event)
    assert loss[:3] == ("value.float", "after[1].value", 0.1)
    assert list(codec.decode(codec.encode([event]))) == [without(event, [loss])]
    a_double = cf.ChangeEvent(cf.Op.INSERT, cf.Table("readings", "public"),
                              after=(cf.Cell("id", 2, "int32"), cf.Cell("c_real", 0.1 + 2**-50, "float")))
    assert codec.dropped(a_double) == []  # no single: a double column, which holds it as it is
    assert list(codec.decode(codec.encode([a_double]))) == [a_double]
