"""A wheel built from the repository, installed into a new virtual environment, carries its schemas and its JVM
decoders, and works."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent('''
    import cdcformats as cf
    from decimal import Decimal
    event = cf.ChangeEvent(cf.Op.UPDATE, cf.Table("region", "tpch"), key=(cf.Cell("id", 1),),
                           before=(cf.Cell("v", Decimal("1.10")),), after=(cf.Cell("v", -0.0),))
    for name in ("avro", "protobuf"):
        codec = cf.codec(name)
        assert codec.decode_message(codec.encode_event(event)) == event, name
    assert "site-packages" in cf.__file__, cf.__file__
    print(" ".join(cf.formats()))
''')


@pytest.mark.slow
def test_wheel_installs_and_round_trips_and_the_command_line_needs_no_spark(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", tmp_path / "dist",
                    str(REPO)], check=True, cwd=tmp_path)
    [wheel] = (tmp_path / "dist").glob("cdcformats-*.whl")
    # The JVM decoders, compiled by the build (setup.py, make jar), travel in the wheel.
    assert "cdcformats/spark/jvm/cdcformats.jar" in zipfile.ZipFile(wheel).namelist()
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    # the package and its own dependencies, no extra: what `pip install cdcformats` gives
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheel)], check=True, cwd=tmp_path)
    result = subprocess.run([python, "-c", SCRIPT], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {"avro", "protobuf"} <= set(result.stdout.split())
    assert subprocess.run([python, "-c", "import pyspark"], capture_output=True).returncode == 1
    (tmp_path / "in.jsonl").write_text('{"op":"Put","table":"t","data":[{"name":"id","value":"1"}]}\n')
    converted = subprocess.run([tmp_path / "venv" / "bin" / "cdcformats", "convert", "-f", "lindorm", "-t",
                                "debezium-json", "in.jsonl"], capture_output=True, text=True, cwd=tmp_path)
    assert converted.returncode == 0, converted.stderr
    assert '"after":{"id":"1"}' in converted.stdout


@pytest.mark.slow
def test_a_source_build_without_spark_or_a_jar_installs_and_says_so(tmp_path: Path) -> None:
    # a clone (no jar built yet) built by pip in isolation, which has no PySpark
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                ".hypothesis", ".pytest_cache", "cdcformats.jar"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "--wheel-dir",
                            tmp_path / "dist", str(source)], capture_output=True, text=True, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("cdcformats-*.whl")
    assert "cdcformats/spark/jvm/cdcformats.jar" not in zipfile.ZipFile(wheel).namelist()
    assert (built.stdout + built.stderr).count("cdc_decode will run as an Arrow UDF only") == 1
