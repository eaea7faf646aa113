"""Debezium messages decoded by Spark's ``cdc_decode`` inside the JVM, as a PySpark user runs it (issue "Real peers in
the tests"): the JVM decoder is reachable only from Spark (``spark-convert`` converts with the Python codecs), so each
scenario is a short PySpark script run with the venv's interpreter on messages written by hand in the shapes
Debezium's PostgreSQL connector sends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_debezium_schemas import POSTGRES_SOURCE_FIELDS, compact, envelope

pytestmark = pytest.mark.slow

# PostgreSQL: TRUNCATE of a table, as Debezium writes it with schemas: no rows, but the row structs of the table's
# columns in the envelope's schema.
POSTGRES_TRUNCATE = {
    "schema": {"type": "struct", "fields": envelope("pg.public.customers.Value", POSTGRES_SOURCE_FIELDS, "postgresql"),
               "optional": False, "name": "pg.public.customers.Envelope", "version": 2},
    "payload": {
        "before": None, "after": None,
        "source": {"version": "3.6.1.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1732606801234,
                   "snapshot": "false", "db": "shop", "sequence": "[\"24023128\",\"24023200\"]",
                   "ts_us": 1732606801234567, "ts_ns": 1732606801234567000, "schema": "public",
                   "table": "customers", "txId": 781, "lsn": 24023200, "xmin": None},
        "op": "t", "ts_ms": 1732606801500, "transaction": None}}

SCRIPT = """
import json, sys
from cdcformats.spark import register, session

spark = session("local[1]", "cdcformats-scenario")
spark.sparkContext.setLogLevel("ERROR")
register(spark)
frame = spark.createDataFrame([(line,) for line in sys.stdin.buffer.read().splitlines()], "value binary")
decoded = frame.selectExpr("cdc_decode('debezium-json', value) AS event")
plan = decoded._jdf.queryExecution().executedPlan().toString()
written = decoded.selectExpr("cdc_encode('debezium-json', event, map('schemas', 'true')) AS value").collect()
print(json.dumps({"in_the_jvm": "in the JVM" in plan, "written": [bytes(row.value).decode() for row in written]}))
spark.stop()
"""


def test_a_truncate_decoded_in_the_jvm_keeps_its_tables_row_schema(tmp_path: Path) -> None:
    """The JVM decoder kept a TRUNCATE's envelope schema with its row structs emptied, as for a change with rows,
    whose cells keep their columns; a TRUNCATE has no cells, so written back its table's columns were gone."""
    script = tmp_path / "decode.py"
    script.write_text(SCRIPT)
    ran = subprocess.run([sys.executable, str(script)], input=compact(POSTGRES_TRUNCATE), capture_output=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr.decode()
    result = json.loads(ran.stdout.decode().splitlines()[-1])
    assert result["in_the_jvm"]
    [written] = result["written"]
    assert json.loads(written)["schema"]["fields"][0]["fields"][1] == {"type": "string", "optional": False,
                                                                       "field": "first_name"}
    assert json.loads(written) == POSTGRES_TRUNCATE
