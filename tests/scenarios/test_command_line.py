"""The command line as a user who knows kcat, the Kafka tools and Spark meets it: output readable at 80 columns and
in a pipe, JSON for scripts, and mistakes answered with the fix."""

from __future__ import annotations

import json
import os
import pty
import re
import socket
import subprocess
import sys
from pathlib import Path

from .conftest import CDCFORMATS, Runner, jsonl, read_terminal

LINDORM = jsonl('{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":['
                '{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"BIGINT","name":"items","value":"3"}]}')


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


def test_a_misspelt_format_or_option_says_what_was_meant(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(b"")
    assert cdcformats("convert", "--from", "lindorn", "--to", "avro", "in.jsonl").error_line().startswith(
        "Error: unknown format 'lindorn' (did you mean 'lindorm'?)")
    assert cdcformats("convert", "--from", "lindorm", "--to", "avro", "in.jsonl", "--option",
                      "key_colums=[]").error_line().startswith("Error: option key_colums (did you mean 'key_columns'?)")
    assert cdcformats("formats", "debezium").error_line().startswith(
        "Error: unknown format 'debezium' (did you mean 'debezium-json' or 'debezium-avro'?)")


def test_a_list_option_without_quotes_shows_the_quoting(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(b"")
    ran = cdcformats("convert", "--from", "lindorm", "--to", "avro", "in.jsonl", "--option", "key_columns=[uid]")
    assert ran.returncode == 2
    assert ran.error_line() == ("Error: lindorm: option key_columns: expected a list of column names, got the text "
                                """'[uid]': write it as JSON, ["uid"] (in a shell, with quotes around it: """
                                """'key_columns=["uid"]')""")


def _on_a_terminal(arguments: list[str], cwd: Path, stdout_terminal: bool) -> tuple[int, str, bytes]:
    """Run with stderr (and stdout, when asked) on a pseudo-terminal: the exit code, what the terminal showed, and
    stdout when it was not the terminal."""
    terminal, other_end = pty.openpty()
    with open(cwd / "stdout", "w+b") as stdout:
        with subprocess.Popen([CDCFORMATS, *arguments], cwd=cwd, stdin=subprocess.DEVNULL,
                              stdout=other_end if stdout_terminal else stdout, stderr=other_end) as ran:
            os.close(other_end)
            shown = read_terminal(terminal)
        stdout.seek(0)
        return ran.returncode, shown.decode(errors="replace"), stdout.read()


def test_binary_output_to_a_terminal_is_refused_unless_asked_for(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(LINDORM)
    code, shown, _ = _on_a_terminal(["convert", "-f", "lindorm", "-t", "avro", "in.jsonl"], tmp_path, True)
    assert code == 2
    assert "Error: avro files are binary and stdout is a terminal: give OUT, redirect stdout, or write to the " \
           "terminal all the same with -o -" in " ".join(shown.split())
    code, shown, _ = _on_a_terminal(["convert", "-f", "lindorm", "-t", "avro", "in.jsonl", "-o", "-"], tmp_path, True)
    assert code == 0 and "Obj\x01" in shown  # Avro's container magic, on the terminal as asked


def test_the_summary_has_a_line_of_its_own_after_the_progress_display(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(LINDORM * 20_000)
    code, shown, stdout = _on_a_terminal(["convert", "-f", "lindorm", "-t", "debezium-json", "in.jsonl", "--progress"],
                                         tmp_path, False)
    assert code == 0, shown
    assert len(stdout.splitlines()) == 20_000
    last = re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).rstrip())[-1]  # without the escapes
    assert re.fullmatch(r"lindorm -> debezium-json: 20,000 messages read .* events/s", last), shown[-400:]


def test_quiet_shows_no_summary(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(LINDORM)
    ran = cdcformats("convert", "-q", "-f", "lindorm", "-t", "debezium-json", "in.jsonl", "-o", "out.jsonl")
    assert ran.returncode == 0 and ran.stderr == ""
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 1
    assert cdcformats("convert", "-f", "lindorm", "-t", "avro", "in.jsonl", "a.avro", "-o", "b.avro").error_line() == \
        "Error: OUT given twice, as a.avro and as --output b.avro: give one"


def test_one_vocabulary_across_subcommands(cdcformats: Runner) -> None:
    for command in (["convert"], ["bridge"], ["spark-convert"]):
        shown = cdcformats(*command, "--help", env={"COLUMNS": "80"}).stdout.decode()
        assert all(flag in shown for flag in ("-f, --from", "-t, --to", "--option", "--registry", "Example:")), command
    shown = cdcformats("loss", "--help", env={"COLUMNS": "80"}).stdout.decode()
    assert all(flag in shown for flag in ("-f, --from", "-t, --to", "--option", "--source-option", "--json"))
    bridge = cdcformats("bridge", "--help").stdout.decode()
    assert "-b, --bootstrap-server" in bridge and "--source-option" in bridge
    spark = cdcformats("spark-convert", "--help").stdout.decode()
    assert "[IN] [OUT]" in spark and "-o, --output" in spark
    assert "--registry" in cdcformats("registry", "serve", "--help").stdout.decode()


def test_spark_convert_asks_for_the_dead_letter_directory_before_spark_starts(cdcformats: Runner,
                                                                              tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(LINDORM)
    ran = cdcformats("spark-convert", "-f", "lindorm", "-t", "debezium-json", "in.jsonl", "out")
    assert ran.returncode == 2
    assert ran.error_line() == ("Error: --errors dead-letter (the default) needs --dead-letter DIRECTORY; or give "
                                "--errors skip or --errors fail")
    assert not (tmp_path / "out").exists()


def test_a_registry_on_a_port_in_use_says_so_in_one_line(cdcformats: Runner, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        ran = cdcformats("registry", "serve", "--registry", "r.sqlite", "--port", str(port), timeout=30)
    assert ran.returncode == 1
    assert ran.stderr == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_registry_where_names_the_default_file(cdcformats: Runner, tmp_path: Path) -> None:
    ran = cdcformats("registry", "where", env={"CDCFORMATS_SCHEMA_REGISTRY": str(tmp_path / "r.sqlite")})
    assert ran.stdout.decode() == f"{tmp_path / 'r.sqlite'}\n"
    assert "$CDCFORMATS_SCHEMA_REGISTRY" in ran.stderr and "not created yet" in ran.stderr
    data = tmp_path / "data"
    ran = cdcformats("registry", "where", env={"CDCFORMATS_SCHEMA_REGISTRY": "", "XDG_DATA_HOME": str(data)})
    assert ran.stdout.decode() == f"{data / 'cdcformats' / 'schema-registry.sqlite'}\n"
    assert not data.exists()


def test_schemas_register_needs_no_format(cdcformats: Runner, tmp_path: Path) -> None:
    ran = cdcformats("schemas", "register", "--registry", "r.sqlite", "--topic", "orders")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.decode().split("\t")[:2] == ["avro", "orders-value"]
    assert cdcformats("schemas", "register", "--registry", "r.sqlite").error_line() == \
        "Error: --strategy topic needs --topic TOPIC (--strategy record needs none)"


def test_a_file_that_starts_with_a_byte_order_mark_is_read(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(b"\xef\xbb\xbf" + LINDORM + LINDORM)  # as a Windows editor saves it
    ran = cdcformats("convert", "-f", "lindorm", "-t", "debezium-json", "in.jsonl", "out.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 2


def test_a_missing_extra_names_what_to_install(cdcformats: Runner, tmp_path: Path) -> None:
    # confluent-kafka made missing, as in an installation without the kafka extra
    (tmp_path / "confluent_kafka.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'confluent_kafka'\", name='confluent_kafka')\n")
    ran = cdcformats("bridge", "-b", "127.0.0.1:1", "--source-topic", "a", "-f", "lindorm", "--target-topic", "b",
                     "-t", "debezium-json", "--idle-timeout", "1",
                     env={"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])})
    assert ran.returncode == 1
    assert ran.error_line() == "Error: the package confluent_kafka is not installed: pip install 'cdcformats[kafka]'"


def test_errors_show_the_input_as_its_text_and_count_from_one(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(LINDORM + b'{"op":"Nope","table":"t","data":[]}\n')
    assert cdcformats("convert", "-f", "lindorm", "-t", "avro", "in.jsonl", "out.avro").error_line() == (
        """Error: lindorm: line 2: field op: unknown op 'Nope'; expected one of Put, Delete, DeleteColumn, """
        """DeleteFamily, DeleteFamilyVersion (input: {"op":"Nope","table":"t","data":[]})""")
    script = ("import cdcformats as cf\n"
              "try:\n"
              "    list(cf.codec('lindorm').decode([b'{}', b'\\x99garbage']))\n"
              "except cf.DecodeError as error:\n"
              "    print(error)\n")
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert shown.startswith("lindorm: message 1: ") and shown.rstrip().endswith("(input: {})")


def test_a_registry_is_checked_before_any_input_is_read(cdcformats: Runner, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "in.fifo")  # nobody writes into it: a run that read its input first would wait for ever
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]  # a port nothing listens on once the socket is closed
    down = cdcformats("convert", "-f", "lindorm", "-t", "debezium-avro", "in.fifo", "out.jsonl", "--registry",
                      f"http://127.0.0.1:{port}", timeout=30)
    assert down.returncode == 1
    assert down.error_line() == f"Error: cannot reach the schema registry http://127.0.0.1:{port}: [Errno 111] " \
                                "Connection refused"
    bare = cdcformats("convert", "-f", "lindorm", "-t", "debezium-avro", "in.fifo", "out.jsonl", "--registry",
                      f"localhost:{port}", timeout=30)
    assert bare.returncode == 2
    assert f"did you mean http://localhost:{port}?" in bare.error_line()
    register = cdcformats("schemas", "register", "--registry", f"http://127.0.0.1:{port}", "--topic", "t")
    assert register.error_line().startswith(f"Error: cannot reach the schema registry http://127.0.0.1:{port}")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.fifo"]


SUBCOMMANDS = (["convert"], ["loss"], ["formats"], ["bridge"], ["spark-convert"], ["demo"], ["registry", "serve"],
               ["registry", "where"], ["schemas", "register"])


def test_every_subcommand_helps_at_80_columns_with_an_example(cdcformats: Runner) -> None:
    for command in SUBCOMMANDS:
        shown = cdcformats(*command, "--help", env={"COLUMNS": "80"})
        assert shown.returncode == 0, command
        text = shown.stdout.decode()
        assert max(len(line) for line in text.splitlines()) <= 80, command
        assert "Example: cdcformats " + " ".join(command) in " ".join(text.split()), command


def test_every_subcommand_answers_a_wrong_flag_in_one_line(cdcformats: Runner) -> None:
    for command in SUBCOMMANDS:
        ran = cdcformats(*command, "--colour")
        assert ran.returncode == 2, command
        assert ran.error_line() == "Error: No such option '--colour'.", command


def test_the_summary_as_json_for_scripts(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(LINDORM + b"{broken\n")
    ran = cdcformats("convert", "-f", "lindorm", "-t", "debezium-json", "in.jsonl", "out.jsonl", "--errors", "skip",
                     "--summary", "json")
    assert ran.returncode == 0
    summary = json.loads(ran.stderr)
    assert summary == {**summary, "source": "lindorm", "target": "debezium-json", "stopped": False,
                       "messages_read": 2, "messages_decoded": 1, "messages_failed": 1, "events_written": 1,
                       "messages_written": 1, "left_as_it_was": None}
    stopped = cdcformats("convert", "-f", "lindorm", "-t", "debezium-json", "in.jsonl", "out.jsonl", "--summary",
                         "json")
    assert stopped.returncode == 1
    first, error = stopped.stderr.splitlines()
    assert json.loads(first) == {**json.loads(first), "stopped": True, "messages_written": 0,
                                 "left_as_it_was": "out.jsonl"}
    assert error.startswith("Error: lindorm: line 2: not valid JSON")


def test_loss_says_before_a_run_what_a_conversion_can_drop(cdcformats: Runner) -> None:
    """A user asked the command line what cf.loss answers the library (the user trial of issue 30): there was no
    command for it, only --strict's refusals after a run."""
    ran = cdcformats("loss", "-f", "lindorm", "-t", "debezium-json", "--option", 'key_columns=["id"]')
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.decode().splitlines()
    assert lines[:3] == ["op.UPSERT", "cell.type", "cell.version"] and "attributes.lindorm.op" in lines
    as_json = cdcformats("loss", "-f", "lindorm", "-t", "debezium-json", "--option", 'key_columns=["id"]', "--json")
    assert json.loads(as_json.stdout) == lines
    lossless = cdcformats("loss", "-f", "avro", "-t", "protobuf")
    assert lossless.returncode == 0 and lossless.stdout == b""
    assert lossless.stderr.strip() == "avro -> protobuf: nothing is lost"
    misspelt = cdcformats("loss", "-f", "lindorm", "-t", "debezim-json")
    assert misspelt.returncode == 2
    assert "did you mean 'debezium-json'" in misspelt.error_line()
    unconfigured = cdcformats("loss", "-f", "lindorm", "-t", "ots")
    assert unconfigured.returncode == 2
    assert unconfigured.error_line() == "Error: ots: the option primary_key is required: its length says where the " \
                                        "key ends in a row"
