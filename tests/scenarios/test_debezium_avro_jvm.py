"""debezium-avro read in the JVM (issue 31, "the registry-aware, Confluent-framed Avro reader that open-source Spark 4
lacks"): records the real executable wrote into a registry file, read by the Java decoder that the codec names, with
the writer schemas its settings carry, as plain ``java`` runs it: no Spark, no registry server."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from .conftest import Runner, jsonl

pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")

ROOT = Path(__file__).resolve().parents[2]
JARS = str(Path(pyspark.__file__).parent / "jars" / "*")

# What a Spark deployment asks of the codec: the Java class and its settings (the registry's schemas, by id).
JVM_DECODER = """
import json, sys
import cdcformats as cf

decoder = cf.codec("debezium-avro", schema_registry=sys.argv[1]).jvm_decoder()
print(json.dumps(None if decoder is None else {"class": decoder.class_name, "settings": decoder.settings}))
"""

# A reader of the file form's records with the decoder the settings name, printing each record's change (op, table,
# key and row as JSON) or its one-line error.
READ_RECORDS = """
import cdcformats.jvm.decoders.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public final class ReadRecords {
    public static void main(String[] arguments) throws Exception {
        Map<?, ?> decoder = (Map<?, ?>) Json.parse(Files.readAllBytes(Path.of(arguments[0])));
        Map<String, String> settings = new HashMap<>();
        ((Map<?, ?>) decoder.get("settings")).forEach((name, value) -> settings.put((String) name, (String) value));
        RecordDecoder reader = (RecordDecoder) Class.forName((String) decoder.get("class"))
            .getConstructor(Map.class).newInstance(settings);
        for (String line : Files.readAllLines(Path.of(arguments[1]), StandardCharsets.UTF_8)) {
            Map<?, ?> record = (Map<?, ?>) Json.parse(line.getBytes(StandardCharsets.UTF_8));
            byte[] key = part(record.get("key"));
            byte[] value = part(record.get("value"));
            try {
                Events.Event event = reader.decode(key, value);
                if (event == null) {
                    System.out.println("no change");
                    continue;
                }
                Map<String, Object> change = new LinkedHashMap<>();
                change.put("op", event.op());
                change.put("table", event.table() == null ? null : event.table().name());
                change.put("key", row(event.key()));
                change.put("after", row(event.after()));
                System.out.println(Json.write(change));
            } catch (DecodeException error) {
                System.out.println(error.render("debezium-avro", reader.line(key, value)));
            }
        }
    }

    private static byte[] part(Object base64) {
        return Json.isNull(base64) ? null : Base64.getDecoder().decode((String) base64);
    }

    private static Object row(List<Events.Cell> cells) {
        if (cells == null) {
            return null;
        }
        Map<String, Object> row = new LinkedHashMap<>();
        for (Events.Cell cell : cells) {
            row.put(cell.name(), Events.tagged(cell.value()));
        }
        return row;
    }
}
"""

_SOURCE = '"source": {"version": "2.5.0.Final", "connector": "mysql", "name": "shop", "ts_ms": 1700000000000, ' \
          '"db": "shop", "table": "orders", "file": "mysql-bin.000003", "pos": 4711}'


def java_reads(tmp_path: Path, records: Path, decoder: dict) -> list[str]:
    """Each record of ``records`` (the file form) as the Java decoder ``decoder`` reads it."""
    classes = tmp_path / "classes"
    (tmp_path / "ReadRecords.java").write_text(READ_RECORDS, encoding="utf-8")
    (tmp_path / "decoder.json").write_text(json.dumps(decoder), encoding="utf-8")
    sources = sorted(str(path) for path in (ROOT / "cdcformats" / "jvm" / "decoders").glob("*.java"))
    subprocess.run(["javac", "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", JARS, "-d", str(classes),
                    *sources, str(tmp_path / "ReadRecords.java")], check=True, capture_output=True, timeout=300)
    read = subprocess.run(["java", "-cp", f"{classes}{os.pathsep}{JARS}", "ReadRecords", "decoder.json",
                           str(records)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr
    return read.stdout.splitlines()


def test_records_the_executable_wrote_are_read_in_the_jvm_as_the_executable_reads_them(
        cdcformats: Runner, tmp_path: Path) -> None:
    """Before: the codec named no JVM decoder (``jvm_decoder()`` was None), and Spark read every record in Python."""
    (tmp_path / "in.jsonl").write_bytes(jsonl(
        '{"before": null, "after": {"id": 1, "note": "gift", "weight": 1.5}, ' + _SOURCE + ', "op": "c"}',
        '{"before": {"id": 1, "note": "gift", "weight": 1.5}, "after": {"id": 1, "note": null, "weight": 2.25}, '
        + _SOURCE + ', "op": "u"}',
        '{"before": {"id": 1, "note": null, "weight": 2.25}, "after": null, ' + _SOURCE + ', "op": "d"}'))
    ran = cdcformats("convert", "--from", "debezium-json", "--to", "debezium-avro", "--registry", "registry.sqlite",
                     "--option", 'key_columns=["id"]', "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "3 events (3 written, 0 refused)" in ran.stderr
    written = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    # A tombstone after the delete, as Debezium sends one, and the update cut short in transit.
    tombstone = json.dumps({"key": json.loads(written[2])["key"], "value": None})
    cut = json.loads(written[1])
    value = base64.b64decode(cut["value"])
    cut["value"] = base64.b64encode(value[:value.index(b"gift") + 2]).decode()
    (tmp_path / "records.jsonl").write_text("\n".join([*written, tombstone, json.dumps(cut)]) + "\n",
                                            encoding="utf-8")

    asked = subprocess.run([sys.executable, "-c", JVM_DECODER, "registry.sqlite"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120, env=dict(os.environ))
    assert asked.returncode == 0, asked.stderr
    decoder = json.loads(asked.stdout)
    assert decoder is not None, "debezium-avro names no JVM decoder"
    assert decoder["class"] == "cdcformats.jvm.decoders.DebeziumAvroDecoder"
    assert set(json.loads(decoder["settings"]["writer_schemas"])) == {"1", "2"}  # the value's and the key's

    # What the executable itself reads back from the same records.
    back = cdcformats("convert", "--from", "debezium-avro", "--to", "debezium-json", "--registry", "registry.sqlite",
                      "out.jsonl")
    assert back.returncode == 0, back.stderr
    rows = [json.loads(line)["after"] for line in back.stdout.decode().splitlines()]

    *changes, tombstone_read, cut_read = java_reads(tmp_path, tmp_path / "records.jsonl", decoder)
    assert changes == [
        json.dumps({"op": "INSERT", "table": "orders", "key": {"id": 1}, "after": rows[0]}, separators=(",", ":")),
        json.dumps({"op": "UPDATE", "table": "orders", "key": {"id": 1}, "after": rows[1]}, separators=(",", ":")),
        json.dumps({"op": "DELETE", "table": "orders", "key": {"id": 1}, "after": None}, separators=(",", ":"))]
    assert tombstone_read == "no change"
    assert cut_read.startswith("debezium-avro: field value: cannot be read with schema 1 (EOFError: Expected 4 "
                               'bytes, read 2) (input: {"key": "'), cut_read
    assert rows[1] == {"id": 1, "note": None, "weight": 2.25}
