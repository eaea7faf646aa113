"""cdc_decode inside the JVM: for every configuration with a JVM decoder, the same decision as the Arrow UDF on
the format's native messages, valid, mangled and garbage (the same event, or an error in both), and a plan with no
Python in it."""

from __future__ import annotations

import base64
import re

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cdcformats.contract import KafkaRecord  # noqa: E402
from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.errors import excerpt  # noqa: E402
from cdcformats.kafka import ChangeEventDeserializer  # noqa: E402
from cdcformats.registry import codec_class  # noqa: E402
from cdcformats.spark import JAR, jvm_formats  # noqa: E402
from tests.property import native, native_canal  # noqa: E402
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
    # The reference is what the Arrow UDF does with the call (spark.functions._call, framing left at its default):
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
            assert jvm_row["error"]["message"].endswith(f" (input: {excerpt(message)})"), jvm_row["error"]["message"]
        else:
            assert jvm_row["error"] is None, f"the JVM refused {message!r}: {jvm_row['error']['message']}"
            assert arrow.event_from_row(jvm_row) == arrow.event_from_row(python_row), message


# Each property draws its examples first, then decodes all their messages in one Spark job: a job per example cost
# about 200 ms, twelve seconds a configuration at 60 examples. A failure names the message; it is not shrunk.
EXAMPLES_PER_CONFIGURATION = 200


def drawn_messages(strategy: st.SearchStrategy[list[bytes]]) -> list[bytes]:
    """The messages of ``EXAMPLES_PER_CONFIGURATION`` examples of ``strategy``, in order."""
    drawn: list[bytes] = []

    @settings(max_examples=EXAMPLES_PER_CONFIGURATION, database=None)
    @given(messages=strategy)
    def draw(messages: list[bytes]) -> None:
        drawn.extend(messages)

    draw()
    return drawn


def check_jvm_decides_as_python(spark, name: str, strategy: st.SearchStrategy[list[bytes]]) -> None:
    configuration = registered(spark, name)
    messages = drawn_messages(strategy)
    assert len(messages) >= EXAMPLES_PER_CONFIGURATION
    assert_same_decisions(configuration, messages, decoded_in_jvm(spark, configuration.format, messages))


@pytest.mark.parametrize("name", JVM_CONFIGURATIONS)
def test_the_jvm_decoder_decides_as_the_python_codec(spark, name: str) -> None:
    check_jvm_decides_as_python(spark, name, mixed_messages(CONFIGURATIONS[name]))


@st.composite
def one_row_canal_messages(draw: st.DrawFn) -> bytes:
    """A Canal message of at most one row: the ones Spark decodes (a message of several rows is one error row)."""
    document = draw(native_canal.documents())
    for field in ("data", "old"):
        if type(document.get(field)) is list:
            document[field] = document[field][:1]
    return encode_json(document)


@pytest.mark.parametrize("name", [name for name in JVM_CONFIGURATIONS if CONFIGURATIONS[name].format == "canal-json"])
def test_the_jvm_decoder_decides_one_row_canal_messages_as_the_python_codec(spark, name: str) -> None:
    """Canal's native messages mostly hold several rows, refused alike on both paths: its rows get a test of their
    own."""
    check_jvm_decides_as_python(spark, name, st.lists(one_row_canal_messages(), min_size=1, max_size=4).flatmap(
        lambda valid: st.tuples(*[mangled(message) for message in valid]).map(lambda broken: valid + list(broken))))


# -- nested values, off-type values and null schemas, built by hand -------------------------------------------------

# JSON values of any depth, with what the JVM must read as Python does: integers beyond 64 bits deep inside, objects of
# one member named as a tag of the nested text, floats that msgspec writes with an exponent, text that JSON escapes.
_tricky_scalars = st.one_of(
    native.json_scalars,
    st.sampled_from([2**64, -(2**63) - 1, 1e-7, 1e16, -0.0, 5e-324, "\u2028", "\x01\"\\", "$binary"]))
_nested_json = st.recursive(_tricky_scalars, lambda children: st.one_of(
    st.lists(children, max_size=3),
    st.dictionaries(st.sampled_from(["$binary", "$decimal", "$double", "$struct", "a", ""]) | st.text(max_size=3),
                    children, max_size=3)), max_leaves=10)
_PRIMITIVES = ["boolean", "int8", "int16", "int32", "int64", "float", "double", "string", "bytes"]
_LOGICAL = {"org.apache.kafka.connect.data.Decimal": "bytes", "org.apache.kafka.connect.data.Date": "int32",
            "org.apache.kafka.connect.data.Time": "int32", "org.apache.kafka.connect.data.Timestamp": "int64"}


@st.composite
def _primitive_schema(draw: st.DrawFn) -> dict:
    schema: dict = {}
    if draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(sorted(_LOGICAL)))
        schema["type"], schema["name"] = _LOGICAL[name], name
        if draw(st.booleans()):
            schema["version"] = 1
        if name.endswith("Decimal") and draw(st.integers(0, 4)):
            schema["parameters"] = {"scale": draw(st.sampled_from(["0", "2", "-3", "x", "99999999999"]))}
    else:
        schema["type"] = draw(st.sampled_from(_PRIMITIVES + ["foo", "INT"]))  # and types Connect does not have
    schema["optional"] = draw(st.booleans())
    if draw(st.integers(0, 4)) == 0:
        schema.setdefault("parameters", {})["__debezium.source.column.type"] = draw(st.sampled_from(["INT", "x"]))
    return schema


def _schemas(children: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    members = st.lists(st.tuples(st.sampled_from(["a", "b", "$binary"]), children), max_size=3).map(
        lambda fields: [{**schema, "field": name} for name, schema in fields])  # names may repeat
    optional = st.booleans()
    return st.one_of(
        st.builds(lambda items, o: {"type": "array", "items": items, "optional": o}, children | st.just(None),
                  optional),
        st.builds(lambda keys, values, o: {"type": "map", "keys": keys, "values": values, "optional": o},
                  children, children, optional),
        st.builds(lambda fields, o: {"type": "struct", "fields": fields, "optional": o}, members, optional),
        children.map(lambda items: {"type": "array", "items": items, "optional": False}))


_field_schemas = st.recursive(_primitive_schema(), _schemas, max_leaves=5)


def _values_of(schema: object) -> st.SearchStrategy:
    """Values of the schema's type, mostly, and any JSON value (off its type) sometimes."""
    if type(schema) is not dict:
        return _nested_json
    kind = schema.get("type")
    if kind == "array":
        typed = st.lists(_values_of(schema.get("items")), max_size=3)
    elif kind == "map":
        typed = st.dictionaries(st.text(max_size=3), _values_of(schema.get("values")), max_size=3) | st.lists(
            st.tuples(_values_of(schema.get("keys")), _values_of(schema.get("values"))).map(list), max_size=2)
    elif kind == "struct":
        typed = st.fixed_dictionaries({}, optional={field["field"]: _values_of(field) for field in schema["fields"]}
                                      ).flatmap(lambda fields: st.dictionaries(st.sampled_from(["x", "a"]),
                                                                               _nested_json, max_size=2).map(
                                                    lambda extra: {**extra, **fields}))
    elif kind in ("int8", "int16", "int32", "int64"):
        typed = st.integers(-(2**63), 2**63 - 1) | st.integers(-128, 127)
    elif kind in ("float", "double"):
        typed = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["NaN", "Infinity", "-Infinity"])
    elif kind == "bytes":
        typed = st.binary(max_size=6).map(lambda data: base64.b64encode(data).decode()) | st.just("not base64")
    elif kind == "boolean":
        typed = st.booleans()
    else:
        typed = st.text(max_size=4)
    return st.one_of(typed, typed, typed, st.none(), _nested_json)


@st.composite
def _typed_row(draw: st.DrawFn) -> tuple[list[dict], dict]:
    """Column schemas and a row of values for them, plus columns the schema does not describe."""
    fields = [{**schema, "field": name} for name, schema in draw(st.dictionaries(
        st.sampled_from(["id", "name", "c", "d"]), _field_schemas, max_size=3)).items()]
    row = {field["field"]: draw(_values_of(field)) for field in fields}
    row.update(draw(st.dictionaries(st.sampled_from(["x", "y"]), _nested_json, max_size=2)))
    return fields, row


@st.composite
def nested_messages(draw: st.DrawFn, format_name: str) -> bytes:
    """A message of ``format_name`` whose values are nested, off their schema's type, or under a null schema."""
    if format_name == "arcion":
        row = draw(st.dictionaries(st.sampled_from(["id", "name", "c"]), _nested_json, max_size=3))
        if draw(st.booleans()):
            return encode_json(row)
        return encode_json({"tableName": {"name": "region"}, "opType": draw(st.sampled_from(["I", "U", "D"])),
                            "after": row, "before": draw(st.none() | st.just(row))})
    fields, row = draw(_typed_row())
    source = draw(st.dictionaries(st.sampled_from(["name", "pos", "table", "db", "snapshot"]), _nested_json,
                                  max_size=3))
    op = draw(st.sampled_from(["c", "u", "d", "r"]))
    payload = {"op": op, "before": draw(st.none() | st.just(row)), "after": row, "source": source}
    wrapper = draw(st.sampled_from(["bare", "null", "schema"]))
    if wrapper == "bare":
        return encode_json(payload)
    if wrapper == "null":
        return encode_json({"schema": None, "payload": payload})
    schema = {"type": "struct", "optional": False, "fields": [
        {"type": "struct", "optional": True, "field": image, "fields": fields} for image in ("before", "after")]}
    return encode_json({"schema": schema, "payload": payload})


_NESTED_FORMATS = ("arcion", "debezium-json", "lindorm-subscription")


@pytest.mark.parametrize("name", [name for name in JVM_CONFIGURATIONS
                                  if CONFIGURATIONS[name].format in _NESTED_FORMATS])
def test_the_jvm_decoder_reads_nested_and_off_type_values_as_the_python_codec(spark, name: str) -> None:
    """Arrays, objects and values that disagree with their Connect schema, read as Python reads them (a nested value
    as the same tagged text), and a null schema as the bare payload."""
    check_jvm_decides_as_python(spark, name, st.lists(nested_messages(CONFIGURATIONS[name].format), min_size=1,
                                                      max_size=6))


def test_the_formats_decoded_most_have_a_jvm_decoder() -> None:
    assert {"lindorm", "arcion", "debezium-json"} <= set(jvm_formats())


def _reads_records(format_name: str) -> bool:
    return codec_class(format_name).message_type is KafkaRecord


def test_a_literal_format_plans_no_python(spark) -> None:
    from cdcformats.spark import register

    register(spark)
    _registered[0] = None
    frame = spark.createDataFrame([(b"{}",)], "value binary")
    for format_name in jvm_formats():
        # A format of Kafka records reads a struct of key and value, as Spark's Kafka source gives them.
        value = "struct(value AS key, value)" if _reads_records(format_name) else "value"
        for call in (f"cdc_decode('{format_name}', {value})", f"cdc_decode('{format_name}', cast(value AS string))"
                     if value == "value" else f"cdc_decode('{format_name}', struct(value AS key, cast(value AS string)"
                     " AS value))", f"cdc_decode('{format_name}', {value}, map('errors', 'null'))"):
            plan = frame.selectExpr(call)._jdf.queryExecution().executedPlan().toString()
            assert "ArrowEvalPython" not in plan and "BatchEvalPython" not in plan, (call, plan)
            assert "in the JVM" in plan, plan
    # A literal options map of the codec's options: Python gives the Java decoder's settings for it as the call is
    # resolved, and the JVM decodes.
    for call in ("cdc_decode('lindorm', value, map('key_columns', '[\"id\"]'))",
                 "cdc_decode('arcion', value, map('table', 'shop.orders', 'errors', 'null'))"):
        plan = frame.selectExpr(call)._jdf.queryExecution().executedPlan().toString()
        assert "EvalPython" not in plan and "in the JVM" in plan, (call, plan)
    # A format given by a column, a format without a JVM decoder, options no codec declares (for the Arrow UDF to
    # refuse as it does without the JVM), and the Arrow UDF by name: the Arrow UDF.
    # And a format of records given a message, which the Arrow UDF reads as a line of its file form.
    for call in ("cdc_decode(cast(value AS string), value)", "cdc_decode('aliyun-json', value)",
                 "cdc_decode('lindorm', value, map('nope', '1'))", "cdc_decode_arrow('lindorm', value)",
                 "cdc_decode('debezium-avro', value)"):
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
                          (decode("lindorm", "value", key_columns=["id"]), "in the JVM")):
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
