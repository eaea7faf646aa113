"""A wheel built from the repository, installed into a new virtual environment, carries its schemas and its JVM
decoders, and works."""

from __future__ import annotations

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
def test_wheel_installs_and_round_trips(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", tmp_path / "dist",
                    str(REPO)], check=True, cwd=tmp_path)
    [wheel] = (tmp_path / "dist").glob("cdcformats-*.whl")
    # The JVM decoders, compiled by the build (setup.py), travel in the wheel.
    assert "cdcformats/spark/jvm/cdcformats.jar" in zipfile.ZipFile(wheel).namelist()
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheel)], check=True, cwd=tmp_path)
    result = subprocess.run([python, "-c", SCRIPT], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {"avro", "protobuf"} <= set(result.stdout.split())
