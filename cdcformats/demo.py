"""``cdcformats demo``: the whole product on one machine, on embedded defaults.

1. The product pages' examples converted between every pair of formats, with what each conversion kept and dropped.
2. A realistic change stream per source format (``cdcformats.samples``) decoded into canonical events.
3. The events written as Avro and Protobuf envelopes, with their schemas in an embedded schema registry, produced
   to a local Apache Kafka broker (``cdcformats.kafka.broker``) with cdcformats' serializers, consumed back and
   compared;
   and the Lindorm changes as records for the systems downstream (the Tablestore sink connector's Kafka Connect JSON,
   a Paimon table's upsert log), through the broker and back. Then the Lindorm changes as typed Avro, one schema per
   table registered as it evolves (a column the second half of the orders gains is version 2), read back by id.
4. Spark SQL over the Lindorm and Arcion streams as their sources send them: ``cdc_decode``, inside the JVM, compared
   with the Python codecs; ``cdc_convert`` of both to Debezium JSON, inside the JVM, compared with what Python writes;
   then the latest state of every key, and of the orders as typed rows.
5. The Lindorm stream produced to the broker and applied to a Delta table by ``cdcformats stream`` (Spark Structured
   Streaming), killed with SIGKILL after its first micro-batch and restarted from its checkpoint: the table must
   equal the typed latest state of stage 4.

Each stage reports its counts, whether it lost anything, and its throughput.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from . import samples
from .contract import Codec, KafkaRecord
from .convert import convert
from .errors import EncodeError
from .model import ChangeEvent
from .pipeline import ConversionStats
from .registry import codec, codec_class, formats, schema_formats

# What the demo runs on: the bundled examples, the generated streams, where converted changes land, and which
# streams Spark reads, with the options it registers. Data, so that this program never names a format.
PLAN = json.loads((files("cdcformats") / "examples" / "demo.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Example:
    """A bundled example stream: its format, the options that read it, and the names of its key columns."""

    format: str
    title: str
    options: dict[str, Any] = field(default_factory=dict)
    key: tuple[str, ...] = ()

    def messages(self) -> list[bytes]:
        text = (files("cdcformats") / "examples" / f"{self.format}.jsonl").read_bytes()
        return [line for line in text.splitlines() if line.strip()]


EXAMPLES = tuple(Example(entry["format"], entry["title"], entry["options"], tuple(entry["key"]))
                 for entry in PLAN["examples"])


def _target_options(target: str, example: Example) -> dict[str, Any]:
    """Options that make a target keep the example's key, for the formats whose messages do not mark it: the option
    that names the key columns (``Option.names_key_columns``)."""
    for option in codec_class(target).options:
        if option.names_key_columns:
            return {option.name: list(example.key)}
    return {}


def conversion_matrix(console: Console) -> None:
    """Stage 1: every bundled example through every other format and back."""
    summary = _table("1. the product pages' examples, decoded", "format", "stream", "messages", "events by op")
    pairs = _table("   ... converted: source -> target -> source", "source", "target", "events", "written", "refused",
                   "back to source", "what the target dropped")
    for example in EXAMPLES:
        source = codec(example.format, **example.options)
        messages = example.messages()
        events = list(source.decode(messages))
        summary.add_row(example.format, example.title, str(len(messages)), _ops(events))
        normal = list(source.encode(events))
        for target_name in formats():
            if target_name == example.format:
                continue
            target = codec(target_name, **_target_options(target_name, example))
            stats = ConversionStats()
            written = list(convert(messages, source, target, errors="skip", stats=stats))
            back = list(convert(written, target, source, errors="skip"))
            dropped = sorted({loss.feature for event in events for loss in target.dropped(event)})
            pairs.add_row(example.format, target_name, str(stats.events), str(stats.messages_written),
                          str(stats.failed), "exact" if back == normal else "changed", ", ".join(dropped) or "-")
    console.print(summary)
    console.print(pairs)
    console.print("[dim]'exact': converting back gives the source's messages byte for byte (in normal form). "
                  "What a target drops is reported before any data flows by cdcformats.loss(); "
                  "convert(..., strict=True) refuses it instead.[/dim]")


def _ops(events: list[ChangeEvent]) -> str:
    return ", ".join(f"{op} {count:,}" for op, count in sorted(Counter(event.op.value for event in events).items()))


@dataclass
class Stage:
    """One row of the report."""

    name: str
    events: int
    seconds: float
    check: str

    def row(self) -> tuple[str, ...]:
        rate = f"{self.events / self.seconds:,.0f}" if self.seconds > 0 else "-"
        return self.name, f"{self.events:,}", f"{self.seconds:.2f}", rate, self.check


def _decoded(source: Codec, messages: list[Any]) -> list[ChangeEvent]:
    return list(source.decode(messages))


def _timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def run(console: Console, size: int = 20_000, master: str = "local[2]") -> None:
    """The whole demo; ``size`` messages (records, for Tablestore) per generated stream."""
    console.rule("cdcformats demo")
    conversion_matrix(console)
    stages: list[Stage] = []
    streams = _table(f"2. generated change streams, {size:,} messages each", "format", "stream", "messages",
                     "events by op")
    decoded: dict[str, list[ChangeEvent]] = {}
    sent: dict[str, list[Any]] = {}
    for stream in PLAN["streams"]:
        name = stream["format"]
        messages = getattr(samples, stream["sample"])(size)
        events, seconds = _timed(partial(_decoded, codec(name, **stream["options"]), messages))
        decoded[name], sent[name] = events, messages
        streams.add_row(name, stream["title"], f"{len(messages):,}", _ops(events))
        stages.append(Stage(f"decode {name}", len(events), seconds, "all decoded"))
    console.print(streams)
    missing = [module for module in ("confluent_kafka", "pyspark") if importlib.util.find_spec(module) is None]
    if missing:
        console.print(f"[yellow]Kafka and Spark stages skipped: {', '.join(missing)} not installed "
                      "(pip install 'cdcformats[kafka,spark]').[/yellow]")
        _report(console, stages)
        return
    from .kafka.broker import start_broker

    with tempfile.TemporaryDirectory(prefix="cdcformats-demo-") as directory:
        registry_file = str(Path(directory) / "registry.sqlite")
        broker, seconds = _timed(start_broker)
        stages.append(Stage("start Kafka broker", 0, seconds, "-"))
        try:
            console.print(f"3. Kafka broker (Apache Kafka, KRaft, one node) at {broker.bootstrap_servers}")
            _kafka_stages(console, decoded, registry_file, broker.bootstrap_servers, stages)
            _typed_stage(console, decoded[PLAN["typed"]["stream"]], registry_file, stages)
            _spark_stage(console, {name: sent[name] for name in PLAN["spark"]["streams"]}, decoded, master, stages,
                         streaming=(sent[PLAN["streaming"]["stream"]], broker.bootstrap_servers, Path(directory)))
        finally:
            broker.stop()
    _report(console, stages)


def _table(title: str | None, *columns: str) -> RichTable:
    """A table whose cells wrap, long words folded, rather than end in "…" on a narrow terminal or in a pipe."""
    table = RichTable(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _report(console: Console, stages: list[Stage]) -> None:
    report = _table("report", "stage", "events", "seconds", "events/s", "check")
    for stage in stages:
        report.add_row(*stage.row())
    console.print(report)


def _kafka_stages(console: Console, decoded: dict[str, list[ChangeEvent]], registry_file: str, bootstrap: str,
                  stages: list[Stage]) -> None:
    """Stage 3: produce every event in each envelope to the broker at ``bootstrap``, consume back, compare."""
    from confluent_kafka.serialization import MessageField, SerializationContext

    from .kafka import ChangeEventDeserializer, ChangeEventKeySerializer, ChangeEventSerializer
    from .schema_registry.client import connect
    from .schema_registry.subjects import register_envelope

    registry = connect(registry_file)
    envelopes = schema_formats()
    subjects = [register_envelope(registry, envelope, topic="changes") for envelope in envelopes]
    console.print(f"   embedded schema registry {registry_file}: "
                  + ", ".join(f"{subject} v{version}" for subject, version in subjects))
    key_serializer = ChangeEventKeySerializer()
    for envelope in envelopes:
        serializer = ChangeEventSerializer(envelope, schema_registry=registry)
        deserializer = ChangeEventDeserializer(envelope, schema_registry=registry)
        for name, events in decoded.items():
            topic = f"{name}.{envelope}"
            context = SerializationContext(topic, MessageField.VALUE)
            # Serialized as produced, so that the stage's time includes the serializers.
            serialized = _serialized(events, key_serializer, serializer, context)
            _, seconds = _timed(partial(_produce, bootstrap, topic, serialized))
            stages.append(Stage(f"produce {name} ({envelope})", len(events), seconds, "acknowledged"))
            (_, back), seconds = _timed(partial(_consume_events, bootstrap, topic, len(events), deserializer,
                                                     context))
            # Partitions interleave keys, so compare as multisets; each key's changes keep their order.
            lossless = Counter(event.event_id for event in back) == Counter(event.event_id for event in events)
            stages.append(Stage(f"consume {name} ({envelope})", len(back), seconds,
                                "same events" if lossless else "[red]CHANGED[/red]"))
    _downstream_stages(bootstrap, decoded[PLAN["downstream"]["stream"]], stages)


def _serialized(events: list[ChangeEvent], key_serializer: Any, serializer: Any, context: Any
                ) -> Iterator[KafkaRecord]:
    for event in events:
        yield KafkaRecord(key_serializer(event, context), serializer(event, context))


def _produce(bootstrap: str, topic: str, records: Iterable[KafkaRecord]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "log_level": 0})
    for record in records:
        producer.produce(topic, key=record.key, value=record.value)
        producer.poll(0)
    producer.flush(30)


def _consume_events(bootstrap: str, topic: str, count: int, deserializer: Any, context: Any
                    ) -> tuple[list[bytes], list[ChangeEvent]]:
    values = [record.value for record in _consume(bootstrap, topic, count) if record.value is not None]
    return values, [deserializer(value, context) for value in values]


def _downstream_stages(bootstrap: str, events: list[ChangeEvent], stages: list[Stage]) -> None:
    """Stage 3, continued: the Lindorm changes as records for the systems downstream, through the broker: each
    record's key and value are the format's own, and reading them back gives what the format carries."""
    source = PLAN["downstream"]["stream"]
    for sink in PLAN["downstream"]["sinks"]:
        name = sink["format"]
        target = codec(name, **sink["options"])
        refused: list[EncodeError] = []
        records = list(target.encode(events, on_error=refused.append))
        topic = f"{source}.{name}"
        _, seconds = _timed(partial(_produce, bootstrap, topic, records))
        tombstones = sum(record.value is None for record in records)
        stages.append(Stage(f"produce {source} -> {name} ({sink['title']})", len(records), seconds,
                            f"{tombstones:,} tombstones; {len(refused):,} changes it cannot carry refused"))
        consumed, seconds = _timed(partial(_decoded, target, _consume(bootstrap, topic, len(records))))
        lossless = Counter(event.event_id for event in consumed) == Counter(
            event.event_id for event in target.decode(records))
        stages.append(Stage(f"consume {name}", len(consumed), seconds,
                            "same events" if lossless else "[red]CHANGED[/red]"))


def _consume(bootstrap: str, topic: str, count: int) -> list[KafkaRecord]:
    """Every record of ``topic``, read from the start of each partition without joining a consumer group."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cdcformats-demo",
                               "enable.auto.commit": False, "log_level": 0})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, partition, 0) for partition in partitions])
    records: list[KafkaRecord] = []
    deadline = time.monotonic() + 60
    while len(records) < count and time.monotonic() < deadline:
        # No more than are missing: consume returns once it has them, rather than waiting out its timeout for more.
        for message in consumer.consume(min(count - len(records), 10_000), timeout=0.5):
            if message.error() is None:
                records.append(KafkaRecord(message.key(), message.value()))
    consumer.close()
    return records


def _typed_stage(console: Console, events: list[ChangeEvent], registry_file: str, stages: list[Stage]) -> None:
    """Stage 3b: a stream as typed Avro, one schema per table (``PLAN["typed"]["format"]``), each new version of a
    table registered as its columns come; read back with a new codec, by schema id, as ``dropped()`` says."""
    from .errors import EncodeError
    from .losses import without

    target_format = PLAN["typed"]["format"]
    target = codec(target_format, schema_registry=registry_file)
    records: list[Any] = []
    expected: list[ChangeEvent] = []
    refused = 0

    def write() -> None:
        nonlocal refused
        for event in events:
            losses = target.dropped(event)
            try:
                records.extend(target.encode_messages(event))
            except EncodeError:
                refused += 1
                continue
            expected.append(without(event, losses))

    _, seconds = _timed(write)
    back = list(codec(target_format, schema_registry=registry_file).decode(records))
    stages.append(Stage(f"typed tables ({target_format})", len(records), seconds,
                        ("same events as dropped() says" if back == expected else "[red]CHANGED[/red]")
                        + (f", [yellow]{refused} refused[/yellow]" if refused else "")))
    lines = []
    for table in dict.fromkeys(event.table for event in events if event.table is not None):
        versions = target.table_schemas(table)  # type: ignore[attr-defined]  # a typed-rows format's
        columns = [schema.names for _, schema in versions]
        growth = [f"v{number} adds {', '.join(name for name in now if name not in before)}"
                  for (number, _), before, now in zip(versions[1:], columns[:-1], columns[1:], strict=True)]
        lines.append(f"{target.subject(table)}: v{versions[0][0]} ({', '.join(columns[0])})"  # type: ignore[attr-defined]
                     + "".join(f"; {step}" for step in growth))
    console.print(f"3b. typed tables ({target_format}) in {registry_file}:\n   " + "\n   ".join(lines))


def _spark_convert_stage(spark: Any, streams: dict[str, list[bytes]], target: str, stages: list[Stage]) -> None:
    """Stage 4, conversion: each stream converted to ``target`` in one SQL call (``cdc_convert``), where it runs
    said, compared message for message with what the same call writes in Python (its Arrow UDF)."""
    from .spark import arrow_name

    converts = [f"SELECT {function}(value, '{name}', '{target}') AS written FROM changes_{index}"
                for function in ("cdc_convert_or_error", arrow_name("cdc_convert_or_error"))
                for index, name in enumerate(streams)]
    half = len(converts) // 2
    converted = spark.sql(" UNION ALL ".join(converts[:half]))
    plan = converted._jdf.queryExecution().executedPlan().toString()
    where = "in the JVM" if "EvalPython" not in plan else "[yellow]in Python[/yellow]"
    rows, seconds = _timed(lambda: converted.toArrow().column("written").to_pylist())
    in_python = spark.sql(" UNION ALL ".join(converts[half:])).toArrow().column("written").to_pylist()
    refused = sum(row["error"] is not None for row in rows)
    same = rows == in_python
    stages.append(Stage(f"Spark SQL cdc_convert ({', '.join(streams)} -> {target})", len(rows), seconds,
                        f"{where}, " + ("same bytes as Python writes" if same else "[red]CHANGED[/red]")
                        + (f", {refused:,} refused" if refused else "")))


def _spark_stage(console: Console, streams: dict[str, list[bytes]], decoded: dict[str, list[ChangeEvent]],
                 master: str, stages: list[Stage], streaming: tuple[list[bytes], str, Path]) -> None:
    """Stage 4: Spark SQL over source streams as they arrive: ``cdc_decode`` of each, compared with what the Python
    codecs decoded, then the latest state of every key; and stage 5, ``streaming``'s messages applied to a Delta
    table from the broker."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from .envelopes import arrow
    from .spark import latest_state, register
    from .spark.connectors import streaming_session
    from .spark.tables import typed_state

    spark, seconds = _timed(lambda: streaming_session(master, "cdcformats demo"))
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, **PLAN["spark"]["options"])
    stages.append(Stage(f"start Spark {master}", 0, seconds, "-"))
    decodes = []
    for index, (name, messages) in enumerate(streams.items()):
        spark.createDataFrame(pa.table({"value": pa.array(messages, pa.binary())}).to_pandas()
                              ).createOrReplaceTempView(f"changes_{index}")
        decodes.append(f"SELECT cdc_decode('{name}', value) AS event FROM changes_{index}")
    # Decoded once and kept: latest_state reads its input several times.
    events = spark.sql(" UNION ALL ".join(decodes)).persist()
    plan = events._jdf.queryExecution().executedPlan().toString()
    where = "in the JVM" if "ArrowEvalPython" not in plan else "[yellow]as an Arrow UDF[/yellow]"
    counts, seconds = _timed(lambda: events.groupBy("event.table.name", "event.op").count().collect())
    rows = events.toArrow().column("event").to_pylist()
    errors = sum(row["error"] is not None for row in rows)
    same = Counter(arrow.event_from_row(row).event_id for row in rows if row["error"] is None) == Counter(
        event.event_id for name in streams for event in decoded[name])
    stages.append(Stage(f"Spark SQL cdc_decode ({', '.join(streams)})", sum(row["count"] for row in counts), seconds,
                        f"{where}, " + ("same events" if same and not errors else
                                        f"[red]CHANGED ({errors} dead letters)[/red]")))
    _spark_convert_stage(spark, streams, PLAN["spark"]["convert_to"], stages)
    # Kept: the summary, the sample and the typed rows read it, and it is some 50 Spark stages to compute.
    state = latest_state(events).persist()
    summary, seconds = _timed(lambda: state.groupBy("table.name").agg(
        F.count("*").alias("keys"), F.sum(F.col("deleted").cast("int")).alias("deleted")).orderBy("name").collect())
    stages.append(Stage("Spark latest_state", sum(row["keys"] for row in summary), seconds,
                        "; ".join(f"{row['name']}: {row['keys'] - row['deleted']:,} live, {row['deleted']:,} deleted"
                                  for row in summary)))
    console.print("4. Spark: the current state of a few keys, ready for MERGE INTO")
    sample = state.orderBy("table.name", "commit_time_us").selectExpr(
        "table.name AS table", "transform(key, c -> coalesce(c.value.string, cast(c.value.long AS string))) AS key",
        "deleted", "transform(cells, c -> c.name) AS columns").limit(6).collect()
    rows = _table(None, "table", "key", "deleted", "columns")
    for row in sample:
        rows.add_row(row["table"], ", ".join(row["key"]), str(row["deleted"]), ", ".join(row["columns"]))
    console.print(rows)
    typed_table = PLAN["spark"]["typed_table"]
    # What latest_state(events, typed=True, table=typed_table) gives, from the state computed above.
    typed_rows = typed_state(state, events, typed_table)
    typed, seconds = _timed(lambda: typed_rows.orderBy("commit_time").limit(4).collect())
    stages.append(Stage(f"Spark latest_state typed ({typed_table})", len(typed), seconds,
                        f"{len(typed_rows.columns)} typed columns"))
    console.print(f"   typed: the current rows of {typed_table}, one Spark column per table column")
    rows = _table(None, *(f"{name}\n{spark_type}" for name, spark_type in typed_rows.dtypes))
    for row in typed:
        rows.add_row(*(str(value) for value in row))
    console.print(rows)
    _streaming_stage(console, spark, master, *streaming, typed_rows.where(~F.col("deleted")), stages)
    spark.stop()


def _streaming_stage(console: Console, spark: Any, master: str, messages: list[bytes], bootstrap: str, directory: Path,
                     expected: Any, stages: list[Stage]) -> None:
    """Stage 5: a stream produced to the broker and applied to a Delta table by ``cdcformats stream`` (Spark
    Structured Streaming), killed with SIGKILL after its first micro-batch and started again from its checkpoint;
    the table must then equal the typed latest state (``expected``, its live rows) that stage 4 computed."""
    plan = PLAN["streaming"]
    _produce(bootstrap, plan["topic"], (KafkaRecord(None, message) for message in messages))
    root = directory / "streaming"
    command = [sys.executable, "-m", "cdcformats.cli", "stream", "-f", plan["stream"], "-b", bootstrap,
               "--topic", plan["topic"], "--table", str(root / plan["table"]), "--checkpoint", str(root / "checkpoint"),
               "--dead-letters", str(root / "dead-letters"), "--master", master, "--available-now",
               "--max-records-per-batch", str(-(-len(messages) // plan["batches"])),
               *[part for name, value in plan["options"].items()
                 for part in ("--option", f"{name}={json.dumps(value)}")]]
    environment = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    started = time.perf_counter()
    killed = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=environment)
    assert killed.stderr is not None
    for line in killed.stderr:
        if line.startswith("batch "):
            break
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    restarted = subprocess.run(command, stderr=subprocess.PIPE, text=True, env=environment)
    seconds = time.perf_counter() - started
    if restarted.returncode != 0:
        stages.append(Stage("Spark streaming into Delta", 0, seconds,
                            f"[red]FAILED: {restarted.stderr.strip().splitlines()[-1]}[/red]"))
        return
    table = spark.read.format("delta").load(str(root / plan["table"]))
    columns = [name for name in table.columns if name in expected.columns]
    stored, wanted = (Counter(tuple(row) for row in frame.select(*columns).collect()) for frame in (table, expected))
    lines = restarted.stderr.strip().splitlines()
    console.print(f"5. Spark Structured Streaming: {plan['topic']} -> Delta table {root / plan['table']}, killed "
                  "after its first micro-batch and restarted from its checkpoint (a batch whose MERGE the killed run "
                  "had committed touches 0 rows when it is replayed):")
    for line in lines:
        if line.startswith(("batch ", "applied ")):
            console.print(f"   {line}")
    stages.append(Stage("Spark streaming Kafka -> Delta (killed, restarted)", len(messages), seconds,
                        f"table = latest_state ({sum(stored.values()):,} rows)" if stored == wanted else
                        f"[red]DIFFERS: {sum((stored - wanted).values())} rows not in latest_state, "
                        f"{sum((wanted - stored).values())} missing[/red]"))
