"""The canonical change event: one immutable value that can hold what every supported format says.

A conversion between two formats goes source -> ChangeEvent -> target, so a conversion can only be as lossless as
this model. Every class here is immutable (a frozen msgspec Struct; ``Struct``, the nested value, a frozen slotted
dataclass), checks what it holds as it is built, and has *exact* value equality:

* values compare by type as well as by value (``True`` is not ``1``, ``1`` is not ``1.0``), floats by their bits
  (``-0.0`` is not ``0.0``; every NaN equals every other NaN, since no text format can carry a NaN payload), and
  decimals by their exact text (``Decimal("1.10")`` is not ``Decimal("1.1")``);
* ``decode(encode(e)) == e`` is therefore a real statement that nothing was lost.

A copy with some fields changed is ``msgspec.structs.replace(event, op=Op.UPSERT)``, which checks them as the
constructor does. The checks are written inline rather than in helpers, since every decoded cell runs them: a Cell
is built in a fifth of the time a dataclass took.

Values are Python scalars: ``None``, ``bool``, ``int`` (signed 64-bit), ``float``, ``str``, ``bytes`` and
``decimal.Decimal``; or nested values: an array is a ``tuple`` of values, and an object, a map with text keys, a
struct or a composite column is a ``Struct`` of named values, in order. Anything else is refused when the cell is
built.
"""

from __future__ import annotations

import enum
import hashlib
import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeAlias

import msgspec

Value: TypeAlias = "None | bool | int | float | str | bytes | Decimal | tuple[Value, ...] | Struct"
SCALAR_TYPES: tuple[type, ...] = (type(None), bool, int, float, str, bytes, Decimal)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# How deep nested values may go (an array in an array is 2 levels): far beyond what producers send, and within what
# every envelope writes (Protobuf's parsers stop at 100 messages deep, two per level here) and Python's recursion.
MAX_NESTING = 32


class Op(enum.Enum):
    """What a change does to its row."""

    INSERT = "INSERT"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    UPSERT = "UPSERT"  # a write that does not know whether the row existed (Lindorm Put, Tablestore PutRow)
    READ = "READ"  # a snapshot row
    TRUNCATE = "TRUNCATE"

    # Members are singletons, equal only to themselves: hashed by identity in C, as every format's table of its ops
    # is looked up per event (Enum's own hash runs Python code, hashing the name).
    __hash__ = object.__hash__


class CellKind(enum.Enum):
    """What a cell does to its column; wide-column stores delete single versions or whole columns."""

    PUT = "PUT"
    DELETE_VERSION = "DELETE_VERSION"  # Tablestore DO, HBase Delete
    DELETE_ALL_VERSIONS = "DELETE_ALL_VERSIONS"  # Tablestore DA, HBase DeleteColumn

    __hash__ = object.__hash__  # as Op's


def check_value(value: object, where: str) -> None:
    """Refuse a value the model cannot hold, naming where it was found."""
    kind = type(value)
    if type(value) is int:  # not kind: mypy narrows value on this form
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError(f"{where}: integer {value} is outside the signed 64-bit range")
    elif type(value) is tuple:
        if nesting(value) > MAX_NESTING:
            raise ValueError(f"{where}: nested deeper than {MAX_NESTING} levels")
        for index, item in enumerate(value):
            check_value(item, f"{where}[{index}]")
    elif kind not in SCALAR_TYPES and kind is not Struct:  # a Struct checked its fields when it was built
        raise TypeError(f"{where}: {kind.__name__} is not a change-event value (expected one of "
                        "None, bool, int, float, str, bytes, Decimal, a tuple of values or a Struct)")


def is_nested(value: object) -> bool:
    """Whether ``value`` is an array or a Struct."""
    return type(value) is tuple or type(value) is Struct


def nesting(value: object) -> int:
    """How many levels of arrays and Structs ``value`` is: 0 for a scalar."""
    if type(value) is tuple:
        return 1 + max(map(nesting, value), default=0)
    if type(value) is Struct:
        return value.depth
    return 0


_NAN_KEY = ("float", "nan")


def same_value(left: Value, right: Value) -> bool:
    """Whether the model considers two values the same (``value_key(left) == value_key(right)``, without building
    the keys, which equality of every cell would otherwise pay for)."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is float or kind is Decimal or kind is tuple or kind is Struct:
        return value_key(left) == value_key(right)
    return left == right


def same_entries(left: Entries, right: Entries) -> bool:
    """Whether two sequences of (name, value) entries are the same, values compared as ``same_value`` does."""
    return len(left) == len(right) and all(
        left_name == right_name and same_value(left_value, right_value)
        for (left_name, left_value), (right_name, right_value) in zip(left, right))


def value_key(value: Value) -> tuple:
    """A key that is equal for two values exactly when the model considers them the same value."""
    kind = type(value)
    if type(value) is float:  # not kind: mypy narrows value on this form
        if math.isnan(value):
            return _NAN_KEY
        return ("float", struct.pack(">d", value))
    if kind is Decimal:
        return ("decimal", str(value))
    if type(value) is tuple:
        return ("array", tuple(value_key(item) for item in value))
    if type(value) is Struct:
        return ("struct", _entries_key(value.fields))
    return (kind.__name__, value)


@dataclass(frozen=True, slots=True, eq=False)
class Struct:
    """A value of named values: a JSON object, a map with text keys, a struct or a composite column. ``fields`` are
    (name, value) pairs in the order the source sent them, each name once (a JSON object, a map and a struct all
    name each member once)."""

    fields: tuple[tuple[str, Value], ...] = ()
    depth: int = field(init=False, repr=False, compare=False)  # its nesting(), found once as it is built

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _entries(self.fields, "struct field"))
        names = [name for name, _ in self.fields]
        if len(set(names)) != len(names):
            repeated = next(name for index, name in enumerate(names) if name in names[:index])
            raise ValueError(f"struct field {repeated!r} twice: a struct names each field once")
        object.__setattr__(self, "depth", 1 + max((nesting(value) for _, value in self.fields), default=0))
        if self.depth > MAX_NESTING:
            raise ValueError(f"struct: nested deeper than {MAX_NESTING} levels")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Struct:
            return NotImplemented
        return _entries_key(self.fields) == _entries_key(other.fields)

    def __hash__(self) -> int:
        return hash(_entries_key(self.fields))

    def get(self, name: str, default: Value = None) -> Value:
        """The value of the field called ``name``."""
        for field_name, value in self.fields:
            if field_name == name:
                return value
        return default


def _check_int64(value: int | None, where: str) -> None:
    if value is not None:
        if type(value) is not int:
            raise TypeError(f"{where}: expected an int, got {type(value).__name__}")
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError(f"{where}: {value} is outside the signed 64-bit range")


def _check_optional_str(value: str | None, where: str) -> None:
    if value is not None and type(value) is not str:
        raise TypeError(f"{where}: expected a str, got {type(value).__name__}")


# The kinds of value that need no check beyond their kind (an int needs its range, a tuple its items).
_PLAIN_VALUE_TYPES = frozenset({str, type(None), bool, float, bytes, Decimal})


class Cell(msgspec.Struct, frozen=True, eq=False, gc=False):
    """One column value (or one column deletion) of a row image.

    ``type`` is the source's own type name, verbatim (``VARCHAR``, ``BIGINT``...), so that a round trip writes it
    back. ``version`` is the wide-column version (a millisecond timestamp in HBase, Lindorm and Tablestore).
    """

    name: str
    value: Value = None
    type: str | None = None
    version: int | None = None
    kind: CellKind = CellKind.PUT

    def __post_init__(self) -> None:
        # The common case is tested first, and a place named only on the way to an error (f-strings cost).
        value = self.value
        if type(value) is int:
            if not INT64_MIN <= value <= INT64_MAX:
                check_value(value, f"cell {self.name!r} value")
        elif type(value) not in _PLAIN_VALUE_TYPES:
            check_value(value, f"cell {self.name!r} value")
        if type(self.name) is not str:
            raise TypeError(f"cell name: expected a str, got {type(self.name).__name__}")
        if self.type is not None and type(self.type) is not str:
            _check_optional_str(self.type, f"cell {self.name!r} type")
        version = self.version
        if version is not None and (type(version) is not int or not INT64_MIN <= version <= INT64_MAX):
            _check_int64(version, f"cell {self.name!r} version")
        if type(self.kind) is not CellKind:
            raise TypeError(f"cell {self.name!r} kind: expected a CellKind, got {self.kind!r}")

    def key(self) -> tuple:
        return (self.name, value_key(self.value), self.type, self.version, self.kind.value)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Cell:
            return NotImplemented
        return (self is other or self.name == other.name and self.kind is other.kind and self.type == other.type
                and self.version == other.version and same_value(self.value, other.value))

    def __ne__(self, other: object) -> bool:  # a Struct's own != compares identity where eq=False
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.key())


class Table(msgspec.Struct, frozen=True, gc=False):
    """A table's fully qualified name; ``schema`` is the namespace where the source has one."""

    name: str
    schema: str | None = None
    catalog: str | None = None

    def __post_init__(self) -> None:
        if type(self.name) is not str:
            raise TypeError(f"table name: expected a str, got {type(self.name).__name__}")
        _check_optional_str(self.schema, "table schema")
        _check_optional_str(self.catalog, "table catalog")


Entries = tuple[tuple[str, Value], ...]


def _entries(pairs: Iterable[tuple[str, Value]], where: str) -> Entries:
    """An ordered tuple of (name, value) pairs; names may repeat, order is kept."""
    result = pairs if type(pairs) is tuple else tuple(pairs)
    for entry in result:
        if type(entry) is not tuple or len(entry) != 2:  # pairs given as lists, say: made pairs (or refused) first
            return _entries(tuple((name, value) for name, value in result), where)
        name, value = entry
        if type(name) is not str:
            raise TypeError(f"{where}: entry name must be a str, got {type(name).__name__}")
        if type(value) is int:
            if not INT64_MIN <= value <= INT64_MAX:
                check_value(value, f"{where} {name!r}")
        elif type(value) not in _PLAIN_VALUE_TYPES:
            check_value(value, f"{where} {name!r}")
    return result


def _entries_key(entries: Entries) -> tuple:
    return tuple((name, value_key(value)) for name, value in entries)


class Source(msgspec.Struct, frozen=True, eq=False, gc=False):
    """Where a change came from and where it stands in its source's order.

    ``position`` is the source's own ordered position, verbatim and opaque (an Arcion cursor, Tablestore sequence
    info). Times are microseconds since the Unix epoch: ``commit_time_us`` when the source committed the change,
    ``capture_time_us`` when the capture tool read it.
    """

    system: str | None = None
    position: Entries = ()
    commit_time_us: int | None = None
    capture_time_us: int | None = None

    def __post_init__(self) -> None:
        _check_optional_str(self.system, "source system")
        if self.position or type(self.position) is not tuple:
            msgspec.structs.force_setattr(self, "position", _entries(self.position, "source position"))
        _check_int64(self.commit_time_us, "source commit_time_us")
        _check_int64(self.capture_time_us, "source capture_time_us")

    def key(self) -> tuple:
        return (self.system, _entries_key(self.position), self.commit_time_us, self.capture_time_us)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Source:
            return NotImplemented
        return self is other or (self.system == other.system and self.commit_time_us == other.commit_time_us
                                 and self.capture_time_us == other.capture_time_us
                                 and same_entries(self.position, other.position))

    def __ne__(self, other: object) -> bool:  # a Struct's own != compares identity where eq=False
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.key())


Image = tuple[Cell, ...]


def _cells(cells: Iterable[Cell], where: str) -> Image:
    result = cells if type(cells) is tuple else tuple(cells)
    for cell in result:
        if type(cell) is not Cell:
            index = next(index for index, cell in enumerate(result) if type(cell) is not Cell)
            raise TypeError(f"{where}[{index}]: expected a Cell, got {type(cell).__name__}")
    return result


class ChangeEvent(msgspec.Struct, frozen=True, eq=False, gc=False):
    """One change to one row.

    ``before`` and ``after`` are ordered cell sequences, or ``None`` when the source did not send that image (an
    empty tuple is an image with no cells, which is not the same thing). A sequence rather than a mapping, since
    wide-column sources write several versions of one column in one change. ``key`` holds the primary key cells in
    key order, empty when the source does not say which columns form the key. ``attributes`` keep format-specific
    details that have no canonical field, so that a round trip through the canonical envelopes writes them back.
    """

    op: Op
    table: Table | None = None
    key: Image = ()
    before: Image | None = None
    after: Image | None = None
    source: Source = msgspec.field(default_factory=Source)
    key_only: bool = False
    attributes: Entries = ()

    def __post_init__(self) -> None:
        if type(self.op) is not Op:
            raise TypeError(f"op: expected an Op, got {self.op!r}")
        if self.table is not None and type(self.table) is not Table:
            raise TypeError(f"table: expected a Table, got {type(self.table).__name__}")
        force_setattr = msgspec.structs.force_setattr
        key = _cells(self.key, "key")  # cells, never None
        if key is not self.key:
            force_setattr(self, "key", key)
        for image_name, image in (("before", self.before), ("after", self.after)):
            if image is not None:
                cells = _cells(image, image_name)
                if cells is not image:
                    force_setattr(self, image_name, cells)
        if type(self.source) is not Source:
            raise TypeError(f"source: expected a Source, got {type(self.source).__name__}")
        if type(self.key_only) is not bool:
            raise TypeError(f"key_only: expected a bool, got {type(self.key_only).__name__}")
        if self.attributes or type(self.attributes) is not tuple:
            force_setattr(self, "attributes", _entries(self.attributes, "attributes"))

    def _key(self) -> tuple:
        def image(cells: Image | None) -> tuple | None:
            return None if cells is None else tuple(cell.key() for cell in cells)

        return (self.op.value, self.table, image(self.key), image(self.before), image(self.after),
                self.source.key(), self.key_only, _entries_key(self.attributes))

    def __eq__(self, other: object) -> bool:
        if type(other) is not ChangeEvent:
            return NotImplemented
        return self is other or (
            self.op is other.op and self.table == other.table and self.key_only is other.key_only
            and self.key == other.key and self.before == other.before and self.after == other.after
            and self.source == other.source and same_entries(self.attributes, other.attributes))

    def __ne__(self, other: object) -> bool:  # a Struct's own != compares identity where eq=False
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._key())

    def attribute(self, name: str, default: Value = None) -> Value:
        """The value of the first attribute called ``name``."""
        for attribute_name, value in self.attributes:
            if attribute_name == name:
                return value
        return default

    @property
    def event_id(self) -> str:
        """A deterministic id of what the change says: the same change delivered twice has the same id.

        It hashes every field of the event (table, key, op, images, source position and times, attributes), in a
        fixed, type-tagged serialization, with BLAKE2b; it never depends on Python's per-process hash seed. Where the
        change was read from (a Kafka offset) is not part of the event, so it is not part of the id.
        """
        digest = hashlib.blake2b(digest_size=16)
        _feed(digest, self._key())
        return digest.hexdigest()


def _feed(digest: hashlib.blake2b, item: object) -> None:
    """Write ``item`` into ``digest`` unambiguously: every item is tagged and every variable part length-prefixed."""
    if item is None:
        digest.update(b"N")
    elif type(item) is bool:
        digest.update(b"T" if item else b"F")
    elif type(item) is int:
        digest.update(b"I" + item.to_bytes(16, "big", signed=True))
    elif type(item) is str:
        data = item.encode("utf-8", "surrogatepass")
        digest.update(b"S" + len(data).to_bytes(8, "big") + data)
    elif type(item) is bytes:
        digest.update(b"B" + len(item).to_bytes(8, "big") + item)
    elif type(item) is tuple:
        digest.update(b"(" + len(item).to_bytes(8, "big"))
        for part in item:
            _feed(digest, part)
    elif type(item) is Table:
        _feed(digest, ("table", item.name, item.schema, item.catalog))
    else:  # pragma: no cover - _key() only produces the types above
        raise TypeError(f"cannot hash {type(item).__name__}")
