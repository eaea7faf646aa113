"""``cf.loss(source, target)`` lists, before any data flows, everything a conversion then really drops: also the
features the target carries in some forms only (Canal writes every value as text, and has a place for a position's
``id`` and ``gtid`` only), which it used to leave out, listing only what the target does not carry at all."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .conftest import Runner, jsonl

# A row as Maxwell writes it: its transaction's xid and commit flag beside the binlog time, a numeric key.
MAXWELL_INSERT = jsonl('{"database": "shop", "table": "orders", "type": "insert", "ts": 1700000000, "xid": 8249, '
                       '"commit": true, "data": {"id": 1, "status": "NEW", "total": 12.5}, '
                       '"primary_key_columns": ["id"]}')


def declared_loss(tmp_path: Path, source: str, target: str) -> list[str]:
    """What ``cf.loss`` answers, asked as a user asks it: in a Python process of its own."""
    script = f"import json, cdcformats as cf; print(json.dumps(cf.loss({source!r}, {target!r})))"
    ran = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         check=True)
    return json.loads(ran.stdout)


def test_loss_lists_what_converting_maxwell_to_canal_drops(cdcformats: Runner, tmp_path: Path) -> None:
    (tmp_path / "orders.jsonl").write_bytes(MAXWELL_INSERT)
    lost = declared_loss(tmp_path, "maxwell-json", "canal-json")

    # Under --strict the conversion refuses the row, naming the first thing Canal would drop...
    strict = cdcformats("convert", "-f", "maxwell-json", "-t", "canal-json", "--strict", "orders.jsonl")
    assert strict.returncode == 1 and "1 refused" in strict.stderr
    refused = re.search(r"canal-json cannot carry (\S+):", strict.error_line())
    assert refused is not None, strict.stderr
    assert refused.group(1) == "value.int" and refused.group(1) in lost, lost

    # ...and without it the row is written with its numbers as text and without xid and commit, which Canal has no
    # field for: each of these drops was declared before the conversion ran.
    plain = cdcformats("convert", "-f", "maxwell-json", "-t", "canal-json", "orders.jsonl")
    assert plain.returncode == 0 and "1 written" in plain.stderr, plain.stderr
    written = json.loads(plain.stdout)
    assert written["data"] == [{"id": "1", "status": "NEW", "total": "12.5"}]
    assert "xid" not in written and "commit" not in written and written.get("id") is None
    assert {"value.int", "value.float", "source.position"} <= set(lost), lost


def test_loss_of_a_format_to_itself_lists_only_what_it_really_rewrites(tmp_path: Path) -> None:
    # Lindorm writes every value as text, and reads a JSON number as it is: a message holding one is rewritten.
    assert declared_loss(tmp_path, "lindorm", "lindorm") == ["value.bool", "value.int", "value.float"]
    # A Lindorm row holds its key columns: Debezium writes its before and after images as they are.
    lindorm_to_debezium = declared_loss(tmp_path, "lindorm", "debezium-json")
    assert "before" not in lindorm_to_debezium and "after" not in lindorm_to_debezium
    assert declared_loss(tmp_path, "debezium-json", "debezium-json") == []


# Lindorm's change stream: a Put of an order's status, then one that names the key column twice, typed once (two
# entries of one column, as a producer that adds the key to a row already holding it sends them).
LINDORM_KEY_TWICE = [
    '{"op":"Put","table":"orders","ts":"1700000000000","data":[{"type":"VARCHAR","name":"status","ts":"1700000000000",'
    '"value":"NEW"}]}',
    '{"op":"Put","table":"orders","ts":"1700000001000","data":[{"type":"VARCHAR","name":"id","value":"o-1"},'
    '{"type":"VARCHAR","name":"status","ts":"1700000000000","value":"NEW"},{"name":"id","value":"o-1"}]}']

WHAT_DEBEZIUM_AVRO_DROPS = """
import json, sys, cdcformats as cf
target = cf.codec("debezium-avro", schema_registry=sys.argv[1])
dropped = []
for event in cf.codec("lindorm").decode(line.encode() for line in json.loads(sys.stdin.read())):
    dropped += [loss.feature for loss in target.dropped(event)]
    list(target.encode([event]))  # the table's schema as writing it leaves it, for the next change
print(json.dumps({"dropped": dropped, "declared": cf.loss("lindorm", "debezium-avro")}))
"""


def test_a_column_named_twice_drops_only_what_loss_declared(tmp_path: Path) -> None:
    """debezium-avro writes a table's row in its schema's order, keeping the first cell of a column: the second Put's
    row loses its second ``id`` and its order. Its drops were told as the first ``id`` taken away and the second
    retyped VARCHAR, a ``cell.type`` that ``cf.loss`` did not list."""
    ran = subprocess.run([sys.executable, "-c", WHAT_DEBEZIUM_AVRO_DROPS, str(tmp_path / "registry.sqlite")],
                         input=json.dumps(LINDORM_KEY_TWICE), cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert "image.columns" in answer["dropped"]
    assert set(answer["dropped"]) <= set(answer["declared"]), answer
