"""Lint and type checks are part of the tests: ``ruff check`` and ``mypy``, each as configured in pyproject.toml
(``[tool.ruff]``, ``[tool.mypy]``), run on the whole repository and required to report nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # tests/unit/<this file> -> the repository root, where pyproject.toml is


def run_tool(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


def report(result: subprocess.CompletedProcess[str]) -> str:
    return f"{' '.join(map(str, result.args[2:]))} exited {result.returncode}:\n{result.stdout}{result.stderr}"


def test_ruff_reports_nothing() -> None:
    result = run_tool("ruff", "check", ".")
    assert result.returncode == 0, report(result)


@pytest.mark.slow  # about 20 s without mypy's cache (a fresh clone), under a second with it
def test_mypy_reports_nothing() -> None:
    result = run_tool("mypy")  # the packages and options of [tool.mypy]
    assert result.returncode == 0, report(result)
