"""cdc_decode inside the JVM: for every configuration with a JVM decoder, the same decision as the Arrow UDF on
the format's native messages, valid, mangled and garbage (the same event, or an error in both), and a plan with no
Python in it."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.kafka import ChangeEventDeserializer  # noqa: E402
from cdcformats.spark import JAR, jvm_formats  # noqa: E402
from tests.property import native_canal  # noqa: E402
from tests.property.configurations import CONFIGURATIONS, Configuration  # noqa: E402
from tests.property.native import encode_json  # noqa: E402

# Hypothesis shows the strategy of a failing draw; the configurations' strategies are large, which it warns about.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:Generating overly large repr")]

# The configurations whose codec, as configured, has a JVM decoder.
JVM_CONFIGURATIONS = sorted(name for name, configuration in CONFIGURATIONS.items()
                            if configuration.format in jvm_formats(**configuration.options))


@pytest.fixture(scope="module")
def spark():
    from cdcformats.spark import session

    assert JAR.exists(), "the package build compiles the JVM decoders (setup.py)"
    spark = session("local[2]", "cdcformats-jvm-tests", **{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


_registered: list[str | None] = [None]


def registered(spark, name: str) -> Configuration:
    """The configuration ``name``, its options registered as the defaults of the functions (a call's options map
    would send it to the Arrow UDF)."""
    from cdcformats.spark import register

    configuration = CONFIGURATIONS[name]
    if _registered[0] != name:
        register(spark, **configuration.options)
        _registered[0] = name
    return configuration


# -- mangling: what a producer's bug or a damaged transport does to a valid message ------------------------------------

_JSON_REPLACEMENTS = [b'""', b"null", b"true", b"0", b"-1", b"1.5", b"1e400", b"18446744073709551616", b"{}", b"[]",
                      b'"007"', b'"1E+2"', b'"-0"', b'"NaN"', b'"1.0"', b'"true"', b'"TRUE"', b'"\\ud800"',
                      b'"\\u00e9"']
_BYTES = [b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\", b"0", b"-", b"\xff", b"\xc3", b" ", b"\n", b"e", b"."]
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


@st.composite
def mangled(draw: st.DrawFn, message: bytes) -> bytes:
    if not message:
        return draw(st.sampled_from(_BYTES))
    way = draw(st.sampled_from(["value", "value", "delete", "insert", "cut"]))
    at = draw(st.integers(0, len(message) - 1))
    if way == "value":  # a JSON string of the message (a value, or a field's name) swapped for another value
        strings = list(_STRING.finditer(message))
        if strings:
            found = strings[draw(st.integers(0, len(strings) - 1))]
            return message[:found.start()] + draw(st.sampled_from(_JSON_REPLACEMENTS)) + message[found.end():]
    if way == "delete":
        return message[:at] + message[at + 1:]
    if way == "insert":
        return message[:at] + draw(st.sampled_from(_BYTES)) + message[at:]
    return message[:at]


def mixed_messages(configuration: Configuration) -> st.SearchStrategy[list[bytes]]:
    """Valid messages, each also mangled, and garbage, in a drawn order."""
    valid = configuration.messages
    broken = valid.flatmap(lambda messages: st.tuples(*[mangled(message) for message in messages]).map(list))
    return st.tuples(valid, broken, configuration.garbage).flatmap(
        lambda parts: st.permutations([message for part in parts for message in part])).filter(bool)


def decoded_in_jvm(spark, format_name: str, messages: list[bytes | None]) -> list:
    frame = spark.createDataFrame([(message,) for message in messages], "value binary")
    return frame.selectExpr(f"cdc_decode('{format_name}', value) AS event").toArrow().column(0).to_pylist()


def assert_same_decisions(configuration: Configuration, messages: list[bytes | None], jvm_rows: list) -> None:
    # The reference is what the Arrow UDF does with the call (cdcformats.spark._call, framing left at its default):
    # a ChangeEventDeserializer, which refuses a message that is not exactly one event (canal-json's several rows).
    reader = ChangeEventDeserializer(configuration.format, framing=True, **configuration.options)
    read_batch = reader.codec.batch_decoder() if reader.framing is None else None
    python_rows = arrow.decode_array(pa.array(messages, pa.binary()), reader, "dead-letter", read_batch)
    for message, python_row, jvm_row in zip(messages, python_rows.to_pylist(), jvm_rows, strict=True):
        if python_row is None:
            assert jvm_row is None, message
        elif python_row["error"] is not None:
            assert jvm_row["error"] is not None, f"the JVM decoded what Python refuses: {message!r} " \
                                                 f"({python_row['error']['message']})"
            assert jvm_row["error"]["format"] == configuration.format
            assert jvm_row["error"]["raw"] == message
        else:
            assert jvm_row["error"] is None, f"the JVM refused {message!r}: {jvm_row['error']['message']}"
            assert arrow.event_from_row(jvm_row) == arrow.event_from_row(python_row), message


# One Spark job an example, so fewer examples than a pure-Python property, each of up to a dozen messages.
@settings(max_examples=60)
@pytest.mark.parametrize("name", JVM_CONFIGURATIONS)
@given(data=st.data())
def test_the_jvm_decoder_decides_as_the_python_codec(spark, name: str, data: st.DataObject) -> None:
    configuration = registered(spark, name)
    messages = data.draw(mixed_messages(configuration))
    assert_same_decisions(configuration, messages, decoded_in_jvm(spark, configuration.format, messages))


@st.composite
def one_row_canal_messages(draw: st.DrawFn) -> bytes:
    """A Canal message of at most one row: the ones Spark decodes (a message of several rows is one error row)."""
    document = draw(native_canal.documents())
    for field in ("data", "old"):
        if type(document.get(field)) is list:
            document[field] = document[field][:1]
    return encode_json(document)


@settings(max_examples=60)
@pytest.mark.parametrize("name", [name for name in JVM_CONFIGURATIONS if CONFIGURATIONS[name].format == "canal-json"])
@given(data=st.data())
def test_the_jvm_decoder_decides_one_row_canal_messages_as_the_python_codec(spark, name: str,
                                                                            data: st.DataObject) -> None:
    """Canal's native messages mostly hold several rows, refused alike on both paths: its rows get a test of their
    own."""
    configuration = registered(spark, name)
    messages = data.draw(st.lists(one_row_canal_messages(), min_size=1, max_size=4).flatmap(
        lambda valid: st.tuples(*[mangled(message) for message in valid]).map(lambda broken: valid + list(broken))))
    assert_same_decisions(configuration, messages, decoded_in_jvm(spark, configuration.format, messages))


def test_the_formats_decoded_most_have_a_jvm_decoder() -> None:
    assert {"lindorm", "arcion", "debezium-json"} <= set(jvm_formats())


def test_a_literal_format_plans_no_python(spark) -> None:
    from cdcformats.spark import register

    register(spark)
    _registered[0] = None
    frame = spark.createDataFrame([(b"{}",)], "value binary")
    for format_name in jvm_formats():
        for call in (f"cdc_decode('{format_name}', value)", f"cdc_decode('{format_name}', cast(value AS string))",
                     f"cdc_decode('{format_name}', value, map('errors', 'null'))"):
            plan = frame.selectExpr(call)._jdf.queryExecution().executedPlan().toString()
            assert "ArrowEvalPython" not in plan and "BatchEvalPython" not in plan, (call, plan)
            assert "in the JVM" in plan, plan
    # A format given by a column, a format without a JVM decoder, and options the JVM does not take: the Arrow UDF.
    for call in ("cdc_decode(cast(value AS string), value)", "cdc_decode('avro', value)",
                 "cdc_decode('lindorm', value, map('key_columns', '[\"id\"]'))", "cdc_decode_arrow('lindorm', value)"):
        plan = frame.selectExpr(call)._jdf.queryExecution().executedPlan().toString()
        assert "ArrowEvalPython" in plan, (call, plan)


def test_decode_is_the_same_function_as_a_column(spark) -> None:
    from cdcformats.spark import decode, register

    register(spark)
    _registered[0] = None
    frame = spark.createDataFrame([(b'{"op": "Put", "data": [{"name": "id", "value": "7", "type": "INT"}]}',),
                                   (b"{bad",)], "value binary")
    for column, where in ((decode("lindorm", "value"), "in the JVM"),
                          (decode("lindorm", frame["value"], errors="null"), "in the JVM"),
                          (decode("lindorm", "value", key_columns=["id"]), "ArrowEvalPython")):
        selected = frame.select(column.alias("event"))
        assert where in selected._jdf.queryExecution().executedPlan().toString()
        events = selected.toArrow().column(0).to_pylist()
        assert arrow.event_from_row(events[0]).after[0].value == 7
    assert [row[0] for row in frame.select(decode("lindorm", "value", errors="null")).collect()][1] is None


def test_error_modes_in_the_jvm(spark) -> None:
    from cdcformats.spark import register

    register(spark, errors="null")
    _registered[0] = None
    frame = spark.createDataFrame([(b'{"op": "Nope"}',), (None,)], "value binary")
    assert [row[0] for row in frame.selectExpr("cdc_decode('lindorm', value)").collect()] == [None, None]
    dead = frame.selectExpr("cdc_decode('lindorm', value, map('errors', 'dead-letter')).error AS e").collect()[0].e
    assert (dead.format, dead.field, bytes(dead.raw)) == ("lindorm", "op", b'{"op": "Nope"}')
    assert dead.message.startswith("lindorm: field op: unknown op 'Nope'")
    with pytest.raises(Exception, match="lindorm: field op: unknown op 'Nope'"):
        frame.selectExpr("cdc_decode('lindorm', value, map('errors', 'fail'))").collect()
