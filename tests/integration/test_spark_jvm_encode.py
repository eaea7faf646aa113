"""cdc_encode and cdc_convert inside the JVM: for every target with a JVM encoder, the same bytes as its Arrow UDF
for every event, the same error rows for rows that are no event (mangled by hand, dead letters), on rows built in
Python and on rows read back from Parquet, and a plan with no Python in it."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import cdcformats as cf  # noqa: E402
from cdcformats.contract import KafkaRecord  # noqa: E402
from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.registry import codec_class  # noqa: E402
from cdcformats.spark import JAR, arrow_name, jvm_encoders, jvm_formats  # noqa: E402
from tests.integration.test_spark_jvm import EXAMPLES_PER_CONFIGURATION, drawn_messages, mixed_messages  # noqa: E402
from tests.property import strategies  # noqa: E402
from tests.property.configurations import CONFIGURATIONS  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:Generating overly large repr")]

TARGETS = sorted(jvm_encoders())
# Targets with options of their own, which a literal options map gives: labelled "<format> (<options>)".
OPTIONS_OF_TARGET = {"debezium-json (schemas)": ("debezium-json", "'schemas', 'true'")}


@pytest.fixture(scope="module")
def spark():
    from cdcformats.spark import register, session

    assert JAR.exists(), "the package build compiles the JVM codecs (setup.py)"
    spark = session("local[2]", "cdcformats-jvm-encode-tests", **{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    yield spark
    spark.stop()


def events_frame(spark, rows: list[dict[str, Any] | None]):
    """A DataFrame of ``EVENT`` rows (dicts as ``to_pylist`` gives them, or None), in order."""
    table = pa.table({"n": pa.array(range(len(rows)), pa.int64()), "event": pa.array(rows, arrow.EVENT)})
    return spark.createDataFrame(table)


def both_paths(frame, function: str, arguments: dict[str, str]) -> dict[str, tuple[list, list]]:
    """``function(arguments[target])`` on the JVM and on its Arrow UDF, row by row, for each target: one Spark job."""
    columns = [expression for index, call in enumerate(arguments.values()) for expression in (
        f"{function}({call}) AS jvm_{index}", f"{arrow_name(function)}({call}) AS python_{index}")]
    rows = frame.orderBy("n").selectExpr(*columns).toArrow().to_pylist()
    return {target: ([row[f"jvm_{index}"] for row in rows], [row[f"python_{index}"] for row in rows])
            for index, target in enumerate(arguments)}


# -- rows that are no event, as a producer's bug or a hand-built struct makes them ----------------------------------

def _mangled(row: dict[str, Any], way: int) -> dict[str, Any]:
    row = copy.deepcopy(row)
    cells = row["after"] or row["key"] or row["before"]
    if way == 0:
        row["op"] = "MERGE"
    elif way == 1:
        row["op"] = None
    elif way == 2 and cells:
        cells[0]["kind"] = "DELETE"
    elif way == 3 and cells:
        cells[0]["value"] = {**(cells[0]["value"] or {}), "long": 1, "string": "x's \"1\"\n\u00e9"}
    elif way == 4 and cells:
        cells[0]["value"] = {name: None for name in arrow.VALUE.names} | {"decimal": " 1_000.50E-2 "}
    elif way == 5 and cells:
        cells[0]["value"] = {name: None for name in arrow.VALUE.names} | {"decimal": "one"}
    elif way == 6 and cells:
        cells[0]["value"] = {name: None for name in arrow.VALUE.names} | {"nested": '[1, {"$binary": "AAE="}]'}
    elif way == 7 and cells:
        cells[0]["value"] = {name: None for name in arrow.VALUE.names} | {"nested": '"text"'}
    elif way == 8 and cells:
        cells[0]["value"] = {name: None for name in arrow.VALUE.names} | {"nested": '{"$binary": "A"}'}
    elif way == 9 and cells:
        cells[0]["name"] = None
    elif way == 10 and row["table"] is not None:
        row["table"]["name"] = None
    elif way == 11:
        row["attributes"] = [{"name": None, "value": None}]
    elif way == 12:
        row["source"]["position"] = [{"name": "p", "value": {name: None for name in arrow.VALUE.names}
                                      | {"double": 1.5, "bytes": b"\x00'"}}]
    elif way == 13 and cells:
        cells[0]["kind"] = ""
    return row


_DEAD_LETTER = {"error": {"format": "lindorm", "reason": "not valid JSON: Input data was truncated", "field": None,
                          "message": "lindorm: not valid JSON: Input data was truncated (input: {)", "raw": b"{"}}
_DEAD_LETTER_WITHOUT_RAW = {"error": {"format": "maxwell-json", "reason": "unknown type 'x'", "field": "type",
                                      "message": "maxwell-json: field type: unknown type 'x'", "raw": None}}


@st.composite
def event_rows(draw: st.DrawFn) -> list[dict[str, Any] | None]:
    """Rows of drawn events, each also mangled one way, a dead letter and a null."""
    events = draw(st.lists(strategies.events(), min_size=1, max_size=4))
    rows = arrow.to_arrow(events).to_pylist()
    mangled = [_mangled(row, draw(st.integers(0, 13))) for row in rows]
    extra = [draw(st.sampled_from([None, _DEAD_LETTER, _DEAD_LETTER_WITHOUT_RAW]))]
    return draw(st.permutations(rows + mangled + extra))


def drawn_rows() -> list[dict[str, Any] | None]:
    drawn: list[dict[str, Any] | None] = []

    @settings(max_examples=EXAMPLES_PER_CONFIGURATION, database=None)
    @given(rows=event_rows())
    def draw(rows: list[dict[str, Any] | None]) -> None:
        drawn.extend(rows)

    draw()
    return drawn


# A character's escape in a repr: Java 17 knows Unicode 13, Python 3.11 Unicode 14, so a character assigned in
# between is unprintable to the JVM and printable to Python. Only that difference is forgiven, by showing such an
# escape as its character.
_ESCAPE = re.compile(r"\\(?:U([0-9a-f]{8})|u([0-9a-f]{4}))")


def _as_python_shows(text: str) -> str:
    def shown(match: re.Match[str]) -> str:
        character = chr(int(match[1] or match[2], 16))
        return character if character.isprintable() else match[0]
    return _ESCAPE.sub(shown, text)


def _comparable(row: dict[str, Any] | None, target: str) -> dict[str, Any] | None:
    if row is None or row["error"] is None:
        return row
    target = target.split(" (")[0]  # a target with options of its own: its format
    error = dict(row["error"])
    for name in ("reason", "message"):
        error[name] = _as_python_shows(error[name])
    if error["raw"] is not None and error["format"] == target:  # the row's repr, not a source's message
        error["raw"] = _as_python_shows(error["raw"].decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape")
    return {**row, "error": error}


def assert_same_rows(target: str, inputs: list, jvm: list, python: list) -> None:
    assert len(jvm) == len(python) == len(inputs)
    for row, jvm_row, python_row in zip(inputs, jvm, python, strict=True):
        assert _comparable(jvm_row, target) == python_row, f"{row!r}:\nJVM    {jvm_row!r}\nPython {python_row!r}"


def _each_target(*arguments: str, options: str = "") -> dict[str, str]:
    """The arguments of a call to each JVM target: ``arguments`` with the target's name in place of ``{target}``, and
    an options map of ``options`` (the entries of ``map(...)``) and the target's own (``OPTIONS_OF_TARGET``)."""
    calls = {}
    for target, (format_name, own) in {**{target: (target, "") for target in TARGETS}, **OPTIONS_OF_TARGET}.items():
        entries = ", ".join(entry for entry in (options, own) if entry)
        calls[target] = ", ".join([*(argument.format(target=f"'{format_name}'") for argument in arguments),
                                   *([f"map({entries})"] if entries else [])])
    return calls


def test_the_jvm_encoders_write_and_refuse_as_the_arrow_udf(spark) -> None:
    rows = drawn_rows()
    for target, (jvm, python) in both_paths(events_frame(spark, rows), "cdc_encode_or_error",
                                            _each_target("{target}", "event")).items():
        # Most drawn events are written (a target that has no form for some changes, paimon-log's TRUNCATE, refuses
        # those), so that the bytes are compared, not only the refusals.
        assert sum(row is not None and row["error"] is None for row in python) >= EXAMPLES_PER_CONFIGURATION // 2
        assert_same_rows(target, rows, jvm, python)


def test_under_strict_the_jvm_refuses_what_the_arrow_udf_refuses(spark) -> None:
    """strict's check in the JVM (Strict.java, a port of losses.differences): the same refusals, naming the same
    feature, field and what the target writes instead."""
    rows = drawn_rows()
    for target, (jvm, python) in both_paths(events_frame(spark, rows), "cdc_encode_or_error",
                                            _each_target("{target}", "event", options="'strict', 'true'")).items():
        if target not in ("avro", "protobuf"):  # an envelope drops nothing
            assert any(row is not None and row["error"] is not None and " cannot carry " in row["error"]["reason"]
                       for row in python), target
        assert_same_rows(target, rows, jvm, python)


def test_events_read_back_from_parquet_are_written_alike(spark, tmp_path) -> None:
    """Rows of a Parquet file reach the encoders as UnsafeRows, with whole-stage code generation on and off."""
    rows = drawn_rows()
    events_frame(spark, rows).write.parquet(str(tmp_path / "events"))
    frame = spark.read.parquet(str(tmp_path / "events"))
    for codegen in ("true", "false"):
        spark.conf.set("spark.sql.codegen.wholeStage", codegen)
        try:
            written = both_paths(frame, "cdc_encode_or_error", _each_target("{target}", "event"))
        finally:
            spark.conf.unset("spark.sql.codegen.wholeStage")
        for target, (jvm, python) in written.items():
            assert_same_rows(target, rows, jvm, python)


def assert_same_conversions(source: str, messages: list[bytes], written: dict[str, tuple[list, list]]) -> None:
    """Each message written alike, refused alike by the target, or refused by the source in both (the decoders'
    test holds them to the same decision, not the same words), with the same raw message."""
    for target, (jvm, python) in written.items():
        for message, jvm_row, python_row in zip(messages, jvm, python, strict=True):
            # Written, or refused by the target (whose raw input is the event row's repr, not the message).
            if python_row["error"] is None or python_row["error"]["raw"] != message:
                assert _comparable(jvm_row, target) == python_row, (target, message)
            else:
                assert jvm_row["error"] is not None, (target, message, python_row)
                assert (jvm_row["error"]["format"], jvm_row["error"]["raw"]) == (source, message)


@pytest.mark.parametrize("source", sorted(name for name in CONFIGURATIONS if name in jvm_formats()))
def test_a_conversion_in_the_jvm_writes_what_the_arrow_udf_writes(spark, source: str) -> None:
    """Valid, mangled and garbage messages of each source with a JVM decoder, to every JVM target."""
    messages = drawn_messages(mixed_messages(CONFIGURATIONS[source]))
    frame = spark.createDataFrame(list(enumerate(messages)), "n long, value binary")
    assert_same_conversions(source, messages, both_paths(frame, "cdc_convert_or_error",
                                                         _each_target("value", f"'{source}'", "{target}")))


def test_a_call_with_a_literal_options_map_runs_in_the_jvm_as_the_arrow_udf_does(spark) -> None:
    """Python gives the Java codecs' settings for the options as the call is resolved: Lindorm's key columns, and an
    envelope's bare body (framing none)."""
    messages = drawn_messages(mixed_messages(CONFIGURATIONS["lindorm"]))
    frame = spark.createDataFrame(list(enumerate(messages)), "n long, value binary")
    calls = _each_target("value", "'lindorm'", "{target}", options="'key_columns', '[\"id\"]', 'framing', 'none'")
    for call in calls.values():
        assert "in the JVM" in _plan(frame, f"cdc_convert_or_error({call})")
    assert_same_conversions("lindorm", messages, both_paths(frame, "cdc_convert_or_error", calls))


def test_the_binary_forms_write_the_value_and_null_for_a_row_they_cannot(spark) -> None:
    event = cf.ChangeEvent(cf.Op.INSERT, cf.Table("t"), (cf.Cell("id", 1),), None, (cf.Cell("id", 1),))
    rows = [*arrow.to_arrow([event]).to_pylist(), _mangled(arrow.to_arrow([event]).to_pylist()[0], 0), None,
            _DEAD_LETTER]
    frame = events_frame(spark, rows).orderBy("n")
    written = [row[0] for row in frame.selectExpr("cdc_encode('avro', event)").collect()]
    assert bytes(written[0])[5:] == cf.codec("avro").encode_event(event)
    assert written[1:] == [None, None, None]
    failing = frame.selectExpr("cdc_encode('avro', event, map('errors', 'fail'))")
    with pytest.raises(Exception, match="avro: field op: unknown op 'MERGE'"):
        failing.collect()


# -- where each call runs ------------------------------------------------------------------------------------------

def _writes_records(format_name: str) -> bool:
    return codec_class(format_name).message_type is KafkaRecord


def _or_error_for_records(target: str, calls: tuple[tuple[Any, str], ...]) -> list[tuple[Any, str]]:
    """The calls, where ``target``'s messages are Kafka records as ``_or_error`` forms: only those hold a key (the
    binary forms refuse them, on the Arrow path)."""
    if not _writes_records(target):
        return list(calls)
    return [(frame, re.sub(r"^cdc_(encode|convert)\(", r"cdc_\1_or_error(", call)) for frame, call in calls]


def _plan(frame, call: str) -> str:
    return frame.selectExpr(call)._jdf.queryExecution().executedPlan().toString()


def test_literal_formats_with_jvm_codecs_plan_no_python(spark) -> None:
    # Not a local relation, whose projections Spark evaluates as it plans.
    messages = spark.createDataFrame([(b"{}",)], "value binary").repartition(1)
    events = events_frame(spark, [None]).repartition(1)
    for target in TARGETS:
        for frame, call in _or_error_for_records(target, (
                (events, f"cdc_encode('{target}', event)"),
                (events, f"cdc_encode_or_error('{target}', event, map('errors', 'dead-letter'))"),
                (messages, f"cdc_encode('{target}', cdc_decode('lindorm', value))"),
                (messages, f"cdc_convert(value, 'lindorm', '{target}')"),
                (messages, f"cdc_convert_or_error(cast(value AS string), 'arcion', '{target}')"),
                (messages, f"cdc_convert(value, 'debezium-json', '{target}', map('errors', 'fail'))"),
                (messages, f"cdc_convert(value, 'lindorm', '{target}', map('key_columns', '[\"id\"]'))"))):
            plan = _plan(frame, call)
            assert "EvalPython" not in plan, (call, plan)
            assert f"{target} in the JVM" in plan, plan
    # Every literal pair of a JVM decoder and a JVM encoder, with no options, with errors alone, and with an options
    # map the JVM asks Python about (an option of the source's).
    for source in jvm_formats():
        declared = {option.name for option in codec_class(source).options}
        value = "struct(value AS key, value)" if _writes_records(source) else "value"
        for target in TARGETS:
            for options in ("", ", map('errors', 'fail')",
                            *([", map('max_message_bytes', '1000000')"] if "max_message_bytes" in declared else [])):
                call = f"cdc_convert_or_error({value}, '{source}', '{target}'{options})"
                plan = _plan(messages, call)
                assert "EvalPython" not in plan and f"{source} to {target} in the JVM" in plan, (call, plan)
    for target, call in _each_target("{target}", "event").items():
        plan = _plan(events, f"cdc_encode_or_error({call})")
        assert "EvalPython" not in plan, (call, plan)
        assert f"({target.split(' (')[0]} in the JVM" in plan, plan
    # A format given by a column, a source or target without a JVM codec, an option no codec declares (for the Arrow
    # UDF to refuse), a dead-letter mode the binary form refuses, and the Arrow UDF by name: the Arrow UDF.
    for frame, call in ((events, "cdc_encode(cast(n AS string), event)"),
                        (events, "cdc_encode('maxwell-json', event)") if "maxwell-json" not in TARGETS else
                        (events, "cdc_encode('ots', event)"),
                        (messages, "cdc_convert(value, 'aliyun-json', 'avro')"),
                        (events, "cdc_encode('avro', event, map('nope', '1'))"),
                        (events, "cdc_encode('avro', event, map('errors', 'dead-letter'))"),
                        (events, "cdc_encode('connect-json', event)"),
                        (events, "cdc_encode_arrow('avro', event)")):
        assert "ArrowEvalPython" in _plan(frame, call), call


def test_strict_runs_in_the_jvm_given_to_register_or_to_a_call(spark) -> None:
    from cdcformats.spark import register

    events = events_frame(spark, [None]).repartition(1)
    assert "canal-json in the JVM" in _plan(events, "cdc_encode('canal-json', event, map('strict', 'true'))")
    register(spark, strict=True)
    try:
        assert "canal-json in the JVM" in _plan(events, "cdc_encode('canal-json', event)")
    finally:
        register(spark)


def test_without_a_schema_id_the_call_goes_to_the_arrow_path(spark, tmp_path) -> None:
    """A registry that gives no id (here: one that is down) leaves the framing to the Arrow path, which reports it
    for each row, as it does without the JVM."""
    from cdcformats.spark import register

    register(spark, schema_registry="http://127.0.0.1:9")
    try:
        frame = events_frame(spark, arrow.to_arrow([cf.ChangeEvent(cf.Op.INSERT, None, (cf.Cell("id", 1),))])
                             .to_pylist())
        assert "ArrowEvalPython" in _plan(frame.repartition(1), "cdc_encode_or_error('avro', event)")
        [row] = frame.selectExpr("cdc_encode_or_error('avro', event) AS written").toArrow().to_pylist()
        assert row["written"]["error"]["format"] == "avro"
        assert "gave no schema id" in row["written"]["error"]["reason"]
    finally:
        register(spark)


def test_jvm_encoders_lists_the_envelopes() -> None:
    assert "avro" in TARGETS


@pytest.mark.parametrize("decode", ["cdc_decode", "cdc_decode_arrow"])
def test_a_function_is_evaluated_once_however_often_the_query_names_its_result(spark, decode: str) -> None:
    """A filter on a decoded event, and an encode of it: the plan decodes each row once (the optimizer copies a
    deterministic function into the filter below the projection, where it runs again)."""
    spark.createDataFrame([(b"{}",)], "value binary").repartition(1).createOrReplaceTempView("raw_messages")
    query = spark.sql(f"SELECT cdc_encode('avro', e) AS written, e.op FROM "
                      f"(SELECT {decode}('lindorm', value) AS e FROM raw_messages) WHERE e.error IS NULL")
    plan = query._jdf.queryExecution().executedPlan().toString()
    assert plan.count("cdc_decode") == 1, plan
    assert plan.count("cdc_encode") == 1, plan


def test_register_asks_no_registry_and_a_query_writing_an_envelope_does_once(spark, tmp_path) -> None:
    """An envelope's schema id is resolved when a query that writes it is planned, not by register: registering the
    functions neither creates nor reaches a registry."""
    from cdcformats.spark import register
    from cdcformats.spark.functions import _call

    registry = tmp_path / "registry.sqlite"
    _call.cache_clear()  # a call built for another test's registry would not ask this one
    register(spark, schema_registry=str(registry))
    try:
        assert not registry.exists()
        frame = events_frame(spark, arrow.to_arrow([cf.ChangeEvent(cf.Op.INSERT, None, (cf.Cell("id", 1),))])
                             .to_pylist()).repartition(1)
        query = frame.selectExpr("cdc_encode('avro', event) AS written")
        assert "(avro in the JVM" in query._jdf.queryExecution().executedPlan().toString()
        assert registry.exists()
        [written] = [row["written"] for row in query.collect()]
        assert written[:1] == b"\x00" and bytes(written[5:]) == cf.codec("avro").encode_event(
            cf.ChangeEvent(cf.Op.INSERT, None, (cf.Cell("id", 1),)))
    finally:
        register(spark)
