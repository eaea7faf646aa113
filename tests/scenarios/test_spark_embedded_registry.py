"""A notebook that registers the functions first and writes to the embedded registry after (issue 31): the JVM
decoder of framed Avro reads the writer schemas that the registry file holds when each query is planned, not those it
held when the functions were registered. It used to answer ``schema id 1 cannot be fetched from the schema registry
file ... (no such file)`` for a message that the Arrow path read. The session is reachable only from Python, so the
scenario is a short PySpark script run with the venv's interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = """
import json, sys
import cdcformats as cf
from cdcformats.kafka import ChangeEventSerializer
from cdcformats.spark import register, session

registry = sys.argv[1]
spark = session("local[1]", "embedded-registry-scenario")
spark.sparkContext.setLogLevel("ERROR")
register(spark, schema_registry=registry)  # the registry file does not exist yet
write = ChangeEventSerializer("avro", registry, subject_name_strategy="record")
message = write(cf.ChangeEvent(cf.Op.INSERT, cf.Table("orders"), (), None, (cf.Cell("id", 1),)))
frame = spark.createDataFrame([(message,)], "value binary")
answers = {}
for function in ("cdc_decode", "cdc_decode_arrow"):
    query = frame.selectExpr(f"{function}('avro', value) AS event")
    event = query.collect()[0].event
    answers[function] = {"error": event.error.message if event.error else None,
                         "id": event.after[0].value.long if event.after else None,
                         "in_the_jvm": "in the JVM" in query._jdf.queryExecution().executedPlan().toString()}
spark.stop()
print(json.dumps(answers))
"""


def test_framed_avro_written_after_register_decodes_in_the_jvm(tmp_path: Path) -> None:
    ran = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "registry.sqlite")], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert ran.returncode == 0, ran.stderr[-3000:]
    answers = json.loads(ran.stdout.strip().splitlines()[-1])
    assert answers["cdc_decode"] == {"error": None, "id": 1, "in_the_jvm": True}
    assert answers["cdc_decode_arrow"] == {"error": None, "id": 1, "in_the_jvm": False}
