"""`cdcformats demo` end to end, small: every stage runs and reports no loss."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_demo_runs_every_stage_without_loss() -> None:
    result = subprocess.run([sys.executable, "-m", "cdcformats.cli", "demo", "--size", "400"],
                            capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr[-3000:]
    report = result.stdout
    for stage in ("decode lindorm", "decode arcion", "decode ots", "produce lindorm (avro)",
                  "consume ots (protobuf)", "produce lindorm -> connect-json", "consume paimon-log",
                  "Spark SQL cdc_decode", "Spark latest_state"):
        assert stage in report
    assert report.count("same events") == 10  # 9 stages, and the typed tables "same events as dropped() says"
    assert "CHANGED" not in report and "dead letters" not in report
    assert "in the JVM" in report and "Arrow UDF" not in report  # the Spark stage decodes inside the JVM
    # and converts there too, writing what Python writes
    assert "Spark SQL cdc_convert (lindorm, arcion -> debezium-json)" in report
    assert "in the JVM, same bytes as Python writes" in report and "in Python" not in report
    assert "orders:" in report and "region:" in report
    # The Lindorm stream as typed Avro: the coupon column of the second half is version 2 of the orders table.
    assert "cdcformats.orders-value: v1 (id, customer, amount, status, weight_kg, gift, note); v2 adds coupon" in \
        " ".join(report.split())
    assert "same events as dropped() says" in " ".join(report.split())
    assert "Spark latest_state typed (orders)" in report and "decimal(10,2)" in report and "coupon" in report
    # The Lindorm stream through a real broker into a Delta table, the query killed and restarted: the table is the
    # latest state.
    assert "start Kafka broker" in report and "Apache Kafka, KRaft" in report
    assert "Spark streaming Kafka -> Delta (killed, restarted)" in report
    assert "table = latest_state" in report and "DIFFERS" not in report and "FAILED" not in report
