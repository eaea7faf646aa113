"""Primary keys for formats whose messages do not mark them: the key columns come from the option ``key_columns``,
and the key cells are read out of the row image, so a message never holds the key twice (``KeyedByColumns``:
lindorm, arcion, debezium-json, lindorm-subscription; the option alone: maxwell-json and connect-json, where a
message names no key). ``key_cells_outside`` is for every format that reads the key out of the row (canal-json,
aliyun-json, maxwell-json)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from msgspec.structs import replace

from ...contract import Codec, Option
from ...model import Cell, ChangeEvent, Image, Op, Table
from .json_message import encode

_DELETE = Op.DELETE  # read once: reading a member off its class runs Python code (enum's metaclass), per event


class KeyColumns:
    """Key column names, for every table (a list) or per table (a mapping of table name to list).

    A table is looked up by its qualified name first ("tpch.region"), then by its bare name ("region").
    """

    def __init__(self, columns: Sequence[str] | Mapping[str, Sequence[str]] | None) -> None:
        self.everywhere: tuple[str, ...] = ()
        self.per_table: dict[str, tuple[str, ...]] = {}
        if columns is None:
            return
        if isinstance(columns, Mapping):
            for table, names in columns.items():
                if not isinstance(table, str):
                    raise TypeError(f"table names must be strings, got {table!r}")
                self.per_table[table] = _names(names)
        else:
            self.everywhere = _names(columns)

    def __bool__(self) -> bool:
        return bool(self.everywhere or self.per_table)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, KeyColumns) and (self.everywhere, self.per_table)
                == (other.everywhere, other.per_table))

    def __repr__(self) -> str:
        return repr(dict(self.per_table) if self.per_table else list(self.everywhere))

    def settings(self) -> dict[str, str]:
        """These key columns as a JVM decoder's settings (``cdcformats/jvm/decoders/PerTable.java``)."""
        per_table = {table: list(names) for table, names in self.per_table.items()}
        return {"key_columns": encode(list(self.everywhere)).decode(),
                "key_columns_per_table": encode(per_table).decode()}

    def for_table(self, table: Table | None) -> tuple[str, ...]:
        if table is not None and self.per_table:
            qualified = ".".join(part for part in (table.catalog, table.schema, table.name) if part is not None)
            return self.per_table.get(qualified, self.per_table.get(table.name, self.everywhere))
        return self.everywhere

    def key_of(self, table: Table | None, image: Image | None) -> Image:
        """The key cells of ``image``, in key order; a key column missing from the image is left out."""
        return key_cells(self.for_table(table), image)


def key_cells(names: Sequence[str], image: Image | None) -> Image:
    """The cells of the key columns ``names`` in ``image``, the first of each name, in key order; a key column
    missing from the image is left out."""
    if not names or not image:
        return ()
    if len(names) == 1:  # most keys: found without a mapping of the row
        name = names[0]
        for cell in image:
            if cell.name == name:
                return (cell,)
        return ()
    first_by_name: dict[str, Any] = {}
    for cell in image:
        first_by_name.setdefault(cell.name, cell)
    return tuple(first_by_name[name] for name in names if name in first_by_name)


def _names(names: Any) -> tuple[str, ...]:
    if isinstance(names, str):  # most often a list given on a command line without its JSON quotes
        meant = json.dumps([name.strip(" '\"") for name in names.strip("[]").split(",")])
        raise TypeError(f"expected a list of column names, got the text {names!r}: write it as JSON, {meant} "
                        f"(in a shell, with quotes around it: 'key_columns={meant}')")
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"expected a list of column names, got {names!r}")
    return tuple(names)


def is_key_of_row(key: Image, row: Image) -> bool:
    """Whether each key cell is the first cell of its column in ``row``: the key that reading it back out of the row
    by its column names gives. Found without building anything, for the fast path of encode (``encode_whole``)."""
    for key_cell in key:
        for cell in row:
            if cell.name == key_cell.name:
                if cell is not key_cell and cell != key_cell:
                    return False
                break
        else:
            return False
    return True


def key_cells_outside(key: Image, row: Image | None) -> Image:
    """The key cells whose column ``row`` lacks, the first of each name: what a format that reads the key out of the
    row puts in front of it, so that the row still identifies itself (Tablestore keeps its primary key outside)."""
    in_row = {cell.name for cell in row or ()}
    outside: dict[str, Cell] = {}
    for cell in key:
        if cell.name not in in_row:
            outside.setdefault(cell.name, cell)
    return tuple(outside.values())


KEY_COLUMNS = Option(
    "key_columns", "primary key column names: a list for every table, or a mapping of table name to list",
    None, KeyColumns, names_key_columns=True)


class KeyedByColumns(Codec):
    """Base of the formats whose messages do not mark the primary key (lindorm, arcion, debezium-json,
    lindorm-subscription): the option ``key_columns`` names it and the key cells are read out of an image; without
    the option, no key.

    A format that sets ``key_in_row`` writes the key cells that an event keeps outside its row image (Tablestore's
    primary key) into the row, in front, so that the row still identifies itself; its key is then what reading it
    back gives: the cells of ``key_columns`` in the row. ``dropped()`` reports both before the other stages, so that
    they see the event as the format writes it (a Lindorm Delete's key entries are the key columns of the row).
    """

    key_in_row: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.key_columns: KeyColumns = self.config["key_columns"]
        if not self.key_columns:
            self.carries = self.carries - {"key"}

    def row_image_name(self, event: ChangeEvent) -> str:
        """The image that the key is read out of: the before image of a DELETE or of a change without an after
        image, else the after image."""
        return "before" if event.op is _DELETE or event.after is None else "after"

    def read_key(self, table: Table | None, image: Image | None) -> Image:
        """The key that decoding reads out of ``image``."""
        key_columns = self.key_columns
        if not key_columns.per_table:  # the same names for every table (or none): found without a call
            return key_cells(key_columns.everywhere, image)
        return key_columns.key_of(table, image)

    def holds_key_as_read(self, event: ChangeEvent, image: Image) -> bool:
        """Whether ``event``'s key is the one decoding reads out of ``image``, its row, with every key cell in that
        row: found without building the key, for the fast path of encode (``encode_whole``)."""
        key_columns = self.key_columns
        # The same names as for_table gives, without the call where no table has key columns of its own.
        names = key_columns.for_table(event.table) if key_columns.per_table else key_columns.everywhere
        if len(event.key) != len(names):
            return False
        for name, key_cell in zip(names, event.key):
            if key_cell.name != name:
                return False
        return is_key_of_row(event.key, image)

    def with_key_read(self, event: ChangeEvent) -> ChangeEvent:
        """A decoded event of no key, with the key read out of its row image (built once more only for a key)."""
        key = self.read_key(event.table, getattr(event, self.row_image_name(event)))
        return replace(event, key=key) if key else event

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        return super().normal_form(self.keyed_by_row(event) if self.key_in_row else event)

    def keyed_by_row(self, event: ChangeEvent) -> ChangeEvent:
        """The key cells missing from the row image put in front of it, and the key as read back out of the row."""
        image_name = self.row_image_name(event)
        image = getattr(event, image_name)
        changed: dict[str, Any] = {}
        missing = key_cells_outside(event.key, image)
        if missing:
            image = changed[image_name] = (*missing, *(image or ()))
        if self.key_columns:
            read = self.read_key(event.table, image)
            if read != event.key:
                changed["key"] = read
        return replace(event, **changed) if changed else event

    def with_key_as_read(self, event: ChangeEvent, image: Image | None) -> ChangeEvent:
        """``event`` with the key that reading it back out of ``image`` gives, where ``key_columns`` names one."""
        if self.key_columns:
            read = self.read_key(event.table, image)
            if read != event.key:
                return replace(event, key=read)
        return event
