"""Hypothesis strategies for canonical change events, restricted by what a format declares it can carry.

``events(carries)`` reaches every corner of the model that ``carries`` allows (a format's ``Codec.carries``), and
nothing else: restricting a strategy by hand to hide a counterexample is not allowed here; a real limit of a format
belongs in its ``carries`` (and so in ``cf.loss``).
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import strategies as st

from cdcformats.codecs.base import ALL_FEATURES
from cdcformats.model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Op, Source, Table

int64s = st.integers(min_value=INT64_MIN, max_value=INT64_MAX)
# Short names collide often, which is what exercises repeated columns and duplicate attribute names.
names = st.one_of(st.sampled_from(["id", "name", "r_regionkey", "col_a", ""]), st.text(max_size=12))

special_decimals = st.sampled_from([Decimal("NaN"), Decimal("-NaN"), Decimal("sNaN"), Decimal("Infinity"),
                                    Decimal("-Infinity"), Decimal("0"), Decimal("-0"), Decimal("0E-30"),
                                    Decimal("1.10"), Decimal("1E+5")])
# Any finite decimal: sign, up to 40 digits, exponent across the full practical range.
finite_decimals = st.builds(
    lambda sign, digits, exponent: Decimal((sign, tuple(digits), exponent)),
    st.sampled_from([0, 1]), st.lists(st.integers(0, 9), min_size=1, max_size=40), st.integers(-60, 60))

_VALUE_STRATEGIES = {
    "value.null": st.none(),
    "value.bool": st.booleans(),
    "value.int": st.one_of(int64s, st.sampled_from([0, -1, INT64_MIN, INT64_MAX])),
    "value.float": st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                             st.sampled_from([0.0, -0.0, float("nan"), float("inf"), float("-inf"), 5e-324])),
    "value.str": st.text(),
    "value.bytes": st.binary(),
    "value.decimal": st.one_of(special_decimals, finite_decimals),
}


def values(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy:
    """Every kind of value the format carries."""
    return st.one_of(*(strategy for feature, strategy in _VALUE_STRATEGIES.items() if feature in carries))


def cells(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy[Cell]:
    kinds = [CellKind.PUT] + [kind for kind in CellKind if f"cell.kind.{kind.value}" in carries]
    return st.builds(
        Cell,
        name=names,
        value=values(carries),
        type=st.none() | st.sampled_from(["VARCHAR", "BIGINT", "DOUBLE", "DECIMAL", "BINARY", "x"])
        if "cell.type" in carries else st.none(),
        version=st.none() | int64s if "cell.version" in carries else st.none(),
        kind=st.sampled_from(kinds),
    )


def images(carries: frozenset[str] = ALL_FEATURES, max_size: int = 6) -> st.SearchStrategy[tuple[Cell, ...]]:
    unique_by = None if "cell.repeated" in carries else (lambda cell: cell.name)
    return st.lists(cells(carries), max_size=max_size, unique_by=unique_by).map(tuple)


def entries(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy:
    return st.lists(st.tuples(names, values(carries)), max_size=5).map(tuple)


def optional(strategy: st.SearchStrategy, feature: str, carries: frozenset[str]) -> st.SearchStrategy:
    return st.none() | strategy if feature in carries else st.none()


def tables(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy[Table]:
    return st.builds(Table, name=st.text(max_size=20), schema=optional(st.text(max_size=10), "table.schema", carries),
                     catalog=optional(st.text(max_size=10), "table.catalog", carries))


def sources(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy[Source]:
    return st.builds(
        Source,
        system=optional(st.text(max_size=10), "source.system", carries),
        position=entries(carries) if "source.position" in carries else st.just(()),
        commit_time_us=optional(int64s, "source.commit_time", carries),
        capture_time_us=optional(int64s, "source.capture_time", carries),
    )


def events(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy[ChangeEvent]:
    """Canonical events using only the features in ``carries``."""
    ops = [op for op in Op if f"op.{op.value}" in carries]
    return st.builds(
        ChangeEvent,
        op=st.sampled_from(ops),
        table=optional(tables(carries), "table", carries),
        key=images(carries) if "key" in carries else st.just(()),
        before=optional(images(carries), "before", carries),
        after=optional(images(carries), "after", carries),
        source=sources(carries),
        key_only=st.booleans() if "key_only" in carries else st.just(False),
        attributes=entries(carries) if "attributes" in carries else st.just(()),
    )
