"""Change streams the benchmarks share, generated the same way every run."""

from __future__ import annotations

import msgspec


def lindorm_messages(count: int, start: int = 0) -> list[bytes]:
    """Lindorm orders number ``start`` on, ~400 bytes each: puts with typed columns, a second version of one column,
    some deletes."""
    messages = []
    for n in range(start, start + count):
        op = "DeleteColumn" if n % 10 == 9 else "Put"
        messages.append(msgspec.json.encode({
            "op": op, "table": "orders", "ts": str(1700000000000 + n), "keyOnly": "false", "data": [
                {"type": "VARCHAR", "name": "id", "value": f"order-{n:08d}"},
                {"type": "BIGINT", "name": "customer", "value": str(n % 9973)},
                {"type": "DECIMAL", "name": "amount", "value": f"{n % 1000}.{n % 100:02d}"},
                {"type": "VARCHAR", "name": "status", "ts": str(1700000000000 + n), "value": "NEW"},
                {"type": "VARCHAR", "name": "status", "ts": str(1700000000500 + n), "value": "PAID"},
                {"type": "BOOLEAN", "name": "gift", "value": "false"},
                {"type": "VARCHAR", "name": "note", "value": "leave at the door, ring twice"}]}))
    return messages
