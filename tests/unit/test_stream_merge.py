"""What a micro-batch's MERGE says (``cdcformats.spark.streaming``), without Spark: which columns a batch sets, which
it keeps, and which types a column takes."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from pyspark.sql.types import (  # noqa: E402
    ByteType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
)

from cdcformats.spark.streaming import BatchCounts, _merge_statement, _widens  # noqa: E402


@pytest.mark.parametrize(("source", "target", "widens"), [
    (IntegerType(), LongType(), True), (ByteType(), IntegerType(), True), (LongType(), IntegerType(), False),
    (FloatType(), DoubleType(), True), (DoubleType(), FloatType(), False), (IntegerType(), DoubleType(), False),
    (DecimalType(10, 2), DecimalType(12, 2), True), (DecimalType(12, 2), DecimalType(10, 2), False),
    (DecimalType(10, 2), DecimalType(12, 3), False), (StringType(), StringType(), True),
    (StringType(), LongType(), False),
])
def test_a_value_goes_into_a_column_of_its_type_or_a_wider_one_of_its_kind(source, target, widens) -> None:
    assert _widens(source, target) is widens


def test_a_batch_sets_the_columns_it_wrote_and_keeps_the_others_unless_a_row_delete_reset_the_row() -> None:
    statement = _merge_statement("delta.`/data/orders`", "batch", ["id"], ["id", "status"], ["gift"], truncated=False)
    assert statement.startswith("MERGE INTO delta.`/data/orders` t USING batch s ON t.`id` <=> s.`id` ")
    assert "WHEN MATCHED AND s._cdc_deleted THEN DELETE" in statement
    assert ("`status` = CASE WHEN s._cdc_reset OR array_contains(s._cdc_written, 'status') THEN s.`status` "
            "ELSE t.`status` END") in statement
    assert "`gift` = CASE WHEN s._cdc_reset THEN NULL ELSE t.`gift` END" in statement
    assert "`id` =" not in statement  # the key is what matched
    assert "INSERT (`id`, `status`, `_cdc_commit_time`)" in statement
    assert "NOT MATCHED BY SOURCE" not in statement


def test_a_truncate_deletes_the_rows_the_batch_did_not_write() -> None:
    statement = _merge_statement("delta.`/t`", "batch", ["a", "b"], ["a", "b"], [], truncated=True)
    assert "ON t.`a` <=> s.`a` AND t.`b` <=> s.`b`" in statement
    assert statement.endswith("WHEN NOT MATCHED BY SOURCE THEN DELETE")


def test_the_counts_of_a_batch_add_up_or_say_they_do_not() -> None:
    assert BatchCounts(0, records=10, changes=6, other_tables=1, dead_lettered=2, empty=1).adds_up()
    assert not BatchCounts(0, records=10, changes=6).adds_up()
    assert BatchCounts(3, records=2, changes=2, rows=1).line() == (
        "batch 3: records 2  changes 2  rows 1  dead-lettered 0  other tables 0  empty 0")
