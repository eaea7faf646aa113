"""The JVM decoders against their golden files, without Spark: ``tests/jvm/GoldenCheck.java`` compiled with the
decoders alone (``cdcformats/jvm/decoders``, with PySpark's jars for Apache Avro) and run on every file; any
difference fails with the file and line it is at. ``tests/unit/test_jvm_golden_files.py`` reads the same files
through the Python codecs."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf
from cdcformats.schema_registry import connect
from tests import jvm_golden
from tests.property import strategies

ROOT = Path(__file__).resolve().parents[2]
DECODERS = ROOT / "cdcformats" / "jvm" / "decoders"
CHECK = ROOT / "tests" / "jvm" / "GoldenCheck.java"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")]


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("golden-classes")
    subprocess.run(["javac", "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", jvm_golden.spark_jars(), "-d",
                    str(built), *sorted(str(path) for path in DECODERS.glob("*.java")), str(CHECK)], check=True)
    return built


def check(classes: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["java", "-cp", jvm_golden.classpath(classes), "GoldenCheck", *map(str, files)],
                          capture_output=True, text=True, timeout=300)


def test_the_decoders_need_no_spark_class() -> None:
    for path in DECODERS.glob("*.java"):
        assert "org.apache.spark" not in path.read_text(encoding="utf-8"), path.name


def test_the_java_decoders_decode_each_golden_message_as_the_file_says(classes: Path) -> None:
    files = sorted(jvm_golden.GOLDEN.glob("*.jsonl"))
    assert len(files) == len(jvm_golden.jvm_formats()) + len(jvm_golden.record_formats())
    run = check(classes, *files)
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in files)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == f"{lines} messages checked, 0 differences"


def test_a_difference_fails_the_run_naming_its_file_and_line(classes: Path, tmp_path: Path) -> None:
    lines = (jvm_golden.GOLDEN / "lindorm.jsonl").read_text(encoding="utf-8").splitlines()
    event = next(index for index, line in enumerate(lines) if '"event":' in line)
    error = next(index for index, line in enumerate(lines) if '"error":' in line)
    lines[event] = lines[event].replace('"name":"orders"', '"name":"invoices"', 1)
    lines[error] = lines[error].replace('"error":"lindorm: ', '"error":"lindorm: field op: ', 1)
    changed = tmp_path / "lindorm.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = check(classes, changed)
    assert run.returncode == 1
    assert [line.split(" (")[0] for line in run.stdout.splitlines()[:-1]] == [
        f"{changed}:{number + 1}" for number in sorted((event, error))]
    assert run.stdout.splitlines()[-1] == f"{len(lines)} messages checked, 2 differences"


# -- debezium-avro: records drawn, read by Java and Python side by side ---------------------------------------------

# One registry file for the drawn records; each example's codec writes subjects of a topic prefix of its own.
_REGISTRY = connect(Path(tempfile.mkdtemp(prefix="jvm-golden-records-")) / "registry.sqlite")
_PREFIXES = (f"drawn{number}" for number in itertools.count())


@pytest.fixture(scope="module")
def java_records(classes: Path) -> Iterator[subprocess.Popen[str]]:
    """GoldenCheck reading lines of debezium-avro records from its standard input, one answer a line."""
    process = subprocess.Popen(["java", "-cp", jvm_golden.classpath(classes), "GoldenCheck",
                                "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
                               bufsize=1)
    assert process.stdin is not None
    process.stdin.write("debezium-avro\n")
    yield process
    process.stdin.close()
    process.wait(timeout=30)


# Cells of the type names that debezium-avro's reading depends on, which strategies.events never draws: Connect's
# types (a single, the small integers, Debezium's times), Connect field schemas kept whole as a type (a null in one,
# a value that disagrees with one) and Debezium's variable-scale decimal.
_VARIABLE_SCALE = ('{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes",'
                   '"optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal",'
                   '"version":1,"doc":"Variable scaled decimal"}')
_CONNECT_TYPED = st.one_of(
    st.tuples(st.just("float"), st.sampled_from([0.1, -3.4e38, 1.4e-45, 16777217.0]) | st.floats(width=32)
              | st.floats() | st.none()),
    st.tuples(st.sampled_from(["int8", "int16", "int32"]), st.integers(-(2**15), 2**15 - 1) | st.none()),
    st.tuples(st.sampled_from(["io.debezium.time.Date", "io.debezium.time.MicroTimestamp", "io.debezium.time.Time",
                               "io.debezium.time.NanoTimestamp", "io.debezium.data.Json"]),
              st.integers(0, 2**40) | st.none()),
    st.tuples(st.sampled_from(['{"type":"int32","optional":true}', '{"type":"float","optional":true}',
                               '{"type":"int64","optional":true,"default":0}', '{"type":"string","optional":false}']),
              st.none() | st.integers(-5, 5) | st.floats(width=32) | st.text(max_size=3)),
    st.tuples(st.just(_VARIABLE_SCALE), st.builds(lambda scale, value: cf.Struct((("scale", scale), ("value", value))),
                                                  st.integers(0, 12), st.binary(min_size=1, max_size=9))))


@st.composite
def _changes(draw: st.DrawFn) -> cf.ChangeEvent:
    """A change the model holds, with cells of Connect's types after its own where it has an after image."""
    event = draw(strategies.events())
    if event.after is not None:
        typed = draw(st.lists(_CONNECT_TYPED, max_size=4))
        event = replace(event, after=(*event.after, *(cf.Cell(f"connect_{index}", value, type_name)
                                                      for index, (type_name, value) in enumerate(typed))))
    return event


@given(st.lists(_changes(), min_size=1, max_size=3), st.data())
def test_the_java_decoder_reads_any_record_debezium_avro_writes_or_cut_as_python_does(
        java_records: subprocess.Popen[str], events: list[cf.ChangeEvent], data: st.DataObject) -> None:
    """Any change the model holds, and cells of Connect's types, as debezium-avro writes them (a stream of up to
    three changes, so that a table evolves), whole or cut anywhere: the same event or the same one-line error in Java
    and Python."""
    codec = cf.codec("debezium-avro", schema_registry=_REGISTRY, topic_prefix=next(_PREFIXES))
    assert java_records.stdin is not None and java_records.stdout is not None
    for event in events:
        try:
            (record,) = codec.encode_messages(event)
        except cf.EncodeError:  # a change the table's schema so far refuses
            continue
        value = record.value[:data.draw(st.none() | st.integers(5, len(record.value) - 1), label="cut at")]
        line = jvm_golden.record_line("drawn", "debezium-avro", {},
                                      jvm_golden.framed_writer_schemas(_REGISTRY, record.key, value), record.key, value)
        if " object at 0x" in line.get("error", ""):  # fastavro names its stream by its address: no one repeats it
            continue
        java_records.stdin.write(jvm_golden.golden_line(line) + "\n")
        assert java_records.stdout.readline().rstrip("\n") == "ok"
