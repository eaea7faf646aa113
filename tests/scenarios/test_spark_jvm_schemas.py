"""Debezium's messages with their Connect schemas (``schemas.enable=true``) written by ``cdc_convert`` in Spark, as a
PySpark user runs it (issue 31, the JVM encoders): the call ran on the Arrow UDF, in Python, whenever the target
was debezium-json with the option ``schemas``. The JVM path is reachable only from Spark (``spark-convert`` converts
with the Python codecs), so the scenario is a short PySpark script run with the venv's interpreter on messages written
by hand in the shape Debezium's PostgreSQL connector sends with JsonConverter's schemas: an insert and an update of a
row with a Connect Decimal, the connector's own source schema and its fields in its order.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

MESSAGES = b"""\
{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},{"type":"string","optional":true,"field":"status"}],"optional":true,"name":"pg.public.orders.Value","field":"before"},{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},{"type":"string","optional":true,"field":"status"}],"optional":true,"name":"pg.public.orders.Value","field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"pg.public.orders.Envelope","version":2},"payload":{"before":null,"after":{"id":1,"amount":"B8w=","status":"NEW"},"source":{"version":"3.0.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000000,"snapshot":"false","db":"shop","schema":"public","table":"orders","lsn":24023128},"op":"c","ts_ms":1700000000123}}
{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},{"type":"string","optional":true,"field":"status"}],"optional":true,"name":"pg.public.orders.Value","field":"before"},{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},{"type":"string","optional":true,"field":"status"}],"optional":true,"name":"pg.public.orders.Value","field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"pg.public.orders.Envelope","version":2},"payload":{"before":{"id":1,"amount":"B8w=","status":"NEW"},"after":{"id":1,"amount":"B8w=","status":"PAID"},"source":{"version":"3.0.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000001000,"snapshot":"false","db":"shop","schema":"public","table":"orders","lsn":24023400},"op":"u","ts_ms":1700000001050}}
"""

SCRIPT = """
import json, sys
from cdcformats.spark import register, session

spark = session("local[1]", "cdcformats-scenario")
spark.sparkContext.setLogLevel("ERROR")
register(spark)
messages = sys.stdin.buffer.read().splitlines()
frame = spark.createDataFrame(list(enumerate(messages)), "n long, value binary")
query = frame.orderBy("n").selectExpr(
    "cdc_convert_or_error(value, 'debezium-json', 'debezium-json', map('schemas', 'true')) AS written")
plan = query._jdf.queryExecution().executedPlan().toString()
rows = [row.written for row in query.collect()]
print(json.dumps({"in_the_jvm": "debezium-json in the JVM" in plan, "python_in_the_plan": "EvalPython" in plan,
                  "errors": [row.error and row.error.message for row in rows],
                  "as_sent": [bytes(row.value) == message for row, message in zip(rows, messages)]}))
spark.stop()
"""


def test_debeziums_messages_with_schemas_convert_in_the_jvm_as_they_were_sent(tmp_path: Path) -> None:
    script = tmp_path / "convert.py"
    script.write_text(SCRIPT)
    ran = subprocess.run([sys.executable, str(script)], input=MESSAGES, capture_output=True, timeout=300)
    assert ran.returncode == 0, ran.stderr.decode()
    result = json.loads(ran.stdout.decode().splitlines()[-1])
    assert result["errors"] == [None, None]
    assert result["as_sent"] == [True, True]
    assert result["in_the_jvm"] and not result["python_in_the_plan"], result
