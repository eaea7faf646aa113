"""Change streams the benchmarks share, generated the same way every run."""

from __future__ import annotations

import msgspec

import cdcformats


def lindorm_messages(count: int, start: int = 0) -> list[bytes]:
    """Lindorm orders number ``start`` on, ~500 bytes each: puts with typed columns, a second version of one column,
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


def arcion_messages(count: int, start: int = 0) -> list[bytes]:
    """Arcion realtime messages for TPC-H orders number ``start`` on, ~400 bytes each: inserts, updates with both
    images, some deletes, every value a string as Arcion sends them, with a MySQL binlog cursor."""
    messages = []
    for n in range(start, start + count):
        op_type = "D" if n % 10 == 9 else "U" if n % 10 >= 6 else "I"
        row = {"o_orderkey": str(n), "o_custkey": str(n % 9973), "o_orderstatus": "O",
               "o_totalprice": f"{n % 100000}.{n % 100:02d}"}
        changed = {**row, "o_orderstatus": "F"}
        before, after = {"I": (None, row), "U": (row, changed), "D": (row, None)}[op_type]
        messages.append(msgspec.json.encode({
            "tableName": {"namespace": {"catalog": None, "schema": "tpch", "hash": -1732472540},
                          "name": "orders", "hash": 1193131537},
            "opType": op_type,
            "cursor": {"extractorId": 0, "timestamp": 1700000000000 + n, "extractionTimestamp": 1700000000500 + n,
                       "log": "log-bin.000001", "position": 4 + 400 * n, "logSeqNum": 1, "slaveServerId": 1, "v": 2},
            "before": before, "after": after}))
    return messages


def debezium_messages(count: int, start: int = 0) -> list[bytes]:
    """Debezium MySQL change events (no schema wrapper) for orders number ``start`` on, ~400 bytes each: creates,
    updates with both images, some deletes; values are strings, integers, a float, a boolean and a null."""
    messages = []
    for n in range(start, start + count):
        op = "d" if n % 10 == 9 else "u" if n % 10 >= 6 else "c"
        row = {"id": n, "customer": n % 9973, "amount": n % 1000 + 0.25, "status": "NEW", "gift": n % 2 == 0,
               "note": None}
        changed = {**row, "status": "PAID"}
        before, after = {"c": (None, row), "u": (row, changed), "d": (row, None)}[op]
        messages.append(msgspec.json.encode({
            "before": before, "after": after,
            "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "dbserver1",
                       "ts_ms": 1700000000000 + n, "snapshot": "false", "db": "inventory", "table": "orders",
                       "server_id": 223344, "file": "mysql-bin.000003", "pos": 4 + 400 * n, "row": 0, "thread": 7},
            "op": op, "ts_ms": 1700000000500 + n, "transaction": None}))
    return messages


def aliyun_messages(count: int, start: int = 0) -> list[bytes]:
    """The changes of ``debezium_messages`` as Aliyun DTS writes them (aliyun-json, ~600 bytes each), converted by
    this library: a format that Spark decodes with the Arrow UDF, having no JVM decoder."""
    debezium, aliyun = cdcformats.codec("debezium-json"), cdcformats.codec("aliyun-json")
    return list(aliyun.encode(debezium.decode(debezium_messages(count, start))))
