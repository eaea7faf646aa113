"""Spark's ``cdc_decode`` of debezium-json, decoded inside the JVM, against the Python codec on every record that
Debezium's PostgreSQL connector really emitted (``tests/peers/recorded.py``): as JsonConverter wrote it with schemas
and without, each value the same event on both paths, and each record that is no row change (a tombstone, a
heartbeat, a transaction's BEGIN or END) the same null or error row."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from cdcformats.spark import JAR  # noqa: E402
from tests.integration.test_spark_jvm import assert_same_decisions, decoded_in_jvm  # noqa: E402
from tests.peers import recorded  # noqa: E402
from tests.property.configurations import CONFIGURATIONS  # noqa: E402

pytestmark = pytest.mark.slow

RECORDS = recorded.postgres()
CONFIGURATION = CONFIGURATIONS["debezium-json"]


@pytest.fixture(scope="module")
def spark():
    from cdcformats.spark import register, session

    assert JAR.exists(), "the package build compiles the JVM decoders (setup.py)"
    spark = session("local[2]", "cdcformats-peer-tests", **{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, **CONFIGURATION.options)
    yield spark
    spark.stop()


@pytest.mark.parametrize("variant", ["value", "value_plain"])
def test_the_jvm_decodes_every_recorded_debezium_value_as_the_python_codec(spark, variant: str) -> None:
    values = [getattr(record, variant) for record in RECORDS]
    messages = [None if value is None else value.encode() for value in values]
    jvm_rows = decoded_in_jvm(spark, CONFIGURATION.format, messages)
    # Every row change decodes to an event, and nothing else does: a tombstone is null, a heartbeat or a transaction
    # record an error row (what the Python codec's refusal is in Spark). Then, row for row, the Python codec decides
    # the same.
    for record, row in zip(RECORDS, jvm_rows, strict=True):
        if record.is_change:
            assert row["error"] is None, f"{record.where}: {row['error']['message']}"
        elif getattr(record, variant) is None:
            assert row is None, record.where
        else:
            assert row["error"] is not None and row["error"]["field"] == "op", record.where
    assert_same_decisions(CONFIGURATION, messages, jvm_rows)
