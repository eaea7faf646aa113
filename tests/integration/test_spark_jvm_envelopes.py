"""cdc_decode of Confluent-framed avro and protobuf inside Spark's JVM, against the registry served over HTTP
(``cdcformats registry serve``): the writer schemas are fetched by id in the JVM, bodies written with the first
version of the Avro envelope are resolved into the canonical one, and every row, event or dead letter, is the row the
Arrow path (``cdc_decode_arrow``) gives, with no Python in the plan."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from confluent_kafka.schema_registry import Schema  # noqa: E402

import cdcformats as cf  # noqa: E402
from cdcformats.envelopes import arrow  # noqa: E402
from cdcformats.errors import DecodeError  # noqa: E402
from cdcformats.kafka import ChangeEventSerializer  # noqa: E402
from cdcformats.model import Cell, CellKind, ChangeEvent, Op, Source, Struct, Table  # noqa: E402
from cdcformats.spark import JAR, arrow_name  # noqa: E402
from tests.integration.test_schema_registry_http import Server  # noqa: E402

pytestmark = pytest.mark.slow

FIRST_VERSION = Path(__file__).resolve().parents[1] / "fixtures" / "envelopes" / "change_event.v1.avsc"

ROW = (Cell("id", 7, "int4"), Cell("name", "Alicia", "text"), Cell("price", Decimal("9.90"), "numeric"),
       Cell("weight", 1.5), Cell("ok", True), Cell("note", None),
       Cell("status", "PAID", None, 1700000000500, CellKind.DELETE_VERSION))
EVENTS = [
    ChangeEvent(Op.INSERT, Table("orders", "shop"), (Cell("id", 7),), None, ROW,
                Source("postgres", (("lsn", 12345),), 1700000000123000, 1700000000456789)),
    ChangeEvent(Op.UPDATE, Table("orders", "shop", "db"), (), ROW[:2], ROW[:2] + (Cell("photo", b"\xde\xad"),),
                attributes=(("debezium.field.transaction", None),)),
    ChangeEvent(Op.DELETE, None, (), (Cell("doc", Struct((("a", (1, None, Decimal("1E+3"))),))),), None),
    ChangeEvent(Op.TRUNCATE, Table("orders")),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("registry") / "registry.sqlite")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def spark(server: Server):
    from cdcformats.spark import register, session

    assert JAR.exists(), "the package build compiles the JVM decoders (setup.py)"
    spark = session("local[2]", "cdcformats-jvm-envelopes", **{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, schema_registry=server.url)
    yield spark
    spark.stop()


def without_message(row: dict | None) -> dict | None:
    """An ``EVENT`` row with its error's message left out."""
    if row is None or row["error"] is None:
        return row
    return {**row, "error": {**row["error"], "message": None}}


def _framed(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


def avro_messages(server: Server) -> list[bytes | None]:
    serializer = ChangeEventSerializer("avro", server.url, subject_name_strategy="record")
    written = [serializer(event) for event in EVENTS]
    canonical = written[0][1:5]
    # A producer still on the first version of the envelope: its bodies (no nested values) are the same bytes.
    first = server.client().register_schema("legacy-value", Schema(FIRST_VERSION.read_text(encoding="utf-8"),
                                                                   "AVRO"))
    body = cf.codec("avro").encode_event(EVENTS[0])
    return [*written, _framed(first, body), _framed(first, body[:9]),
            b"\x01" + canonical + body, _framed(4242, body), b"\x00" + canonical + body + b"\x00", b"\x00\x00", None]


def protobuf_messages(server: Server) -> list[bytes | None]:
    serializer = ChangeEventSerializer("protobuf", server.url, subject_name_strategy="record")
    written = [serializer(event) for event in EVENTS]
    header = written[0][:5]
    body = cf.codec("protobuf").encode_event(EVENTS[0])
    return [*written, header + b"\x02\x00" + body, header + b"\x02\x02" + body, header + b"\x00" + body[:7],
            _framed(4242, b"\x00" + body), b"\x07" + written[0][1:], None]


@pytest.mark.parametrize("format_name", ["avro", "protobuf"])
def test_framed_envelopes_decode_in_the_jvm_as_on_the_arrow_path(spark, server: Server, format_name: str) -> None:
    messages = avro_messages(server) if format_name == "avro" else protobuf_messages(server)
    frame = spark.createDataFrame([(message,) for message in messages], "value binary")
    jvm = frame.selectExpr(f"cdc_decode('{format_name}', value) AS event")
    plan = jvm._jdf.queryExecution().executedPlan().toString()
    assert "EvalPython" not in plan and "in the JVM" in plan, plan
    reference = frame.selectExpr(f"{arrow_name('cdc_decode')}('{format_name}', value) AS event")
    assert "ArrowEvalPython" in reference._jdf.queryExecution().executedPlan().toString()
    jvm_rows = jvm.toArrow().column(0).to_pylist()
    python_rows = reference.toArrow().column(0).to_pylist()
    assert [without_message(row) for row in jvm_rows] == [without_message(row) for row in python_rows]
    for jvm_row, python_row in zip(jvm_rows, python_rows, strict=True):
        if python_row is not None and python_row["error"] is not None:
            # The Arrow path gives the raw input to an error raised without it (as framed messages' are) after the
            # error was rendered, so that its message has no "(input: ...)", which every decoder's message has: the
            # JVM's message is the one Python's error renders with its raw input.
            error = python_row["error"]
            assert jvm_row["error"]["message"] == str(DecodeError(error["format"], error["reason"],
                                                                  field=error["field"], raw=error["raw"]))
    decisions = ["null" if row is None else "event" if row["error"] is None else row["error"]["field"]
                 for row in jvm_rows]
    assert decisions == (["event"] * 5 + [None, "magic byte", "schema id", None, "magic byte", "null"]
                         if format_name == "avro" else
                         ["event"] * 5 + ["message index", None, "event", "magic byte", "null"])
    assert [arrow.event_from_row(row) for row in jvm_rows[:len(EVENTS)]] == EVENTS
