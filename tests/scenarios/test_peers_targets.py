"""What Debezium's PostgreSQL connector sends, written by hand in its shapes (as ``tests/fixtures/peers`` recorded
them), converted to ``debezium-avro`` and read back as a user reads it: with the command line, and with
confluent-kafka's own ``AvroDeserializer``. Each was found by ``tests/unit/test_peer_targets.py`` on the recordings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import Runner, jsonl
from .test_debezium_avro_and_registry import python

SOURCE = {"type": "struct", "optional": False, "name": "io.debezium.connector.postgresql.Source", "field": "source",
          "fields": [{"type": "string", "optional": False, "field": "version"},
                     {"type": "string", "optional": False, "field": "connector"},
                     {"type": "string", "optional": False, "field": "name"},
                     {"type": "int64", "optional": False, "field": "ts_ms"},
                     {"type": "string", "optional": False, "field": "db"},
                     {"type": "string", "optional": False, "field": "schema"},
                     {"type": "string", "optional": False, "field": "table"},
                     {"type": "int64", "optional": True, "field": "lsn"}]}
# A PostgreSQL numeric without precision, as Debezium's decimal.handling.mode=precise sends it.
VARIABLE_SCALE_DECIMAL = {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "scale"},
                                                       {"type": "bytes", "optional": False, "field": "value"}],
                          "optional": True, "name": "io.debezium.data.VariableScaleDecimal", "version": 1,
                          "doc": "Variable scaled decimal"}


def debezium(table: str, columns: list[dict[str, Any]], before: dict[str, Any] | None,
             after: dict[str, Any] | None, op: str) -> str:
    """A change as Debezium's PostgreSQL connector writes it through JsonConverter with schemas."""
    row = {"type": "struct", "fields": columns, "optional": True, "name": f"pg.public.{table}.Value"}
    schema = {"type": "struct", "optional": False, "name": f"pg.public.{table}.Envelope", "version": 2,
              "fields": [{**row, "field": "before"}, {**row, "field": "after"}, SOURCE,
                         {"type": "string", "optional": False, "field": "op"},
                         {"type": "int64", "optional": True, "field": "ts_ms"}]}
    source = {"version": "3.6.1.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1795697128664,
              "db": "postgres", "schema": "public", "table": table, "lsn": 22321568}
    return json.dumps({"schema": schema, "payload": {"before": before, "after": after, "source": source, "op": op,
                                                     "ts_ms": 1795697128840}})


def to_debezium_avro(cdcformats: Runner, tmp_path: Path, messages: bytes) -> None:
    """``messages`` converted from debezium-json to debezium-avro, in a registry file."""
    (tmp_path / "in.jsonl").write_bytes(messages)
    ran = cdcformats("convert", "--from", "debezium-json", "--to", "debezium-avro", "--registry", "registry.sqlite",
                     "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    count = len(messages.splitlines())
    assert f"{count} event{'' if count == 1 else 's'} ({count} written, 0 refused)" in ran.stderr


# Prints, for each record of out.jsonl, the Avro type of a column of the row it was written with (its Connect name,
# where it has one) and the column's value as confluent-kafka reads it; then how many versions the table's value
# subject has. Arguments: the column and the subject.
CONFLUENT_READS = """
import base64, json, sys
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from cdcformats.schema_registry import connect

name, subject = sys.argv[1:]
registry = connect("registry.sqlite")
read = AvroDeserializer(registry)
for line in open("out.jsonl"):
    framed = base64.b64decode(json.loads(line)["value"])
    writer = json.loads(registry.get_schema(int.from_bytes(framed[1:5], "big")).schema_str)
    row = next(branch for branch in writer["fields"][0]["type"] if branch != "null")
    column = next(field for field in row["fields"] if field["name"] == name)["type"][1]
    value = read(framed, SerializationContext("any", MessageField.VALUE))["after"][name]
    kind = column if type(column) is str else column.get("connect.name", column["type"])
    print(json.dumps([kind, value], default=repr))
print(len(registry.get_versions(subject)))
"""


def test_a_numeric_without_precision_is_debeziums_variable_scale_decimal_record(cdcformats: Runner,
                                                                                tmp_path: Path) -> None:
    """Before: the struct {scale, value} was written as a record of a long and a string (the bytes as base64
    text): a Confluent consumer read text where Debezium's own AvroConverter gives bytes, and converting back to
    debezium-json gave another column schema."""
    columns = [{"type": "int32", "optional": False, "field": "id"}, {**VARIABLE_SCALE_DECIMAL, "field": "amount"}]
    messages = jsonl(debezium("prices", columns, None, {"id": 1, "amount": {"scale": 20, "value": "EQfV61tbpNfG"}},
                              "r"))
    to_debezium_avro(cdcformats, tmp_path, messages)

    read = python(CONFLUENT_READS, "amount", "cdcformats.public.prices-value", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert read.stdout.splitlines() == [json.dumps(["io.debezium.data.VariableScaleDecimal", {
        "scale": 20, "value": repr(b"\x11\x07\xd5\xeb[[\xa4\xd7\xc6")}]), "1"]

    back = cdcformats("convert", "--from", "debezium-avro", "--to", "debezium-json", "--target-option",
                      "schemas=true", "--registry", "registry.sqlite", "out.jsonl")
    assert back.returncode == 0, back.stderr
    written = json.loads(back.stdout)
    assert written["payload"]["after"] == {"id": 1, "amount": {"scale": 20, "value": "EQfV61tbpNfG"}}
    assert written["schema"]["fields"][1]["fields"] == columns


# Prints, for each image of each change, the cell types that debezium-json reads and those that debezium-avro gives
# back, as a Python consumer of either sees them.
CELL_TYPES = """
import json
import cdcformats as cf

sent = cf.codec("debezium-json", schemas=True).read_file(open("in.jsonl", "rb"))
back = cf.codec("debezium-avro", schema_registry="registry.sqlite").read_file(open("out.jsonl", "rb"))
for event, read in zip(sent, back, strict=True):
    for image in ("before", "after"):
        if getattr(event, image) is not None:
            print(json.dumps([image, *([cell.type for cell in getattr(got, image)] for got in (event, read))]))
"""


def test_a_null_in_an_optional_column_reads_back_with_the_type_debezium_json_gives_it(cdcformats: Runner,
                                                                                     tmp_path: Path) -> None:
    """An UPDATE under REPLICA IDENTITY FULL whose before image holds a null in an optional int32 column and whose
    after image a value: debezium-json names the null's type ``int32`` and the value's the whole schema (the
    column's optional is then not what the value says). Before: the null came back from debezium-avro named by the
    whole schema, unlike debezium-json."""
    columns = [{"type": "int32", "optional": False, "field": "id"}, {"type": "string", "optional": False,
                                                                      "field": "name"},
               {"type": "int32", "optional": True, "field": "qty"}]
    messages = jsonl(debezium("stock", columns, None, {"id": 1, "name": "one", "qty": 10}, "r"),
                     debezium("stock", columns, {"id": 1, "name": "one", "qty": None},
                              {"id": 1, "name": "uno", "qty": 2}, "u"),
                     debezium("stock", columns, {"id": 1, "name": "uno", "qty": 2},
                              {"id": 1, "name": "uno", "qty": None}, "u"))
    to_debezium_avro(cdcformats, tmp_path, messages)

    read = python(CELL_TYPES, cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    images = [json.loads(line) for line in read.stdout.splitlines()]
    assert [image for image, _, _ in images] == ["after", "before", "after", "before", "after"]
    optional_int = '{"type":"int32","optional":true}'
    assert [sent for _, sent, _ in images] == [
        ["int32", None, optional_int], ["int32", None, "int32"], ["int32", None, optional_int],
        ["int32", None, optional_int], ["int32", None, "int32"]]
    assert [back for _, _, back in images] == [sent for _, sent, _ in images]




def test_a_real_column_is_avros_float_as_debezium_writes_it(cdcformats: Runner, tmp_path: Path) -> None:
    """A PostgreSQL real is Connect's float (a single), which JsonConverter prints as Java does (0.1, -3.4E38).
    Before: 1.5 made the column an Avro float, then 0.1, no single as it is printed, widened it to a double in a
    second schema version, so that a Confluent consumer read doubles where Debezium's AvroConverter writes floats."""
    columns = [{"type": "int32", "optional": False, "field": "id"},
               {"type": "float", "optional": True, "field": "c_real"}]
    messages = jsonl(*(debezium("readings", columns, None, {"id": number, "c_real": real}, "c")
                       for number, real in enumerate((1.5, 0.1, -3.4e38), 1)))
    to_debezium_avro(cdcformats, tmp_path, messages)

    read = python(CONFLUENT_READS, "c_real", "cdcformats.public.readings-value", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    *rows, versions = read.stdout.splitlines()
    assert [json.loads(row) for row in rows] == [["float", 1.5], ["float", 0.10000000149011612],
                                                 ["float", -3.3999999521443642e38]]
    assert versions == "1"

    back = cdcformats("convert", "--from", "debezium-avro", "--to", "debezium-json", "--registry", "registry.sqlite",
                      "out.jsonl")
    assert back.returncode == 0, back.stderr
    assert [json.loads(line)["after"]["c_real"] for line in back.stdout.splitlines()] == [1.5, 0.1, -3.4e38]
