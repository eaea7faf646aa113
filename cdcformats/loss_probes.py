"""What a target's normal form changes in the changes a source sends, found before any data flows.

``cf.loss(source, target)`` lists the features the source can carry that the target cannot, and also those the
target carries only in some forms: found here by asking the target (``Codec.dropped``) about probes, small changes
of each shape the source has, each with one feature of what it carries (a kind of value, a typed or versioned cell,
the key outside the row or other than the row's cell, a qualified table, a time, a source position...).

A probe is what the source sends: its normal form of it, which is what decoding its messages gives back; and also
the probe as it is (or its normal form with one part of the probe as it was) where the source's messages hold it
though it writes other formats' changes otherwise (Canal's INIT rows, read as READs, which it writes as INSERTs;
Maxwell's key values apart from the row's), or where the source drops of it only what it ``also_reads`` (Lindorm's
JSON numbers). Its key is of the columns the source's options name, else of those the target's name; its position of
the source's ``position_fields`` where it states them. The source's probes are found once for every target, and
only as far as some target is asked about them.

Each probe is asked of a target that has written nothing; the plain changes of each shape are also asked one after
another of a target that writes and reads each back, where a target whose form of a change depends on the changes
before it (debezium-avro's tables) shows it. Whether a target rewrites a feature is found by asking it about probes
until one shows it (``Rewrites``): a check of one drop costs a few probes, and a whole answer all of them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from msgspec.structs import replace

from .contract import ABSENT, ALL_FEATURES, NONEMPTY, OPTIONAL, PRESENT, REGISTRY_OPTION, Codec, Shape
from .errors import ConfigurationError
from .losses import Loss, Refusal, differences
from .model import Cell, CellKind, ChangeEvent, Entries, Image, Op, Source, Struct, Table, Value

_VALUES: dict[str, tuple[Value, ...]] = {
    "value.null": (None,), "value.bool": (True,), "value.int": (7,), "value.float": (1.5,), "value.str": ("text", ""),
    "value.bytes": (b"\x00\x01", b""), "value.decimal": (Decimal("1.50"), Decimal("-Infinity"), Decimal("NaN")),
    "value.float_nonfinite": (float("nan"),),
    "value.nested": ((1, "a"), Struct((("a", 1),)), (Struct((("a", -0.0),)),), (), Struct(())),
    "value.nested_non_json": ((b"\x00",),)}
# Types as sources name them: of text, of numbers (as SQL and as MySQL's binlog spell them), of booleans and of JSON.
_TYPES = ("VARCHAR", "BIGINT", "bigint", "INT UNSIGNED", "DOUBLE", "DECIMAL(10,2)", "BOOLEAN", "JSON")
# The kinds of value whose cells are probed with each type: the others' are written by their kind.
_TYPED_VALUES = ("value.null", "value.int", "value.float", "value.str", "value.decimal")
# Text that a type may read as another kind of value; a float's text as Python writes it that Java writes otherwise
# (1.0E7).
_TEXTS = ("12", "1E+5", "false", "[]", "10000000.0")
# Position fields of a source whose positions may name any: common names, names that source blocks give fields of
# their own (a table's parts, times, the connector), and names no format has a field for (none at all, not ASCII).
_POSITION_NAMES = ("file", "pos", "gtid", "id", "connector", "db", "schema", "table", "ts_ms", "ts_us", "", "naïve")
# Every shape of change the model has, for a format that writes any (shapes None) and for the kinds of change none
# of a source's shapes has, which its messages may hold all the same (Canal's INIT rows are READs).
_ANY_SHAPES = tuple(Shape(op, before=OPTIONAL, after=OPTIONAL, kinds=frozenset(CellKind)) for op in Op)
# Fields of a message that formats read as their own, which an attribute holding another field of a message
# (a name of a prefix such as "debezium.field.") may name.
_FIELD_NAMES = ("probe", "before", "after", "source", "op", "ts", "ts_ms", "transaction", "schema", "payload", "data",
                "table", "key", "value", "envelope")
# The fields of a change's envelope, in the order they are written, as a list that an attribute may hold, which
# an attribute named so holds; and the list of an envelope of the op alone.
_ENVELOPE_FIELDS, _ENVELOPE, _OP_FIELD = '["before","after","source","op","ts_ms"]', "envelope", '["op"]'
# The parts of a change.
_PARTS = ("op", "table", "key", "before", "after", "source", "key_only", "attributes")
# The table of the probes, where no option names another, and its key columns.
_TABLE, _KEY_NAMES = "t", ("id",)
# The schema registry a probed codec registers with: one in memory, so that no registry of the user's is touched.
_PROBE_REGISTRY = "mock://cdcformats-loss-probes"


class Rewrites:
    """What ``target``'s normal form changes in the changes ``source`` sends: the features (``changes``) and the
    source's own attributes, named as ``cf.loss`` lists them, that it does not write back (``drops_attribute``),
    found only as far as asked, so that asking whether a feature is rewritten stops at the first probe that shows it.

    Each probe is asked of a target that has written nothing, as the first change of a stream (dropped() keeps no
    state); first the plain changes of each shape, one after another, of a target that writes each and reads it back
    (as a codec that also reads what it writes would): a target whose form of a change depends on those before it
    (the columns debezium-avro's table has by now) shows it there."""

    def __init__(self, source: type[Codec] | Codec, target: type[Codec] | Codec) -> None:
        self.features: set[str] = set()  # found so far
        probed = _probed(target)
        # A target that writes every change exactly (the canonical envelopes) rewrites none: nothing to probe.
        if probed is None or probed._writes_every_event():
            self._found: Iterator[set[str]] = iter(())
            self._attributes: dict[str, Iterator[bool]] = {}
            return
        sender = _probed(source)
        key_names, table = _key_names(sender) if sender is not None and _key_names(sender)[0] else _key_names(probed)
        key_names = key_names or _KEY_NAMES  # the probes' key where no option names one
        other_key_names = tuple(name for name in _key_names(probed)[0] if name not in key_names)
        sent, plain, attribute_changes = _sent_probes(source, sender, Table(table), key_names, other_key_names)
        self._found = itertools.chain(_dropped_features(_probed(target) or probed, plain, written=True),
                                      _dropped_features(probed, sent, written=False))
        self._attributes = {name: (_drops_attributes(_changed(probed, change)) for change in changes)
                            for name, changes in attribute_changes.items()}
        self._dropped_attributes: set[str] = set()

    def changes(self, feature: str) -> bool:
        """Whether the target changes ``feature`` in some change the source sends."""
        while feature not in self.features:
            found = next(self._found, None)
            if found is None:
                return False
            self.features |= found
        return True

    def drops_attribute(self, name: str) -> bool:
        """Whether the target does not write back the source's own attribute ``name`` (a prefix's as ``prefix*``)
        in some change that holds it."""
        if name not in self._dropped_attributes and any(self._attributes.get(name, ())):
            self._dropped_attributes.add(name)
        return name in self._dropped_attributes

    def all_features(self) -> set[str]:
        for found in self._found:
            self.features |= found
        return self.features

    def all_dropped_attributes(self) -> set[str]:
        return {name for name in self._attributes if self.drops_attribute(name)}


def configuration(codec: type[Codec] | Codec) -> object:
    """What ``cf.loss`` of ``codec`` depends on: its format and the options it was given (as ``repr`` writes them,
    since option values need not be hashable), not the state of its streams."""
    return (type(codec), repr(codec)) if isinstance(codec, Codec) else codec


class _Unfolding:
    """The distinct items of an iterator, found as far as a reader of them needs, and kept for the next reader."""

    def __init__(self, items: Iterator[ChangeEvent]) -> None:
        self._items = items
        self._found: list[ChangeEvent] = []
        self._seen: set[ChangeEvent] = set()

    def __iter__(self) -> Iterator[ChangeEvent]:
        index = 0
        while True:
            while index == len(self._found):
                item = next(self._items, None)
                if item is None:
                    return
                if item not in self._seen:
                    self._seen.add(item)
                    self._found.append(item)
            yield self._found[index]
            index += 1


# The probes each source sends, found once for all the targets asked about them (keyed by its configuration and the
# key columns of the probes): (every probe, the plain ones in order, each own attribute's probes).
_SENT: dict[tuple[object, Table, tuple[str, ...], tuple[str, ...]],
            tuple[_Unfolding, _Unfolding, dict[str, _Unfolding]]] = {}


def _sent_probes(source: type[Codec] | Codec, sender: Codec | None, table: Table, key_names: tuple[str, ...],
                 other_key_names: tuple[str, ...]) -> tuple[_Unfolding, _Unfolding, dict[str, _Unfolding]]:
    found = (configuration(source), table, key_names, other_key_names)
    if found not in _SENT:
        # Probes of every feature, where the source's normal form shows what it sends of them; else of what it
        # carries.
        carries = source.carries if sender is None else ALL_FEATURES
        names = {f"{name}*" if name.endswith(".") else name for name in source.own_attributes}
        _SENT[found] = (
            _Unfolding(_sent(sender, probes(source, carries, table, key_names, other_key_names))),
            _Unfolding(_sent(sender, probes(source, carries, table, key_names, other_key_names, plain=True))),
            {name: _Unfolding(_sent(sender, _attribute_probes_of(name, source, carries, table, key_names)))
             for name in names})
    return _SENT[found]


def _attribute_probes_of(name: str, source: type[Codec] | Codec, carries: frozenset[str], table: Table,
                         key_names: tuple[str, ...]) -> Iterator[ChangeEvent]:
    """The ``attribute_probes`` of the source's own attribute ``name``."""
    return (probe for named, probe in attribute_probes(source, carries, table, key_names) if named == name)


def _dropped_features(target: Codec, changes: Iterable[ChangeEvent], written: bool) -> Iterator[set[str]]:
    """The features that ``target`` drops of each of ``changes`` it does not refuse, each change ``written`` (and
    read back) after it is asked about, or not."""
    for change in changes:
        losses = _changed(target, change)
        if losses is not None:
            yield {loss.feature for loss in losses}
            if written:
                list(target.decode(target.encode([change], on_error=lambda _: None), on_error=lambda _: None))


def _changed(target: Codec, change: ChangeEvent) -> list[Loss] | None:
    """What ``target.dropped`` says of ``change``, found without its fast path (which writes the messages of a change
    that is its own normal form, as most probes are); None for a change it refuses."""
    try:
        written = target.normal_form(change)
    except Refusal:
        return None
    return differences(change, written, target.carries)


def _drops_attributes(losses: list[Loss] | None) -> bool:
    return losses is not None and any(loss.path.startswith("attributes") for loss in losses)


def _sent(sender: Codec | None, changes: Iterator[ChangeEvent]) -> Iterator[ChangeEvent]:
    """Each change as ``sender`` sends it (its normal form), and also as it is where the sender's messages hold it
    (written exactly, they read back as it) or where the sender drops of it only what it ``also_reads``, else its
    normal form with each part of it as it is that the messages hold so; each change as it is for a source named
    without the options it needs."""
    for change in changes:
        if sender is None:
            yield change
            continue
        try:
            sent = sender.normal_form(change)
        except Refusal:
            continue
        yield sent
        if sent == change:
            continue
        if _read_as_is(sender, change):
            yield change
            continue
        # The sent change with one part of the probe as it was (a READ as Canal's INIT rows are; a row of a value
        # that the sender also reads): where held.
        for name in _PARTS:
            if getattr(sent, name) != getattr(change, name):
                partly = replace(sent, **{name: getattr(change, name)})
                if _read_as_is(sender, partly):
                    yield partly


def _read_as_is(sender: Codec, change: ChangeEvent) -> bool:
    """Whether decoding ``sender``'s messages may give ``change``: they hold it (``_holds``), or the sender drops of
    it only what it ``also_reads``."""
    return _holds(sender, change) or bool(sender.also_reads) and {
        loss.feature for loss in sender.dropped(change)} <= sender.also_reads


def _holds(codec: Codec, change: ChangeEvent) -> bool:
    """Whether ``codec``'s messages can hold ``change`` as it is: written exactly, they read back as it."""
    try:
        return list(codec.decode(codec.encode_exact(change))) == [change]
    except Exception:  # noqa: BLE001 - encode_exact is asked of a change it need not carry, which it may fail on in any way
        return False


def _key_names(codec: Codec) -> tuple[tuple[str, ...], str]:
    """The key columns that an option of ``codec`` names for every table, if any, and the name of the probes' table;
    where it names them per table, those of its first table, and that table's name."""
    for option in codec.options:
        names = codec.config.get(option.name) if option.names_key_columns else None
        if names and getattr(names, "per_table", None):
            return next((tuple(columns), table) for table, columns in names.per_table.items())
        if names:
            return tuple(getattr(names, "everywhere", names)), _TABLE
    return (), _TABLE


def _probed(codec: type[Codec] | Codec) -> Codec | None:
    """A new codec of ``codec``'s format and options to ask about probes, since a normal form may keep state
    (debezium-avro's tables), registering schemas in memory in place of its own registry; a format named alone with
    a key of one column where it needs its key named; None for a format named without another option it needs."""
    codec_class = type(codec) if isinstance(codec, Codec) else codec
    options: dict[str, Any] = dict(codec.given) if isinstance(codec, Codec) else {}
    for option in codec_class.options:
        if option.name == REGISTRY_OPTION:
            options[REGISTRY_OPTION] = _PROBE_REGISTRY
        elif option.required and option.names_key_columns and not isinstance(codec, Codec):
            options[option.name] = ["id"]
    try:
        return codec_class(**options)
    except ConfigurationError:
        return None


def probes(source: Codec | type[Codec], carries: frozenset[str], table: Table, key_names: tuple[str, ...] = (),
           other_key_names: tuple[str, ...] = (), plain: bool = False) -> Iterator[ChangeEvent]:
    """Changes of the features ``carries`` names: of each of ``source``'s shapes (and of each other kind of change),
    plain and with each way its images may be, then (unless only ``plain``) with one feature at a time; of ``table``
    where tables are carried; their key of the columns ``key_names``, else of one; rows also with columns
    ``other_key_names``."""
    table_named = table if "table" in carries else None
    key_cells = tuple(Cell(name, 1) for name in key_names or _KEY_NAMES)
    other_key_cells = tuple(Cell(name, "text") for name in other_key_names)
    shapes = source.shapes or _ANY_SHAPES
    shaped = {shape.op for shape in shapes}
    for shape in (*shapes, *(shape for shape in _ANY_SHAPES if shape.op not in shaped)):
        if f"op.{shape.op.value}" not in carries:
            continue
        for number, rows in enumerate(_rows_of(shape)):
            change = functools.partial(_change, shape.op, rows, key_cells, other_key_cells, table=table_named,
                                       key=key_cells if "key" in carries else ())
            yield change((Cell("c", "text"),))
            yield change((Cell("c", "text"),), key_last=True)
            if other_key_cells:  # rows without the columns the target's key has that the source's has not
                yield _change(shape.op, rows, key_cells, (), (Cell("c", "text"),), table=table_named,
                              key=key_cells if "key" in carries else ())
            if "table" in carries:
                yield change((Cell("c", "text"),), table=None)
            if "key" in carries:
                yield change((Cell("c", "text"),), key=())
                yield change((Cell("c", "text"),), in_row=False)
                yield change((Cell("c", "text"),), key=(Cell("k", 2),))
                yield change((Cell("k", 2),), key=(*key_cells, Cell("k", 2)))
            if rows["before"] and rows["after"]:  # the columns of the row in another order before, or others
                row_change = change((Cell("c", "text"),))
                yield replace(row_change, before=tuple(reversed(row_change.before or ())))
                yield replace(row_change, before=change((Cell("b", "text"),)).before,
                              after=change((Cell("a", "text"),), key_last=True).after)
                for typed in _TYPES[:2]:  # a column typed in one image only, or otherwise in each
                    yield replace(row_change, before=change((Cell("c", "12", typed),)).before)
                    yield replace(row_change, after=change((Cell("c", "12", typed),)).after)
            if number or plain:  # the features below, on the change with the images of its kind by nature
                continue
            if rows["before"] and rows["after"]:  # a column of each type, in one image only, null in the other
                for typed, text in itertools.product(_TYPES, ("12", "[]")):
                    null_change = change((Cell("c", None),))
                    yield replace(null_change, before=change((Cell("c", text, typed),)).before)
                    yield replace(null_change, after=change((Cell("c", text, typed),)).after)
            yield from (change((cell,)) for cell in _cells(carries, shape.kinds))
            if "cell.repeated" in carries:
                yield change((Cell("c", "a"), Cell("c", "b")))
            if "key" in carries:
                for cell in _cells(carries, shape.kinds):  # a key cell too may be of a kind of deletion
                    yield change(key=(cell,), in_row=False)
                    # A key cell other than the row's cell of its column (of text, of an empty array).
                    key_cell = Cell(key_cells[0].name, cell.value, cell.type, cell.version, cell.kind)
                    for other in ("other", ()):
                        yield change((Cell(key_cell.name, other), *key_cells[1:]), key=(key_cell, *key_cells[1:]),
                                     in_row=False)
                    # The key's cells, one of them of this kind of value, in the row as they are.
                    yield change(key=(key_cell, *key_cells[1:]), cells=(key_cell, *key_cells[1:]), in_row=False)
                if "cell.repeated" in carries:
                    yield change(key=(*key_cells, Cell(key_cells[0].name, 2)))
            # The row's cell of a key column other than the key's (where the source has one): of another value, type,
            # version or kind; also without a key, as a source that names none sends it.
            for cell in _cells(carries, shape.kinds):
                row = (Cell(key_cells[0].name, cell.value, cell.type, cell.version, cell.kind), *key_cells[1:])
                yield change(row, in_row=False)
                if "key" in carries:
                    yield change(row, key=(), in_row=False)
            for schema, catalog in (("s", None), ("s", "c"), (None, "c")):
                if (schema is None or "table.schema" in carries) and (catalog is None or "table.catalog" in carries):
                    yield change(table=Table(table.name, schema, catalog))
            yield from (change(source=source_fields) for source_fields in _sources(carries, source.position_fields))
            if "key_only" in carries:
                yield change(key_only=True)


def _change(op: Op, rows: dict[str, bool | None], key_cells: Image, other_key_cells: Image, cells: Image = (),
            in_row: bool = True, key_last: bool = False, **fields: Any) -> ChangeEvent:
    """A change of ``op`` with the images ``rows`` says, each of ``cells`` and the key's cells where they are
    ``in_row`` (first, or ``key_last``), and ``other_key_cells`` (of the columns of a target's key) after them."""
    row = (*cells, *key_cells) if key_last else (*key_cells, *cells) if in_row else cells
    row = (*row, *(cell for cell in other_key_cells if cell.name not in {cell.name for cell in row}))
    images: dict[str, Any] = {name: () if present is None else row if present else None
                              for name, present in rows.items()}
    return ChangeEvent(op, **images, **fields)


def attribute_probes(source: Codec | type[Codec], carries: frozenset[str], table: Table,
                     key_names: tuple[str, ...] = ()) -> Iterator[tuple[str, ChangeEvent]]:
    """For each attribute of the ``source``'s own (a name ending in "." standing for its prefix), a plain change
    that holds it (of ``carries`` and keyed as ``probes``): the name as ``cf.loss`` lists it, and the change."""
    key_cells = tuple(Cell(name, 1) for name in key_names or _KEY_NAMES)
    for name in sorted(source.own_attributes):
        for shape in source.shapes or _ANY_SHAPES:  # a target may have a place for them in some changes only
            if f"op.{shape.op.value}" not in carries:
                continue
            for number, rows in enumerate(_rows_of(shape)):
                images = {image: key_cells if present else () if present is None else None
                          for image, present in rows.items()}
                for attribute in [name + field for field in _FIELD_NAMES] if name.endswith(".") else [name]:
                    # JSON text, as formats keep fields (a number, the list of an envelope's fields), and text that
                    # is not JSON; in a change of the key only too (a target may write no envelope for one). With
                    # the images of the change's kind by nature; with others, the lists of an envelope's fields
                    # that an attribute naming an envelope holds (of all of them; of the op alone, as an envelope of
                    # no images and no source has), with a table and without, since which fields an envelope has
                    # depends on its images and source.
                    envelope = attribute.endswith(_ENVELOPE)
                    values = (("1", _ENVELOPE_FIELDS, "text", *((_OP_FIELD,) if envelope else ())) if number == 0
                              else (_ENVELOPE_FIELDS, _OP_FIELD) if envelope else ())
                    tables = (table, None) if envelope and "table" in carries else (
                        table if "table" in carries else None,)
                    for value, key_only, named in itertools.product(
                            values, (False, True) if "key_only" in carries and number == 0 else (False,), tables):
                        yield (f"{name}*" if name.endswith(".") else name,
                               ChangeEvent(shape.op, table=named,
                                           key=key_cells if "key" in carries else (),
                                           **images,  # type: ignore[arg-type]
                                           key_only=key_only, attributes=((attribute, value),)))


# Whether an image of each rule is there (True), left out (False) or there with no cells (None): the first, for each.
_IMAGES_OF_RULE: dict[str, tuple[bool | None, ...]] = {
    ABSENT: (False,), PRESENT: (True, None), NONEMPTY: (True,), OPTIONAL: (True, False, None)}


# The images a change of each kind has by nature: an UPDATE's both, a DELETE's before, a TRUNCATE's none.
_NATURAL_IMAGES = {op: {"before": op in (Op.UPDATE, Op.DELETE), "after": op not in (Op.DELETE, Op.TRUNCATE)}
                   for op in Op}


def _rows_of(shape: Shape) -> Iterator[dict[str, bool | None]]:
    """Which images a change of ``shape`` has, each way it may (``_IMAGES_OF_RULE``): first those of its kind by
    nature, as far as the shape has them, else each that may be there."""
    rows = [{"before": before, "after": after}
            for before, after in itertools.product(_IMAGES_OF_RULE[shape.before], _IMAGES_OF_RULE[shape.after])]
    natural = _NATURAL_IMAGES[shape.op]
    yield from sorted(rows, key=lambda row: row != natural)


def _cells(carries: frozenset[str], kinds: frozenset[CellKind]) -> Iterator[Cell]:
    """A cell of each kind of value, typed and not, of text that a type may read otherwise, versioned, and of each
    kind of deletion that ``kinds`` has."""
    for feature, values in _VALUES.items():
        for value in values if feature in carries else ():
            yield Cell("c", value)
            if "cell.type" in carries and feature in _TYPED_VALUES:
                yield from (Cell("c", value, type_name) for type_name in _TYPES)
    if "value.str" in carries:
        for text in _TEXTS:
            yield Cell("c", text)
            if "cell.type" in carries:
                yield from (Cell("c", text, type_name) for type_name in _TYPES)
    if "cell.version" in carries:
        yield Cell("c", "text", None, 1_700_000_000_000)
    for kind in kinds - {CellKind.PUT}:
        if f"cell.kind.{kind.value}" in carries:
            # A deletion may say the value, of each kind, which a target that writes none drops as that kind's.
            yield from (Cell("c", values[0], kind=kind) for feature, values in _VALUES.items() if feature in carries)


def _sources(carries: frozenset[str], position_fields: tuple[str, ...]) -> Iterator[Source]:
    """Sources of the parts ``carries`` has: every part, each time alone (and before 1970), and positions of the
    ``position_fields`` a format's messages have, else of names a position may have, with each kind of value."""
    system = "mysql" if "source.system" in carries else None
    commit = 1_700_000_000_123_456 if "source.commit_time" in carries else None
    capture = 1_700_000_000_654_321 if "source.capture_time" in carries else None
    yield Source(system, (), commit, capture)
    for time_us in (1_700_000_000_000_000, -1_000):
        if "source.commit_time" in carries:
            yield Source(system, (), time_us, None)
        if "source.capture_time" in carries:
            yield Source(system, (), None, time_us)
    if "source.position" in carries:  # with every part, and alone (where a time is written into the position)
        for position in _positions(carries, position_fields or _POSITION_NAMES):
            yield Source(system, position, commit, capture)
            yield Source(None, position)


def _positions(carries: frozenset[str], names: tuple[str, ...]) -> Iterator[Entries]:
    """Positions of ``names``: all of them, each with each kind of value the others are integers (as positions mostly
    count); and each alone, of each kind of value."""
    values = [value for feature, kinds in _VALUES.items() if feature in carries for value in kinds]
    yield tuple((name, 4) for name in names)
    for index, name in enumerate(names):
        for value in values:
            yield tuple((other, value if other_index == index else 4) for other_index, other in enumerate(names))
            yield ((name, value),)
