"""Layers you can see (issue #30): what a plugin author imports.

The contract module was ``cdcformats.codec``, which ``import cdcformats.codec as contract`` could not reach: the
package's ``codec`` is the function ``cf.codec()``, so the import gave the function. The contract is now
``cdcformats.contract``, and ``cf.codec()`` stays the function.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A plugin author's module, written as the README tells: a format is a subclass of the contract's Codec.
PLUGIN_AUTHOR = """
import types
import cdcformats as cf
import cdcformats.contract as contract
from cdcformats.contract import Codec, KafkaRecord, Option

print(isinstance(contract, types.ModuleType), Codec is cf.Codec, Option is cf.Option, KafkaRecord is cf.KafkaRecord)
print(type(cf.codec("debezium-json")).__name__)
"""


def test_a_plugin_author_imports_the_contract_as_a_module(tmp_path: Path) -> None:
    ran = subprocess.run([sys.executable, "-c", PLUGIN_AUTHOR], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["True True True True", "DebeziumJsonCodec"]
