"""Primary keys for formats whose messages do not mark them (Lindorm, Arcion): the key columns come from an option,
and the key cells are read out of the row image, so a message never holds the key twice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import ChangeEvent, Image, Table
from .base import Codec, Option


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

    def for_table(self, table: Table | None) -> tuple[str, ...]:
        if table is not None and self.per_table:
            qualified = ".".join(part for part in (table.catalog, table.schema, table.name) if part is not None)
            return self.per_table.get(qualified, self.per_table.get(table.name, self.everywhere))
        return self.everywhere

    def key_of(self, table: Table | None, image: Image | None) -> Image:
        """The key cells of ``image``, in key order; a key column missing from the image is left out."""
        names = self.for_table(table)
        if not names or not image:
            return ()
        first_by_name: dict[str, Any] = {}
        for cell in image:
            first_by_name.setdefault(cell.name, cell)
        return tuple(first_by_name[name] for name in names if name in first_by_name)


def _names(names: Any) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise TypeError(f"expected a list of column names, got {names!r}")
    return tuple(names)


KEY_COLUMNS = Option(
    "key_columns", "primary key column names: a list for every table, or a mapping of table name to list",
    None, KeyColumns)


class KeyedByColumns(Codec):
    """Base of the formats whose messages do not mark the primary key (Lindorm, Arcion, Debezium values): the
    option ``key_columns`` names it and the key cells are read out of an image; without the option, no key."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.key_columns: KeyColumns = self.config["key_columns"]
        if not self.key_columns:
            self.carries = self.carries - {"key"}

    def dropped_key(self, event: ChangeEvent, image: Image | None) -> list[tuple[str, str]]:
        """The key, as lost, when reading it out of ``image`` would not give it back."""
        if self.key_columns and event.key != self.key_columns.key_of(event.table, image):
            return [("key", f"key ({self.name} reads the key out of the image by key_columns)")]
        return []
