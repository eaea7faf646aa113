"""What the tool writes outside the paths it was given: the tests never touch the user's own registry file, and a
conversion that uses the default registry writes the file that ``registry where`` names."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import USER_REGISTRY, USER_REGISTRY_BEFORE, standing

from .conftest import Runner, jsonl

PUT = jsonl('{"op":"Put","table":"orders","ts":"1700000000000","keyOnly":"false","data":['
            '{"type":"VARCHAR","name":"id","value":"o-1"},{"type":"VARCHAR","name":"note","value":null}]}')


def test_the_default_registry_of_a_test_run_is_its_own(cdcformats: Runner, tmp_path: Path) -> None:
    run_registry = Path(os.environ["CDCFORMATS_SCHEMA_REGISTRY"])
    assert run_registry != USER_REGISTRY and not run_registry.is_relative_to(Path.home())
    (tmp_path / "in.jsonl").write_bytes(PUT)
    ran = cdcformats("convert", "-f", "lindorm", "-t", "debezium-avro", "in.jsonl", "out.jsonl", "--option",
                     'key_columns=["id"]')  # no --registry: the default one
    assert ran.returncode == 0, ran.stderr
    assert cdcformats("registry", "where").stdout.decode().strip() == str(run_registry)
    assert run_registry.exists()
    assert standing(USER_REGISTRY) == USER_REGISTRY_BEFORE
