"""The JVM writes Python's repr of text (in strict's refusals and the raw input of dead letters): each character
shown or escaped as Python 3.11, which knows Unicode 14, shows or escapes it, where Java 17 knows Unicode 13."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests import jvm_golden

from .test_jvm_golden import classes  # noqa: F401  (the fixture of the compiled decoders)

CHECK = Path(__file__).resolve().parents[1] / "jvm" / "ReprCheck.java"


def test_the_jvm_shows_each_character_that_python_shows(classes: Path, tmp_path: Path) -> None:  # noqa: F811
    subprocess.run(["javac", "--release", "17", "-nowarn", "-cp", str(classes), "-d", str(tmp_path), str(CHECK)],
                   check=True)
    run = subprocess.run(["java", "-cp", f"{tmp_path}:{jvm_golden.classpath(classes)}", "ReprCheck"],
                         capture_output=True, text=True, timeout=300, check=True)
    shown = run.stdout
    assert len(shown) == 0x110000
    differing = [f"U+{c:04X}" for c in range(0x110000)
                 if (shown[c] == "1") != (chr(c).isprintable() and chr(c) != "\\")]
    assert differing == [], differing[:20]
