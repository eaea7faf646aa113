"""``lindorm``: Lindorm Streams JSON, one message per row operation.

    {"op": "Put", "table": "orders", "ts": "1677165953000", "keyOnly": "false",
     "data": [{"type": "VARCHAR", "name": "id", "ts": "", "value": "o-1"}, ...]}

How the message maps onto the canonical event:

* ``op`` is an HBase mutation. ``Put`` is an UPSERT whose ``data`` is the after image. ``Delete`` (one version of each
  listed column) and ``DeleteColumn`` (every version) are UPDATEs whose after image holds DELETE_VERSION or
  DELETE_ALL_VERSIONS cells. ``DeleteFamily`` (the row) is a DELETE whose ``data`` is the before image.
  ``DeleteFamilyVersion`` (every column at one version) is an UPDATE of DELETE_VERSION cells, told apart from a
  ``Delete`` by the attribute ``lindorm.op``, which is only set when the op cannot be derived from the event (and
  then comes first, before ``lindorm.blank_ts`` and the kept fields).
* ``ts``, the default version, is the time of the mutation (HBase stamps a mutation's cells with it), so it is the
  commit time (milliseconds); blank or absent, there is none, and it is written back absent. An entry's own ``ts``
  is the cell version; blank (``"ts": ""``, as Lindorm writes a cell of the default version) or absent, the cell has
  no version (None). Which entries had a blank ``ts`` is kept in the attribute ``lindorm.blank_ts``: their positions
  in ``data``, from 0, as JSON text (``"[0,1,2]"``), set only where there is such an entry; those entries are
  written back with ``"ts": ""``, the other entries without a version with no ``ts``.
* ``keyOnly`` is ``key_only``. Strings are the documented form; JSON booleans and 0/1 are accepted too.
* Every value is written as text. A value is typed by its entry's ``type`` when, and only when, writing the typed value
  back gives the same text (see ``typed_text``): "7" in a BIGINT column is 7, "007" stays "007". A missing value is
  null. How binary values are written is not documented, so bytes cannot be encoded.
* Which entries form the primary key is not in the message: give ``key_columns`` and the key is read out of the
  image. Key entries identify the row, so in a Delete they are PUT cells, not deletions. Without ``key_columns`` a
  Delete's or DeleteColumn's event has no key and its row key entries are deletions like the others: a format that
  writes a deleted column as a null (all but lindorm, ots and the canonical envelopes) refuses it, since every
  column it wrote would be null and name no row; the error names ``key_columns``.
* The layout of the before image that the product page mentions is not documented; top-level fields other than the
  five documented ones are kept verbatim as ``lindorm.field.<name>`` attributes and written back, so nothing is lost.

Written from other formats (each difference a ``Loss`` of ``dropped()``):

* A relational INSERT, READ or UPDATE that puts values is a Put, an UPSERT: Lindorm has no insert, and a Put writes
  the row whether or not it existed. An UPDATE that puts values and deletes columns too (a Tablestore UpdateRow) is a
  Put with the deleted columns set to null; one that only deletes columns is a Delete (one version of each) or a
  DeleteColumn (every version). A DELETE is a DeleteFamily of its before image; an UPSERT is a Put. A mutation holds
  one image: the other is dropped. A Put cannot delete a column, so a deleted column in it is the column set to null;
  a DeleteFamily's entries are the row's cells (PUT).
* Key cells that the event keeps outside the row image (Tablestore's primary key) are written in front of the row,
  so the row key is in ``data``; the key then reads back as ``key_columns`` names it. In a Delete, an entry of the
  event's key that ``key_columns`` does not name reads back as a deletion, like the other entries.
* Values are written as text and typed back by their entry's type: bytes as base64 text, a nested value (an array or
  a struct, which Lindorm's text values do not have: an entry whose value is a JSON array or object is refused) as its
  JSON text; a value its type would not read back as its text (7 in a VARCHAR column, the text "7" losing the type
  BIGINT); sub-millisecond commit times floored to the millisecond; table schema and catalog, source position and
  system, capture time and other formats' attributes have no place.
* An event without ``lindorm.blank_ts`` (any other format's) is written with no ``ts`` in its entries without a
  version, so nothing of it is lost there. A ``lindorm.blank_ts`` is written as what decoding gives back: of the
  integers its JSON text lists, the positions of entries without a version, in order, once each (left out where
  there is none); key entries written in front of the row (above) move them by as many places.
* A TRUNCATE, and an INSERT, READ, UPSERT or UPDATE without an after image (or a DELETE without a before image or a
  key), have no Lindorm mutation: refused (``cf.loss`` lists their shapes).

Normal form (what ``encode`` writes): every scalar as a JSON string, ``keyOnly`` always present, absent fields
(``table``, ``ts``, an entry's ``type``/``value``) left out, and an entry's ``ts`` blank or left out as it came.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from msgspec.structs import replace

from ..contract import NONEMPTY, PRESENT, JvmDecoder, JvmEncoder, Shape, as_text
from ..core import time_units, typed_text
from ..errors import DecodeError, EncodeError
from ..losses import REFUSED, Loss, Refusal
from ..model import (
    INT64_MAX,
    INT64_MIN,
    Cell,
    CellKind,
    ChangeEvent,
    Entries,
    Image,
    Op,
    Source,
    Table,
    Value,
    is_nested,
    same_entries,
)
from ._kit import kept_fields
from ._kit.json_message import MAX_MESSAGE_BYTES, encode, json_type, load_object
from ._kit.keys import KEY_COLUMNS, KeyedByColumns, key_cells, key_cells_outside

NAME = "lindorm"
OP_ATTRIBUTE = "lindorm.op"
BLANK_TS_ATTRIBUTE = "lindorm.blank_ts"
FIELD_ATTRIBUTE = "lindorm.field."

# Lindorm op -> (canonical op, the image that holds "data", the cell kind of its entries)
_OPS: dict[str, tuple[Op, str, CellKind]] = {
    "Put": (Op.UPSERT, "after", CellKind.PUT),
    "Delete": (Op.UPDATE, "after", CellKind.DELETE_VERSION),
    "DeleteColumn": (Op.UPDATE, "after", CellKind.DELETE_ALL_VERSIONS),
    "DeleteFamily": (Op.DELETE, "before", CellKind.PUT),
    "DeleteFamilyVersion": (Op.UPDATE, "after", CellKind.DELETE_VERSION),
}
_DOCUMENTED_FIELDS = ("op", "table", "ts", "keyOnly", "data")
_WRITTEN_AS_IS = frozenset({str, type(None)})  # values an entry without a type holds as they read back
# Read once: reading an enum member off its class runs Python code (enum's metaclass), on every event.
_UPSERT, _UPDATE, _DELETE, _PUT = Op.UPSERT, Op.UPDATE, Op.DELETE, CellKind.PUT
_ENTRY_FIELDS = frozenset({"type", "name", "ts", "value"})


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    """An entry of ``data`` in the documented layout, as ``_read_mutation`` reads it."""

    name: str
    type: str | None = None
    ts: str | int | None = None
    value: str | int | float | bool | None = None


class _Mutation(msgspec.Struct, forbid_unknown_fields=True):
    """A message in the documented layout: the five fields, of the types Lindorm writes (and the JSON integers and
    booleans accepted for them), checked by msgspec as it parses."""

    op: str
    table: str | None = None
    ts: str | int | None = None
    keyOnly: str | bool | int = "false"
    data: list[_Entry] = msgspec.field(default_factory=list)


# Most messages are in the documented layout, which msgspec reads into Structs faster than into dicts, checking
# their types as it goes. A message in any other one (fields of its own, a type Lindorm does not write) fails this
# reader and is read as any JSON, which keeps what it has and names what is wrong, so both give the same.
_read_mutation = msgspec.json.Decoder(_Mutation).decode
_INTEGER_TEXT = re.compile(r"-?[0-9]{1,19}")  # at most what fits in 64 bits, so int() is cheap
_KEY_ONLY = {"true": True, "false": False, True: True, False: False}  # 1 and 0 hash as True and False


class LindormCodec(KeyedByColumns):
    name = NAME
    description = "Lindorm Streams JSON (HBase mutations with typed, versioned cells)"
    carries = frozenset({
        "op.UPSERT", "op.UPDATE", "op.DELETE", "table", "key", "before", "after", "image.columns",
        "cell.type", "cell.version", "cell.repeated", "cell.kind.DELETE_VERSION", "cell.kind.DELETE_ALL_VERSIONS",
        "value.null", "value.bool", "value.int", "value.float", "value.float_nonfinite", "value.str",
        "value.decimal", "source.commit_time", "key_only",
    })
    shapes = (
        Shape(Op.UPSERT, after=PRESENT),
        Shape(Op.UPDATE, after=PRESENT, kinds=frozenset({CellKind.DELETE_VERSION})),
        Shape(Op.UPDATE, after=NONEMPTY, kinds=frozenset({CellKind.DELETE_ALL_VERSIONS})),
        Shape(Op.DELETE, before=PRESENT),
    )
    own_attributes = frozenset({OP_ATTRIBUTE, BLANK_TS_ATTRIBUTE, FIELD_ATTRIBUTE})
    also_reads = frozenset({"value.bool", "value.int", "value.float"})  # a JSON boolean or number as it is
    options = (KEY_COLUMNS, MAX_MESSAGE_BYTES)

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_message(self, message: bytes) -> ChangeEvent:
        max_bytes = self.config["max_message_bytes"]
        if type(message) is bytes and len(message) <= max_bytes:
            try:
                mutation = _read_mutation(message)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                pass  # not in the documented layout: the reader of any JSON keeps what it has, or names what is wrong
            else:
                return self._event(mutation.op, mutation.table, mutation.ts, mutation.keyOnly, mutation.data,
                                   _entry_cells, ())
        document = load_object(NAME, message, max_bytes)
        return self._event(document.get("op"), document.get("table"), document.get("ts"),
                           document.get("keyOnly", "false"), document.get("data", []), _cells, document.items())

    def _event(self, op_name: Any, table_name: Any, ts: Any, key_only_given: Any, data: Any,
               read_cells: Callable[[Any, CellKind, tuple[str, ...]], tuple[Image, list[int]]],
               fields: Iterable[tuple[str, Any]]) -> ChangeEvent:
        """The event of a message's fields: its ``data`` read by ``read_cells``, its ``fields`` other than the
        documented ones kept as attributes."""
        if type(op_name) is not str or op_name not in _OPS:
            raise DecodeError(NAME, f"unknown op {op_name!r}; expected one of {', '.join(_OPS)}", field="op")
        op, image_name, kind = _OPS[op_name]
        if table_name is not None and type(table_name) is not str:
            raise DecodeError(NAME, f"expected a string, got {json_type(table_name)}", field="table")
        table = None if table_name is None else Table(table_name)
        default_version = _version(ts, "ts")
        commit_time_us = None if default_version is None else _to_microseconds(default_version)
        key_only = _key_only(key_only_given)
        if key_only is None:
            raise DecodeError(NAME, f"expected \"true\" or \"false\", got {key_only_given!r}", field="keyOnly")
        table_key = self.key_columns.for_table(table)
        image, blank_ts = read_cells(data, kind, table_key)
        attributes = kept_fields.read(FIELD_ATTRIBUTE, fields, _DOCUMENTED_FIELDS) if fields else []
        if blank_ts:
            attributes.insert(0, (BLANK_TS_ATTRIBUTE, _positions_text(blank_ts)))
        event = ChangeEvent(
            op=op, table=table, key=key_cells(table_key, image),
            before=image if image_name == "before" else None, after=image if image_name == "after" else None,
            source=Source(commit_time_us=commit_time_us), key_only=key_only, attributes=tuple(attributes))
        if _derived_op(event, table_key) != op_name:
            event = _with_op_attribute(event, op_name)
        return event

    def batch_decoder(self) -> Any:
        return self.decode_arrow

    def decode_arrow(self, values: Any) -> tuple[Any, Any]:
        """Decode a pyarrow array of messages at once (see ``lindorm_arrow``): the events as
        ``cdcformats.envelopes.arrow.EVENT`` rows, and which rows were left for ``decode_message``."""
        from . import lindorm_arrow

        if self.key_columns.per_table:  # keys that depend on the table are left to the reference decoder
            import pyarrow as pa

            from ..envelopes import arrow

            return pa.nulls(len(values), arrow.EVENT), values.is_valid()
        return lindorm_arrow.decode_arrow(values, self.config["max_message_bytes"], self.key_columns.everywhere,
                                          BLANK_TS_ATTRIBUTE)

    def jvm_decoder(self) -> JvmDecoder:
        """``cdcformats/jvm/decoders/LindormDecoder.java``, this decoder in Java."""
        return JvmDecoder("cdcformats.jvm.decoders.LindormDecoder", {
            "max_message_bytes": str(self.config["max_message_bytes"]), **self.key_columns.settings()})

    def jvm_encoder(self) -> JvmEncoder:
        """``cdcformats/jvm/encoders/LindormEncoder.java``, this encoder in Java, for every option (``key_columns``
        is the only one that changes what is written)."""
        return JvmEncoder("cdcformats.jvm.encoders.LindormEncoder", self.key_columns.settings())

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_event(self, event: ChangeEvent) -> bytes:
        attributes = event.attributes
        op_name = (attributes and event.attribute(OP_ATTRIBUTE)
                   or _derived_op(event, self.key_columns.for_table(event.table)))
        if not isinstance(op_name, str) or op_name not in _OPS or _OPS[op_name][0] is not event.op:
            raise EncodeError(NAME, f"lindorm has no mutation for this {event.op.value}", field="op")
        image_name = _OPS[op_name][1]
        document: dict[str, Any] = {"op": op_name}
        if event.table is not None:
            document["table"] = event.table.name
        if event.source.commit_time_us is not None:
            document["ts"] = str(time_units.in_unit(event.source.commit_time_us, time_units.MILLISECOND))
        document["keyOnly"] = "true" if event.key_only else "false"
        image = getattr(event, image_name)
        blank_ts = _blank_ts(event.attribute(BLANK_TS_ATTRIBUTE), image) if attributes else ()
        document["data"] = [_entry(cell, index in blank_ts) for index, cell in enumerate(image)]
        if attributes:
            document.update(kept_fields.write(NAME, attributes, FIELD_ATTRIBUTE, _DOCUMENTED_FIELDS))
        return encode(document)

    def encode_whole(self, event: ChangeEvent) -> list[bytes] | None:
        """A Put of an UPSERT's after image, or a DeleteFamily of a DELETE's before image, of untyped text or null
        entries, with no attributes, an unqualified table, a commit time to the millisecond and nothing else in its
        source, and the key that decoding reads out of its entries: written as ``encode_event`` writes it, each
        condition checked where the writing comes to it."""
        op = event.op
        document: dict[str, Any]
        if op is _UPSERT:
            image, other_image, document = event.after, event.before, {"op": "Put"}
        elif op is _DELETE:
            image, other_image, document = event.before, event.after, {"op": "DeleteFamily"}
        else:
            return None
        source = event.source
        if image is None or other_image is not None or event.attributes or source.system is not None \
                or source.position or source.capture_time_us is not None:
            return None
        table = event.table
        if table is not None:
            if table.schema is not None or table.catalog is not None:
                return None
            document["table"] = table.name
        commit_time = source.commit_time_us
        if commit_time is not None:
            if commit_time % time_units.MILLISECOND:
                return None
            document["ts"] = str(commit_time // time_units.MILLISECOND)
        document["keyOnly"] = "true" if event.key_only else "false"
        entries = []
        for cell in image:
            value = cell.value
            if cell.kind is not _PUT or cell.type is not None or type(value) not in _WRITTEN_AS_IS:
                return None
            entries.append({"name": cell.name, "value": value} if cell.version is None and value is not None
                           else _entry(cell, False))
        if not self.holds_key_as_read(event, image):
            return None
        document["data"] = entries
        return [encode(document)]

    # -- what other formats' events lose ----------------------------------------------------------------------------

    key_in_row = True

    def row_image_name(self, event: ChangeEvent) -> str:
        return "before" if event.op is Op.DELETE else "after"

    def keyed_by_row(self, event: ChangeEvent) -> ChangeEvent:
        """As written: the entries that lindorm.blank_ts names move by as many places as key entries are written in
        front of them; also, in an UPDATE that only deletes columns (a Delete or DeleteColumn), the entries of the
        event's key that key_columns does not name are written as row key entries, which read back with the
        mutation's kind: without key_columns naming them, nothing tells them from the deleted columns."""
        written = super().keyed_by_row(event)
        in_front = len(key_cells_outside(event.key, getattr(event, self.row_image_name(event))))
        if in_front and any(name == BLANK_TS_ATTRIBUTE for name, _ in event.attributes):
            attributes = []
            for name, value in event.attributes:
                listed = _listed_positions(value) if name == BLANK_TS_ATTRIBUTE else set()
                if listed:  # the key entries written in front of the row move the entries it names
                    value = _positions_text(sorted(position + in_front for position in listed if position >= 0))
                attributes.append((name, value))
            written = replace(written, attributes=tuple(attributes))
        after = written.after
        if event.op is not Op.UPDATE or after is None:
            return written
        key_columns = self.key_columns.for_table(event.table)
        identifying = {cell.name for cell in event.key}.union(key_columns)
        kinds = {cell.kind for cell in after if cell.name not in identifying}
        if kinds <= {CellKind.DELETE_VERSION}:
            kind = CellKind.DELETE_VERSION
        elif kinds == {CellKind.DELETE_ALL_VERSIONS}:
            kind = CellKind.DELETE_ALL_VERSIONS
        else:
            return written
        return replace(written, after=tuple(
            replace(cell, kind=kind) if cell.name in identifying and cell.name not in key_columns else cell
            for cell in after))

    def read_key(self, table: Table | None, image: Image | None) -> Image:
        """Key entries identify the row, so they read back as PUT cells whatever the mutation."""
        return tuple(cell if cell.kind is CellKind.PUT else replace(cell, kind=CellKind.PUT)
                     for cell in super().read_key(table, image))

    def carried_cell(self, cell: Cell) -> Cell:
        """Every value is written as text and typed back by its entry's type: bytes, whose form is not documented,
        are written as base64 text, a nested value as its JSON text; a text that its type would retype loses the
        type; any other value that its type does not read back is written as its text, typed back as far as the type
        reads it."""
        value = cell.value
        if type(value) is bytes or is_nested(value):
            value = as_text(value)
        if not typed_text.carries(value, cell.type):
            if type(value) is str:
                return replace(cell, value=value, type=None)
            value = typed_text.parse(typed_text.render(value), cell.type)
        return cell if value is cell.value else replace(cell, value=value)

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """A change as the Lindorm mutation closest to it: an INSERT, READ or UPDATE that puts values is a Put (an
        UPSERT), a column it deletes written as the column set to null; an UPDATE that only deletes columns is a
        Delete or DeleteColumn; a DELETE is a DeleteFamily of the before image, its entries the row's cells. A
        mutation holds one image."""
        if event.op is Op.TRUNCATE:
            return super().reshaped(event)
        image_name = self.row_image_name(event)
        image = getattr(event, image_name)
        if image is None:
            raise Refusal(Loss(f"op.{event.op.value}", image_name, REFUSED, f"a Lindorm mutation writes the row's "
                                                                            f"{image_name} image, and this "
                                                                            f"{event.op.value} has none"))
        other_image = "after" if image_name == "before" else "before"
        changed: dict[str, Any] = {other_image: None} if getattr(event, other_image) is not None else {}
        key_names = {cell.name for cell in event.key}
        if event.op is Op.DELETE:
            changed["before"] = tuple(cell if cell.kind is CellKind.PUT else replace(cell, kind=CellKind.PUT)
                                      for cell in image)
            return replace(event, **changed)
        kinds = {cell.kind for cell in image if cell.name not in key_names}
        if event.op is Op.UPDATE and (kinds <= {CellKind.DELETE_VERSION} or kinds == {CellKind.DELETE_ALL_VERSIONS}):
            return replace(event, **changed) if changed else event  # a Delete or DeleteColumn
        if event.op is not Op.UPSERT:
            changed["op"] = Op.UPSERT
        changed["after"] = tuple(
            cell if cell.kind is CellKind.PUT else
            replace(cell, kind=CellKind.PUT, value=cell.value if cell.name in key_names else None) for cell in image)
        return replace(event, **changed)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """Entries of key columns read back as PUT cells, every other entry with the mutation's kind; the attributes
        as decoding gives them."""
        written = super().normal_form(event)
        key_columns = self.key_columns.for_table(written.table)
        attributes = _attributes_as_decoded(written, key_columns, getattr(written, self.row_image_name(written)))
        op_name = (attributes[0][1] if attributes and attributes[0][0] == OP_ATTRIBUTE
                   else _derived_op(written, key_columns))
        assert isinstance(op_name, str)  # _attributes_as_decoded keeps lindorm.op only where it names an op (_fits)
        _, image_name, kind = _OPS[op_name]
        image = []
        for cell in getattr(written, image_name):
            written_kind = CellKind.PUT if cell.name in key_columns else kind  # a key entry identifies the row
            image.append(cell if cell.kind is written_kind else replace(cell, kind=written_kind))
        written = self.with_key_as_read(replace(written, **{image_name: tuple(image)}), tuple(image))
        return written if same_entries(written.attributes, attributes) else replace(written, attributes=attributes)


def _attributes_as_decoded(event: ChangeEvent, key_columns: tuple[str, ...], image: Image) -> Entries:
    """The attributes that decoding this event's message would give: those of a round trip. ``lindorm.op`` first,
    where it names an op that writes the event and that cannot be derived from it; then ``lindorm.blank_ts``, as the
    entries of ``image`` (the one written) that it makes blank; then the kept fields."""

    def group_of(name: str, value: Value) -> tuple[int, Value] | None:
        if name == OP_ATTRIBUTE:
            fits = value != _derived_op(event, key_columns) and _fits(value, event, key_columns)
            return (0, value) if fits else None
        if name == BLANK_TS_ATTRIBUTE:
            blank_ts = _blank_ts(value, image)
            return (1, _positions_text(blank_ts)) if blank_ts else None
        return (2, value) if kept_fields.is_kept_field(name, value, FIELD_ATTRIBUTE, _DOCUMENTED_FIELDS) else None

    return kept_fields.as_decoded(event.attributes, group_of)


def _fits(op_name: Value, event: ChangeEvent, key_columns: tuple[str, ...]) -> bool:
    """Whether the Lindorm op ``op_name`` writes ``event``: its op, and the kind of every entry but the key's."""
    if type(op_name) is not str or op_name not in _OPS:
        return False
    op, image_name, kind = _OPS[op_name]
    image = getattr(event, image_name)
    return op is event.op and image is not None and all(cell.kind is kind for cell in image
                                                        if cell.name not in key_columns)


def _derived_op(event: ChangeEvent, key_columns: tuple[str, ...]) -> str:
    """The Lindorm op that writes ``event``: a DELETE is a DeleteFamily, an UPDATE that only deletes is a Delete or
    DeleteColumn, anything else a Put."""
    if event.op is _DELETE:
        return "DeleteFamily"
    if event.op is _UPDATE:
        kinds = {cell.kind for cell in event.after or () if cell.name not in key_columns}
        if kinds <= {CellKind.DELETE_VERSION}:
            return "Delete"
        if kinds == {CellKind.DELETE_ALL_VERSIONS}:
            return "DeleteColumn"
    return "Put"


def _with_op_attribute(event: ChangeEvent, op_name: str) -> ChangeEvent:
    return ChangeEvent(event.op, event.table, event.key, event.before, event.after, event.source, event.key_only,
                       ((OP_ATTRIBUTE, op_name), *event.attributes))


def _key_only(value: Any) -> bool | None:
    if type(value) is str:
        value = value.lower()
    elif type(value) not in (bool, int):
        return None
    return _KEY_ONLY.get(value)


def _version(value: Any, field: str) -> int | None:
    """A version or timestamp: a JSON string of digits (documented) or a JSON integer; blank means none."""
    if value is None or value == "":
        return None
    if type(value) is str and _INTEGER_TEXT.fullmatch(value):
        value = int(value)
    if type(value) is not int:
        raise DecodeError(NAME, f"expected a millisecond timestamp, got {value!r}", field=field)
    if not INT64_MIN <= value <= INT64_MAX:
        raise DecodeError(NAME, f"{value} is outside the signed 64-bit range", field=field)
    return value


def _to_microseconds(milliseconds: int) -> int:
    microseconds = time_units.to_microseconds(milliseconds, time_units.MILLISECOND)
    if microseconds is None:
        raise DecodeError(NAME, f"{milliseconds} ms is too far from 1970 to hold in microseconds", field="ts")
    return microseconds


def _listed_positions(value: Value) -> set[int]:
    """The positions a ``lindorm.blank_ts`` of ``value`` lists: JSON text of an array of integers; else none."""
    if type(value) is not str:
        return set()
    try:
        listed = msgspec.json.decode(value)
    except msgspec.DecodeError:
        return set()
    if type(listed) is not list:
        return set()
    return {item for item in listed if type(item) is int}  # not true or 1.0, which equal 1 in Python


def _blank_ts(value: Value, image: Image) -> list[int]:
    """The positions of the entries that a ``lindorm.blank_ts`` of ``value`` writes with a blank ``ts``: those it
    lists that are entries of ``image`` without a version; in order."""
    listed = _listed_positions(value)
    return [index for index, cell in enumerate(image) if cell.version is None and index in listed]


def _positions_text(positions: list[int]) -> str:
    return encode(positions).decode()


def _cells(data: Any, kind: CellKind, key_columns: tuple[str, ...]) -> tuple[Image, list[int]]:
    """The cells of ``data``, and the positions of the entries whose ``ts`` is blank; entries of key columns
    identify the row, so they are PUT cells whatever the op."""
    if type(data) is not list:
        raise DecodeError(NAME, f"expected an array, got {json_type(data)}", field="data")
    cells = []
    blank_ts: list[int] = []
    for index, entry in enumerate(data):
        # Places are named only on the way to an error: building them for every entry costs more than the checks.
        if type(entry) is not dict:
            raise DecodeError(NAME, f"expected an object, got {json_type(entry)}", field=f"data[{index}]")
        if not entry.keys() <= _ENTRY_FIELDS:
            raise DecodeError(NAME, f"unknown field (an entry has {', '.join(sorted(_ENTRY_FIELDS))})",
                              field=f"data[{index}].{sorted(entry.keys() - _ENTRY_FIELDS)[0]}")
        name = entry.get("name")
        if type(name) is not str:
            raise DecodeError(NAME, f"expected a string, got {json_type(name)}", field=f"data[{index}].name")
        type_name = entry.get("type")
        if type_name is not None and type(type_name) is not str:
            raise DecodeError(NAME, f"expected a string, got {json_type(type_name)}", field=f"data[{index}].type")
        value = entry.get("value")
        if type(value) is dict or type(value) is list:
            raise DecodeError(NAME, f"expected a scalar value, got {json_type(value)}", field=f"data[{index}].value")
        cells.append(_cell(index, name, type_name, entry.get("ts"), value, kind, key_columns, blank_ts))
    return tuple(cells), blank_ts


def _entry_cells(entries: list[_Entry], kind: CellKind, key_columns: tuple[str, ...]) -> tuple[Image, list[int]]:
    """``_cells`` of entries that msgspec has checked already, as it read them."""
    blank_ts: list[int] = []
    cells = []
    for index, entry in enumerate(entries):
        name, value = entry.name, entry.value
        if entry.type is None and entry.ts is None and type(value) is not int:  # most entries: nothing to read
            cells.append(Cell(name, value, None, None, _PUT if name in key_columns else kind))
        else:
            cells.append(_cell(index, name, entry.type, entry.ts, value, kind, key_columns, blank_ts))
    return tuple(cells), blank_ts


def _cell(index: int, name: str, type_name: str | None, ts: Any, value: Any, kind: CellKind,
          key_columns: tuple[str, ...], blank_ts: list[int]) -> Cell:
    """The cell of the entry at ``index``, a scalar ``value`` typed by its ``type_name``; its position added to
    ``blank_ts`` where its ``ts`` is blank."""
    if type(value) is str and type_name is not None:
        value = typed_text.parse(value, type_name)
    if ts is None:
        version = None
    elif ts == "":
        version = None
        blank_ts.append(index)
    else:
        version = _version(ts, f"data[{index}].ts")
    try:
        return Cell(name, value, type_name, version, _PUT if name in key_columns else kind)
    except (TypeError, ValueError) as error:
        raise DecodeError(NAME, str(error), field=f"data[{index}].value") from None


def _entry(cell: Cell, blank_ts: bool) -> dict[str, Any]:
    value = cell.value
    if cell.type is None and cell.version is None and type(value) is str and not blank_ts:
        return {"name": cell.name, "value": value}  # most entries: found without building the entry field by field
    entry: dict[str, Any] = {}
    if cell.type is not None:
        entry["type"] = cell.type
    entry["name"] = cell.name
    if cell.version is not None:
        entry["ts"] = str(cell.version)
    elif blank_ts:
        entry["ts"] = ""
    if value is not None:
        entry["value"] = typed_text.render(value)
    return entry
