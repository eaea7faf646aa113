"""The fast path of encode (``Codec.encode_whole``) of the Debezium-style formats, connect-json and the formats of one
JSON object per row (arcion, canal-json, maxwell-json), on the events it is for: those read back from the format's own
messages, and those with one part of them varied (a cell, a key cell, a position entry, the op, the table, an
attribute). Where a target says it writes such an event whole, that event is its own normal form.

The conversion matrix (test_matrix.py) checks the same on events drawn from every source, which seldom come this near
to what a format writes whole: debezium-avro's fast path needs a change of a table it has written, with the very
columns of the table's schema.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import cdcformats as cf
from cdcformats.losses import Refusal
from cdcformats.model import CellKind, Op
from cdcformats.schema_registry import connect

from .strategies import TYPE_NAMES, cells, entries, events_for, finite_floats, int64s, names, tables, values

_REGISTRY = connect(Path(tempfile.mkdtemp(prefix="writes-whole-registry-")) / "registry.sqlite")
_PREFIXES = (f"whole{number}" for number in itertools.count())

TARGETS: dict[str, tuple[str, dict[str, Any]]] = {
    "debezium-json": ("debezium-json", {}),
    "debezium-json+keys": ("debezium-json", {"key_columns": ["id"]}),
    "debezium-json+schemas+keys": ("debezium-json", {"schemas": True, "key_columns": ["id"]}),
    "paimon-log": ("paimon-log", {}),
    "paimon-log+upsert": ("paimon-log", {"changelog_mode": "upsert"}),
    "connect-json": ("connect-json", {}),
    "connect-json+schemaless+keys": ("connect-json", {"schemas": False, "key_columns": ["id"]}),
    "lindorm-subscription": ("lindorm-subscription", {}),
    "lindorm-subscription+schemaless+keys": ("lindorm-subscription", {"schemas": False, "key_columns": ["id"]}),
    "debezium-avro": ("debezium-avro", {"schema_registry": _REGISTRY}),
    "arcion": ("arcion", {}),
    "arcion+keys": ("arcion", {"key_columns": ["id"]}),
    "arcion+table+keys": ("arcion", {"table": "t", "key_columns": ["id"]}),
    "canal-json": ("canal-json", {}),
    "canal-json+init": ("canal-json", {"read_type": "INIT"}),
    "maxwell-json": ("maxwell-json", {}),
    "maxwell-json+keys": ("maxwell-json", {"key_columns": ["id"]}),
}


def target_codec(name: str) -> cf.Codec:
    format_name, options = TARGETS[name]
    if format_name == "debezium-avro":  # its form of a change depends on the changes before it: one per example
        options = {**options, "topic_prefix": next(_PREFIXES)}
    return cf.codec(format_name, **options)


# Values of the kinds that every target writes as they are, by kind.
_PLAIN_VALUES: dict[type, st.SearchStrategy[Any]] = {str: st.text(max_size=5), int: int64s, float: finite_floats,
                                                     bool: st.booleans()}


@st.composite
def plain_changes(draw: st.DrawFn) -> list[cf.ChangeEvent]:
    """Changes of one table keyed by ``id``, each column of one kind of value that every target writes as it is (or
    null), with a position of one layout: what the targets write whole once they have seen the table."""
    table = draw(st.none() | st.builds(cf.Table, st.text(max_size=5), st.none() | st.text(max_size=5)))
    columns = [("id", int), *draw(st.lists(st.tuples(names.filter(lambda name: name != "id"),
                                                     st.sampled_from(list(_PLAIN_VALUES))),
                                           max_size=4, unique_by=lambda column: column[0]))]
    position = draw(st.lists(st.tuples(st.sampled_from(["file", "pos", "lsn", "snapshot"]),
                                       st.sampled_from([str, int])), max_size=3, unique_by=lambda entry: entry[0]))

    def row() -> tuple[cf.Cell, ...]:
        return tuple(cf.Cell(name, draw(_PLAIN_VALUES[kind] if name == "id" else st.none() | _PLAIN_VALUES[kind]))
                     for name, kind in columns)

    changes = []
    for op in draw(st.lists(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE, Op.READ]), min_size=1, max_size=4)):
        before = row() if op in (Op.UPDATE, Op.DELETE) else None
        after = row() if op is not Op.DELETE else None
        key = (next(cell for cell in after or before or () if cell.name == "id"),)
        source = cf.Source(None, tuple((name, draw(_PLAIN_VALUES[kind])) for name, kind in position),
                           draw(st.none() | st.integers(0, 2**50)))
        changes.append(cf.ChangeEvent(op, table, key, before, after, source))
    return changes


def _with_cell(event: cf.ChangeEvent, image_name: str, index: int, cell: cf.Cell) -> cf.ChangeEvent:
    image = getattr(event, image_name)
    if not image:
        return replace(event, **{image_name: (cell,)})
    index %= len(image)
    return replace(event, **{image_name: (*image[:index], cell, *image[index + 1:])})


def _retyped(event: cf.ChangeEvent, image_name: str, index: int, changed: dict[str, Any]) -> cf.ChangeEvent:
    """``event`` with a cell of one image ``changed`` (its type, version or kind)."""
    image = getattr(event, image_name)
    if not image:
        return event
    return _with_cell(event, image_name, index, replace(image[index % len(image)], **changed))


# How an event is varied, drawn from strategies built once: built for each event, they would cost more to set up
# than to draw. A variation names its parts by position, which ``varied`` takes modulo what the event has.
VARIATIONS = st.one_of(
    st.tuples(st.just("cell"), st.integers(0, 2), st.integers(0, 5), cells(), st.booleans()),
    st.tuples(st.just("part of a cell"), st.integers(0, 2), st.integers(0, 5), st.one_of(
        st.sampled_from(TYPE_NAMES).map(lambda type_name: {"type": type_name}),
        int64s.map(lambda version: {"version": version}),
        st.sampled_from(list(CellKind)).map(lambda kind: {"kind": kind}))),
    st.tuples(st.just("value of another type"), st.integers(0, 2), st.integers(0, 5)),
    st.tuples(st.just("position"), st.integers(0, 5), values()),
    st.tuples(st.just("op"), st.sampled_from(list(Op))),
    st.tuples(st.just("table"), st.none() | tables()),
    st.tuples(st.just("attributes"), entries().filter(bool)),
    st.just(("key_only",)),
)


def _equal_of_another_type(value: Any) -> Any:
    """A value that Python takes for equal to ``value`` and the model does not (1 and 1.0 and True): ``value`` itself
    where there is none."""
    if type(value) is bool:
        return int(value)
    if type(value) is int:
        if value in (0, 1):
            return bool(value)
        return float(value) if abs(value) <= 2**53 else value
    if type(value) is float and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value


def varied(event: cf.ChangeEvent, variation: tuple[Any, ...]) -> cf.ChangeEvent:
    """``event`` with one part of it varied: a cell of a row or of the key (of the same name as one of the event's,
    or another; or with another type, version or kind, or a value equal in Python of another type), an entry of the
    position, the op, the table, an attribute or ``key_only``."""
    kind = variation[0]
    if kind in ("cell", "part of a cell", "value of another type"):
        image_names = [name for name in ("key", "before", "after") if getattr(event, name) is not None]
        image_name, index = image_names[variation[1] % len(image_names)], variation[2]
        if kind == "part of a cell":
            return _retyped(event, image_name, index, variation[3])
        if kind == "value of another type":
            image = getattr(event, image_name)
            cell = image[index % len(image)] if image else None
            return event if cell is None else _retyped(event, image_name, index,
                                                       {"value": _equal_of_another_type(cell.value)})
        cell, same_named = variation[3], variation[4]
        if same_named:
            names = [cell.name for cell in (*event.key, *(event.before or ()), *(event.after or ()))] or ["id"]
            cell = replace(cell, name=names[index % len(names)])
        return _with_cell(event, image_name, index, cell)
    if kind == "position":
        position = event.source.position
        index = variation[1] % (len(position) + 1)
        name = position[index][0] if index < len(position) else "ts_ms"
        return replace(event, source=replace(event.source, position=(
            *position[:index], (name, variation[2]), *position[index + 1:])))
    if kind == "op":
        return replace(event, op=variation[1])
    if kind == "table":
        return replace(event, table=variation[1])
    if kind == "attributes":
        return replace(event, attributes=variation[1])
    return replace(event, key_only=True)


def check_claim(codec: cf.Codec, event: cf.ChangeEvent) -> None:
    messages = codec.encode_whole(event)
    if messages is not None:
        try:
            written = codec.normal_form(event)
        except Refusal as refusal:
            raise AssertionError(f"{codec.name} claims to write {event} whole, and refuses it: {refusal.loss}") \
                from None
        assert written == event, f"{codec.name} claims to write {event} whole"
        assert messages == codec.encode_exact(event), f"{codec.name}'s fast path writes {event} otherwise"


# Each target's changes, built once (from a codec of its options: what events_for reads of it is the same for each).
CHANGES = {name: plain_changes() | st.lists(events_for(target_codec(name)), min_size=1, max_size=3) for name in TARGETS}


@pytest.mark.parametrize("target_name", TARGETS)
@given(data=st.data())
def test_an_event_near_one_written_is_claimed_whole_only_where_it_is(target_name: str, data: st.DataObject) -> None:
    codec = target_codec(target_name)
    drawn = data.draw(CHANGES[target_name])
    # A change the events before it make refused (a schema conflict in debezium-avro) is left out.
    back = list(codec.decode(list(codec.encode(drawn, on_error=lambda _: None))))
    for event in back:
        check_claim(codec, event)
        for variation in data.draw(st.lists(VARIATIONS, min_size=1, max_size=8)):
            check_claim(codec, varied(event, variation))
