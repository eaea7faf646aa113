"""Jars fetched with Maven into a cache (``cdcformats.core.maven``): once, whole or not at all, with one-line errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cdcformats.core import maven

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")]


def test_jars_are_fetched_once_and_then_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = tmp_path / "cache" / "slf4j"
    first = maven.jars(directory, ["org.slf4j:slf4j-api:2.0.17"])
    assert [path.name for path in first] == ["slf4j-api-2.0.17.jar"]
    monkeypatch.setenv("PATH", str(tmp_path / "no-maven-here"))  # a second call must not need Maven
    assert maven.jars(directory, ["org.slf4j:slf4j-api:2.0.17"]) == first
    assert [path.name for path in directory.parent.iterdir()] == ["slf4j"]  # no work directory left beside it


def test_dependencies_the_loading_jvm_has_are_left_out(tmp_path: Path) -> None:
    fetched = maven.jars(tmp_path / "impl", ["org.apache.logging.log4j:log4j-slf4j2-impl:2.25.5"],
                         exclude_groups=["org.slf4j"])
    names = {path.name for path in fetched}
    assert "log4j-slf4j2-impl-2.25.5.jar" in names and not any(name.startswith("slf4j-") for name in names)


def test_an_artifact_maven_cannot_find_is_one_line_and_leaves_no_cache(tmp_path: Path) -> None:
    directory = tmp_path / "nothing"
    with pytest.raises(maven.FetchError) as raised:
        maven.jars(directory, ["org.cdcformats.example:does-not-exist:0.0.1"])
    message = str(raised.value)
    assert message.startswith("could not fetch org.cdcformats.example:does-not-exist:0.0.1 from Maven Central: ")
    assert "\n" not in message and "does-not-exist" in message.partition(": ")[2]
    assert not directory.exists() and list(tmp_path.iterdir()) == []


def test_without_maven_the_error_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(maven.FetchError, match=r"Maven \(mvn\) is needed once .* install it"):
        maven.jars(tmp_path / "jars", ["org.slf4j:slf4j-api:2.0.17"])
