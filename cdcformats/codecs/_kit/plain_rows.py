"""The fast path of encode (``Codec.encode_whole``) of the formats that write a row as one JSON object of column name
-> value (canal-json, maxwell-json, aliyun-json, arcion): every cell must be a plain value put in its column, once, so
that the row is written and read back cell for cell. Each row is checked in the walk that builds its object, with no
cell built and no method called per cell: it runs for every event encoded."""

from __future__ import annotations

from typing import Any

from ...model import CellKind, ChangeEvent, Image, Op
from .keys import is_key_of_row

# Enum members read once: reading a member off its class runs Python code (enum's metaclass), on every event.
PUT = CellKind.PUT
_UPDATE, _DELETE = Op.UPDATE, Op.DELETE

# An event's row as a format of one JSON object per row writes it (``plain_objects``): the image written as the row,
# its object (column name -> value), and an UPDATE's ``old``, the before image's values that differ from the after
# image's (None for another op). A plain tuple, unpacked where it is used: a NamedTuple, even one built in C by
# tuple.__new__, cost 0.1 µs a message more (canal-json's encode, 2.30 against 2.20 µs).
PlainObjects = tuple[Image, dict[str, Any], dict[str, Any] | None]


def plain_objects(event: ChangeEvent, value_types: frozenset[type], after_alone: tuple[Op, ...]
                  ) -> PlainObjects | None:
    """The row that a format of one row per message writes for ``event``, with its object and an UPDATE's ``old``
    built in the walk that checks them: a DELETE's before image alone, the after image alone of an op of
    ``after_alone`` (an INSERT), an UPDATE's after image with a before image of the same columns in the same order
    (a column the update left as it was is most often the same cell in both images: told by identity), each image
    ``plain_object``; None for any other event. ``value_types``: of ``json_message.AS_IS_TYPES``, whose values of
    one type are the model's same value exactly when they are equal."""
    op, before, after = event.op, event.before, event.after
    if op is _UPDATE:
        if before is None or after is None or len(before) != len(after):
            return None
        written: dict[str, Any] = {}
        old: dict[str, Any] = {}
        for before_cell, cell in zip(before, after):
            name, value, before_value = cell.name, cell.value, before_cell.value
            if before_cell.name != name or cell.kind is not PUT or before_cell.kind is not PUT \
                    or cell.type is not None or before_cell.type is not None \
                    or cell.version is not None or before_cell.version is not None \
                    or type(value) not in value_types or type(before_value) not in value_types:
                return None
            written[name] = value
            # Cells alike but for their values, of value_types: the same where the values are equal and of one type.
            if before_cell is not cell and (before_value != value or type(before_value) is not type(value)):
                old[name] = before_value
        return (after, written, old) if len(written) == len(after) else None
    if op is _DELETE:
        if after is not None:
            return None
        row = before
    elif op in after_alone:  # a tuple of members: told by identity
        if before is not None:
            return None
        row = after
    else:
        return None
    if row is None:
        return None
    row_object = plain_object(row, value_types)
    return None if row_object is None else (row, row_object, None)


def plain_object(image: Image, value_types: frozenset[type]) -> dict[str, Any] | None:
    """An image whose every cell puts a value of ``value_types`` with no type and no version, each column once, as
    its JSON object (column name -> value), built in the walk that checks it; None for any other image."""
    written: dict[str, Any] = {}
    for cell in image:
        value = cell.value
        if cell.kind is not PUT or cell.type is not None or cell.version is not None or type(value) not in value_types:
            return None
        written[cell.name] = value
    return written if len(written) == len(image) else None


def names_once(image: Image) -> bool:
    """Whether no column of ``image`` comes twice."""
    names = set()
    for cell in image:
        names.add(cell.name)
    return len(names) == len(image)


def key_of_row(key: Image, row: Image) -> bool:
    """Whether each key cell is the cell of its column in ``row`` (a row of each column once), each column once: the
    key that a format which reads the key out of the row by the key's column names reads back."""
    return is_key_of_row(key, row) and (len(key) < 2 or names_once(key))


def columns_in_row(key: Image, row: Image) -> bool:
    """Whether each key cell's column is one of ``row``'s (so that none is put in front of it): whether
    ``keys.key_cells_outside`` is empty, found without building the set and the cells it gives (0.45 µs an event of
    Maxwell's fast path)."""
    for key_cell in key:
        for cell in row:
            if cell.name == key_cell.name:
                break
        else:
            return False
    return True
