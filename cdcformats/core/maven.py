"""Jars from Maven Central, fetched once into a cache outside the project and reused from there.

Maven resolves the artifacts with their runtime dependencies (``dependency:copy-dependencies`` over a pom written for
the purpose), so the versions are Maven's, as a user's own build would have them. The jars land in a temporary
directory that is renamed into place only once the fetch has succeeded: a fetch that is killed or fails leaves no cache
that looks whole.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

from ..errors import CdcFormatsError


class FetchError(CdcFormatsError):
    """Maven is missing, or could not fetch the jars."""


def cache_root() -> Path:
    """Where cdcformats keeps what it downloads: ``$XDG_CACHE_HOME/cdcformats`` (``~/.cache/cdcformats``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cdcformats"


def _pom(artifacts: Iterable[str]) -> str:
    dependencies = []
    for coordinates in artifacts:
        group, artifact, version = coordinates.split(":")
        dependencies.append(f"<dependency><groupId>{escape(group)}</groupId><artifactId>{escape(artifact)}"
                            f"</artifactId><version>{escape(version)}</version></dependency>")
    return ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            "<groupId>cdcformats</groupId><artifactId>fetch</artifactId><version>1</version>"
            f"<packaging>pom</packaging><dependencies>{''.join(dependencies)}</dependencies></project>")


def jars(directory: Path, artifacts: Iterable[str], *, exclude_groups: Iterable[str] = ()) -> list[Path]:
    """The jars of ``artifacts`` (``group:artifact:version``) and of their runtime dependencies, except those of the
    groups in ``exclude_groups`` (what the JVM that loads them already has), in ``directory``: fetched there with
    Maven the first time, read from there after."""
    if not directory.is_dir():
        _fetch(directory, list(artifacts), list(exclude_groups))
    return sorted(directory.glob("*.jar"))


def first_error(output: str) -> str:
    """The first error Maven reported, without its colour codes and advice lines, or its last line."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in output.splitlines()]
    errors = [line.removeprefix("[ERROR]").strip() for line in lines if line.startswith("[ERROR]")]
    errors = [line for line in errors if line and not line.startswith(("->", "To see", "Re-run", "For more"))]
    found = errors[0] if errors else next((line for line in reversed(lines) if line), "no output")
    return found if len(found) <= 400 else found[:397] + "..."


def _fetch(directory: Path, artifacts: list[str], exclude_groups: list[str]) -> None:
    maven = shutil.which("mvn")
    if maven is None:
        raise FetchError(f"Maven (mvn) is needed once to fetch {', '.join(artifacts)} from Maven Central into "
                         f"{directory}: install it (apt-get install maven)")
    directory.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{directory.name}-", dir=directory.parent) as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(_pom(artifacts))
        fetched = Path(work) / "lib"
        command = [maven, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies", "-DincludeScope=runtime",
                   f"-DoutputDirectory={fetched}"]
        if exclude_groups:
            command.append(f"-DexcludeGroupIds={','.join(exclude_groups)}")
        result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise FetchError(f"could not fetch {', '.join(artifacts)} from Maven Central: "
                             f"{first_error(result.stdout + result.stderr)}")
        try:
            fetched.rename(directory)
        except OSError:  # another process fetched them meanwhile
            if not directory.is_dir():
                raise
