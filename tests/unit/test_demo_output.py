"""The demo's tables read at 80 columns and in a pipe: cells wrap, and no word is cut to "…"."""

from __future__ import annotations

import io

from rich.console import Console

from cdcformats.demo import conversion_matrix


def test_the_conversion_matrix_reads_at_80_columns() -> None:
    shown = io.StringIO()
    conversion_matrix(Console(file=shown, width=80))  # a file, as a pipe is: no terminal, no colours
    lines = shown.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in shown.getvalue()
    assert sum("lindorm-su" in line for line in lines) >= 3  # a long format name, folded onto the next line
