"""What a conversion drops from one event, as data: ``Loss`` entries, and ``without()``, which applies them.

A target format writes every event in its closest faithful form. ``Codec.dropped(event)`` lists, as ``Loss``
entries, each place where that form differs from the event, and what the target writes there instead;
``without(event, losses)`` is the event that such a target gives back, so that for every event a target does not
refuse::

    target.decode(target.encode([event])) == [without(event, target.dropped(event))]

which is what the property tests prove for every ordered pair of formats.

A path names one place of the event:

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

import re
from typing import Any, NamedTuple

from msgspec.structs import replace

from .model import ChangeEvent, Source, Table


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


class SlotIndex:
    """The count ``without()`` keeps of each sequence of an event, for losses found in stages, each stage on the event
    as the losses before it left it: a stage counts elements in that event, ``without()`` counts them as given (or as
    the last whole replacement of the sequence gave them)."""

    def __init__(self, event: ChangeEvent) -> None:
        self.event = event
        self.slots: dict[str, list[int]] = {}  # filled on first use: most events lose nothing

    def _slots(self, name: str) -> list[int]:
        if name not in self.slots:
            event = self.event
            sequence = {"key": event.key, "before": event.before, "after": event.after,
                        "attributes": event.attributes, "source.position": event.source.position}[name]
            self.slots[name] = list(range(len(sequence or ())))
        return self.slots[name]

    def counted(self, losses: list[Loss] | tuple[Loss, ...]) -> list[Loss]:
        """``losses`` of one stage with their element paths counted as ``without()`` counts them. Within the stage,
        paths after a whole replacement of a sequence count the new one, as in ``without()``; what the stage takes
        away counts for the stages after it."""
        if not losses:
            return []
        counted = []
        taken: dict[str, list[int]] = {}
        for loss in losses:
            match = _ELEMENT.fullmatch(loss.path)
            if loss.path in _SEQUENCES and loss.written is not REFUSED:
                self.slots[loss.path] = list(range(len(loss.written or ())))
                taken.pop(loss.path, None)
            elif match is not None:
                name, slot = match.group(1), self._slots(match.group(1))[int(match.group(2))]
                loss = loss._replace(path=f"{name}[{slot}]" + (f".{match.group(3)}" if match.group(3) else ""))
                if match.group(3) is None:
                    taken.setdefault(name, []).append(slot)
            counted.append(loss)
        for name, slots in taken.items():
            for slot in slots:
                self._slots(name).remove(slot)
        return counted
