"""The command line as a user who knows kcat, the Kafka tools and Spark meets it: output readable at 80 columns and
in a pipe, JSON for scripts, and mistakes answered with the fix."""

from __future__ import annotations

import json

from .conftest import Runner


def test_formats_reads_at_80_columns_and_in_a_pipe(cdcformats: Runner) -> None:
    ran = cdcformats("formats", env={"COLUMNS": "80"})
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.decode().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in ran.stdout.decode()
    assert "lindorm-subscription (bytes messages)" in lines
    described = cdcformats("formats", "debezium-avro", env={"COLUMNS": "80"}).stdout.decode()
    assert "  subject_name_strategy: " in described and "does not carry: " in described


def test_formats_json_is_for_scripts(cdcformats: Runner) -> None:
    described = json.loads(cdcformats("formats", "--json").stdout)
    lindorm = next(entry for entry in described if entry["name"] == "lindorm")
    assert {option["name"] for option in lindorm["options"]} >= {"key_columns"}
    assert "cell.version" in lindorm["carries"] and "source.position" in lindorm["does_not_carry"]


def test_a_misspelt_format_or_option_says_what_was_meant(cdcformats: Runner, tmp_path) -> None:
    (tmp_path / "in.jsonl").write_bytes(b"")
    assert cdcformats("convert", "--from", "lindorn", "--to", "avro", "in.jsonl").error_line().startswith(
        "Error: unknown format 'lindorn' (did you mean 'lindorm'?)")
    assert cdcformats("convert", "--from", "lindorm", "--to", "avro", "in.jsonl", "--option",
                      "key_colums=[]").error_line().startswith("Error: option key_colums (did you mean 'key_columns'?)")
    assert cdcformats("formats", "debezium").error_line().startswith(
        "Error: unknown format 'debezium' (did you mean 'debezium-json' or 'debezium-avro'?)")


def test_a_list_option_without_quotes_shows_the_quoting(cdcformats: Runner, tmp_path) -> None:
    (tmp_path / "in.jsonl").write_bytes(b"")
    ran = cdcformats("convert", "--from", "lindorm", "--to", "avro", "in.jsonl", "--option", "key_columns=[uid]")
    assert ran.returncode == 2
    assert ran.error_line() == ("Error: lindorm: option key_columns: expected a list of column names, got the text "
                                """'[uid]': write it as JSON, ["uid"] (in a shell, with quotes around it: """
                                """'key_columns=["uid"]')""")
