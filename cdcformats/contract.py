"""What every format plugin is: a ``Codec`` subclass with a name, validated options, the canonical features it can
carry, and a paired streaming ``decode`` / ``encode``.

The feature vocabulary below is the language of ``cf.loss()``: a conversion drops exactly the features that the source
can carry and the target cannot. A target states what it writes once, as the normal form of each event
(``Codec.normal_form``); ``Codec.dropped(event)`` compares the two (``cdcformats.losses``), which is how
``strict=True`` names what would be lost.
"""

from __future__ import annotations

import base64
import itertools
import math
from codecs import BOM_UTF8
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar, NamedTuple, TypeAlias

import msgspec
from msgspec.structs import replace

from .core import time_units, typed_text
from .errors import CodecError, ConfigurationError, DecodeError, EncodeError, did_you_mean
from .losses import REFUSED, VALUE_FEATURE, Loss, Refusal, differences
from .model import Cell, CellKind, ChangeEvent, Entries, Image, Op, Source, Table, Value, is_nested

if TYPE_CHECKING:  # pyarrow is needed only by the formats that decode Arrow batches
    import pyarrow as pa

# What ``Codec.batch_decoder()`` gives: messages -> (their events as a ``cdcformats.envelopes.arrow.EVENT`` array, a
# boolean array of the rows it left undecided, which are decoded one by one with ``decode_message``).
BatchDecoder: TypeAlias = Callable[["pa.Array"], tuple["pa.StructArray", "pa.BooleanArray"]]

# The canonical features, in the order the loss table prints them.
OP_FEATURES = tuple(f"op.{op.value}" for op in Op)
VALUE_FEATURES = ("value.null", "value.bool", "value.int", "value.float", "value.str", "value.bytes",
                  "value.decimal")
FEATURES: tuple[str, ...] = (
    *OP_FEATURES,
    "table", "table.schema", "table.catalog",
    "key", "before", "after",
    # An image as it comes, its columns and no others, in its order: every format with images writes them so, but for
    # one of typed rows, which holds every column of its table in the table's order.
    "image.columns",
    "cell.type", "cell.version", "cell.repeated",
    "cell.kind.DELETE_VERSION", "cell.kind.DELETE_ALL_VERSIONS",
    *VALUE_FEATURES,
    # NaN or an infinity, which JSON numbers cannot write.
    "value.float_nonfinite",
    # An array or a Struct, of values JSON writes as they are (null, booleans, integers, finite floats, text).
    "value.nested",
    # A nested value holding bytes, a decimal, NaN or an infinity, which JSON writes only as text.
    "value.nested_non_json",
    # A value whose kind is not the one its cell's SQL type name implies (the text "007" in a BIGINT column):
    # formats that write values as text and type them by name can only carry some of these.
    "value.off_type",
    "source.system", "source.position", "source.commit_time", "source.capture_time",
    # A commit or capture time with a part below the millisecond, which millisecond formats cannot write.
    "source.time.sub_ms",
    "key_only", "attributes",
)
ALL_FEATURES = frozenset(FEATURES)

def owns_attribute(own_attributes: frozenset[str], name: str) -> bool:
    return name in own_attributes or any(own.endswith(".") and name.startswith(own) for own in own_attributes)


ABSENT, PRESENT, OPTIONAL, NONEMPTY = "absent", "present", "optional", "nonempty"
# The option of a format that registers schemas itself (debezium-avro): a registry client, URL or file.
REGISTRY_OPTION = "schema_registry"
_LEFT_OUT = object()  # an entry a format does not write


@dataclass(frozen=True)
class Shape:
    """One form of change a format can express: its op, whether each image is absent, present (``nonempty``: with
    at least one cell) or either (``optional``), and which cell kinds the images may hold.

    A format with ``shapes`` carries an event only if some shape admits it: Lindorm, say, writes an UPDATE only as a
    Delete or DeleteColumn message, so an UPDATE that puts values becomes a Put (an UPSERT).
    """

    op: Op
    before: str = ABSENT
    after: str = ABSENT
    kinds: frozenset[CellKind] = frozenset({CellKind.PUT})

    def admits(self, event: ChangeEvent) -> bool:
        key_names = {cell.name for cell in event.key}
        return (event.op is self.op and _image_fits(event.before, self.before, self.kinds, key_names)
                and _image_fits(event.after, self.after, self.kinds, key_names))

    def covers(self, other: Shape) -> bool:
        """Whether every event ``other`` admits is admitted here too."""
        return (self.op is other.op and other.kinds <= self.kinds and _rule_covers(self.before, other.before)
                and _rule_covers(self.after, other.after))

    def __str__(self) -> str:
        images = [f"{name} {rule}" for name, rule in (("before", self.before), ("after", self.after)) if rule != ABSENT]
        kinds = "/".join(sorted(kind.value for kind in self.kinds))
        return f"{self.op.value}({', '.join(images) or 'no images'}; cells {kinds})"


def _image_fits(image: Image | None, rule: str, kinds: frozenset[CellKind], key_names: set[str]) -> bool:
    """Whether an image follows a rule; key columns in it identify the row, so they may always be PUT cells."""
    if image is None:
        return rule in (ABSENT, OPTIONAL)
    if rule == ABSENT or (rule == NONEMPTY and not image):
        return False
    if CellKind.PUT in kinds and all(cell.kind is CellKind.PUT for cell in image):
        return True  # most images: told by identity, since hashing an enum member runs Python code
    return all(cell.kind in kinds or (cell.kind is CellKind.PUT and cell.name in key_names) for cell in image)


_RULE_ADMITS = {ABSENT: {"none"}, PRESENT: {"empty", "cells"}, NONEMPTY: {"cells"},
                OPTIONAL: {"none", "empty", "cells"}}


def _rule_covers(rule: str, other: str) -> bool:
    return _RULE_ADMITS[other] <= _RULE_ADMITS[rule]


class KafkaRecord(NamedTuple):
    """The message of a format whose Kafka record key is part of the format (Kafka Connect JSON for sinks, the Paimon
    log): key and value bytes, either of them None. A null value is a tombstone: for these formats a delete."""

    key: bytes | None
    value: bytes | None


# A Struct, which is made in C, where a NamedTuple's constructor is a Python function: one is made for every message
# a conversion decodes.
class DecodedUnit(msgspec.Struct, frozen=True):
    """What one message decoded to, kept with the message: or, for a format whose change spans several messages
    (the rows of a Tablestore record), what those messages decoded to together. ``position`` is the first message's
    (as given to ``decode_units``); ``events`` are none for a message the format skips (a Canal DDL message under
    ``skip_ddl``); ``error`` is the ``DecodeError`` that refused the messages, placed."""

    position: int
    messages: tuple[Any, ...]
    events: list[ChangeEvent]
    error: DecodeError | None = None

    @classmethod
    def refused(cls, position: int, message: Any, error: DecodeError) -> DecodedUnit:
        """The unit of one message that ``error`` refused, the error placed at the message."""
        return cls(position, (message,), [], error.at(position, message))


@dataclass(frozen=True)
class Option:
    """A codec option: its name, what it means, its default, and a parser that validates and normalizes a value
    (raising ``TypeError`` or ``ValueError`` with a message that reads well after "option NAME: ")."""

    name: str
    doc: str
    default: Any = None
    parse: Callable[[Any], Any] = staticmethod(lambda value: value)
    required: bool = False  # a codec cannot be made without it
    names_key_columns: bool = False  # its value names the key columns, which the format's messages do not mark


def flag(value: Any) -> bool:
    """The parser of an on/off option."""
    if type(value) is not bool:
        raise TypeError(f"expected True or False, got {value!r}")
    return value


def one_of(*choices: str) -> Callable[[Any], str]:
    """The parser of an option that takes one of ``choices``."""
    def parse(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return value
    return parse


@dataclass(frozen=True)
class WriterSchema:
    """The schema a format's messages are registered with in a schema registry: its type as Confluent names it
    (``AVRO``, ``PROTOBUF``) and its text in the form Confluent's serializers register it, so that registering it
    here or through a serializer gives one id."""

    schema_type: str
    text: str


@dataclass(frozen=True)
class JvmDecoder:
    """A decoder of a codec's messages that runs inside Spark's JVM (``Codec.jvm_decoder``): a Java class of the
    package's jar that implements ``cdcformats.jvm.decoders.MessageDecoder`` (``RecordDecoder`` for a format whose
    messages are Kafka records), and the settings its constructor takes, which say what the codec's options say. It
    decodes each message exactly as ``decode_message`` does (a record as ``decode_messages`` does: to its one change,
    or to none)."""

    class_name: str
    settings: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JvmEncoder:
    """An encoder of events into a codec's messages that runs inside Spark's JVM (``Codec.jvm_encoder``): a Java class
    of the package's jar, and the settings its constructor takes. It writes each event exactly as ``encode_messages``
    does (one message), and refuses what it refuses. The class implements one of two interfaces, by which Spark tells
    what it writes: ``cdcformats.jvm.encoders.MessageEncoder`` for a format whose messages are bytes (a binary
    value), ``cdcformats.jvm.encoders.RecordEncoder`` for one whose messages are Kafka records (``KafkaRecord``, the
    codec's ``message_type``: a key and a value, each bytes or null)."""

    class_name: str
    settings: dict[str, str] = field(default_factory=dict)


class Codec:
    """Base class of every format.

    A subclass sets ``name``, ``description``, ``carries`` (a subset of ``FEATURES``) and ``options``, and implements
    ``decode_message`` / ``encode_event`` for formats where one message is one event. A format where one event
    spans several messages returns an ``IncrementalDecoder`` of its own from ``incremental_decoder`` and writes them
    in ``encode_exact``. ``decode`` and ``decode_units`` are built on the incremental decoder, and so is
    ``read_units``, which a format with a file form of its own overrides to read its messages out of a file. A format
    whose changes span messages may override ``decode`` and ``decode_units`` with one walk of a stream that its
    incremental decoder also makes (Tablestore rows: a call per row cost more than the rest of decoding).
    Implementations raise ``DecodeError`` / ``EncodeError`` without a position; the stream loop here adds it.

    What a format writes for an event of any other is its ``normal_form`` of it, which encoding writes exactly
    (``encode_exact``) and ``dropped()`` compares with the event. By default that is what ``carries`` and ``shapes``
    say (cell by cell ``carried_cell``, image by image ``carried_image``, and ``reshaped`` for a kind of change no
    shape admits); a format with rules of its own overrides these, and ``normal_form`` to apply the rest to what
    they give.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    message_type: ClassVar[type] = bytes
    # Not ClassVars: a format whose options change what it carries (key columns, say) sets them on the instance.
    carries: frozenset[str] = ALL_FEATURES
    shapes: tuple[Shape, ...] | None = None  # None: any op with any images and cell kinds
    # Attributes it writes back without carrying attributes in general; a name ending in "." stands for a prefix.
    own_attributes: frozenset[str] = frozenset()
    # What an event must hold to have any form here ("table", "key"): a change without it is refused, as the loss
    # "requires <what>" that cf.loss() lists.
    requires: tuple[str, ...] = ()
    # What decoding its messages gives that writing other formats' changes does not (Lindorm reads a JSON number as
    # it is, and writes every value as text): cf.loss() asks a target about changes holding these as they are.
    also_reads: frozenset[str] = frozenset()
    # The fields of a source position where its messages have only these, in their order (Maxwell's xid, commit...):
    # cf.loss() asks a target about positions of them. Empty where a position may name any field.
    position_fields: tuple[str, ...] = ()
    options: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        known = {option.name: option for option in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigurationError(
                f"{self.name}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
                f"{did_you_mean(unknown[0], known)}; known options: {', '.join(sorted(known)) or 'none'}")
        missing = [option.name for option in self.options if option.required and options.get(option.name) is None]
        if missing:
            raise ConfigurationError(f"{self.name}: the option{'s' if len(missing) > 1 else ''} "
                                     f"{', '.join(missing)} {'are' if len(missing) > 1 else 'is'} required")
        self.given = options  # as the caller wrote them, for repr()
        self.config: dict[str, Any] = {}
        for option in self.options:
            value = options.get(option.name, option.default)
            try:
                self.config[option.name] = option.parse(value)
            except (TypeError, ValueError) as error:
                raise ConfigurationError(f"{self.name}: option {option.name}: {error}") from None

    def __repr__(self) -> str:
        return f"codec({self.name!r}{''.join(f', {key}={value!r}' for key, value in self.given.items())})"

    # -- streaming ------------------------------------------------------------------------------------------------

    def decode(self, messages: Iterable[Any], on_error: Callable[[DecodeError], None] | None = None
               ) -> Iterator[ChangeEvent]:
        """Decode a stream of messages lazily. A bad message raises ``DecodeError``, or, when ``on_error`` is given,
        is handed to it and decoding goes on with the next message."""
        if type(self.incremental_decoder()) is IncrementalDecoder:  # each message alone: no unit to keep for each
            return _decoded_one_by_one(self, messages, on_error)
        return decoded_events(self.decode_units(enumerate(messages)), on_error)

    def encode(self, events: Iterable[ChangeEvent], on_error: Callable[[EncodeError], None] | None = None
               ) -> Iterator[Any]:
        """Encode a stream of events lazily; errors are handled as in ``decode``."""
        return itertools.chain.from_iterable(self.encoded(events, on_error))

    def encoded(self, events: Iterable[ChangeEvent], on_error: Callable[[EncodeError], None] | None = None
                ) -> Iterator[list[Any]]:
        """The messages of each event, lazily, one list per event written; errors are handled as in ``decode``."""
        encode_whole = self.encode_whole
        for position, event in enumerate(events):
            try:  # encode_messages, written out: a call less per event
                messages = encode_whole(event)
                if messages is None:
                    messages = self.encode_exact(self.written(event))
            except EncodeError as error:
                report(error.at(position, event), on_error)
                continue
            yield messages

    def decode_units(self, numbered: Iterable[tuple[int, Any]]) -> Iterator[DecodedUnit]:
        """Decode (position, message) pairs lazily, keeping the message(s) each event came from, so that a
        conversion can dead-letter the raw input of an event that the target refuses. Errors are yielded, placed at
        the position given, never raised. Built on ``incremental_decoder``: each message fed to it, then flushed."""
        decoder = self.incremental_decoder()
        for position, message in numbered:
            yield from decoder.feed(position, message)
        yield from decoder.flush()

    def incremental_decoder(self) -> IncrementalDecoder:
        """A decoder fed one message at a time, which gives each unit once its messages are all there: by default
        each message decodes alone (``decode_messages``). A format whose change spans several messages (the rows of
        a Tablestore record) returns one of its own, which holds messages back until the change is complete."""
        return IncrementalDecoder(self)

    # -- one at a time --------------------------------------------------------------------------------------------

    def decode_message(self, message: Any) -> ChangeEvent:
        raise NotImplementedError(f"{self.name} decodes streams only: use decode()")

    def decode_messages(self, message: Any) -> list[ChangeEvent]:
        """All the events of one message: one for most formats; a format whose message holds several rows (Canal),
        or none (a DDL message skipped), overrides this."""
        return [self.decode_message(message)]

    def encode_event(self, event: ChangeEvent) -> Any:
        raise NotImplementedError(f"{self.name} writes one event as several messages: use encode_messages()")

    def encode_messages(self, event: ChangeEvent) -> list[Any]:
        """All the messages of one event, in this format's normal form of it (``written()``), so that a change from
        any other format is written, and only one with no form here at all is refused."""
        messages = self.encode_whole(event)
        return self.encode_exact(self.written(event)) if messages is None else messages

    def encode_exact(self, event: ChangeEvent) -> list[Any]:
        """The messages of an event this format carries exactly: one for most formats; a format where a record
        spans several messages (Tablestore rows) overrides this."""
        return [self.encode_event(event)]

    # -- files --------------------------------------------------------------------------------------------------------

    # What the positions of messages in a file count, from 1: lines, or records of a binary file form.
    file_unit: ClassVar[str] = "line"

    def read_file(self, stream: BinaryIO, on_error: Callable[[DecodeError], None] | None = None
                  ) -> Iterator[ChangeEvent]:
        """The events of a file in this format, lazily; errors are handled as in ``decode``, placed at the 1-based
        line (or record) of the file."""
        return decoded_events(self.read_units(stream), on_error)

    def read_units(self, stream: BinaryIO) -> Iterator[DecodedUnit]:
        """A file in this format, as ``decode_units`` reads it, each unit at the 1-based number of its line. By
        default a file holds one message per line (JSON lines); blank lines are skipped, and counted. Formats with a
        file form of their own (Avro container files) override this."""
        self._check_file_form()
        return in_file(self.decode_units(numbered_lines(stream)), self.file_unit)

    def file_writer(self, stream: BinaryIO) -> FileWriter:
        """A writer of this format's file form onto ``stream``: by default one message per line."""
        self._check_file_form()
        return FileWriter(stream)

    def write_file(self, stream: BinaryIO, events: Iterable[ChangeEvent],
                   on_error: Callable[[EncodeError], None] | None = None) -> Iterator[int]:
        """Write ``events`` to a file in this format, lazily: yields the number of messages each event took. The
        file is complete (an Avro container's last block written) however the stream of events ends."""
        writer = self.file_writer(stream)
        try:
            for messages in self.encoded(events, on_error):
                writer.write(messages)
                yield len(messages)
        finally:
            writer.close()

    # The format that writes the same messages as text, which a file holds: every format whose messages are not
    # bytes names one.
    text_form: ClassVar[str | None] = None

    def _check_file_form(self) -> None:
        if self.message_type is not bytes:
            raise ConfigurationError(f"{self.name} messages are {self.message_type.__name__}s, which have no file "
                                     f"form: use {self.text_form}, which writes the same messages as text")

    # -- what adapters ask of a format --------------------------------------------------------------------------------
    # Adapters (Kafka, Spark, the command line) never ask which format a codec is, only what it can do.

    def transport_messages(self, payload: bytes) -> list[Any]:
        """The messages of this format that one transport message (a Kafka record's value) holds: by default the
        payload itself."""
        return [payload]

    def transport_payload(self, messages: list[Any]) -> bytes:
        """One transport message holding the messages of one event: by default its only message. A format whose
        event spans several messages overrides this and ``transport_messages``, as each other's inverse."""
        if len(messages) != 1:
            raise EncodeError(self.name, f"this event takes {len(messages)} messages, and one transport message "
                                         "holds one")
        return messages[0]

    def row_key_width(self) -> int | None:
        """For tuple messages (``message_type`` tuple) whose records span several messages: how many leading values
        of a message name the row it changes. A record never spans two rows, so messages can be spread over workers
        by these values and grouped back into records within each; None: no such grouping."""
        return None

    def batch_decoder(self) -> BatchDecoder | None:
        """A decoder of a whole Arrow array of messages at once (``BatchDecoder``), or
        None: the message-at-a-time decoder is then the only one."""
        return None

    def jvm_decoder(self) -> JvmDecoder | None:
        """This codec, as configured, as a decoder that runs inside Spark's JVM, or None when it has none (or none
        for these options): Spark then decodes its messages with the Arrow UDF. Not inherited: a subclass has none
        unless it defines this itself."""
        return None

    def jvm_encoder(self) -> JvmEncoder | None:
        """This codec, as configured, as an encoder that runs inside Spark's JVM, or None when it has none (or none
        for these options): Spark then writes its messages with the Arrow UDF. Not inherited, as ``jvm_decoder``."""
        return None

    @classmethod
    def writer_schema(cls) -> WriterSchema | None:
        """The schema this format's messages are registered with, for the formats whose messages a schema
        registry describes (the canonical envelopes); None for the others."""
        return None

    # Whether a message written with another registered version of ``writer_schema()`` needs that version to be
    # read (Avro resolves a record from its writer's schema); Protobuf reads any compatible version by field number.
    resolves_writer_schemas: ClassVar[bool] = False

    def decode_written_with(self, message: Any, writer_schema: WriterSchema) -> ChangeEvent:
        """A message written with ``writer_schema``, another registered version of this format's schema, read into
        the canonical event (only for a format that ``resolves_writer_schemas``)."""
        raise NotImplementedError(f"{self.name} reads every version of its schema alike: use decode_message()")

    # For a format whose messages are Kafka records (``KafkaRecord``): whether a record's value alone holds the change,
    # the key only repeating the row's key columns, so that a value deserializer, which never sees the key, reads it.
    reads_values_alone: ClassVar[bool] = False

    def decode_value(self, value: bytes) -> list[ChangeEvent]:
        """The changes of a Kafka record read from its value alone (only for a format that ``reads_values_alone``),
        its key cells found where the format finds them without the record's key."""
        raise NotImplementedError(f"{self.name} reads the record key and value together")

    # -- what is lost ---------------------------------------------------------------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._has_loss_rules = any(getattr(cls, stage) is not getattr(Codec, stage)
                                  for stage in ("normal_form", "carried_image", "carried_cell", "reshaped"))
        # A Java codec reads and writes what the class that names it does; a subclass may read or write otherwise
        # (a plugin built on a format, say), so it inherits none and names its own where it has one.
        for jvm_codec in ("jvm_decoder", "jvm_encoder"):
            if jvm_codec not in vars(cls):
                setattr(cls, jvm_codec, getattr(Codec, jvm_codec))

    _has_loss_rules: ClassVar[bool] = False

    def _writes_every_event(self) -> bool:
        """Whether this format writes every event exactly, so that ``dropped()`` is always empty: it carries every
        feature, admits any shape and has no loss rules of its own (the canonical envelopes)."""
        return (self.carries is ALL_FEATURES or self.carries == ALL_FEATURES) and self.shapes is None \
            and not self._has_loss_rules

    def encode_whole(self, event: ChangeEvent) -> list[Any] | None:
        """The messages of ``event`` where it is its own normal form, checked and written in one pass without building
        the normal form: the fast path of encode and ``dropped()`` for an event that holds nothing this format lacks,
        as the events decoded from its own messages mostly do; None where this format does not find so cheaply. A
        format states it for the events it writes most. It may give None for an event it writes whole (which is then
        written through its normal form, found the same); it never gives messages for an event that is not its own
        normal form, nor other messages than ``encode_exact`` writes. The conversion matrix checks both for every
        format."""
        return self.encode_exact(event) if self._writes_every_event() else None

    def written(self, event: ChangeEvent) -> ChangeEvent:
        """``event`` as this format writes it (its ``normal_form``); ``EncodeError`` when the change has no form
        here at all."""
        try:
            return self.normal_form(event)
        except Refusal as refusal:
            raise EncodeError(self.name, refusal.loss.why, field=refusal.loss.path) from None

    def dropped(self, event: ChangeEvent) -> list[Loss]:
        """Where this format's normal form of ``event`` differs from it, and what it writes there instead: an empty
        list is a promise, checked by the property tests, that ``decode(encode(event)) == event``; otherwise they
        check that ``decode(encode(event)) == normal_form(event) == without(event, dropped(event))``. A change with
        no form here gives one loss, written ``REFUSED``."""
        try:
            if self.encode_whole(event) is not None:  # nothing to find, and finding it would walk every cell
                return []
        except EncodeError:  # a writer that refuses more than its normal form says: that answers below
            pass
        try:
            written = self.normal_form(event)
        except Refusal as refusal:
            return [refusal.loss]
        return differences(event, written, self.carries)

    def normal_form(self, event: ChangeEvent) -> ChangeEvent:
        """The event this format writes for ``event``, which is what decoding its messages gives back; ``Refusal``
        for a change that has no form here.

        By default: the event as far as the format carries it (``_carried_form``), of a kind of change some shape
        admits (``reshaped`` where none does). A format with rules of its own overrides this, and applies them to
        what this gives.
        """
        written = self._carried_form(event)
        if self.shapes is not None and not any(shape.admits(written) for shape in self.shapes):
            written = self.reshaped(written)
        return written

    def _carried_form(self, event: ChangeEvent) -> ChangeEvent:
        """``event`` with what this format does not carry (``carries``) taken away or written as it reads back:
        each cell as ``carried_cell`` writes it, one cell per column where cells are not ``repeated`` (the first
        kept), fields not carried taken away, times to the millisecond, and attributes kept only as far as they
        are carried or the format's own. ``Refusal`` for a change that would name no row here (``_unnamed_row``)."""
        unnamed = self._unnamed_row(event)
        if unnamed is not None:
            raise Refusal(unnamed)
        carries = self.carries
        changed: dict[str, Any] = {}
        for image_name in ("key", "before", "after"):
            image = getattr(event, image_name)
            if image is None or image_name == "key" and not image:
                continue
            if image_name not in carries:
                changed[image_name] = () if image_name == "key" else None
                continue
            cells = self.carried_image(image_name, image)
            if cells is not image:
                changed[image_name] = cells
        table = event.table
        if table is not None:
            if "table" not in carries:
                changed["table"] = None
            elif (table.schema is not None and "table.schema" not in carries
                  or table.catalog is not None and "table.catalog" not in carries):
                changed["table"] = Table(table.name, table.schema if "table.schema" in carries else None,
                                         table.catalog if "table.catalog" in carries else None)
        source = self._carried_source(event.source)
        if source is not event.source:
            changed["source"] = source
        if event.key_only and "key_only" not in carries:
            changed["key_only"] = False
        if event.attributes:
            attributes = self._carried_entries(event.attributes, "attributes" in carries)
            if attributes is not event.attributes:
                changed["attributes"] = attributes
        return replace(event, **changed) if changed else event

    def carried_image(self, image_name: str, image: Image) -> Image:
        """An image as this format writes it: each cell as ``carried_cell`` writes it, and, where cells are not
        ``cell.repeated``, one per column (the first)."""
        carried_cell = self.carried_cell
        cells = None  # built only once a cell is written otherwise: most images are written as they are
        for index, cell in enumerate(image):
            written = carried_cell(cell)
            if cells is not None:
                cells.append(written)
            elif written is not cell:
                cells = [*image[:index], written]
        if "cell.repeated" not in self.carries and len({cell.name for cell in image}) < len(image):
            seen: set[str] = set()
            cells = [cell for cell in cells or image if cell.name not in seen and not seen.add(cell.name)]  # type: ignore[func-returns-value]
        return image if cells is None else tuple(cells)

    def _carried_source(self, source: Source) -> Source:
        carries = self.carries
        changed: dict[str, Any] = {}
        if source.system is not None and "source.system" not in carries:
            changed["system"] = None
        if source.position:
            position = self._carried_entries(source.position, True) if "source.position" in carries else ()
            if position is not source.position:
                changed["position"] = position
        for feature, field_name in (("source.commit_time", "commit_time_us"),
                                    ("source.capture_time", "capture_time_us")):
            time_us = getattr(source, field_name)
            if time_us is None:
                continue
            if feature not in carries:
                changed[field_name] = None
            elif time_us % time_units.MILLISECOND and "source.time.sub_ms" not in carries:
                changed[field_name] = time_units.floored(time_us, time_units.MILLISECOND)
        return replace(source, **changed) if changed else source

    def _carried_entries(self, entries: Entries, carried: bool) -> Entries:
        """Named values (a source position, attributes) that are ``carried``: each kept where its kind of value is
        carried, nested values as ``_carried_value`` writes them. Attributes that are not: the format's own kept."""
        plain = self._carriage().plain_value_types
        kept: list[tuple[str, Value]] | None = None  # built only once an entry is written otherwise
        for index, (name, value) in enumerate(entries):
            written: Any
            if not carried:
                written = value if self._owns(name) else _LEFT_OUT
            elif type(value) in plain:
                written = value
            elif VALUE_FEATURE[type(value)] in self.carries and not (type(value) is float and not math.isfinite(value)):
                written = self._carried_value(value)
            else:
                written = _LEFT_OUT
            if kept is None and written is not value:
                kept = list(entries[:index])
            if kept is not None and written is not _LEFT_OUT:
                kept.append((name, written))
        return entries if kept is None else tuple(kept)

    def _owns(self, name: str) -> bool:
        """Whether an attribute is one this format writes back without carrying attributes in general."""
        owned = self.__dict__.setdefault("_owned", {})
        if name not in owned:
            owned[name] = owns_attribute(self.own_attributes, name)
        return owned[name]

    def carried_cell(self, cell: Cell) -> Cell:
        """What this format writes for one cell: a deleted column it has no form for as the column set to null,
        a value of a kind it has no form for as its text (bytes as base64), nested values as ``_carried_value``
        writes them, NaN and infinities as text where it has no form for them, and a type it does not carry, or
        that would retype the value, and a version it does not carry, taken away. A format with rules of its own
        overrides this (and may call it first)."""
        value = cell.value
        carriage = self._carriage()
        if (type(value) in carriage.plain_value_types
                and (cell.kind is CellKind.PUT or cell.kind in carriage.cell_kinds)
                and (cell.version is None or carriage.version)
                and (cell.type is None or carriage.type and (carriage.off_type
                                                             or typed_text.carries(value, cell.type)))):
            return cell  # what every cell of most streams is, found without building another
        carries = self.carries
        kind = cell.kind
        if kind not in carriage.cell_kinds:
            kind, value = CellKind.PUT, None  # a deleted column is written as the column set to null
        if VALUE_FEATURE[type(value)] not in carries:
            value = as_text(value)
        elif is_nested(value):
            value = self._carried_value(value)
        elif type(value) is float and not math.isfinite(value) and "value.float_nonfinite" not in carries:
            value = typed_text.render(value)
        cell_type = cell.type
        if cell_type is not None and (not carriage.type or not carriage.off_type
                                      and not typed_text.carries(value, cell_type)):
            cell_type = None
        return Cell(cell.name, value, cell_type, cell.version if carriage.version else None, kind)

    def _carried_value(self, value: Value) -> Value:
        """A nested value as a format that writes nested values as JSON writes it: bytes, decimals, NaN and
        infinities in it as text, unless it carries them (``value.nested_non_json``)."""
        if "value.nested_non_json" in self.carries or typed_text.is_json(value):
            return value
        return typed_text.from_json(typed_text.json_form(value))

    def _unnamed_row(self, event: ChangeEvent) -> Loss | None:
        """The refusal of a change that would name no row here: it has no key and only deletes columns (a Lindorm
        Delete or DeleteColumn read without the option key_columns, whose row key entries read as deletions), and a
        deleted column is written here as the column set to null, so that every column written is null."""
        if event.key or not event.after or any(cell.kind is CellKind.PUT for cell in event.after):
            return None
        kinds = self._carriage().cell_kinds
        lost = next((cell.kind for cell in event.after if cell.kind not in kinds), None)
        if lost is None:
            return None
        return Loss(f"cell.kind.{lost.value}", "key", REFUSED,
                    f"this {event.op.value} has no key and only deletes columns, which {self.name} writes as nulls, "
                    "so it would name no row: give the source format its key columns (the option key_columns)")

    def _carriage(self) -> _Carriage:
        """What ``carries`` means for the checks of every event, found once for this codec's ``carries`` (which a
        codec may set on itself as it is made)."""
        cached = self.__dict__.get("_carriage_of")
        if cached is None or cached[0] is not self.carries:
            cached = (self.carries, _Carriage.of(self.carries))
            self.__dict__["_carriage_of"] = cached
        return cached[1]

    def reshaped(self, event: ChangeEvent) -> ChangeEvent:
        """An event of a kind of change this format has no shape for as one it has: a format that writes such
        changes in another form (Lindorm writes an INSERT as a Put, an UPSERT) overrides this. By default the change
        is refused."""
        raise Refusal(Loss(f"op.{event.op.value}", "op", REFUSED,
                           f"{self.name} has no form for {_shape_of(event)}; it writes only "
                           f"{'; '.join(map(str, self.shapes or ()))}"))



def as_text(value: Value) -> str:
    """A value as text, for a format with no form for its kind: typed values as ``typed_text`` writes them, bytes
    as base64 (as Kafka Connect's JsonConverter writes them), nested values as their JSON."""
    if type(value) is bytes:
        return base64.b64encode(value).decode("ascii")
    return typed_text.render(value)


def with_one_row(event: ChangeEvent, op: Op) -> ChangeEvent:
    """An INSERT or a DELETE (``op``) as a format writes it that writes such a change as the one row its op reads,
    the after image or the before image: a missing row is the event's key cells (none: an empty row), and the other
    image is not written."""
    row_name, other = ("before", "after") if op is Op.DELETE else ("after", "before")
    changed: dict[str, Any] = {} if event.op is op else {"op": op}
    if getattr(event, row_name) is None:
        changed[row_name] = event.key
    if getattr(event, other) is not None:
        changed[other] = None
    return replace(event, **changed) if changed else event


def _shape_of(event: ChangeEvent) -> str:
    images = [f"{name} {'empty' if not image else 'cells'}" for name, image in (("before", event.before),
                                                                                  ("after", event.after))
              if image is not None]
    kinds = "/".join(sorted({cell.kind.value for cell in (*(event.before or ()), *(event.after or ()))}))
    return f"{event.op.value}({', '.join(images) or 'no images'}{'; cells ' + kinds if kinds else ''})"


class _Carriage(NamedTuple):
    """A codec's ``carries`` as the checks of every event ask it."""

    # The kinds of value a cell holds that the base carried_cell passes as they are: not nested values, and floats
    # only where NaN and infinities are carried too.
    plain_value_types: frozenset[type]
    cell_kinds: frozenset[CellKind]
    type: bool
    off_type: bool
    version: bool

    @classmethod
    def of(cls, carries: frozenset[str]) -> _Carriage:
        return cls(
            frozenset(kind for kind, feature in VALUE_FEATURE.items() if feature in carries
                      and feature != "value.nested" and (kind is not float or "value.float_nonfinite" in carries)),
            frozenset(kind for kind in CellKind if kind is CellKind.PUT or f"cell.kind.{kind.value}" in carries),
            "cell.type" in carries, "value.off_type" in carries, "cell.version" in carries)


class IncrementalDecoder:
    """Decodes a stream a message at a time, as Python's ``codecs.IncrementalDecoder`` decodes text: ``feed`` takes
    the next message and its position and gives the units it completes (none while a change waits for its other
    messages), ``flush`` gives what is still held back at the end of the stream. Errors come as units, placed at the
    position given, never raised. This one, the default, decodes each message alone (``decode_messages``); a format
    whose changes span messages subclasses it (``Codec.incremental_decoder``)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec

    def feed(self, position: int, message: Any) -> list[DecodedUnit]:
        try:
            events = self.codec.decode_messages(message)
        except DecodeError as error:
            return [DecodedUnit.refused(position, message, error)]
        return [DecodedUnit(position, (message,), events)]

    def flush(self) -> list[DecodedUnit]:
        return []


def decoded_events(units: Iterable[DecodedUnit], on_error: Callable[[DecodeError], None] | None
                   ) -> Iterator[ChangeEvent]:
    """The events of ``units``, each error raised or handed to ``on_error``: ``decode`` built on ``decode_units``."""
    for unit in units:
        if unit.error is not None:
            report(unit.error, on_error)
        else:
            yield from unit.events


def _decoded_one_by_one(codec: Codec, messages: Iterable[Any], on_error: Callable[[DecodeError], None] | None
                        ) -> Iterator[ChangeEvent]:
    """What ``decoded_events`` gives for the units of the default ``IncrementalDecoder``, without building them (nor,
    for a format of one event per message, a list for each)."""
    one_each = type(codec).decode_messages is Codec.decode_messages
    decode: Callable[[Any], Any] = codec.decode_message if one_each else codec.decode_messages
    for position, message in enumerate(messages):
        try:
            decoded = decode(message)
        except DecodeError as error:
            report(error.at(position, message), on_error)
        else:
            if one_each:
                yield decoded
            else:
                yield from decoded


def numbered_lines(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a file, without their line ends, each with its 1-based line number. A UTF-8
    byte-order mark before the first line (which Windows editors write) is not part of it."""
    for number, line in enumerate(stream, 1):
        if number == 1:
            line = line.removeprefix(BOM_UTF8)
        if line.strip():
            yield number, line.rstrip(b"\r\n")


def in_file(units: Iterable[DecodedUnit], unit_name: str) -> Iterator[DecodedUnit]:
    """``units`` decoded from a file, their positions being 1-based numbers of lines or records: errors say so."""
    for unit in units:
        if unit.error is not None:
            assert unit.error.position is not None  # decoding places every error (CodecError.at) before a unit has it
            unit.error.in_file(unit_name, unit.error.position)
        yield unit


class FileWriter:
    """Writes a format's messages onto a file in its file form, event by event (this one: a message per line).
    ``close()`` completes the file, whatever came before, and leaves the stream open."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def write(self, messages: list[Any]) -> None:
        for message in messages:
            self.stream.write(message)
            self.stream.write(b"\n")

    def close(self) -> None:
        """Nothing to complete for lines; a writer that holds messages back (Avro blocks) writes them here."""


def report(error: CodecError, on_error: Callable[[Any], None] | None) -> None:
    """Raise ``error``, or hand it to ``on_error`` so that the stream goes on."""
    if on_error is None:
        raise error
    on_error(error)
