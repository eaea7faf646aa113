"""The product used as a user uses it: the real ``cdcformats`` executable, run in a temporary directory on files
written by hand in the shapes real producers send.

Each scenario here was first a problem found by trying the product; it failed before its fix. The ``cdcformats``
fixture runs the executable with the environment the tests set (a registry file of this test run, never the user's),
plus whatever a scenario adds.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

CDCFORMATS = str(Path(sys.executable).parent / "cdcformats")


@dataclass
class Ran:
    """What a run of the executable did."""

    returncode: int
    stdout: bytes
    stderr: str

    def error_line(self) -> str:
        """The one "Error: ..." line of a failed run; a traceback or a second error line fails the scenario."""
        assert "Traceback" not in self.stderr, self.stderr
        errors = [line for line in self.stderr.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1, self.stderr
        return errors[0]


Runner = Callable[..., Ran]


@pytest.fixture
def cdcformats(tmp_path: Path) -> Runner:
    """``cdcformats(*arguments, stdin=b"..." or a file, env={...}, timeout=...)`` runs the executable in
    ``tmp_path``."""

    def run(*arguments: str, stdin: bytes | int | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> Ran:
        given = {"input": stdin} if isinstance(stdin, bytes) else {"stdin": subprocess.DEVNULL if stdin is None
                                                                           else stdin}
        result = subprocess.run([CDCFORMATS, *arguments], cwd=tmp_path, capture_output=True, timeout=timeout,
                                env={**os.environ, **(env or {})}, **given)  # type: ignore[call-overload]
        return Ran(result.returncode, result.stdout, result.stderr.decode("utf-8", "replace"))

    return run


def read_terminal(terminal: int) -> bytes:
    """Everything shown on a pseudo-terminal until every process writing to it has closed it."""
    shown = b""
    with contextlib.suppress(OSError):  # the terminal reads EIO once the process has closed it
        while chunk := os.read(terminal, 65536):
            shown += chunk
    os.close(terminal)
    return shown


def jsonl(*lines: str) -> bytes:
    """Messages written by hand, one JSON document a line."""
    return "".join(line.strip() + "\n" for line in lines).encode()
