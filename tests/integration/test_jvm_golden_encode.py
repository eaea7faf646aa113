"""The JVM encoders against their golden files, without Spark: ``tests/jvm/EncodeGoldenCheck.java`` compiled with the
decoders' and encoders' classes alone (``cdcformats/jvm/decoders`` and ``cdcformats/jvm/encoders``, no other class
path) and run on every file; any difference fails with the file and line it is at.
``tests/unit/test_jvm_golden_encode_files.py`` writes the same events through the Python codecs."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf
from cdcformats.model import Cell, CellKind
from tests import jvm_golden, jvm_golden_encode
from tests.property import strategies

ROOT = Path(__file__).resolve().parents[2]
JVM = ROOT / "cdcformats" / "jvm"
ENCODERS = JVM / "encoders"
CHECK = ROOT / "tests" / "jvm" / "EncodeGoldenCheck.java"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")]


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("golden-encode-classes")
    sources = sorted(str(path) for folder in ("decoders", "encoders") for path in (JVM / folder).glob("*.java"))
    subprocess.run(["javac", "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", jvm_golden.spark_jars(),
                    "-d", str(built), *sources, str(CHECK)], check=True)
    return built


def check(classes: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["java", "-cp", jvm_golden.classpath(classes), "EncodeGoldenCheck", *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def test_the_encoders_need_no_spark_class() -> None:
    sources = list(ENCODERS.glob("*.java"))
    assert sources
    for path in sources:
        assert "org.apache.spark" not in path.read_text(encoding="utf-8"), path.name


def test_the_java_encoders_write_each_golden_event_as_the_file_says(classes: Path) -> None:
    files = sorted(jvm_golden_encode.GOLDEN.glob("*.jsonl"))
    assert len(files) == len(jvm_golden_encode.encoder_formats())
    run = check(classes, *files)
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in files)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == f"{lines} events checked, 0 differences"


def test_a_difference_fails_the_run_naming_its_file_and_line(classes: Path, tmp_path: Path) -> None:
    lines = (jvm_golden_encode.GOLDEN / "debezium-json.jsonl").read_text(encoding="utf-8").splitlines()
    message = next(index for index, line in enumerate(lines) if '"message":' in line and '\\"op\\":\\"u\\"' in line)
    error = next(index for index, line in enumerate(lines) if '"error":' in line)
    lines[message] = lines[message].replace('\\"op\\":\\"u\\"', '\\"op\\":\\"c\\"', 1)
    lines[error] = lines[error].replace('"error":"debezium-json: field key: ', '"error":"debezium-json: ', 1)
    changed = tmp_path / "debezium-json.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = check(classes, changed)
    assert run.returncode == 1
    assert [line.split(" (")[0] for line in run.stdout.splitlines()[:-1]] == [
        f"{changed}:{number + 1}" for number in sorted((message, error))]
    assert run.stdout.splitlines()[-1] == f"{len(lines)} events checked, 2 differences"


# debezium-json's own attributes, which decide the envelope's fields and their order: drawn beside the events.
_ENVELOPE_NAMES = ["before", "after", "source", "op", "ts_ms", "ts_us", "transaction", "extra", "id"]
_SOURCE_NAMES = ["connector", "ts_ms", "ts_us", "db", "schema", "table", "id", "name", "", "file"]


def _orders(names: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(names), unique=True).map(lambda drawn: json.dumps(drawn))


_DEBEZIUM_ATTRIBUTE = st.one_of(
    st.tuples(st.sampled_from(["debezium.transaction.", "debezium.field."]), st.sampled_from(_ENVELOPE_NAMES)
              | strategies.names).map("".join).flatmap(
        lambda name: st.tuples(st.just(name), strategies.values() | st.sampled_from(['{"a": [1.0, 1e-6]}', "x"]))),
    st.tuples(st.just("debezium-json.fields.envelope"), _orders(_ENVELOPE_NAMES) | strategies.values()),
    st.tuples(st.just("debezium-json.fields.source"), _orders(_SOURCE_NAMES) | strategies.values()),
    st.tuples(st.just("debezium-json.schemaless_wrapper"), st.just(True) | strategies.values()))
_DEBEZIUM_ATTRIBUTES = st.lists(_DEBEZIUM_ATTRIBUTE, max_size=6)
_POSITIONS = st.lists(st.tuples(st.sampled_from(_SOURCE_NAMES), strategies.values()), max_size=4)
# Times in whole milliseconds as often as not, which is what most sources send.
_TIMES = st.none() | st.integers(-10**12, 10**13).map(lambda milliseconds: milliseconds * 1000) | strategies.int64s
_OPTIONS = st.sampled_from([{}, {"key_columns": ["id"]}, {"key_columns": {"orders": ["id", "name"]}}])
_DEBEZIUM_OPTIONS = _OPTIONS | st.sampled_from([{"schemas": True}, {"schemas": True, "key_columns": ["id"]}])
# Cells typed as Connect types them (by Connect's names, SQL's, or a whole field schema), which strategies.events
# rarely or never draws, drawn into the rows beside the event's own.
_CONNECT_TYPES = st.sampled_from([
    "int8", "int16", "int32", "int64", "float", "double", "boolean", "string", "bytes", "TINYINT", "FLOAT",
    "DECIMAL(10,2)", "org.apache.kafka.connect.data.Decimal", "org.apache.kafka.connect.data.Date",
    '{"type":"int32","optional":true}', '{"type":"int32","optional":false}', '{"type": "double", "optional": true}',
    '{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1}',
    '{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
    '"parameters":{"scale":"2"}}', '{"type":"array","items":{"type":"int64","optional":false},"optional":false}'])
_CONNECT_CELLS = st.lists(st.builds(Cell, strategies.names, strategies.values(), _CONNECT_TYPES | st.none()),
                          max_size=4)


def _kept_order(draw: st.DrawFn, names: list[str], extras: list[str]) -> str:
    """An order of fields near ``names``, the fields a message has: permuted, with one left out, one more, or one in
    the place of another."""
    names = draw(st.permutations(names))
    change = draw(st.sampled_from(["none", "less", "more", "other"]))
    extra = draw(st.sampled_from([name for name in extras if name not in names] or [""]))
    at = draw(st.integers(0, max(len(names) - 1, 0)))
    if change == "less" and names:
        names.pop(at)
    elif change == "more":
        names.insert(at, extra)
    elif change == "other" and names:
        names[at] = extra
    return json.dumps(names)


def _kept_schema(draw: st.DrawFn, schema: dict[str, Any]) -> str:
    """The envelope schema of a message as decoding keeps it (its rows' columns left out), near the one written: a
    field left out, made required or optional, or renamed, or the envelope renamed."""
    fields = [{**field, "fields": []} if field.get("field") in ("before", "after") else field
              for field in schema["fields"]]
    change = draw(st.sampled_from(["none", "less", "required", "optional", "renamed", "named"]))
    at = draw(st.integers(0, max(len(fields) - 1, 0)))
    if change == "less" and fields:
        fields.pop(at)
    elif change in ("required", "optional") and fields:
        fields[at] = {**fields[at], "optional": change == "optional"}
    elif change == "renamed" and fields:
        fields[at] = {**fields[at], "name": "renamed"}
    named = {"name": "other.Envelope", "version": 2} if change == "named" else {}
    return json.dumps({**schema, **named, "fields": fields}, separators=(",", ":"))


@st.composite
def _debezium_cases(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    """Options, and an event with positions and debezium-json attributes drawn beside its own: orders of the fields
    near the ones its message has, so that most of them fit."""
    options = draw(_DEBEZIUM_OPTIONS)
    event = draw(strategies.events() | strategies.events_for(cf.codec("debezium-json", **options)))
    if event.after is not None and draw(st.booleans()):
        event = replace(event, after=(*event.after, *draw(_CONNECT_CELLS)))
    source = replace(event.source, position=(*event.source.position, *draw(_POSITIONS)),
                     commit_time_us=draw(_TIMES), capture_time_us=draw(_TIMES))
    event = replace(event, source=source, attributes=(*event.attributes, *draw(_DEBEZIUM_ATTRIBUTES)))
    try:
        written = json.loads(cf.codec("debezium-json", **options).encode_messages(event)[0])
    except cf.EncodeError:
        written = None
    if type(written) is dict and type(written.get("schema")) is dict and draw(st.booleans()):
        event = replace(event, attributes=(("debezium-json.schema.envelope", _kept_schema(draw, written["schema"])),
                                           *event.attributes))
    if type(written) is dict and draw(st.booleans()):
        envelope = written.get("payload", written) if "schema" in written else written
        orders = [("debezium-json.fields.envelope", _kept_order(draw, list(envelope), _ENVELOPE_NAMES))]
        if type(envelope.get("source")) is dict:
            orders.append(("debezium-json.fields.source", _kept_order(draw, list(envelope["source"]),
                                                                      _SOURCE_NAMES)))
        event = replace(event, attributes=(*orders, *event.attributes))
    return options, replace(event, attributes=tuple(draw(st.permutations(event.attributes))))


def _java_encoder(classes: Path, format_name: str) -> Iterator[subprocess.Popen[str]]:
    """EncodeGoldenCheck reading golden lines of one format from its standard input, one answer a line."""
    process = subprocess.Popen(["java", "-cp", jvm_golden.classpath(classes), "EncodeGoldenCheck", "-"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
    assert process.stdin is not None
    process.stdin.write(format_name + "\n")
    yield process
    process.stdin.close()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def java_encoder(classes: Path) -> Iterator[subprocess.Popen[str]]:
    yield from _java_encoder(classes, "debezium-json")


def _writes_as_python(java: subprocess.Popen[str], format_name: str, options: dict[str, Any], event: Any) -> None:
    """The Java encoder writes ``event`` as the Python codec does, or refuses it alike."""
    line = jvm_golden_encode.line("drawn", format_name, options, jvm_golden.event_json(event))
    assert java.stdin is not None and java.stdout is not None
    java.stdin.write(jvm_golden.golden_line(line) + "\n")
    assert java.stdout.readline().rstrip("\n") == "ok"


@pytest.mark.parametrize(("format_name", "options"), [("connect-json", {}), ("debezium-json", {"schemas": True})])
def test_a_decimal_connect_cannot_hold_in_a_typed_nested_value_is_written_as_its_text(
        format_name: str, options: dict[str, Any]) -> None:
    """A value that holds a decimal no Connect Decimal holds has no JsonConverter form to read back through the schema
    its type keeps (connect_schema.as_read_back failed on it with a ValueError): it is written as its JSON text, with
    its type taken away, as the Java encoder writes it."""
    from decimal import Decimal

    event = cf.ChangeEvent(cf.Op.UPSERT, None, (), None, (
        Cell("id", 1), Cell("v", ((Decimal("NaN"),),), '{"type":"int32","optional":true}')))
    codec = cf.codec(format_name, **options)
    [read] = codec.decode_messages(codec.encode_messages(event)[0])
    assert read.after is not None and read.after[1] == Cell("v", '[["NaN"]]')


@given(_debezium_cases())
def test_the_java_encoder_writes_any_event_as_python_does(java_encoder: subprocess.Popen[str],
                                                           case: tuple[dict[str, Any], Any]) -> None:
    options, event = case
    _writes_as_python(java_encoder, "debezium-json", options, event)


# Besides its native events and any drawn event: a format's own attributes and position fields, and the cells its
# normal form types by their type names (canal-json: type names with values of any kind in them, which
# strategies.events draws apart; maxwell-json: cells of type JSON holding JSON text and other text), drawn beside
# the event's own.
_OWN_TEXTS = strategies.values() | st.sampled_from(['{"id":4}', '{"id": 4}', "null", "", "[1,2.5]", "x"])
_JSON_TEXTS = st.sampled_from(['["a","b"]', '{"a":1.5}', '{"a": 1}', "1", "x", "[]"])
_TEXT_FORMATS = {
    "canal-json": (
        st.sampled_from([{}, {"read_type": "INIT"}]),
        ["canal.sql", "canal.sqlType", "canal.field.extra", "canal.field.data", "canal.field.x"],
        ["id", "gtid", "file"],
        st.builds(Cell, strategies.names, strategies.values(), st.sampled_from(strategies.TYPE_NAMES) | st.none())),
    "maxwell-json": (
        _OPTIONS,
        ["maxwell.field.query", "maxwell.field.primary_key", "maxwell.field.data", "maxwell.field.x"],
        ["xid", "commit", "position", "gtid", "thread_id", "file"],
        st.builds(Cell, strategies.names, _JSON_TEXTS | strategies.values(), st.sampled_from(["JSON", "json", None]))),
}


def _with_drawn_cells(draw: st.DrawFn, format_name: str, cells: st.SearchStrategy[list[Cell]]) -> Any:
    """A drawn event, or one of the format's own, with ``cells`` drawn after its after image's and before its before
    image's, as often as not."""
    event = draw(strategies.events() | strategies.events_for(cf.codec(format_name)))
    if event.after is not None and draw(st.booleans()):
        event = replace(event, after=(*event.after, *draw(cells)))
    if event.before is not None and draw(st.booleans()):
        event = replace(event, before=(*draw(cells), *event.before))
    return event


@st.composite
def _text_format_cases(draw: st.DrawFn, format_name: str) -> tuple[dict[str, Any], Any]:
    options, attribute_names, position_names, typed_cells = _TEXT_FORMATS[format_name]
    event = _with_drawn_cells(draw, format_name, st.lists(typed_cells, max_size=4))
    position = draw(st.lists(st.tuples(st.sampled_from(position_names), strategies.values()), max_size=4))
    source = replace(event.source, position=(*event.source.position, *position), commit_time_us=draw(_TIMES),
                     capture_time_us=draw(_TIMES))
    attributes = draw(st.lists(st.tuples(st.sampled_from(attribute_names), _OWN_TEXTS), max_size=4))
    return draw(options), replace(event, source=source, attributes=(*event.attributes, *attributes))



# The formats whose messages are Kafka records: their options, and their own attributes (connect-json's struct
# schemas, as texts that are one or not; paimon-log's values' debezium-json attributes), drawn beside the event's own
# with Connect-typed cells and positions of Debezium's source fields.
_STRUCT_TEXTS = st.sampled_from([
    '{"type":"struct","fields":[],"optional":true,"name":"pg.public.orders.Value"}',
    '{"type":"struct","fields":[],"optional":false}', '{"type":"struct","fields":[{"field":"a"}]}', "x"])
_RECORD_FORMATS = {
    "connect-json": (
        st.sampled_from([{}, {"schemas": False}, {"key_columns": ["id"]}, {"key_columns": {"orders": ["id"]}},
                         {"key_schema_name": "k", "value_schema_name": "v"}]),
        st.tuples(st.sampled_from(["connect-json.schema.key", "connect-json.schema.value"]),
                  _STRUCT_TEXTS | strategies.values())),
    "paimon-log": (st.sampled_from([{}, {"changelog_mode": "upsert"}]), _DEBEZIUM_ATTRIBUTE),
}


@st.composite
def _record_format_cases(draw: st.DrawFn, format_name: str) -> tuple[dict[str, Any], Any]:
    options, attributes = _RECORD_FORMATS[format_name]
    options = draw(options)
    event = draw(strategies.events() | strategies.events_for(cf.codec(format_name, **options)))
    if event.after is not None and draw(st.booleans()):
        event = replace(event, after=(*event.after, *draw(_CONNECT_CELLS)))
    if draw(st.booleans()):
        event = replace(event, key=(*event.key, *draw(_CONNECT_CELLS)))
    source = replace(event.source, position=(*event.source.position, *draw(_POSITIONS)))
    return options, replace(event, source=source, attributes=(*event.attributes, *draw(st.lists(attributes,
                                                                                                max_size=4))))


@pytest.fixture(scope="module", params=sorted([*_TEXT_FORMATS, *_RECORD_FORMATS]))
def java_format_encoder(classes: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    for process in _java_encoder(classes, request.param):
        yield request.param, process


@given(data=st.data())
def test_the_java_encoders_of_text_formats_and_records_write_any_event_as_python_does(
        java_format_encoder: tuple[str, subprocess.Popen[str]], data: st.DataObject) -> None:
    format_name, java = java_format_encoder
    cases = _text_format_cases if format_name in _TEXT_FORMATS else _record_format_cases
    options, event = data.draw(cases(format_name))
    _writes_as_python(java, format_name, options, event)


# lindorm: drawn events with typed cells of any value, the event's key outside its row or not, and lindorm's own
# attributes (an op that fits the event or not, blank ts listing its entries or not, kept fields), beside its native
# events.
_LINDORM_OP_NAMES = st.sampled_from(["Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion", "x"])
_LINDORM_ATTRIBUTES = st.lists(st.one_of(
    st.tuples(st.just("lindorm.op"), _LINDORM_OP_NAMES | strategies.values()),
    st.tuples(st.just("lindorm.blank_ts"), st.lists(st.integers(-1, 6) | st.sampled_from([True, 1.0]), max_size=4)
              .map(json.dumps) | strategies.values()),
    st.tuples(st.sampled_from(["lindorm.field.x", "lindorm.field.data", "lindorm.field.before"]), _OWN_TEXTS)),
    max_size=4)
_TYPED_CELLS = st.lists(st.builds(Cell, strategies.names, strategies.values(),
                                  st.sampled_from(strategies.TYPE_NAMES) | st.none(), st.none() | st.integers(-2, 2),
                                  st.sampled_from(list(CellKind))), max_size=4)


@st.composite
def _lindorm_cases(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    event = _with_drawn_cells(draw, "lindorm", _TYPED_CELLS)
    if draw(st.booleans()):
        event = replace(event, key=draw(st.lists(st.builds(Cell, st.sampled_from(["id", "k", "name"]),
                                                           strategies.values()), max_size=2).map(tuple)))
    source = replace(event.source, commit_time_us=draw(_TIMES), capture_time_us=draw(_TIMES))
    attributes = draw(st.permutations((*event.attributes, *draw(_LINDORM_ATTRIBUTES))))
    return draw(_OPTIONS), replace(event, source=source, attributes=tuple(attributes))


@pytest.fixture(scope="module")
def java_lindorm_encoder(classes: Path) -> Iterator[subprocess.Popen[str]]:
    yield from _java_encoder(classes, "lindorm")


@given(_lindorm_cases())
def test_the_java_lindorm_encoder_writes_any_event_as_python_does(java_lindorm_encoder: subprocess.Popen[str],
                                                                  case: tuple[dict[str, Any], Any]) -> None:
    options, event = case
    _writes_as_python(java_lindorm_encoder, "lindorm", options, event)


# arcion: its options (column_types for every table or per table, the table, the mode) beside key_columns; drawn
# events with typed cells, cursors with a timestamp or JSON text, and arcion's own attributes (hashes, cursor.json
# naming the cursor's entries or not, kept fields), beside its native events.
_ARCION_OPTIONS = st.fixed_dictionaries({}, optional={
    "key_columns": st.sampled_from([["id"], {"orders": ["id", "name"]}, ["opType"]]),
    "column_types": st.sampled_from([{"id": "BIGINT", "name": "VARCHAR", "f": "DOUBLE", "d": "DECIMAL(10,2)"},
                                     {"orders": {"id": "INT"}, "shop.orders": {"name": "BOOLEAN"}}]),
    "table": st.sampled_from(["orders", "shop.orders", "c.s.t"]),
    "mode": st.sampled_from(["auto", "realtime", "snapshot"])})
_CURSOR_NAMES = ["timestamp", "j", "k", "extractorId"]
_ARCION_ATTRIBUTES = st.lists(st.one_of(
    st.tuples(st.sampled_from(["arcion.namespace_hash", "arcion.table_hash"]), strategies.int64s
              | strategies.values()),
    st.tuples(st.just("arcion.cursor.json"), st.sampled_from(_CURSOR_NAMES) | strategies.values()),
    st.tuples(st.sampled_from(["arcion.field.x", "arcion.field.cursor", "arcion.field.before"]), _OWN_TEXTS)),
    max_size=4)
_ARCION_POSITIONS = st.lists(st.tuples(st.sampled_from(_CURSOR_NAMES), _JSON_TEXTS | strategies.int64s
                                       | strategies.values()), max_size=4)
_ARCION_CELLS = st.lists(st.builds(Cell, st.sampled_from(["id", "name", "f", "d", "opType"]) | strategies.names,
                                   strategies.values(), st.sampled_from(strategies.TYPE_NAMES) | st.none()),
                         max_size=4)


@st.composite
def _arcion_cases(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    event = _with_drawn_cells(draw, "arcion", _ARCION_CELLS)
    source = replace(event.source, position=(*event.source.position, *draw(_ARCION_POSITIONS)),
                     commit_time_us=draw(_TIMES), capture_time_us=draw(_TIMES))
    attributes = draw(st.permutations((*event.attributes, *draw(_ARCION_ATTRIBUTES))))
    return draw(_ARCION_OPTIONS), replace(event, source=source, attributes=tuple(attributes))


@pytest.fixture(scope="module")
def java_arcion_encoder(classes: Path) -> Iterator[subprocess.Popen[str]]:
    yield from _java_encoder(classes, "arcion")


@given(_arcion_cases())
def test_the_java_arcion_encoder_writes_any_event_as_python_does(java_arcion_encoder: subprocess.Popen[str],
                                                                 case: tuple[dict[str, Any], Any]) -> None:
    options, event = case
    _writes_as_python(java_arcion_encoder, "arcion", options, event)
