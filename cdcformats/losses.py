"""What a conversion drops from one event, as data: ``Loss`` entries, found by comparing an event with the target's
normal form of it (``differences``), and ``without()``, which applies them.

A target writes every event in its normal form (``Codec.normal_form``): the event it will write, which is what
decoding its output gives. ``Codec.dropped(event)`` is ``differences(event, normal_form(event))``: one entry for each
place where the two differ, with what the target writes there instead, so that for every event a target does not
refuse::

    target.decode(target.encode([event])) == [target.normal_form(event)] == [without(event, target.dropped(event))]

which is what the property tests prove for every ordered pair of formats.

A path names one place of the event as it was given:

* a field: ``op``, ``table``, ``table.schema``, ``table.catalog``, ``key``, ``before``, ``after``, ``key_only``,
  ``source.system``, ``source.position``, ``source.commit_time_us``, ``source.capture_time_us``; the loss's
  ``written`` is the field's new value (a whole image, say, or ``None`` where the field is taken away);
* an element of a sequence: ``key[2]``, ``before[0]``, ``after[3]``, ``attributes[1]``, ``source.position[0]``; the
  element is taken away;
* a part of a cell: ``after[3].value``, ``.type``, ``.version``, ``.kind`` (and ``.name``); ``written`` is its new
  value.

Indices count the elements of the event as it was given, whatever the losses before them took away, until a loss
replaces the whole sequence: paths into it after that count the new one.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, NamedTuple

from msgspec.structs import replace

from .core.time_units import MILLISECOND, floored
from .model import (
    Cell,
    CellKind,
    ChangeEvent,
    Entries,
    Image,
    Source,
    Struct,
    Table,
    Value,
    is_nested,
    same_entries,
    same_value,
)


class _Refused:
    """The ``written`` of a loss that the target cannot write at all: the change has no form there."""

    def __repr__(self) -> str:
        return "REFUSED"

    def __reduce__(self) -> str:
        return "REFUSED"


REFUSED: Any = _Refused()


class Loss(NamedTuple):
    """One place where a target's form of an event differs from the event.

    ``feature`` is the canonical feature (``FEATURES``) or kind of change (``shape ...``) that the target cannot
    carry, as ``cf.loss()`` lists it; ``path`` where it is in the event; ``written`` what the target writes there
    instead (``REFUSED`` when the target cannot write the change at all); ``why`` a few words for error messages.
    """

    feature: str
    path: str
    written: Any = None
    why: str = ""

    def __str__(self) -> str:
        return f"{self.feature} at {self.path}" + (f" ({self.why})" if self.why else "")


_SEQUENCES = ("key", "before", "after", "attributes", "source.position")
_ELEMENT = re.compile(r"(key|before|after|attributes|source\.position)\[(\d+)\](?:\.(name|value|type|version|kind))?")
_FIELDS = frozenset({"op", "table", "table.schema", "table.catalog", "key", "before", "after", "key_only",
                     "source.system", "source.position", "source.commit_time_us", "source.capture_time_us",
                     "attributes"})
_TAKEN = object()  # a slot whose element a loss took away; slots keep indices stable until the event is rebuilt


def refused(losses: list[Loss]) -> Loss | None:
    """The first loss that makes the change impossible to write, if any."""
    for loss in losses:
        if loss.written is REFUSED:
            return loss
    return None


def without(event: ChangeEvent, losses: list[Loss] | tuple[Loss, ...]) -> ChangeEvent:
    """``event`` as a target that reports ``losses`` for it writes it back: each path set to what was written.

    Raises ``ValueError`` for a refused change (it is not written at all) or a path that names nothing.
    """
    if not losses:
        return event
    fields: dict[str, Any] = {
        "op": event.op, "table": event.table, "key_only": event.key_only,
        "source.system": event.source.system, "source.commit_time_us": event.source.commit_time_us,
        "source.capture_time_us": event.source.capture_time_us,
        "key": list(event.key), "before": None if event.before is None else list(event.before),
        "after": None if event.after is None else list(event.after),
        "attributes": list(event.attributes), "source.position": list(event.source.position),
    }
    for loss in losses:
        if loss.written is REFUSED:
            raise ValueError(f"{loss}: the change has no form in the target, so nothing is written")
        _apply(fields, loss)
    table: Table | None = fields["table"]
    for part in ("schema", "catalog"):
        if f"table.{part}" in fields:
            table = None if table is None else replace(table, **{part: fields[f"table.{part}"]})
    source = Source(fields["source.system"], _kept(fields["source.position"]), fields["source.commit_time_us"],
                    fields["source.capture_time_us"])
    return ChangeEvent(fields["op"], table, _kept(fields["key"]), _kept(fields["before"]), _kept(fields["after"]),
                       source, fields["key_only"], _kept(fields["attributes"]))


def _apply(fields: dict[str, Any], loss: Loss) -> None:
    path, written = loss.path, loss.written
    if path in _FIELDS:
        if path in _SEQUENCES:
            written = None if written is None and path in ("before", "after") else list(written or ())
        fields[path] = written
        return
    match = _ELEMENT.fullmatch(path)
    if match is None:
        raise ValueError(f"{loss}: {path!r} is not a path of a change event")
    sequence_name, index, part = match.group(1), int(match.group(2)), match.group(3)
    sequence = fields[sequence_name]
    if sequence is None or index >= len(sequence) or sequence[index] is _TAKEN:
        raise ValueError(f"{loss}: the event has no {sequence_name}[{index}]")
    if part is None:
        sequence[index] = _TAKEN
        return
    if sequence_name in ("attributes", "source.position"):
        if part != "value":
            raise ValueError(f"{loss}: an entry of {sequence_name} has a name and a value, not a {part}")
        sequence[index] = (sequence[index][0], written)
        return
    sequence[index] = replace(sequence[index], **{part: written})


def _kept(sequence: list[Any] | None) -> Any:
    return None if sequence is None else tuple(item for item in sequence if item is not _TAKEN)


class Refusal(Exception):
    """Raised by a target's ``normal_form`` for a change that has no form there: ``loss`` says why, written
    ``REFUSED``."""

    def __init__(self, loss: Loss) -> None:
        super().__init__(str(loss))
        self.loss = loss


def differences(event: ChangeEvent, written: ChangeEvent, carries: frozenset[str]) -> list[Loss]:
    """Each place where ``written``, a target's normal form of ``event``, differs from it, as a ``Loss`` whose path
    counts the elements of ``event`` and whose ``written`` is what is there instead, so that
    ``without(event, differences(event, written, carries)) == written``. What the target ``carries`` names the features:
    a type it cannot write (``cell.type``) or cannot write with this value (``value.off_type``), a row it writes in
    another form because its rows are typed (``image.columns``) or because of what it does with that image."""
    if written is event or written == event:
        return []
    found = _Found()
    if written.op is not event.op:
        found.replaced(f"op.{event.op.value}", "op", written.op)
    if written.table != event.table:
        if event.table is None or written.table is None or written.table.name != event.table.name:
            found.replaced("table", "table", written.table)
        else:
            for part in ("schema", "catalog"):
                if getattr(written.table, part) != getattr(event.table, part):
                    found.replaced(f"table.{part}", f"table.{part}", getattr(written.table, part))
    for image_name in ("key", "before", "after"):
        image, written_image = getattr(event, image_name), getattr(written, image_name)
        if image != written_image:
            found.image(image_name, image, written_image, carries)
    source, written_source = event.source, written.source
    if written_source.system != source.system:
        found.replaced("source.system", "source.system", written_source.system)
    if not same_entries(source.position, written_source.position):
        found.entries("source.position", source.position, written_source.position)
    for feature, field in (("source.commit_time", "commit_time_us"), ("source.capture_time", "capture_time_us")):
        time_us, written_time_us = getattr(source, field), getattr(written_source, field)
        if written_time_us != time_us:
            to_the_millisecond = time_us is not None and written_time_us == floored(time_us, MILLISECOND)
            found.replaced("source.time.sub_ms" if to_the_millisecond else feature, f"source.{field}",
                           written_time_us)
    if written.key_only is not event.key_only:
        found.replaced("key_only", "key_only", written.key_only)
    if not same_entries(event.attributes, written.attributes):
        found.entries("attributes", event.attributes, written.attributes)
    return found.losses


class _Found:
    """The losses ``differences`` finds, each with a few words on what the target writes instead."""

    def __init__(self) -> None:
        self.losses: list[Loss] = []

    def replaced(self, feature: str, path: str, written: Any) -> None:
        why = "not written" if written is None or written == () else f"written as {_shown(written)}"
        self.losses.append(Loss(feature, path, written, why))

    def taken(self, feature: str, path: str) -> None:
        self.losses.append(Loss(feature, path, None, "not written"))

    def image(self, name: str, image: Image | None, written: Image | None, carries: frozenset[str]) -> None:
        """An image of cells: compared cell by cell where ``written`` is ``image`` with cells taken away or changed
        in place, else replaced whole."""
        pairs = None if not image or not written else _paired(image, written, lambda cell: cell.name)
        if pairs is None or not _first_of_each_name_kept(pairs):
            assert image is not None or written is not None
            # A row of other columns, or in another order: a typed row, unless the target writes rows as they come.
            typed = bool(image) and bool(written) and name != "key" and "image.columns" not in carries
            whole = "image.columns" if typed else name
            self.replaced(whole, name, written)
            return
        kept_names = {cell.name for cell in written or ()}
        for index, (cell, written_cell) in enumerate(pairs):
            path = f"{name}[{index}]"
            if written_cell is None:
                self.taken("cell.repeated" if cell.name in kept_names else "image.columns", path)
            elif written_cell != cell:
                self.cell(path, cell, written_cell, carries)

    def cell(self, path: str, cell: Cell, written: Cell, carries: frozenset[str]) -> None:
        deleted = cell.kind is not CellKind.PUT and written.kind is not cell.kind
        if not same_value(cell.value, written.value):
            feature = f"cell.kind.{cell.kind.value}" if deleted else _value_feature(cell.value, written.value)
            self.replaced(feature, f"{path}.value", written.value)
        if written.type != cell.type:
            feature = "value.off_type" if written.type is None and "cell.type" in carries else "cell.type"
            self.replaced(feature, f"{path}.type", written.type)
        if written.version != cell.version:
            self.replaced("cell.version", f"{path}.version", written.version)
        if written.kind is not cell.kind:
            # A deletion written as a put of null, or a put written as a deletion: a row key entry that nothing
            # marks as the key reads back with its mutation's kind.
            feature = f"cell.kind.{cell.kind.value}" if cell.kind is not CellKind.PUT else "key"
            self.replaced(feature, f"{path}.kind", written.kind)

    def entries(self, name: str, entries: Entries, written: Entries) -> None:
        """Named values (attributes, a source position): compared entry by entry as images are."""
        pairs = _paired(entries, written, lambda entry: entry[0])
        if pairs is None:
            self.replaced(name, name, written)
            return
        for index, (entry, written_entry) in enumerate(pairs):
            if written_entry is None:
                self.losses.append(Loss(name, f"{name}[{index}]", None, f"no place for {entry[0]}"))
            elif not same_value(entry[1], written_entry[1]):
                feature = name if type(entry[1]) is type(written_entry[1]) else _value_feature(entry[1],
                                                                                               written_entry[1])
                self.replaced(feature, f"{name}[{index}].value", written_entry[1])


def _paired(items: tuple[Any, ...], written: tuple[Any, ...], name_of: Callable[[Any], str]
            ) -> list[tuple[Any, Any]] | None:
    """Each of ``items`` with the element of ``written`` that stands in its place (None: taken away), when
    ``written`` is ``items`` with some taken away and the others kept in order under their names; else None."""
    pairs: list[tuple[Any, Any]] = []
    next_written = 0
    for item in items:
        if next_written < len(written) and name_of(written[next_written]) == name_of(item):
            pairs.append((item, written[next_written]))
            next_written += 1
        else:
            pairs.append((item, None))
    return pairs if next_written == len(written) else None


def _first_of_each_name_kept(pairs: list[tuple[Cell, Cell | None]]) -> bool:
    """Whether the cell kept of each column is its first: a target that writes one cell per column keeps the first,
    so a pairing that keeps a later one (where the first is also the written cell's, retyped, say) tells another
    story than the target's, which is the row written in another form."""
    taken: set[str] = set()
    for cell, written_cell in pairs:
        if written_cell is None:
            taken.add(cell.name)
        elif cell.name in taken:
            return False
    return True


def _value_feature(value: Value, written: Value) -> str:
    """The feature a target lacks where it writes ``written`` for ``value``."""
    if type(value) is float and not math.isfinite(value):
        return "value.float_nonfinite"
    if is_nested(value):
        return "value.nested_non_json" if is_nested(written) else "value.nested"
    return VALUE_FEATURE[type(value)]


# The feature of each kind of value.
VALUE_FEATURE: dict[type, str] = {type(None): "value.null", bool: "value.bool", int: "value.int",
                                  float: "value.float", str: "value.str", bytes: "value.bytes",
                                  Decimal: "value.decimal", tuple: "value.nested", Struct: "value.nested"}


def _shown(written: Any) -> str:
    """What a target writes, shortened for a message."""
    shown = written.value if isinstance(written, enum.Enum) else repr(written)
    return shown if len(shown) <= 60 else shown[:57] + "..."
