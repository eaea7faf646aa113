"""The Spark SQL functions and DataFrame helpers on local[2], compared with the pure-Python codecs on the same data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa  # noqa: E402

from cdcformats.demo import EXAMPLES  # noqa: E402
from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.errors import ConfigurationError  # noqa: E402
from cdcformats.kafka import ChangeEventDeserializer, ChangeEventSerializer  # noqa: E402
from cdcformats.losses import without  # noqa: E402
from cdcformats.model import ChangeEvent  # noqa: E402
from cdcformats.registry import codec  # noqa: E402

pytestmark = pytest.mark.slow

WIRE_FORMATS = ("lindorm", "arcion", "ots-json", "debezium-json", "avro", "protobuf")
# Options each format needs to read the bundled examples converted into it.
FORMAT_OPTIONS = {"lindorm": {}, "arcion": {"table": "tpch.region"},
                  "ots-json": {"primary_key": ["pkName1", "pkName2"], "table": "seed_table"},
                  "debezium-json": {}, "avro": {},
                  "protobuf": {}}


@pytest.fixture(scope="module")
def registry_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("registry") / "schemas.db")


@pytest.fixture(scope="module")
def spark(registry_file: str):
    from cdcformats.spark import register, session

    spark = session("local[2]", "cdcformats-tests", **{"spark.sql.shuffle.partitions": "4"})
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, schema_registry=registry_file)
    yield spark
    spark.stop()


def example_events() -> list[ChangeEvent]:
    events = []
    for example in EXAMPLES:
        events.extend(codec(example.format, **example.options).decode(example.messages()))
    return events


def sql_options(options: dict) -> str:
    if not options:
        return ""
    pairs = ", ".join(f"'{name}', '{value if isinstance(value, str) else json.dumps(value)}'"
                      for name, value in options.items())
    return f", map({pairs})"


def binary_view(spark, name: str, values: list[bytes | None]) -> None:
    spark.createDataFrame(pa.table({"value": pa.array(values, pa.binary())}).to_pandas()).createOrReplaceTempView(name)


def events_of(frame) -> list:
    """The event column of ``frame`` as model events (None for null rows), read through Arrow so types stay exact."""
    return [None if row is None else arrow.event_from_row(row) for row in frame.toArrow().column(0).to_pylist()]


def messages_in(format_name: str, registry_file: str) -> tuple[list[bytes], list[ChangeEvent]]:
    """The example events written in ``format_name`` (those it can write), and what Python reads back from them."""
    writer = ChangeEventSerializer(format_name, schema_registry=registry_file, subject_name_strategy="record",
                                   **FORMAT_OPTIONS[format_name])
    reader = ChangeEventDeserializer(format_name, schema_registry=registry_file, **FORMAT_OPTIONS[format_name])
    messages = []
    for event in example_events():
        try:
            messages.append(writer(event))
        except Exception:  # an event the format cannot write at all (a Lindorm TRUNCATE...)
            continue
    return messages, [reader(message) for message in messages]


@pytest.mark.parametrize("format_name", WIRE_FORMATS)
def test_cdc_decode_matches_python(spark, registry_file: str, format_name: str) -> None:
    messages, expected = messages_in(format_name, registry_file)
    assert len(messages) >= 3
    binary_view(spark, "messages", messages)
    frame = spark.sql(f"SELECT cdc_decode('{format_name}', value{sql_options(FORMAT_OPTIONS[format_name])}) "
                      "FROM messages")
    assert events_of(frame) == expected


@pytest.mark.parametrize("format_name", WIRE_FORMATS)
def test_cdc_encode_matches_python(spark, registry_file: str, format_name: str) -> None:
    messages, events = messages_in(format_name, registry_file)
    binary_view(spark, "messages", messages)
    options = sql_options(FORMAT_OPTIONS[format_name])
    rows = spark.sql(f"SELECT cdc_encode('{format_name}', cdc_decode('{format_name}', value{options}){options}) "
                     "AS value FROM messages").toArrow().column("value").to_pylist()
    writer = ChangeEventSerializer(format_name, schema_registry=registry_file, subject_name_strategy="record",
                                   **FORMAT_OPTIONS[format_name])
    assert rows == [writer(event) for event in events]


@pytest.mark.parametrize("target", WIRE_FORMATS)
def test_cdc_convert_matches_python(spark, registry_file: str, target: str) -> None:
    lindorm = EXAMPLES[0]
    binary_view(spark, "lindorm", lindorm.messages())
    options = {"key_columns": lindorm.options["key_columns"], **FORMAT_OPTIONS[target]}
    got = spark.sql(f"SELECT cdc_convert_or_error(value, 'lindorm', '{target}'{sql_options(options)}) AS r "
                    "FROM lindorm").toArrow().column("r").to_pylist()
    reader = codec("lindorm", key_columns=lindorm.options["key_columns"])
    writer = ChangeEventSerializer(target, schema_registry=registry_file, subject_name_strategy="record",
                                   **FORMAT_OPTIONS[target])
    for message, row in zip(lindorm.messages(), got):
        event = reader.decode_message(message)
        try:
            expected = writer(event)
        except Exception as error:
            assert row["value"] is None and row["error"]["message"] == str(error)
        else:
            assert row == {"key": None, "value": expected, "error": None}


def test_event_ids_match_python(spark) -> None:
    messages = EXAMPLES[0].messages()
    binary_view(spark, "lindorm", messages)
    ids = [row[0] for row in spark.sql("SELECT cdc_event_id(cdc_decode('lindorm', value)) FROM lindorm").collect()]
    assert ids == [event.event_id for event in codec("lindorm").decode(messages)]


def malformed_stream(count: int) -> list[bytes]:
    """Lindorm messages, 1% of them malformed in the ways a real stream breaks."""
    broken = [b'{"op": "Put", "data": [', b'{"op": "Upsert", "data": []}', b'\xff\xfe', b'',
              b'{"op": "Put", "data": [{"value": "no name"}]}']
    messages = []
    for n in range(count):
        if n % 100 == 42:
            messages.append(broken[n // 100 % len(broken)])
        else:
            messages.append(json.dumps({"op": "Put", "table": "t", "ts": str(n), "keyOnly": "false", "data": [
                {"type": "BIGINT", "name": "id", "value": str(n)},
                {"type": "DOUBLE", "name": "price", "value": f"{n / 7}"}]}).encode())
    return messages


def test_a_job_with_one_percent_malformed_input_counts_exactly(spark) -> None:
    messages = malformed_stream(20_000)
    binary_view(spark, "stream", messages)
    counts = spark.sql("""
        SELECT count(*) AS rows_in,
               count_if(e.error IS NULL) AS events,
               count_if(e.error IS NOT NULL) AS dead_letters,
               count_if(e.error IS NOT NULL AND e.error.raw IS NOT NULL) AS kept_raw
        FROM (SELECT cdc_decode('lindorm', value) AS e FROM stream)""").collect()[0]
    assert counts.rows_in == 20_000
    assert counts.events == 19_800 and counts.dead_letters == 200 and counts.kept_raw == 200
    dead = spark.sql("SELECT e.error.raw AS raw, e.error.format AS format FROM "
                     "(SELECT cdc_decode('lindorm', value) AS e FROM stream) WHERE e.error IS NOT NULL").collect()
    assert sorted(bytes(row.raw) for row in dead) == sorted(m for n, m in enumerate(messages) if n % 100 == 42)
    assert {row.format for row in dead} == {"lindorm"}
    # The same events as the Python codec, row for row.
    expected = list(codec("lindorm").decode(messages, on_error=lambda error: None))
    frame = spark.sql("SELECT e FROM (SELECT cdc_decode('lindorm', value) AS e FROM stream) WHERE e.error IS NULL")
    assert sorted(map(repr, events_of(frame))) == sorted(map(repr, expected))


def test_error_modes(spark) -> None:
    binary_view(spark, "bad", [b'{"op": "Nope"}', None, EXAMPLES[0].messages()[0]])
    rows = spark.sql("SELECT cdc_decode('lindorm', value, map('errors', 'null')) IS NULL AS n FROM bad").collect()
    assert [row.n for row in rows] == [True, True, False]
    error = spark.sql("SELECT cdc_decode('lindorm', value).error AS e FROM bad").collect()[0].e
    assert error.format == "lindorm" and error.field == "op" and "unknown op 'Nope'" in error.reason
    with pytest.raises(Exception, match="unknown op 'Nope'"):
        spark.sql("SELECT cdc_decode('lindorm', value, map('errors', 'fail')) FROM bad").collect()
    with pytest.raises(Exception, match="use cdc_encode_or_error"):
        spark.sql("SELECT cdc_convert(value, 'lindorm', 'avro', map('errors', 'dead-letter')) FROM bad").collect()
    with pytest.raises(Exception, match="known to neither lindorm"):
        spark.sql("SELECT cdc_decode('lindorm', value, map('colour', 'red')) FROM bad").collect()


def test_strict_refuses_what_the_target_would_drop(spark) -> None:
    messages = EXAMPLES[1].messages()
    binary_view(spark, "arcion", messages)
    rows = spark.sql("SELECT cdc_convert_or_error(value, 'arcion', 'lindorm', map('strict', 'true', "
                     "'table', 'tpch.region')) AS strict, cdc_convert(value, 'arcion', 'lindorm', "
                     "map('table', 'tpch.region')) AS loose FROM arcion").collect()
    lindorm = codec("lindorm")
    for message, row in zip(messages, rows):
        event = codec("arcion", table="tpch.region").decode_message(message)
        if lindorm.dropped(event):
            assert row.strict.value is None and "cannot carry" in row.strict.error.reason
        else:
            assert row.strict.value == row.loose
    assert any(row.strict.error is not None and row.loose is not None for row in rows)


def test_dedupe_drops_redelivered_changes(spark) -> None:
    from cdcformats.spark import dedupe

    messages = EXAMPLES[0].messages()
    binary_view(spark, "redelivered", messages + messages[:3] + [b"not json", b"not json"])
    frame = spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM redelivered")
    unique = dedupe(frame)
    assert unique.where("event.error IS NULL").count() == len(messages)
    assert unique.where("event.error IS NOT NULL").count() == 2  # dead letters are not events: all kept


def test_latest_state_applies_versions_and_deletes(spark) -> None:
    from cdcformats.spark import latest_state

    binary_view(spark, "orders", EXAMPLES[0].messages())
    # Decoded as Python decodes them below: with key_columns, the id of a Delete is a key cell, not a deletion.
    frame = spark.sql("""SELECT cdc_decode('lindorm', value, map('key_columns', '["id"]')) AS event FROM orders""")
    state = {tuple(cell["value"]["string"] for cell in row["key"]): row
             for row in latest_state(frame, key_columns=["id"]).toArrow().to_pylist()}
    python = list(codec("lindorm", key_columns=["id"]).decode(EXAMPLES[0].messages()))
    expected = expected_state(python)
    assert {key: (row["deleted"], current_cells(row["cells"])) for key, row in state.items()} == expected
    # Without a table name (null in every row) the changes still meet.
    binary_view(spark, "orders", [message.replace(b'"table":"orders",', b"") for message in EXAMPLES[0].messages()])
    frame = spark.sql("""SELECT cdc_decode('lindorm', value, map('key_columns', '["id"]')) AS event FROM orders""")
    untabled = {tuple(cell["value"]["string"] for cell in row["key"]): (row["deleted"], current_cells(row["cells"]))
                for row in latest_state(frame, key_columns=["id"]).toArrow().to_pylist()}
    assert untabled == expected


def test_latest_state_keys_a_row_by_its_key_names_and_values(spark) -> None:
    """Without key_columns, a Lindorm Delete's entries, the id among them, are deletions: still the same row."""
    from cdcformats.spark import latest_state

    binary_view(spark, "orders", EXAMPLES[0].messages())
    frame = spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM orders")
    keys = [[(cell["name"], cell["value"]["string"]) for cell in row["key"]]
            for row in latest_state(frame, key_columns=["id"]).toArrow().to_pylist()]
    assert sorted(keys) == [[("id", "o-1")], [("id", "o-2")]]


def current_cells(cells: list[dict]) -> dict:
    return {cell["name"]: arrow.event_from_row({**EMPTY_ROW, "after": [cell]}).after[0].value for cell in cells}


EMPTY_ROW = {"op": "UPSERT", "table": None, "key": [], "before": None, "after": None, "source": None,
             "key_only": False, "attributes": [], "error": None}


def expected_state(events: list[ChangeEvent]) -> dict:
    """The same rules as latest_state, folded in Python over events already in commit order."""
    rows: dict = {}
    for event in events:
        key = tuple(cell.value for cell in event.key)
        deleted, cells = rows.get(key, (False, {}))
        if event.op.value == "DELETE":
            rows[key] = (True, {})
            continue
        for cell in event.after or ():
            current = cells.get(cell.name)
            version = (cell.version * 1000 if cell.version is not None else event.source.commit_time_us)
            if cell.kind.value == "PUT":
                if current is None or version >= current[0]:
                    cells[cell.name] = (version, cell.value, cell.version)
            elif cell.kind.value == "DELETE_ALL_VERSIONS" or (current is not None and current[2] == cell.version):
                cells.pop(cell.name, None)
        rows[key] = (False, cells)
    return {key: (deleted, {name: value for name, (_, value, _) in cells.items()})
            for key, (deleted, cells) in rows.items()}


def test_ots_rows_group_into_the_same_events_as_python(spark) -> None:
    from cdcformats.spark import tuple_events

    example = EXAMPLES[2]
    rows = [tuple(json.loads(line)) for line in example.messages()]
    frame = spark.createDataFrame(rows, "pk1 string, pk2 string, column string, ts long, value string, op string")
    events = events_of(tuple_events(frame, "ots", primary_key=["pkName1", "pkName2"], table="seed_table"))
    expected = list(codec("ots", primary_key=["pkName1", "pkName2"], table="seed_table").decode(rows))
    assert sorted(map(repr, events)) == sorted(map(repr, expected))


def test_tuple_events_needs_a_format_of_grouped_tuples(spark) -> None:
    from cdcformats.spark import tuple_events

    with pytest.raises(ConfigurationError, match="lindorm messages are not tuples grouped into records"):
        tuple_events(spark.createDataFrame([("x",)], "value string"), "lindorm")


def test_spark_convert_job_writes_output_and_dead_letters(spark, tmp_path: Path) -> None:
    from cdcformats.spark.job import convert_files

    source = tmp_path / "in.jsonl"
    messages = malformed_stream(1_000)
    source.write_bytes(b"\n".join(message.replace(b"\n", b" ") for message in messages) + b"\n")
    counts = convert_files(spark, str(source), "lindorm", str(tmp_path / "out"), "avro",
                           dead_letter=str(tmp_path / "dead"), options={"framing": "none"})
    assert (counts.messages_read, counts.messages_written, counts.dead_lettered) == (1_000, 990, 10)
    written = spark.read.parquet(str(tmp_path / "out")).toArrow().column("value").to_pylist()
    avro = codec("avro")
    assert sorted(map(repr, (avro.decode_message(value) for value in written))) == sorted(map(repr, codec(
        "lindorm").decode([m for n, m in enumerate(messages) if n % 100 != 42])))
    assert spark.read.parquet(str(tmp_path / "dead")).count() == 10


def test_spark_convert_command(tmp_path: Path) -> None:
    import subprocess
    import sys

    import pyarrow.parquet as pq

    from cdcformats.schema_registry import connect

    source = tmp_path / "orders.jsonl"
    source.write_bytes(b"\n".join(EXAMPLES[0].messages()) + b"\n{broken\n")
    result = subprocess.run(
        [sys.executable, "-m", "cdcformats.cli", "spark-convert", "--input", str(source), "--source-format", "lindorm",
         "--output", str(tmp_path / "out"), "--target-format", "arcion", "--output-kind", "text",
         "--dead-letter", str(tmp_path / "dead"), "--master", "local[1]", "--option", 'key_columns=["id"]'],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows_in = len(EXAMPLES[0].messages()) + 1
    assert f"{rows_in} rows in: {rows_in - 1} written, 1 dead-lettered" in result.stderr
    lines = [line for path in sorted((tmp_path / "out").glob("part-*")) for line in path.read_bytes().splitlines()]
    arcion = ChangeEventSerializer("arcion")
    assert sorted(lines) == sorted(arcion(event) for event in codec("lindorm", key_columns=["id"]).decode(
        EXAMPLES[0].messages()))

    # Typed Avro per table into the registry --registry names, as Parquet key and value columns.
    registry = tmp_path / "registry.sqlite"
    result = subprocess.run(
        [sys.executable, "-m", "cdcformats.cli", "spark-convert", "--input", str(source), "--from", "lindorm",
         "--output", str(tmp_path / "typed"), "--to", "debezium-avro", "--registry", str(registry),
         "--dead-letter", str(tmp_path / "dead-typed"), "--master", "local[1]", "--option", 'key_columns=["id"]'],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"{rows_in} rows in: {rows_in - 1} written, 1 dead-lettered" in result.stderr
    assert sorted(connect(str(registry)).get_subjects()) == ["cdcformats.orders-key", "cdcformats.orders-value"]
    assert pq.read_table(tmp_path / "typed").column_names == ["key", "value"]


def test_spark_convert_writes_and_reads_kafka_records_with_their_keys(spark, registry_file: str,
                                                                        tmp_path: Path) -> None:
    """A format whose messages are Kafka records (debezium-avro) is written as Parquet key and value columns, and
    read from them; a tombstone holds no change and is counted as such."""
    from cdcformats.contract import KafkaRecord
    from cdcformats.spark.job import convert_files, summary

    lindorm = EXAMPLES[0]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(lindorm.messages()) + b"\n")
    options = {"key_columns": lindorm.options["key_columns"]}
    counts = convert_files(spark, str(source), "lindorm", str(tmp_path / "typed"), "debezium-avro",
                           dead_letter=str(tmp_path / "dead"), options={**options, "schema_registry": registry_file})
    events = list(codec("lindorm", **options).decode(lindorm.messages()))
    assert (counts.messages_read, counts.messages_written, counts.dead_lettered) == (len(events), len(events), 0)
    typed = spark.read.parquet(str(tmp_path / "typed"))
    assert typed.columns == ["key", "value"]
    records = [KafkaRecord(row["key"], row["value"]) for row in typed.toArrow().to_pylist()]
    assert all(record.key is not None for record in records)
    reader = codec("debezium-avro", schema_registry=registry_file)
    # What the one Python worker wrote, as a codec writing the same stream in order says it writes it.
    mirror = codec("debezium-avro", schema_registry="mock://spark-convert")
    expected = []
    for event in events:
        expected.append(without(event, mirror.dropped(event)))
        mirror.encode_messages(event)
    assert sorted(map(repr, reader.decode(records))) == sorted(map(repr, expected))

    # Back from the key and value columns, with a tombstone and a broken record beside them.
    dump = tmp_path / "topic.parquet"
    broken = KafkaRecord(records[0].key, b"\x00\x00\x00\x00\x01garbage")
    spark.createDataFrame(pa.table({"key": [records[0].key, broken.key, *(record.key for record in records)],
                                    "value": [None, broken.value, *(record.value for record in records)]}).to_pandas()
                          ).write.parquet(str(dump))
    counts = convert_files(spark, str(dump), "debezium-avro", str(tmp_path / "json"), "debezium-json",
                           output_kind="text", dead_letter=str(tmp_path / "dead2"),
                           options={"schema_registry": registry_file})
    assert (counts.messages_read, counts.messages_written, counts.messages_skipped, counts.dead_lettered) == (
        len(records) + 2, len(records), 1, 1)
    assert "1 without a change" in summary(counts)
    (dead,) = spark.read.parquet(str(tmp_path / "dead2")).toArrow().to_pylist()
    assert dead["format"] == "debezium-avro" and dead["field"] == "value"
    # The dead letter keeps the whole record, key and value, as a line of the format's file form.
    assert reader.record_of_line(dead["raw"]) == broken  # type: ignore[attr-defined]  # a KafkaRecordCodec's
    lines = spark.read.text(str(tmp_path / "json")).toArrow().column("value").to_pylist()
    debezium = codec("debezium-json")
    assert sorted(lines) == sorted(message.decode() for message in debezium.encode(reader.decode(records)))

    with pytest.raises(ConfigurationError, match="debezium-avro writes Kafka records, a key and a value: write "
                                                 "them as Parquet"):
        convert_files(spark, str(source), "lindorm", str(tmp_path / "text"), "debezium-avro", output_kind="text",
                      errors="fail")
    binary_view(spark, "lindorm", lindorm.messages())
    with pytest.raises(Exception, match="debezium-avro writes Kafka records, a key and a value, which binary "
                                        "cannot hold: use cdc_encode_or_error"):
        spark.sql("SELECT cdc_convert(value, 'lindorm', 'debezium-avro', map('errors', 'null')) FROM lindorm"
                  ).collect()


def test_cdc_encode_takes_an_event_built_in_sql(spark) -> None:
    """A struct written by hand, with only some of the fields, is an event too."""
    value = spark.sql("""
        SELECT cdc_encode('lindorm', named_struct(
            'op', 'UPSERT', 'table', named_struct('name', 'orders'),
            'after', array(
                named_struct('name', 'id', 'value', named_struct('string', 'o-9', 'long', CAST(NULL AS BIGINT)),
                             'type', 'VARCHAR'),
                named_struct('name', 'n', 'value', named_struct('string', CAST(NULL AS STRING), 'long', 7L),
                             'type', 'BIGINT'))
        )) AS value""").collect()[0].value
    assert bytes(value) == (b'{"op":"Put","table":"orders","keyOnly":"false","data":[{"type":"VARCHAR","name":"id",'
                            b'"value":"o-9"},{"type":"BIGINT","name":"n","value":"7"}]}')


def test_without_the_jar_cdc_decode_is_the_arrow_udf(spark, registry_file: str, monkeypatch) -> None:
    """A build without javac has no jar: register says so, and every format still decodes, in Python."""
    import cdcformats.spark.functions as cdc_spark  # the module whose JAR register reads

    monkeypatch.setattr(cdc_spark, "JAR", cdc_spark.JAR.with_name("missing.jar"))
    with pytest.warns(RuntimeWarning, match="was not built"):
        cdc_spark.register(spark, schema_registry=registry_file)
    try:
        binary_view(spark, "orders", EXAMPLES[0].messages())
        frame = spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM orders")
        assert "ArrowEvalPython" in frame._jdf.queryExecution().executedPlan().toString()
        assert events_of(frame) == list(codec("lindorm").decode(EXAMPLES[0].messages()))
    finally:
        monkeypatch.undo()
        cdc_spark.register(spark, schema_registry=registry_file)
