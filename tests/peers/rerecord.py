"""Recording again, for the integration tests that compare a new recording with the committed one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def record_into(script: str, into: Path, missing: str | None) -> None:
    """Run the recording ``script`` (a module of tests.peers) into ``into``. Where ``missing`` says what the machine
    lacks, the test is skipped when run by hand, and fails under ``make``, which says where the harnesses are."""
    if missing:
        if "CDCFORMATS_PEERS" in os.environ:
            pytest.fail(missing)
        pytest.skip(missing)
    done = subprocess.run([sys.executable, "-m", script, "--into", str(into)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
