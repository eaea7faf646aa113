"""The canonical model: exact equality, validation, and a deterministic event id."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import pytest
from msgspec.structs import replace

from cdcformats import Cell, CellKind, ChangeEvent, Op, Source, Struct, Table


@pytest.mark.parametrize("left, right", [
    (True, 1), (False, 0), (1, 1.0), (0.0, -0.0), (Decimal("1.10"), Decimal("1.1")), (Decimal("1"), 1),
    ("1", 1), (b"a", "a"), (None, ""), (Decimal("NaN"), float("nan")),
    ((1,), (1.0,)), ((), Struct()), (Struct((("a", 1), ("b", 2))), Struct((("b", 2), ("a", 1)))),
    (Struct((("a", (True,)),)), Struct((("a", (1,)),))),
])
def test_values_that_python_confuses_are_different_values(left: object, right: object) -> None:
    assert Cell("c", left) != Cell("c", right)
    assert ChangeEvent(Op.INSERT, after=(Cell("c", left),)) != ChangeEvent(Op.INSERT, after=(Cell("c", right),))


def test_nan_equals_nan_whatever_its_payload() -> None:
    import struct
    payload_nan = struct.unpack(">d", bytes.fromhex("7ff8000000000001"))[0]
    assert Cell("c", float("nan")) == Cell("c", payload_nan)
    assert Cell("c", Decimal("NaN")) == Cell("c", Decimal("NaN"))
    assert hash(Cell("c", float("nan"))) == hash(Cell("c", payload_nan))


def test_images_keep_order_and_repeated_columns() -> None:
    a1, a2 = Cell("a", "v1", version=1), Cell("a", "v2", version=2)
    assert ChangeEvent(Op.UPSERT, after=(a1, a2)) != ChangeEvent(Op.UPSERT, after=(a2, a1))
    assert ChangeEvent(Op.UPSERT, after=(a1, a2)).after == (a1, a2)


def test_a_struct_keeps_its_fields_in_order_and_names_each_once() -> None:
    point = Struct((("x", 1.0), ("y", (2, None)), ("wkb", b"\x01")))
    assert [name for name, _ in point.fields] == ["x", "y", "wkb"]
    assert point.get("y") == (2, None) and point.get("srid") is None
    assert Cell("c", point) == Cell("c", Struct([("x", 1.0), ("y", (2, None)), ("wkb", b"\x01")]))
    assert len({Cell("c", point), Cell("c", point)}) == 1


def test_absent_image_is_not_an_empty_image() -> None:
    assert ChangeEvent(Op.DELETE, after=None) != ChangeEvent(Op.DELETE, after=())


def test_lists_become_tuples_and_events_are_immutable() -> None:
    event = ChangeEvent(Op.INSERT, key=[Cell("id", 1)], after=[Cell("id", 1)], attributes=[("x", 1)])
    assert event.key == (Cell("id", 1),) and event.attributes == (("x", 1),)
    with pytest.raises(AttributeError):
        event.op = Op.DELETE  # type: ignore[misc]
    same = ChangeEvent(Op.INSERT, key=(Cell("id", 1),), after=(Cell("id", 1),), attributes=[("x", 1)])
    assert len({event, same}) == 1


@pytest.mark.parametrize("build, message", [
    (lambda: Cell("c", 2**63), "outside the signed 64-bit range"),
    (lambda: Cell("c", [1]), "list is not a change-event value"),
    (lambda: Cell("c", 1, version=1.5), "cell 'c' version: expected an int"),
    (lambda: Cell(1), "cell name: expected a str"),
    (lambda: Cell("c", kind="PUT"), "expected a CellKind"),
    (lambda: ChangeEvent("INSERT"), "op: expected an Op"),
    (lambda: ChangeEvent(Op.INSERT, after=[("c", 1)]), r"after\[0\]: expected a Cell"),
    (lambda: ChangeEvent(Op.INSERT, key_only=1), "key_only: expected a bool"),
    (lambda: Source(position=[("p", object())]), "source position 'p': object is not a change-event value"),
    (lambda: Table(None), "table name: expected a str"),
    (lambda: Cell("c", [1]), "cell 'c' value: list is not a change-event value"),
    (lambda: Cell("c", (1, (2, 2**64))), r"cell 'c' value\[1\]\[1\]: integer 18446744073709551616 is outside"),
    (lambda: Cell("c", Struct((("a", 1), ("a", 2)))), "struct field 'a' twice"),
    (lambda: Struct((("a", object()),)), "struct field 'a': object is not a change-event value"),
    (lambda: ChangeEvent(Op.INSERT, key=None), "not iterable"),
    (lambda: ChangeEvent(Op.INSERT, attributes=[("a", 2**64)]), "attributes 'a': integer 18446744073709551616"),
    (lambda: Source(position=[("p", 1, 2)]), "too many values to unpack"),
    (lambda: Cell("c", type=7), "cell 'c' type: expected a str"),
    (lambda: replace(SAMPLE, key=[("c", 1)]), r"key\[0\]: expected a Cell"),
    (lambda: replace(SAMPLE.after[0], value=2**63), "outside the signed 64-bit range"),
])
def test_bad_values_are_refused_where_they_are_built(build, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        build()


def test_not_equal_is_the_inverse_of_equal() -> None:
    """msgspec's own != compares identity for a Struct with equality of its own: the model defines both."""
    for left, right in ((Cell("a", 1), Cell("a", 1)), (Source("s", (("p", 1.0),)), Source("s", (("p", 1.0),))),
                        (SAMPLE, replace(SAMPLE))):
        assert left == right and not left != right
    for left, right in ((Cell("a", 1), Cell("a", True)), (SAMPLE, replace(SAMPLE, key_only=True))):
        assert left != right and not left == right


SAMPLE = ChangeEvent(
    op=Op.UPDATE,
    table=Table("region", "tpch"),
    key=(Cell("r_regionkey", "2"),),
    before=(Cell("r_regionkey", "2"), Cell("r_comment", "Test_Replication")),
    after=(Cell("r_regionkey", "2"), Cell("r_comment", "Testing_Replication"),
           Cell("price", Decimal("1.10"), "DECIMAL"), Cell("gone", kind=CellKind.DELETE_ALL_VERSIONS)),
    source=Source("arcion", (("log", "log-bin.000001"), ("position", 3620)), 1677166633000000),
    attributes=(("arcion.table_hash", 1193131537),),
)


def test_event_id_is_fixed_by_content() -> None:
    # A golden value: if this changes, every stored id (dedup state in users' jobs) changes with it.
    assert SAMPLE.event_id == "5bad97c99c83a0e77d1d81ca59437d67"


def test_event_id_does_not_depend_on_the_hash_seed() -> None:
    code = ("from tests.unit.test_model import SAMPLE; print(SAMPLE.event_id)")
    ids = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip() for seed in ("1", "2", "random")}
    assert ids == {SAMPLE.event_id}


def test_event_id_changes_with_any_field() -> None:
    variants = [
        replace(SAMPLE, op=Op.UPSERT),
        replace(SAMPLE, table=Table("region", "tpch", "")),
        replace(SAMPLE, key=(Cell("r_regionkey", 2),)),
        replace(SAMPLE, before=None),
        replace(SAMPLE, after=SAMPLE.after[:-1]),
        replace(SAMPLE, source=Source("arcion", (("log", "log-bin.000001"), ("position", 3621)))),
        replace(SAMPLE, key_only=True),
        replace(SAMPLE, attributes=()),
    ]
    assert len({SAMPLE.event_id, *(variant.event_id for variant in variants)}) == len(variants) + 1
