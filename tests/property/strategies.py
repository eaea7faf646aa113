"""Hypothesis strategies for canonical change events, restricted by what a format declares it can carry.

``events(carries)`` reaches every corner of the model that ``carries`` allows (a format's ``Codec.carries``), and
nothing else: restricting a strategy by hand to hide a counterexample is not allowed here; a real limit of a format
belongs in its ``carries`` (and so in ``cf.loss``).
"""

from __future__ import annotations

import functools
from decimal import Decimal

from hypothesis import strategies as st
from msgspec.structs import replace

from cdcformats.contract import ABSENT, ALL_FEATURES, NONEMPTY, OPTIONAL, Codec, Shape
from cdcformats.core import typed_text
from cdcformats.losses import refused, without
from cdcformats.model import INT64_MAX, INT64_MIN, Cell, CellKind, ChangeEvent, Op, Source, Struct, Table

int64s = st.integers(min_value=INT64_MIN, max_value=INT64_MAX)
# Short names collide often, which is what exercises repeated columns and duplicate attribute names.
names = st.one_of(st.sampled_from(["id", "name", "r_regionkey", "col_a", ""]), st.text(max_size=12))

# With exponents near the 32-bit limit of a scale (Connect's, Java's BigDecimal's), of several digits, and at the limits
# of Python's own (libmpdec's).
special_decimals = st.sampled_from([Decimal("NaN"), Decimal("-NaN"), Decimal("sNaN"), Decimal("Infinity"),
                                    Decimal("-Infinity"), Decimal("0"), Decimal("-0"), Decimal("0E-30"),
                                    Decimal("1.10"), Decimal("1E+5"), Decimal("1.23E+2147483647"),
                                    Decimal("-4.56E-2147483640"), Decimal("1.5E+2147483648"),
                                    Decimal("1E+999999999999999999"), Decimal("-0E-1999999999999999997")])
# Any finite decimal: sign, up to 40 digits, exponent across the full practical range.
finite_decimals = st.builds(
    lambda sign, digits, exponent: Decimal((sign, tuple(digits), exponent)),
    st.sampled_from([0, 1]), st.lists(st.integers(0, 9), min_size=1, max_size=40), st.integers(-60, 60))

finite_floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, -0.0, 5e-324]))
nonfinite_floats = st.sampled_from([float("nan"), float("inf"), float("-inf")])

_VALUE_STRATEGIES = {
    "value.null": st.none(),
    "value.bool": st.booleans(),
    "value.int": st.one_of(int64s, st.sampled_from([0, -1, INT64_MIN, INT64_MAX])),
    "value.float": finite_floats,
    "value.str": st.text(),
    "value.bytes": st.binary(),
    "value.decimal": st.one_of(special_decimals, finite_decimals),
}
_KIND_FEATURE = {int: "value.int", float: "value.float", bool: "value.bool", Decimal: "value.decimal"}


def _scalars(carries: frozenset[str]) -> st.SearchStrategy:
    strategies = [strategy for feature, strategy in _VALUE_STRATEGIES.items() if feature in carries]
    if "value.float" in carries and "value.float_nonfinite" in carries:
        strategies.append(nonfinite_floats)
    return st.one_of(*strategies)


_JSON_SCALARS = frozenset({"value.null", "value.bool", "value.int", "value.float", "value.str"})


def nested_values(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy:
    """Arrays and Structs, nested, of the scalars the format carries in them: JSON's, or every kind."""
    leaves = _scalars(carries if "value.nested_non_json" in carries else carries & _JSON_SCALARS)

    def containers(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.lists(children, max_size=3).map(tuple) | st.lists(
            st.tuples(names, children), max_size=3, unique_by=lambda field: field[0]).map(lambda f: Struct(tuple(f)))

    return containers(st.recursive(leaves, containers, max_leaves=6))


def values(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy:
    """Every kind of value the format carries."""
    scalars = _scalars(carries)
    return scalars | nested_values(carries) if "value.nested" in carries else scalars


# Built once for each type name, not in every draw of a cell: a new strategy is set up by Hypothesis on its first draw,
# which costs more than the draw.
@functools.cache
def _name_and_typed_values(type_name: str | None, carries: frozenset[str]) -> st.SearchStrategy:
    """A type name, and values that a text format writes and types back by it: its kind, or text (and nested values)
    for untyped columns."""
    kind = typed_text.kind_of(type_name)
    options = ["value.null"] + (["value.str"] if kind is None else [_KIND_FEATURE[kind]])
    strategies = [_VALUE_STRATEGIES[feature] for feature in options if feature in carries]
    if kind is float and "value.float_nonfinite" in carries:
        strategies.append(nonfinite_floats)
    if kind is None and "value.nested" in carries:
        strategies.append(nested_values(carries))
    return st.tuples(st.just(type_name), st.one_of(*strategies) if strategies else st.nothing())


# With MySQL's attributes as Canal's table-meta history and MySQL's DESC write them, PostgreSQL's names of two words
# in its own case, Oracle's NUMBER with parameters, and a DECIMAL of no digits, which declares no column type.
TYPE_NAMES = ["VARCHAR", "x", *typed_text.TYPED_NAMES, "decimal(10,2)", "bigint", "int unsigned",
              "bigint(20) unsigned zerofill", "double precision", "number(10,2)", "decimal(0)"]


def cells(carries: frozenset[str] = ALL_FEATURES, kinds: frozenset[CellKind] | None = None
          ) -> st.SearchStrategy[Cell]:
    allowed = sorted((kind for kind in (kinds or CellKind)
                      if kind is CellKind.PUT or f"cell.kind.{kind.value}" in carries), key=lambda kind: kind.value)
    type_names = st.none() | st.sampled_from(TYPE_NAMES) if "cell.type" in carries else st.none()
    if "value.off_type" in carries:
        typed = st.tuples(type_names, values(carries))
    else:  # the format types values by their type name: draw the name, then a value it reads back as such
        typed = type_names.flatmap(lambda name: _name_and_typed_values(name, carries))
    return st.builds(
        lambda name, type_and_value, version, kind: Cell(name, type_and_value[1], type_and_value[0], version, kind),
        names, typed, st.none() | int64s if "cell.version" in carries else st.none(), st.sampled_from(allowed))


def images(carries: frozenset[str] = ALL_FEATURES, kinds: frozenset[CellKind] | None = None,
           min_size: int = 0, codec: Codec | None = None) -> st.SearchStrategy[tuple[Cell, ...]]:
    unique_by = None if "cell.repeated" in carries else (lambda cell: cell.name)
    cell_strategy = cells(carries, kinds)
    if codec is not None:  # the format's per-cell limits (Tablestore: U rows have versions, DA rows none)
        cell_strategy = cell_strategy.filter(lambda cell: codec.carried_cell(cell) == cell)
    return st.lists(cell_strategy, min_size=min_size, max_size=6, unique_by=unique_by).map(tuple)


def entries(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy:
    return st.lists(st.tuples(names, values(carries)), max_size=5).map(tuple)


def optional(strategy: st.SearchStrategy, feature: str, carries: frozenset[str]) -> st.SearchStrategy:
    return st.none() | strategy if feature in carries else st.none()


def tables(carries: frozenset[str] = ALL_FEATURES) -> st.SearchStrategy[Table]:
    return st.builds(Table, name=st.text(max_size=20), schema=optional(st.text(max_size=10), "table.schema", carries),
                     catalog=optional(st.text(max_size=10), "table.catalog", carries))


def times(carries: frozenset[str]) -> st.SearchStrategy[int]:
    if "source.time.sub_ms" in carries:
        return int64s
    return st.integers(-(2**63 // 1000), INT64_MAX // 1000).map(lambda milliseconds: milliseconds * 1000)


def sources(carries: frozenset[str] = ALL_FEATURES, layout: tuple[tuple[str, type], ...] | None = None
            ) -> st.SearchStrategy[Source]:
    if layout is not None:  # a position of fixed layout, always with its commit time (Tablestore sequence info)
        by_type = {int: int64s, str: st.text(max_size=8)}
        return st.none().map(lambda _: Source()) | st.builds(
            lambda values, commit_time_us: Source(position=tuple(zip((name for name, _ in layout), values)),
                                                  commit_time_us=commit_time_us),
            st.tuples(*(by_type[kind] for _, kind in layout)), times(carries))
    return st.builds(
        Source,
        system=optional(st.text(max_size=10), "source.system", carries),
        position=entries(carries) if "source.position" in carries else st.just(()),
        commit_time_us=optional(times(carries), "source.commit_time", carries),
        capture_time_us=optional(times(carries), "source.capture_time", carries),
    )


def _image_by_rule(rule: str, carries: frozenset[str], kinds: frozenset[CellKind], codec: Codec | None
                   ) -> st.SearchStrategy:
    if rule == ABSENT:
        return st.none()
    strategy = images(carries, kinds, 1 if rule == NONEMPTY else 0, codec)
    return st.none() | strategy if rule == OPTIONAL else strategy


def events(carries: frozenset[str] = ALL_FEATURES, shape: Shape | None = None, codec: Codec | None = None
           ) -> st.SearchStrategy[ChangeEvent]:
    """Canonical events using only the features in ``carries`` (and of ``shape``, when given)."""
    if shape is None:
        ops = st.sampled_from([op for op in Op if f"op.{op.value}" in carries])
        before = optional(images(carries, codec=codec), "before", carries)
        after = optional(images(carries, codec=codec), "after", carries)
    else:
        ops = st.just(shape.op)
        before = _image_by_rule(shape.before, carries, shape.kinds, codec)
        after = _image_by_rule(shape.after, carries, shape.kinds, codec)
    return st.builds(
        ChangeEvent,
        op=ops,
        table=optional(tables(carries), "table", carries),
        key=images(carries) if "key" in carries else st.just(()),
        before=before,
        after=after,
        # A format whose source position has a fixed layout (Tablestore's sequence info) names it.
        source=sources(carries, getattr(codec, "position_layout", None)),
        key_only=st.booleans() if "key_only" in carries else st.just(False),
        attributes=entries(carries) if "attributes" in carries else st.just(()),
    )


def events_for(codec: Codec) -> st.SearchStrategy[ChangeEvent]:
    """The canonical events ``codec`` declares it can carry: events built from its features, shapes and key option,
    each mapped to its form in the format, ``without(event, dropped(event))``.

    Mapping instead of filtering keeps every such event drawable: one that loses nothing is its own form, so it is
    drawn exactly as often as before. The others become events the format carries too (the key read out of the row,
    a position as the format writes it), where a filter kept only the draws that happened to be carried already
    (about one in five for canal-json and maxwell-json). Changes the format refuses have no form and are filtered
    out; so is a form that ``dropped()`` does not pass whole, so that the property is over exactly the events
    ``dropped()`` calls carried (that a form loses nothing more is test_matrix.py's check)."""
    shapes = codec.shapes or (None,)
    strategy = st.one_of(*(events(codec.carries, shape, codec) for shape in shapes))
    primary_key = getattr(codec, "primary_key", None)
    if primary_key:  # Tablestore: the key is its own part of the message, named by the option primary_key
        key_values = st.one_of(st.text(max_size=8), int64s, st.binary(max_size=8))
        strategy = st.tuples(strategy, st.tuples(*(key_values for _ in primary_key))).map(
            lambda pair: replace(pair[0], key=tuple(Cell(name, value) for name, value in zip(primary_key, pair[1]))))
    return strategy.map(lambda event: _form_in(codec, event)).filter(
        lambda event: event is not None and not codec.dropped(event))


def _form_in(codec: Codec, event: ChangeEvent) -> ChangeEvent | None:
    """``event`` as ``codec`` writes it, or None for a change it refuses."""
    losses = codec.dropped(event)
    return None if refused(losses) is not None else without(event, losses)
