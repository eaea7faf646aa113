"""Confluent-framed change events read in Spark as a PySpark user reads them (issue 31): producers write the
canonical envelopes with confluent-kafka's own serializers, against the registry that ``cdcformats registry serve``
serves; one producer is still on the first version of the Avro envelope. ``cdc_decode('avro', value)`` and
``cdc_decode('protobuf', value)`` used to decode them in a Python worker, row by row; they now decode them inside
Spark's JVM, which fetches the writer schemas from the registry by id, and the query plan says so. The session is
reachable only from Python, so the scenario is a short PySpark script run with the venv's interpreter.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.scenarios.conftest import CDCFORMATS

pytestmark = pytest.mark.slow

FIRST_VERSION = Path(__file__).resolve().parents[1] / "fixtures" / "envelopes" / "change_event.v1.avsc"

# Two producers of one topic: an old one on version 1 of the Avro envelope, a new one on the canonical schema; and a
# Protobuf producer. Then a message of another topic's framing gone wrong (a JSON text), for the dead letter.
PRODUCE = """
import json, sys
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from cdcformats.schemas import avro_schema_text, change_event_pb2 as pb

url, first_version = sys.argv[1], open(sys.argv[2]).read()
client = SchemaRegistryClient({"url": url})
context = SerializationContext("orders", MessageField.VALUE)

def cell(name, value, type_name=None):
    return {"name": name, "value": value, "type": type_name, "version": None, "kind": "PUT"}

def order(op, number, total):
    row = [cell("id", number, "int4"), cell("status", "PAID", "text"),
           cell("total", ("cdcformats.v1.Decimal", {"text": total}), "numeric(10,2)")]
    return {"op": op, "table": {"catalog": None, "schema": "shop", "name": "orders"}, "key": [cell("id", number)],
            "before": None, "after": row,
            "source": {"system": "postgres", "position": [{"name": "lsn", "value": 23965616}],
                       "commit_time_us": 1700000000000000, "capture_time_us": None},
            "key_only": False, "attributes": []}

old = AvroSerializer(client, first_version, conf={"auto.register.schemas": True})
new = AvroSerializer(client, avro_schema_text(), conf={"auto.register.schemas": True})
proto = ProtobufSerializer(pb.ChangeEvent, client, {"use.deprecated.format": False})
update = pb.ChangeEvent(op=pb.OP_UPDATE, table=pb.Table(schema="shop", name="orders"),
                        key=[pb.Cell(name="id", value=pb.Value(int_value=3))],
                        after=pb.Image(cells=[pb.Cell(name="id", value=pb.Value(int_value=3)),
                                              pb.Cell(name="total", value=pb.Value(decimal_value="7.50"))]),
                        source=pb.Source(system="postgres"))
messages = {"avro": [old(order("INSERT", 1, "19.90"), context).hex(), new(order("READ", 2, "5.00"), context).hex(),
                     b'{"id": 1}'.hex()],
            "protobuf": [proto(update, context).hex(), b'{"id": 1}'.hex()]}
print(json.dumps(messages))
"""

READ = """
import json, sys
from cdcformats.spark import register, session

url, messages = sys.argv[1], json.loads(sys.stdin.read())
spark = session("local[1]", "cdcformats-scenario")
spark.sparkContext.setLogLevel("ERROR")
register(spark, schema_registry=url)
result = {}
for format_name, values in messages.items():
    frame = spark.createDataFrame([(bytes.fromhex(value),) for value in values], "value binary")
    decoded = frame.selectExpr(f"cdc_decode('{format_name}', value) AS event")
    plan = decoded._jdf.queryExecution().executedPlan().toString()
    rows = [{"op": row.op, "table": row.table and row.table.name,
             "after": row.after and {cell.name: next(value for value in (cell.value.long, cell.value.decimal,
                                                                         cell.value.string) if value is not None)
                                     for cell in row.after},
             "error": row.error and row.error.message} for row in (r.event for r in decoded.collect())]
    result[format_name] = {"in the JVM": "in the JVM" in plan, "python in the plan": "EvalPython" in plan,
                           "rows": rows}
print(json.dumps(result))
spark.stop()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_framed_envelopes_decode_inside_the_jvm_with_their_writer_schemas_from_the_registry(tmp_path: Path) -> None:
    port = _free_port()
    registry = subprocess.Popen([CDCFORMATS, "registry", "serve", "--db", str(tmp_path / "registry.sqlite"),
                                 "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert registry.poll() is None and time.monotonic() < deadline, "the registry did not start"
                time.sleep(0.1)
        (tmp_path / "produce.py").write_text(PRODUCE)
        (tmp_path / "read.py").write_text(READ)
        produced = subprocess.run([sys.executable, "produce.py", url, str(FIRST_VERSION)], cwd=tmp_path,
                                  capture_output=True, timeout=120)
        assert produced.returncode == 0, produced.stderr.decode()
        ran = subprocess.run([sys.executable, "read.py", url], cwd=tmp_path, input=produced.stdout,
                             capture_output=True, timeout=300)
        assert ran.returncode == 0, ran.stderr.decode()
    finally:
        registry.terminate()
        registry.communicate(timeout=30)
    result = json.loads(ran.stdout.decode().splitlines()[-1])
    avro, protobuf = result["avro"], result["protobuf"]
    for decoded in (avro, protobuf):
        assert decoded["in the JVM"] and not decoded["python in the plan"], decoded
    assert avro["rows"][:2] == [
        {"op": "INSERT", "table": "orders", "after": {"id": 1, "status": "PAID", "total": "19.90"}, "error": None},
        {"op": "READ", "table": "orders", "after": {"id": 2, "status": "PAID", "total": "5.00"}, "error": None}]
    assert protobuf["rows"][0] == {"op": "UPDATE", "table": "orders", "after": {"id": 3, "total": "7.50"},
                                   "error": None}
    assert avro["rows"][2]["error"] == ("avro: field magic byte: not in Confluent's wire format (magic byte 0x00 and "
                                        'a 4-byte schema id) (input: {"id": 1})')
    assert protobuf["rows"][1]["error"].startswith("protobuf: field magic byte: ")
