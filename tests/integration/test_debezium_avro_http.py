"""``debezium-avro`` evolving a table over HTTP, in the embedded registry served by ``cdcformats registry serve``:
the same versions, ids and refusals as in a registry file (tests/unit/test_debezium_avro.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.test_debezium_avro import check_evolution

from .test_schema_registry_http import Server


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path / "registry.sqlite")
    yield running
    running.stop()


def test_a_table_evolves_version_by_version_over_http(served: Server) -> None:
    check_evolution(served.url)
