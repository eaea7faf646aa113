"""Every example of README.md, run as printed, with its output checked.

The README's fenced blocks are its examples: ```sh blocks run with bash (``-e``: a failing command fails the block),
```python blocks with this interpreter, each in a temporary directory of its section, in order, so that a later
block uses the files an earlier one made; the test makes the files an example needs first (the bundled examples the
text names). A ```text block shows output: it follows the command that prints it, and each of its lines must be a
line of what that block printed (timings aside). A comment that shows a value after a Python expression
(``cf.formats()  # ['aliyun-json', ...]``; ``...`` stands for anything) is checked against the value's repr.

Each test below runs the blocks of its sections (``Section``) and fails if it leaves one of them unrun, and
``test_every_block_is_run`` fails for a block in a section that no test runs: a new example cannot go untested.

Three blocks are checked rather than run: ``make demo`` / ``make test`` (they are what runs this test) must be the
README's first two commands and targets of the Makefile, and the install commands (``make venv``, ``pip install``)
must name a Makefile target, the extras of pyproject.toml, and a virtual environment with ``bin/cdcformats``
(tests/integration/test_wheel.py installs the wheel into a fresh environment).

The services the examples need run here: the Kafka examples against librdkafka's mock cluster, and the streaming
ones against a local Apache Kafka broker (the ``kafka_broker`` fixture), whose address they read from
``BOOTSTRAP_SERVERS``; the registry server on port 8081 as the example starts it (the test is skipped when
the port is taken); Spark on two cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import cdcformats as cf
from cdcformats.registry import ENTRY_POINT_GROUP

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
EXAMPLES = Path(cf.__file__).parent / "examples"
VENV_BIN = Path(sys.executable).parent
TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, from 1
    section: str  # the heading above it, without its #s
    info: str
    text: str

    def __str__(self) -> str:
        return f"README.md line {self.line} ({self.info} block under '{self.section}')"


def readme_blocks() -> list[Block]:
    blocks: list[Block] = []
    section = ""
    opened: tuple[int, str] | None = None  # the line and info string of the fence a block opened with
    body: list[str] = []
    for number, line in enumerate(README.read_text().splitlines(), 1):
        if opened is not None:
            if line.startswith("```"):
                blocks.append(Block(opened[0], section, opened[1], "".join(f"{text}\n" for text in body)))
                opened, body = None, []
            else:
                body.append(line)
        elif line.startswith("```"):
            opened = (number, line[3:].strip())
        elif line.startswith("#"):
            section = line.lstrip("#").strip()
    assert opened is None, f"README.md line {opened[0]}: a fence that is never closed"
    return blocks


BLOCKS = readme_blocks()

# Which test runs the blocks under each heading; test_every_block_is_run holds the README to it.
TESTS = {
    "cdcformats": "test_first_commands_are_make_demo_and_make_test",
    "Install": "test_install_commands_name_what_exists",
    "Converting files: `cdcformats convert`": "test_command_line",
    "Errors, dead letters and `--strict`": "test_command_line",
    "Library": "test_library",
    "What a conversion drops": "test_library",
    "Typed tables": "test_library",
    "Kafka": "test_kafka",
    "Spark": "test_spark",
    "Streaming into a Delta table": "test_streaming",
    "Schema registry": "test_schema_registry",
    "Third-party formats": "test_third_party_entry_point",
}


def normalized(line: str) -> str:
    """A line of output as the README may show it: blanks collapsed, a run's duration and rate left out."""
    line = re.sub(r" in [\d.]+ s, [\d,.]+ events/s", " in … s, … events/s", line)
    return " ".join(line.split())


@dataclass
class Ran:
    status: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return [normalized(line) for line in (self.stdout + "\n" + self.stderr).splitlines() if line.strip()]


class Section:
    """The blocks under some headings, run in order in one directory; every one of them must be run."""

    def __init__(self, directory: Path, *headings: str, env: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.blocks = deque(block for block in BLOCKS if block.section in headings)
        assert self.blocks, f"README.md has no blocks under {headings}"
        self.env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
                    "PYSPARK_PYTHON": sys.executable, **(env or {})}
        self.background: list[int] = []  # process groups an example left running

    def __enter__(self) -> Section:
        return self

    def __exit__(self, *failed: object) -> None:
        for group in self.background:
            try:
                os.killpg(group, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if failed[0] is None:
            assert not self.blocks, f"not run: {', '.join(map(str, self.blocks))}"

    def take(self, info: str) -> Block:
        assert self.blocks, f"no {info} block left"
        block = self.blocks.popleft()
        assert block.info == info, f"{block}: expected a {info} block"
        return block

    def sh(self, status: int = 0, background: bool = False) -> Ran:
        """Run the next sh block with bash -e; check the text block after it, if there is one."""
        block = self.take("sh")
        script = self.directory / f"block-{block.line}.sh"
        script.write_text(block.text)
        out, err = self.directory / f"block-{block.line}.out", self.directory / f"block-{block.line}.err"
        with open(out, "w") as stdout, open(err, "w") as stderr:
            # Files, not pipes: a process the example leaves in the background keeps its output open.
            process = subprocess.Popen(["bash", "-e", script.name], cwd=self.directory, env=self.env, stdout=stdout,
                                       stderr=stderr, start_new_session=True)
            if background:
                self.background.append(process.pid)
            process.wait(TIMEOUT)
        ran = Ran(process.returncode, out.read_text(), err.read_text())
        assert ran.status == status, f"{block} exited {ran.status}:\n{ran.stdout}\n{ran.stderr}"
        self.check_output(ran)
        return ran

    def python(self, *expressions: str) -> dict[str, Any]:
        """Run the next python block and check the values its comments show: ``checked``, the lines checked, and
        ``values``, the reprs of ``expressions`` evaluated after the block."""
        block = self.take("python")
        script = self.directory / f"block-{block.line}.py"
        script.write_text(block.text)
        report = self.directory / f"block-{block.line}.json"
        ran = subprocess.run([sys.executable, "-c", HARNESS, script.name, report.name, *expressions],
                             cwd=self.directory, env=self.env, capture_output=True, text=True, timeout=TIMEOUT)
        assert ran.returncode == 0, f"{block} failed:\n{ran.stdout}\n{ran.stderr}"
        self.check_output(Ran(ran.returncode, ran.stdout, ran.stderr))
        return json.loads(report.read_text())

    def check_output(self, ran: Ran) -> None:
        if self.blocks and self.blocks[0].info == "text":
            block = self.blocks.popleft()
            for line in block.text.splitlines():
                if line.strip():
                    assert normalized(line) in ran.lines, \
                        f"{block}: the example did not print\n{line}\nIt printed:\n{ran.stdout}\n{ran.stderr}"


# Runs a python block statement by statement; an expression statement whose comment reads as a Python value is
# compared with the repr of its value (``...`` in the comment: any text).
HARNESS = r"""
import ast, io, json, re, sys, tokenize
source = open(sys.argv[1]).read()
comments = {token.start[0]: token.string[1:].strip()
            for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.COMMENT}
namespace, checked = {"__name__": "__main__"}, []


def shows_value(comment):
    try:
        ast.parse(comment, mode="eval")
    except SyntaxError:
        return False
    return True


for statement in ast.parse(source).body:
    comment = comments.get(statement.end_lineno)
    if isinstance(statement, ast.Expr) and comment and shows_value(comment):
        value = repr(eval(compile(ast.Expression(statement.value), sys.argv[1], "eval"), namespace))
        if not re.fullmatch(".*?".join(map(re.escape, comment.split("..."))), value, re.S):
            sys.exit(f"line {statement.lineno}: {ast.unparse(statement)}\n  shows {comment}\n  but is {value}")
        checked.append([ast.unparse(statement), value])
    else:
        exec(compile(ast.Module([statement], []), sys.argv[1], "exec"), namespace)
values = {expression: repr(eval(expression, namespace)) for expression in sys.argv[3:]}
json.dump({"checked": checked, "values": values}, open(sys.argv[2], "w"))
"""


def orders(directory: Path) -> None:
    """The file the examples call orders.jsonl: the bundled Lindorm example."""
    shutil.copy(EXAMPLES / "lindorm.jsonl", directory / "orders.jsonl")


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_every_block_is_run() -> None:
    untested = [str(block) for block in BLOCKS if block.section not in TESTS]
    assert not untested, f"no test runs these README blocks; add them to TESTS in {__file__}: {untested}"
    assert {block.info for block in BLOCKS} <= {"sh", "python", "text", "toml"}
    tests = globals()
    assert all(name in tests for name in TESTS.values())


def test_first_commands_are_make_demo_and_make_test() -> None:
    first = BLOCKS[0]
    assert first.section == "cdcformats" and first.info == "sh"
    commands = [line.partition("#")[0].strip() for line in first.text.splitlines()]
    assert commands == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert len([block for block in BLOCKS if block.section == "cdcformats"]) == 1


def test_install_commands_name_what_exists() -> None:
    blocks = deque(block for block in BLOCKS if block.section == "Install")
    from_clone, as_package = blocks.popleft(), blocks.popleft()
    assert not blocks
    assert from_clone.text == "make venv\nsource .venv/bin/activate\n"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^venv:", makefile, re.M) and "VENV := .venv" in makefile
    assert (VENV_BIN / "activate").exists() and (VENV_BIN / "cdcformats").exists()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = set()
    for line in as_package.text.splitlines():
        command = line.partition("#")[0].split()
        assert command[:2] == ["pip", "install"], line
        named |= set(re.findall(r"\w+", re.sub(r"^'?\.", "", command[2]).strip("[]'")))
    assert named == {"kafka", "registry", "spark"} and named <= set(extras)
    table = re.findall(r"^\| `(\w+)` \|", README.read_text().partition("## Install")[2].partition("\n## ")[0], re.M)
    assert set(table) == set(extras), "the extras table names each extra of pyproject.toml"


def test_formats_table_matches_the_formats() -> None:
    described = {entry["name"]: entry for entry in json.loads(subprocess.run(
        [VENV_BIN / "cdcformats", "formats", "--json"], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout)}
    table = README.read_text().partition("### Formats")[2].partition("\n\n")[2].partition("\n\n")[0]
    rows = [row.split(" | ") for row in table.splitlines()[2:]]
    assert sorted(row[0].strip("| `") for row in rows) == sorted(described)
    for row in rows:
        entry = described[row[0].strip("| `")]
        assert row[1] == entry["messages"], row[0]
        options = {option["name"] for option in entry["options"]}
        shown = set(re.findall(r"`(\w+)`", row[-1]))
        if row[-1].startswith("as `ots`"):
            shown = (shown - {"ots"}) | {option["name"] for option in described["ots"]["options"]}
        assert shown == options, row[0]


def test_command_line(tmp_path: Path) -> None:
    with Section(tmp_path, "Converting files: `cdcformats convert`", "Errors, dead letters and `--strict`") as readme:
        readme.sh()
        assert (tmp_path / "region.avro").read_bytes()[:4] == b"Obj\x01"  # an Avro container file
        assert len(lines_of(tmp_path / "region.lindorm.jsonl")) == 4

        listed = readme.sh()
        # the formats the executable knows (this process may hold others that tests registered)
        known = json.loads(subprocess.run([VENV_BIN / "cdcformats", "formats", "--json"], capture_output=True,
                                          check=True).stdout)
        assert all(f"{entry['name']} (" in listed.stdout for entry in known) and len(known) >= 14
        assert '"name": "maxwell-json"' in listed.stdout

        readme.sh()
        assert len(lines_of(tmp_path / "out.jsonl")) == 1

        readme.sh()
        assert len(lines_of(tmp_path / "exact.jsonl")) == 1
        refused = [json.loads(line) for line in lines_of(tmp_path / "refused.jsonl")]
        assert len(refused) == 3
        assert "maxwell-json cannot carry source.position: no place for extractorId" in \
            refused[0]["reason"]
        assert [json.loads(line)["type"] for line in lines_of(tmp_path / "rest.jsonl")] == \
            ["insert", "update", "delete"]


def test_library(tmp_path: Path) -> None:
    orders(tmp_path)
    with Section(tmp_path, "Library", "What a conversion drops", "Typed tables") as readme:
        library = readme.python("len(protobuf)", "type(protobuf[0]).__name__")
        assert library["values"] == {"len(protobuf)": "5", "type(protobuf[0]).__name__": "'bytes'"}
        assert [line for line, _ in library["checked"]] == [
            "cf.formats()", "[event.op.value for event in events]", "(stats.messages_read, stats.events_written)",
            "cf.loss('avro', 'protobuf')"]
        drops = readme.python("len(events)")
        assert drops["values"] == {"len(events)": "5"} and len(drops["checked"]) == 2
        assert len(readme.python()["checked"]) == 3
        ran = readme.sh()
        assert len(lines_of(tmp_path / "typed.jsonl")) == 5
        assert (tmp_path / "registry.sqlite").exists()
        assert [json.loads(line)["op"] for line in ran.stdout.splitlines()] == ["c", "c", "u", "u", "d"]


@pytest.fixture
def bootstrap() -> Iterator[str]:
    from confluent_kafka import Producer

    cluster = Producer({"test.mock.num.brokers": 1, "log_level": 0})
    brokers = cluster.list_topics(timeout=10).brokers.values()
    yield ",".join(f"{broker.host}:{broker.port}" for broker in brokers)
    cluster.flush()


def test_kafka(tmp_path: Path, bootstrap: str) -> None:
    from confluent_kafka import Consumer

    orders(tmp_path)
    with Section(tmp_path, "Kafka", env={"BOOTSTRAP_SERVERS": bootstrap}) as readme:
        sent = readme.python("len(received)")
        assert sent["values"] == {"len(received)": "5"}
        assert sent["checked"] == [["set(received) == set(events)", "True"]]
        readme.sh()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "readme-check", "auto.offset.reset": "earliest",
                         "log_level": 0})
    consumer.subscribe(["orders.dbz"])
    converted: list[bytes | None] = []
    deadline = time.monotonic() + 60
    while len(converted) < 5 and time.monotonic() < deadline:
        converted += [message.value() for message in consumer.consume(5, timeout=1) if message.error() is None]
    consumer.close()
    # in the order of each key, not across keys
    assert sorted(json.loads(value)["op"] for value in converted if value is not None) == ["c", "c", "d", "u", "u"]


def test_spark(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    import pyarrow.parquet as pq

    orders(tmp_path)
    default_registry = tmp_path / "default-registry.sqlite"
    with Section(tmp_path, "Spark", env={"CDCFORMATS_SCHEMA_REGISTRY": str(default_registry)}) as readme:
        assert readme.python()["checked"] == [["[(row.key[0].value.string, row.deleted) for row in state]",
                                               "[('o-1', False), ('o-2', True)]"]]
        readme.sh()
    values = pq.read_table(tmp_path / "out").column("value").to_pylist()
    assert len(values) == 5 and all(value[:1] == b"\x00" for value in values)  # Confluent's magic byte
    assert default_registry.exists()  # where the envelope's schema id comes from


def test_streaming(tmp_path: Path, kafka_broker: Any) -> None:
    pytest.importorskip("pyspark")
    orders(tmp_path)
    with Section(tmp_path, "Streaming into a Delta table",
                 env={"BOOTSTRAP_SERVERS": kafka_broker.bootstrap_servers}) as readme:
        readme.python()
        readme.sh()
        checked = readme.python()["checked"]
    assert checked == [["stream.totals().changes", "5"],
                       ["spark.read.format('delta').load('orders-table-2').select('id', 'status').collect()",
                        "[Row(id='o-1', status='PAID')]"]]
    assert (tmp_path / "orders-table" / "_delta_log").is_dir()


def port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_schema_registry(tmp_path: Path) -> None:
    if port_in_use(8081):
        pytest.skip("port 8081, which the README's registry example serves on, is in use")
    default_registry = tmp_path / "default-registry.sqlite"
    with Section(tmp_path, "Schema registry", env={"CDCFORMATS_SCHEMA_REGISTRY": str(default_registry)}) as readme:
        readme.sh()
        assert not (tmp_path / "shared.sqlite").exists()  # reading never creates it
        assert readme.python()["checked"] == [["register_envelope(registry, 'avro', topic='orders')",
                                               "('orders-value', 1)"]]
        readme.sh(background=True)
        deadline = time.monotonic() + 30
        while not port_in_use(8081):
            assert time.monotonic() < deadline, "registry serve did not listen on 8081"
            time.sleep(0.2)
        readme.sh()
        # payments-value went through the server into the file that held orders-value
        assert readme.python()["checked"] == [["connect('http://127.0.0.1:8081').get_subjects()",
                                               "['orders-value', 'payments-value']"]]
    assert not default_registry.exists()  # connect() opened it and wrote nothing


def test_third_party_entry_point() -> None:
    [block] = [block for block in BLOCKS if block.section == "Third-party formats"]
    assert block.info == "toml"
    entry_points = tomllib.loads(block.text)["project"]["entry-points"]
    assert list(entry_points) == [ENTRY_POINT_GROUP]
    [(name, target)] = entry_points[ENTRY_POINT_GROUP].items()
    assert re.fullmatch(r"[\w.]+:\w+", target)
