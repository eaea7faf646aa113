"""Tablestore rows read with a primary key of the wrong length (the user trial of issue 30): a row of two key columns
read with ``primary_key`` naming one put its column value where the opType goes, and the error named only that."""

from __future__ import annotations

from pathlib import Path

from .conftest import Runner, jsonl

# DataX otsstreamreader's rows of a table keyed by two columns, as its documentation shows them.
TWO_KEY_ROWS = jsonl('["pk1_V1","pk2_V1","col_a",1441803688001,"col_val1","U"]',
                     '["pk1_V1","pk2_V1","col_b",1441803688003,"col_val3","U"]')
# A row keyed by one column, with sequence info.
SEQUENCED_ROW = jsonl('["a","c",5,"v","U","0000000001_00000000000000000005_0000000000_shard:0000000000"]')


def test_a_key_column_too_few_is_named_as_the_option_to_fix(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_bytes(TWO_KEY_ROWS)
    ran = cdcformats("convert", "-f", "ots-json", "-t", "debezium-json", "rows.jsonl", "--option", 'primary_key=["pk"]')
    assert ran.returncode == 1
    error = ran.error_line()
    assert error.startswith("Error: ots-json: line 1: field opType: expected U, DO, DA or DR, got 'col_val1'; the "
                            "row has one where a primary key of 2 columns puts it, and the option primary_key names 1: "
                            "give it every key column, in order (input: "), error
    # given both key columns, the same rows convert
    fixed = cdcformats("convert", "-f", "ots-json", "-t", "debezium-json", "rows.jsonl",
                       "--option", 'primary_key=["pk1","pk2"]')
    assert fixed.returncode == 0, fixed.stderr
    assert "2 messages read (2 decoded, 0 failed, 0 skipped), 1 event (1 written, 0 refused)" in fixed.stderr


def test_a_key_column_too_many_is_named_too(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_bytes(SEQUENCED_ROW)
    ran = cdcformats("convert", "-f", "ots-json", "-t", "debezium-json", "rows.jsonl",
                     "--option", 'primary_key=["pk","pk2"]', "--errors", "skip")
    assert ran.returncode == 0
    assert "1 message read (0 decoded, 1 failed, 0 skipped)" in ran.stderr
    bad = cdcformats("convert", "-f", "ots-json", "-t", "debezium-json", "rows.jsonl",
                     "--option", 'primary_key=["pk","pk2"]')
    assert "the row has one where a primary key of 1 columns puts it, and the option primary_key names 2" \
        in bad.error_line()
