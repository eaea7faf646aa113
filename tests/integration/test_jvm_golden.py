"""The JVM decoders against their golden files, without Spark: ``tests/jvm/GoldenCheck.java`` compiled with the
decoders alone (``cdcformats/jvm/decoders``, with PySpark's jars for Apache Avro) and run on every file; any
difference fails with the file and line it is at. ``tests/unit/test_jvm_golden_files.py`` reads the same files
through the Python codecs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import jvm_golden

ROOT = Path(__file__).resolve().parents[2]
DECODERS = ROOT / "cdcformats" / "jvm" / "decoders"
CHECK = ROOT / "tests" / "jvm" / "GoldenCheck.java"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")]


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("golden-classes")
    subprocess.run(["javac", "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", jvm_golden.pyspark_jars(), "-d",
                    str(built), *sorted(str(path) for path in DECODERS.glob("*.java")), str(CHECK)], check=True)
    return built


def check(classes: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["java", "-cp", f"{classes}{os.pathsep}{jvm_golden.pyspark_jars()}", "GoldenCheck",
                           *map(str, files)], capture_output=True, text=True, timeout=300)


def test_the_decoders_need_no_spark_class() -> None:
    for path in DECODERS.glob("*.java"):
        assert "org.apache.spark" not in path.read_text(encoding="utf-8"), path.name


def test_the_java_decoders_decode_each_golden_message_as_the_file_says(classes: Path) -> None:
    files = sorted(jvm_golden.GOLDEN.glob("*.jsonl"))
    assert len(files) == len(jvm_golden.jvm_formats()) + len(jvm_golden.record_formats())
    run = check(classes, *files)
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in files)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == f"{lines} messages checked, 0 differences"


def test_a_difference_fails_the_run_naming_its_file_and_line(classes: Path, tmp_path: Path) -> None:
    lines = (jvm_golden.GOLDEN / "lindorm.jsonl").read_text(encoding="utf-8").splitlines()
    event = next(index for index, line in enumerate(lines) if '"event":' in line)
    error = next(index for index, line in enumerate(lines) if '"error":' in line)
    lines[event] = lines[event].replace('"name":"orders"', '"name":"invoices"', 1)
    lines[error] = lines[error].replace('"error":"lindorm: ', '"error":"lindorm: field op: ', 1)
    changed = tmp_path / "lindorm.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = check(classes, changed)
    assert run.returncode == 1
    assert [line.split(" (")[0] for line in run.stdout.splitlines()[:-1]] == [
        f"{changed}:{number + 1}" for number in sorted((event, error))]
    assert run.stdout.splitlines()[-1] == f"{len(lines)} messages checked, 2 differences"
