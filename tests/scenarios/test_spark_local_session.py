"""A local Spark session as ``cdcformats.spark.session()`` makes it, used as a PySpark user uses it (issue 30, the
Spark jobs that wait): the session's settings are reachable only from Python, so the scenario is a short PySpark
script run with the venv's interpreter on Lindorm messages written by hand in the shapes Lindorm's change stream
sends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# Lindorm's change stream: two orders written, versions of a column, a delete of a version, a column and a row.
MESSAGES = b"""\
{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"DECIMAL","name":"amount","value":"19.90"},{"type":"VARCHAR","name":"status","ts":"1700000000000","value":"NEW"},{"type":"VARCHAR","name":"status","ts":"1700000000500","value":"PAID"}]}
{"op":"Put","table":"orders","ts":"1700000001000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id","value":"o-2"},{"type":"DECIMAL","name":"amount","value":"5.00"},{"type":"BOOLEAN","name":"gift","value":"true"}]}
{"op":"Delete","table":"orders","ts":"1700000002000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"VARCHAR","name":"status","ts":"1700000000000"}]}
{"op":"DeleteColumn","table":"orders","ts":"1700000003000","keyOnly":"false","data":[{"type":"VARCHAR","name":"id","value":"o-2"},{"type":"BOOLEAN","name":"gift"}]}
{"op":"DeleteFamily","table":"orders","ts":"1700000004000","keyOnly":"true","data":[{"type":"VARCHAR","name":"id","value":"o-2"}]}
"""

# The JVM's own count of the classes Spark compiled (Janino), before and after a second query over the same state.
SCRIPT = """
import json, sys
from cdcformats.spark import latest_state, register, session

spark = session("local[1]", "cdcformats-scenario")
spark.sparkContext.setLogLevel("ERROR")
register(spark, key_columns=["id"])
compiled = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
frame = spark.createDataFrame([(line,) for line in sys.stdin.buffer.read().splitlines()], "value binary")
state = latest_state(frame.selectExpr("cdc_decode('lindorm', value) AS event"))
first = state.orderBy("key").collect()
before = compiled.getCount()
again = state.where("deleted").count()
arguments = list(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
print(json.dumps({"state": [[row.key[0].value.string, row.deleted] for row in first], "deleted": again,
                  "compiled_again": compiled.getCount() - before, "jvm_arguments": arguments}))
spark.stop()
"""


def test_a_second_query_over_a_latest_state_reuses_the_classes_spark_compiled(tmp_path: Path) -> None:
    """Spark keeps 100 generated classes compiled, fewer than one ``latest_state`` query generates: the query evicted
    its own classes, and every later query over the state compiled them all again (some 70 classes, seconds of
    Janino for a handful of rows). And the local driver's JVM spent the cores on C2 compiling Spark's own code for
    jobs that end before it pays off."""
    script = tmp_path / "state.py"
    script.write_text(SCRIPT)
    ran = subprocess.run([sys.executable, str(script)], input=MESSAGES, capture_output=True, timeout=300)
    assert ran.returncode == 0, ran.stderr.decode()
    result = json.loads(ran.stdout.decode().splitlines()[-1])
    assert result["state"] == [["o-1", False], ["o-2", True]] and result["deleted"] == 1
    # The second query's own stages compile some 30 classes (31-33 on Spark 4.2); with its classes evicted it
    # compiles about 107.
    assert result["compiled_again"] < 45, result["compiled_again"]
    assert "-XX:TieredStopAtLevel=1" in result["jvm_arguments"], result["jvm_arguments"]
