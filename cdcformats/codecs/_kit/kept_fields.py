"""Fields a format does not read, kept so that nothing is lost: each one becomes an attribute named by the format's
prefix and the field (``canal.field.<name>``) that holds the field's JSON text, and is written back where it was.

Three things are done with them, each here once: reading them out of a message (``read``), writing them back
(``write``), and telling which of an event's attributes a message gives back, and as what (``as_decoded``, which a
format's normal form holds). A format says how it writes its own
attributes back with a function ``group_of(name, value)``: the group the attribute is written in (groups read back in
their order) and the value it reads back as, or None when the format does not write it back; ``is_kept_field``
is the rule for the kept fields themselves. An attribute name twice keeps its first entry, as a JSON object holds a
field once.

A kept field whose name is a field the format reads itself (its "reserved" names: ``canal.field.data``) is never
written: ``write`` refuses it with an ``EncodeError`` that names the format and the attribute. Writing it would put
it in the place of the format's own field, a message that says something else; skipping it would lose it without a
word. ``dropped()`` reports such an attribute as lost, so a conversion, which writes what ``dropped()`` leaves, never
meets one: only a direct caller of ``encode_exact`` does, and it is told.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import Any

import msgspec

from ...errors import EncodeError
from ...model import Entries, Value
from .json_message import encode, is_canonical, raw

GroupOf = Callable[[str, Value], tuple[int, Value] | None]


def read(prefix: str, fields: Iterable[tuple[str, Any]], reserved: Container[str]) -> list[tuple[str, str]]:
    """The attributes that keep the ``fields`` of a parsed message other than the ``reserved`` ones the format
    reads: ``prefix`` + name, the field's JSON text."""
    return [(prefix + name, encode(value).decode()) for name, value in fields if name not in reserved]


def write(format_name: str, attributes: Iterable[tuple[str, Any]], prefix: str, reserved: Container[str]
          ) -> dict[str, msgspec.Raw]:
    """The fields that the ``prefix`` attributes keep, to write back verbatim; one that would read back as a field of
    the format itself (``reserved``) is refused."""
    fields: dict[str, msgspec.Raw] = {}
    for index, (name, value) in enumerate(attributes):
        if name.startswith(prefix):
            field_name = name[len(prefix):]
            if field_name in reserved:
                raise EncodeError(format_name, f"{name} would read back as the field {field_name!r}",
                                  field=f"attributes[{index}]")
            fields[field_name] = raw(format_name, value, f"attributes[{index}]")
    return fields


def is_kept_field(name: str, value: Value, prefix: str, reserved: Container[str]) -> bool:
    """Whether an attribute is a kept field that a message gives back as it is: one of ``prefix``, not naming a
    ``reserved`` field, holding JSON text as ``read`` writes it."""
    return name.startswith(prefix) and name[len(prefix):] not in reserved and is_canonical(value)


def as_decoded(attributes: Entries, group_of: GroupOf) -> Entries:
    """A format's own attributes as decoding its message gives them back: those it writes back, as what, in the
    order of their groups."""
    return _in_order(_kept(attributes, group_of))


def _kept(attributes: Entries, group_of: GroupOf) -> list[tuple[int, int, str, Value]]:
    """(index, group, name, value written) of each attribute written back: the first of each name."""
    kept = []
    seen: set[str] = set()
    for index, (name, value) in enumerate(attributes):
        written = None if name in seen else group_of(name, value)
        if written is not None:
            seen.add(name)
            kept.append((index, written[0], name, written[1]))
    return kept


def _in_order(kept: list[tuple[int, int, str, Value]]) -> Entries:
    return tuple((name, value) for _, _, name, value in sorted(kept, key=lambda entry: entry[1]))
