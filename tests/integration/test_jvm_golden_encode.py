"""The JVM encoders against their golden files, without Spark: ``tests/jvm/EncodeGoldenCheck.java`` compiled with the
decoders' and encoders' classes alone (``cdcformats/jvm/decoders`` and ``cdcformats/jvm/encoders``, no other class
path) and run on every file; any difference fails with the file and line it is at.
``tests/unit/test_jvm_golden_encode_files.py`` writes the same events through the Python codecs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import jvm_golden_encode

ROOT = Path(__file__).resolve().parents[2]
JVM = ROOT / "cdcformats" / "jvm"
ENCODERS = JVM / "encoders"
CHECK = ROOT / "tests" / "jvm" / "EncodeGoldenCheck.java"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")]


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("golden-encode-classes")
    sources = sorted(str(path) for folder in ("decoders", "encoders") for path in (JVM / folder).glob("*.java"))
    subprocess.run(["javac", "--release", "17", "-nowarn", "-encoding", "UTF-8", "-d", str(built), *sources,
                    str(CHECK)], check=True)
    return built


def check(classes: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["java", "-cp", str(classes), "EncodeGoldenCheck", *map(str, files)], capture_output=True,
                          text=True, timeout=120)


def test_the_encoders_need_no_spark_class() -> None:
    sources = list(ENCODERS.glob("*.java"))
    assert sources
    for path in sources:
        assert "org.apache.spark" not in path.read_text(encoding="utf-8"), path.name


def test_the_java_encoders_write_each_golden_event_as_the_file_says(classes: Path) -> None:
    files = sorted(jvm_golden_encode.GOLDEN.glob("*.jsonl"))
    assert len(files) == len(jvm_golden_encode.encoder_formats())
    run = check(classes, *files)
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in files)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == f"{lines} events checked, 0 differences"


def test_a_difference_fails_the_run_naming_its_file_and_line(classes: Path, tmp_path: Path) -> None:
    lines = (jvm_golden_encode.GOLDEN / "debezium-json.jsonl").read_text(encoding="utf-8").splitlines()
    message = next(index for index, line in enumerate(lines) if '"message":' in line and '\\"op\\":\\"u\\"' in line)
    error = next(index for index, line in enumerate(lines) if '"error":' in line)
    lines[message] = lines[message].replace('\\"op\\":\\"u\\"', '\\"op\\":\\"c\\"', 1)
    lines[error] = lines[error].replace('"error":"debezium-json: field key: ', '"error":"debezium-json: ', 1)
    changed = tmp_path / "debezium-json.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = check(classes, changed)
    assert run.returncode == 1
    assert [line.split(" (")[0] for line in run.stdout.splitlines()[:-1]] == [
        f"{changed}:{number + 1}" for number in sorted((message, error))]
    assert run.stdout.splitlines()[-1] == f"{len(lines)} events checked, 2 differences"
