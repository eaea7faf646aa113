"""What the fast path of encode (``Codec.writes_whole``) asks of an event's rows in the formats that write a row as
one JSON object of column name -> value (canal-json, maxwell-json, aliyun-json, arcion): that every cell is a plain
value put in its column, once, so that the row is written and read back cell for cell. Each check is a loop over the
cells, with no cell built and no method called per cell: it runs for every event encoded."""

from __future__ import annotations

from ...model import CellKind, Image

PUT = CellKind.PUT


def plain_cells(image: Image, value_types: frozenset[type]) -> bool:
    """Whether every cell of ``image`` puts a value of ``value_types`` with no type and no version, each column
    once."""
    for cell in image:
        if cell.kind is not PUT or cell.type is not None or cell.version is not None \
                or type(cell.value) not in value_types:
            return False
    return names_once(image)


def names_once(image: Image) -> bool:
    """Whether no column of ``image`` comes twice."""
    return len(image) < 2 or len({cell.name for cell in image}) == len(image)


def same_columns(before: Image, after: Image) -> bool:
    """Whether an update's two images hold the same columns in the same order (as an update of one row does)."""
    if len(before) != len(after):
        return False
    for before_cell, after_cell in zip(before, after):
        if before_cell.name != after_cell.name:
            return False
    return True


def key_of_row(key: Image, row: Image) -> bool:
    """Whether each key cell is the cell of its column in ``row`` (a row of each column once), each column once: the
    key that a format which reads the key out of the row by the key's column names reads back."""
    for key_cell in key:
        for cell in row:
            if cell.name == key_cell.name:
                if cell is not key_cell and cell != key_cell:
                    return False
                break
        else:
            return False
    return names_once(key)


def columns_in_row(key: Image, row: Image) -> bool:
    """Whether each key cell's column is one of ``row``'s (so that none is put in front of it)."""
    for key_cell in key:
        for cell in row:
            if cell.name == key_cell.name:
                break
        else:
            return False
    return True
