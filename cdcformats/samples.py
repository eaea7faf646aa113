"""Realistic change streams, generated the same way every run, for the demo: what each source writes for a table
that lives a while (rows inserted, updated several times, columns deleted, rows deleted), not one change per row.
"""

from __future__ import annotations

import msgspec

_encode = msgspec.json.encode
_START_MS = 1_700_000_000_000


def lindorm_orders(count: int) -> list[bytes]:
    """Lindorm Streams messages of an ``orders`` table, four changes per order: the order is written (every column),
    paid (a new version of ``status``), then shipped, or its ``note`` column deleted, or its NEW status version
    deleted; then delivered, or the whole row deleted. Orders of the second half have a new column, ``coupon``, as
    a table gains one after an ALTER TABLE."""
    messages = []
    for n in range(count):
        order, step = divmod(n, 4)
        ts = _START_MS + n * 10
        key = {"type": "VARCHAR", "name": "id", "value": f"order-{order:07d}"}
        if step == 0:
            op, data = "Put", [
                key, {"type": "BIGINT", "name": "customer", "value": str(order % 9973)},
                {"type": "DECIMAL(10,2)", "name": "amount", "value": f"{order % 1000}.{order % 100:02d}"},
                {"type": "VARCHAR", "name": "status", "ts": str(ts), "value": "NEW"},
                {"type": "DOUBLE", "name": "weight_kg", "value": repr(round(0.25 + order % 40 / 8, 3))},
                {"type": "BOOLEAN", "name": "gift", "value": "true" if order % 9 == 0 else "false"},
                {"type": "VARCHAR", "name": "note", "value": "leave at the door"}]
            if order >= count // 8:
                data.append({"type": "VARCHAR", "name": "coupon", "value": f"SAVE{order % 30}"})
        elif step == 1:
            op, data = "Put", [key, {"type": "VARCHAR", "name": "status", "ts": str(ts), "value": "PAID"}]
        elif step == 2 and order % 5 == 0:
            op, data = "DeleteColumn", [key, {"type": "VARCHAR", "name": "note"}]
        elif step == 2 and order % 7 == 0:
            op, data = "Delete", [key, {"type": "VARCHAR", "name": "status", "ts": str(ts - 20)}]
        elif step == 2:
            op, data = "Put", [key, {"type": "VARCHAR", "name": "status", "ts": str(ts), "value": "SHIPPED"}]
        elif order % 10 == 3:
            op, data = "DeleteFamily", [key]
        else:
            op, data = "Put", [key, {"type": "VARCHAR", "name": "status", "ts": str(ts), "value": "DELIVERED"}]
        messages.append(_encode({"op": op, "table": "orders", "ts": str(ts), "keyOnly": "false", "data": data}))
    return messages


_REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
_TABLE_NAME = {"namespace": {"catalog": None, "schema": "tpch", "hash": -1732472540}, "name": "region",
               "hash": 1193131537}


def arcion_region(count: int) -> list[bytes]:
    """Arcion NATIVE messages of ``tpch.region``: the five regions as snapshot rows, then realtime inserts of new
    regions, updates of their comments and deletes, with a binlog cursor that moves forward."""
    messages = [_encode({"r_regionkey": str(key), "r_name": name, "r_comment": "snapshot"})
                for key, name in enumerate(_REGIONS)][:count]
    for n in range(count - len(messages)):
        region, step = divmod(n, 3)
        key = str(len(_REGIONS) + region)
        row = {"r_regionkey": key, "r_name": f"REGION {key}", "r_comment": f"comment {step}"}
        earlier = {**row, "r_comment": f"comment {step - 1}"}
        op_type, before, after = [("I", None, row), ("U", earlier, row), ("D", earlier, None)][step]
        if step == 2 and region % 4 == 0:  # a quarter of the new regions stay
            op_type, before, after = "U", earlier, {**row, "r_comment": "kept"}
        timestamp = 1_677_165_953_000 + n * 1000
        messages.append(_encode({
            "tableName": _TABLE_NAME, "opType": op_type,
            "cursor": {"extractorId": 0, "timestamp": timestamp, "extractionTimestamp": timestamp + 750,
                       "log": "log-bin.000001", "position": 3000 + n * 310, "logSeqNum": 1, "slaveServerId": 1,
                       "v": 2},
            "before": before, "after": after}))
    return messages


def ots_rows(records: int) -> list[tuple]:
    """DataX otsstreamreader rows of a table keyed by (user, device): PutRow records (a DR row, then a U row per
    column), UpdateRow records that write, delete one version (DO) or delete a column (DA), and DeleteRow records
    (a lone DR). Consecutive records always have different keys, which is what grouping without sequence info
    needs."""
    rows: list[tuple] = []
    for n in range(records):
        key = (f"user-{n % 997:04d}", f"device-{n % 13}")
        ts = _START_MS + n * 10
        kind = n % 6
        if kind in (0, 1, 2):
            rows.append((*key, None, None, None, "DR"))
            rows.extend([(*key, "battery", ts, 100 - n % 90, "U"), (*key, "online", ts, n % 3 != 0, "U"),
                         (*key, "firmware", ts, f"1.{n % 7}.0", "U")])
        elif kind == 3:
            rows.extend([(*key, "battery", ts, 50 - n % 40, "U"), (*key, "battery", ts - 10, None, "DO")])
        elif kind == 4:
            rows.append((*key, "firmware", None, None, "DA"))
        else:
            rows.append((*key, None, None, None, "DR"))
    return rows
