"""debezium-avro read in the JVM (issue 31, "the registry-aware, Confluent-framed Avro reader that open-source Spark 4
lacks"): records the real executable wrote into a registry file, read by the Java decoder that the codec names, with
the writer schemas its settings carry, as plain ``java`` runs it: no Spark, no registry server. And the JVM decoders'
errors naming a value as the executable's do."""

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

# What a Spark deployment asks of a codec (its format and options given): the Java class and its settings (for
# debezium-avro, the registry's schemas by id).
JVM_DECODER = """
import json, sys
import cdcformats as cf

decoder = cf.codec(sys.argv[1], **json.loads(sys.argv[2])).jvm_decoder()
print(json.dumps(None if decoder is None else {"class": decoder.class_name, "settings": decoder.settings}))
"""

# A reader of lines with the decoder that decoder.json names, printing for each line its change (op, table, key and
# row as JSON; "no change" for none) or its one-line error in the format named: a line is a record of the file form
# for a decoder of records, else a message.
READ = """
import cdcformats.jvm.decoders.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public final class Read {
    public static void main(String[] arguments) throws Exception {
        Map<?, ?> decoder = (Map<?, ?>) Json.parse(Files.readAllBytes(Path.of("decoder.json")));
        Map<String, String> settings = new HashMap<>();
        ((Map<?, ?>) decoder.get("settings")).forEach((name, value) -> settings.put((String) name, (String) value));
        Object reader = Class.forName((String) decoder.get("class")).getConstructor(Map.class).newInstance(settings);
        for (String line : Files.readAllLines(Path.of(arguments[0]), StandardCharsets.UTF_8)) {
            byte[] raw = line.getBytes(StandardCharsets.UTF_8);
            try {
                Events.Event event;
                if (reader instanceof RecordDecoder) {
                    Map<?, ?> record = (Map<?, ?>) Json.parse(raw);
                    byte[] key = part(record.get("key"));
                    byte[] value = part(record.get("value"));
                    raw = ((RecordDecoder) reader).line(key, value);
                    event = ((RecordDecoder) reader).decode(key, value);
                } else {
                    event = ((MessageDecoder) reader).decode(raw);
                }
                System.out.println(event == null ? "no change" : change(event));
            } catch (DecodeException error) {
                System.out.println(error.render(arguments[1], raw));
            }
        }
    }

    private static String change(Events.Event event) {
        Map<String, Object> change = new LinkedHashMap<>();
        change.put("op", event.op());
        change.put("table", event.table() == null ? null : event.table().name());
        change.put("key", row(event.key()));
        change.put("after", row(event.after()));
        return Json.write(change);
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


def java(tmp_path: Path, program: str, *arguments: str) -> list[str]:
    """The lines that ``program`` (Java source, its class named first) prints, compiled with the JVM decoders."""
    name = program.split("public final class ")[1].split()[0]
    classes = tmp_path / "classes"
    (tmp_path / f"{name}.java").write_text(program, encoding="utf-8")
    sources = sorted(str(path) for path in (ROOT / "cdcformats" / "jvm" / "decoders").glob("*.java"))
    subprocess.run(["javac", "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", JARS, "-d", str(classes),
                    *sources, str(tmp_path / f"{name}.java")], check=True, capture_output=True, timeout=300)
    read = subprocess.run(["java", "-cp", f"{classes}{os.pathsep}{JARS}", name, *arguments], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr
    return read.stdout.splitlines()


def jvm_decoder(tmp_path: Path, format_name: str, **options: str) -> dict | None:
    """What the codec of ``format_name`` names as its JVM decoder, asked in a Python program as Spark asks it, kept
    in ``decoder.json`` for the Java programs."""
    asked = subprocess.run([sys.executable, "-c", JVM_DECODER, format_name, json.dumps(options)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert asked.returncode == 0, asked.stderr
    (tmp_path / "decoder.json").write_text(asked.stdout, encoding="utf-8")
    decoder: dict | None = json.loads(asked.stdout)
    return decoder


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

    decoder = jvm_decoder(tmp_path, "debezium-avro", schema_registry="registry.sqlite")
    assert decoder is not None, "debezium-avro names no JVM decoder"
    assert decoder["class"] == "cdcformats.jvm.decoders.DebeziumAvroDecoder"
    assert set(json.loads(decoder["settings"]["writer_schemas"])) == {"1", "2"}  # the value's and the key's

    # What the executable itself reads back from the same records.
    back = cdcformats("convert", "--from", "debezium-avro", "--to", "debezium-json", "--registry", "registry.sqlite",
                      "out.jsonl")
    assert back.returncode == 0, back.stderr
    rows = [json.loads(line)["after"] for line in back.stdout.decode().splitlines()]

    *changes, tombstone_read, cut_read = java(tmp_path, READ, "records.jsonl", "debezium-avro")
    assert changes == [
        json.dumps({"op": "INSERT", "table": "orders", "key": {"id": 1}, "after": rows[0]}, separators=(",", ":")),
        json.dumps({"op": "UPDATE", "table": "orders", "key": {"id": 1}, "after": rows[1]}, separators=(",", ":")),
        json.dumps({"op": "DELETE", "table": "orders", "key": {"id": 1}, "after": None}, separators=(",", ":"))]
    assert tombstone_read == "no change"
    assert cut_read.startswith("debezium-avro: field value: cannot be read with schema 1 (EOFError: Expected 4 "
                               'bytes, read 2) (input: {"key": "'), cut_read
    assert rows[1] == {"id": 1, "note": None, "weight": 2.25}


def test_an_op_of_characters_python_escapes_is_named_alike_in_the_jvm(cdcformats: Runner, tmp_path: Path) -> None:
    """A line separator and a C1 control in an op, as a broken producer sends them: the JVM's error names the op as
    the executable's does. Before: the JVM wrote them raw (``op '\u2028\x85c'`` became a line break and a control
    character), so that a dead letter from Spark's JVM path differed from one of its Python path."""
    (tmp_path / "in.jsonl").write_bytes(jsonl('{"before": null, "after": {"id": 1}, "op": "\\u2028\\u0085c"}'))
    ran = cdcformats("convert", "--from", "debezium-json", "--to", "debezium-json", "in.jsonl")
    assert ran.returncode == 1
    assert "field op: op '\\u2028\\x85c' is not a row change" in ran.error_line()
    assert jvm_decoder(tmp_path, "debezium-json") is not None
    (read,) = java(tmp_path, READ, "in.jsonl", "debezium-json")
    assert read == ran.error_line().replace("Error: ", "").replace("line 1: ", "")
