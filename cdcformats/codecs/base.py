"""What every format plugin is: a ``Codec`` subclass with a name, validated options, the canonical features it can
carry, and a paired streaming ``decode`` / ``encode``.

The feature vocabulary below is the language of ``cf.loss()``: a conversion drops exactly the features that the source
can carry and the target cannot. ``features_of(event)`` finds the features one event actually uses, with the field
path of each, which is how ``strict=True`` names what would be lost.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, BinaryIO, ClassVar, NamedTuple, TypeVar

from ..errors import CodecError, ConfigurationError, DecodeError, EncodeError
from ..model import Cell, CellKind, ChangeEvent, Image, Op
from . import typed_text

# The canonical features, in the order the loss table prints them.
OP_FEATURES = tuple(f"op.{op.value}" for op in Op)
VALUE_FEATURES = ("value.null", "value.bool", "value.int", "value.float", "value.str", "value.bytes",
                  "value.decimal")
FEATURES: tuple[str, ...] = (
    *OP_FEATURES,
    "table", "table.schema", "table.catalog",
    "key", "before", "after",
    "cell.type", "cell.version", "cell.repeated",
    "cell.kind.DELETE_VERSION", "cell.kind.DELETE_ALL_VERSIONS",
    *VALUE_FEATURES,
    # NaN or an infinity, which JSON numbers cannot write.
    "value.float_nonfinite",
    # A value whose kind is not the one its cell's SQL type name implies (the text "007" in a BIGINT column):
    # formats that write values as text and type them by name can only carry some of these.
    "value.off_type",
    "source.system", "source.position", "source.commit_time", "source.capture_time",
    # A commit or capture time with a part below the millisecond, which millisecond formats cannot write.
    "source.time.sub_ms",
    "key_only", "attributes",
)
ALL_FEATURES = frozenset(FEATURES)

_VALUE_FEATURE = {type(None): "value.null", bool: "value.bool", int: "value.int", float: "value.float",
                  str: "value.str", bytes: "value.bytes", Decimal: "value.decimal"}


def features_of(event: ChangeEvent) -> Iterator[tuple[str, str]]:
    """Every (feature, field path) that ``event`` uses. A feature may be reported at several paths."""
    yield f"op.{event.op.value}", "op"
    if event.table is not None:
        yield "table", "table"
        if event.table.schema is not None:
            yield "table.schema", "table.schema"
        if event.table.catalog is not None:
            yield "table.catalog", "table.catalog"
    if event.key:
        yield "key", "key"
    yield from _image_features(event.key, "key")
    for image_name in ("before", "after"):
        image = getattr(event, image_name)
        if image is not None:
            yield image_name, image_name
            yield from _image_features(image, image_name)
    source = event.source
    if source.system is not None:
        yield "source.system", "source.system"
    if source.position:
        yield "source.position", "source.position"
        for name, value in source.position:
            yield from _value_features(value, f"source.position.{name}")
    for feature, field_name in (("source.commit_time", "commit_time_us"), ("source.capture_time", "capture_time_us")):
        time_us = getattr(source, field_name)
        if time_us is not None:
            yield feature, f"source.{field_name}"
            if time_us % 1000:
                yield "source.time.sub_ms", f"source.{field_name}"
    if event.key_only:
        yield "key_only", "key_only"
    for index, (name, value) in enumerate(event.attributes):
        yield "attributes", f"attributes[{index}]"
        yield from _value_features(value, f"attributes[{index}]")


def _value_features(value: object, path: str) -> Iterator[tuple[str, str]]:
    yield _VALUE_FEATURE[type(value)], path
    if type(value) is float and not math.isfinite(value):
        yield "value.float_nonfinite", path


def _image_features(cells: Image, image_name: str) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for index, cell in enumerate(cells):
        path = f"{image_name}[{index}]"
        yield from _value_features(cell.value, f"{path}.value")
        if not typed_text.carries(cell.value, cell.type):
            yield "value.off_type", f"{path}.value"
        if cell.type is not None:
            yield "cell.type", f"{path}.type"
        if cell.version is not None:
            yield "cell.version", f"{path}.version"
        if cell.kind is not CellKind.PUT:
            yield f"cell.kind.{cell.kind.value}", f"{path}.kind"
        if cell.name in seen:
            yield "cell.repeated", f"{path}.name"
        seen.add(cell.name)


def owns_attribute(own_attributes: frozenset[str], name: str) -> bool:
    return name in own_attributes or any(own.endswith(".") and name.startswith(own) for own in own_attributes)


ABSENT, PRESENT, OPTIONAL, NONEMPTY = "absent", "present", "optional", "nonempty"


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


@dataclass(frozen=True)
class Option:
    """A codec option: its name, what it means, its default, and a parser that validates and normalizes a value
    (raising ``TypeError`` or ``ValueError`` with a message that reads well after "option NAME: ")."""

    name: str
    doc: str
    default: Any = None
    parse: Callable[[Any], Any] = staticmethod(lambda value: value)  # type: ignore[assignment]


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


class Codec:
    """Base class of every format.

    A subclass sets ``name``, ``description``, ``carries`` (a subset of ``FEATURES``) and ``options``, and implements
    ``decode_message`` / ``encode_event`` for formats where one message is one event. Formats where one event spans
    several messages override ``decode`` / ``encode`` themselves. Implementations raise ``DecodeError`` /
    ``EncodeError`` without a position; the stream loop here adds it.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    message_type: ClassVar[type] = bytes
    carries: ClassVar[frozenset[str]] = ALL_FEATURES
    shapes: ClassVar[tuple[Shape, ...] | None] = None  # None: any op with any images and cell kinds
    # Attributes it writes back without carrying attributes in general; a name ending in "." stands for a prefix.
    own_attributes: ClassVar[frozenset[str]] = frozenset()
    # A source position of fixed layout, as (name, type) entries that always come with a commit time; None: any.
    position_layout: ClassVar[tuple[tuple[str, type], ...] | None] = None
    options: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        known = {option.name: option for option in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigurationError(
                f"{self.name}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                f"known options: {', '.join(sorted(known)) or 'none'}")
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
        for events in decoded_each(messages, self.decode_messages, on_error):
            yield from events

    def encode(self, events: Iterable[ChangeEvent], on_error: Callable[[EncodeError], None] | None = None
               ) -> Iterator[Any]:
        """Encode a stream of events lazily; errors are handled as in ``decode``."""
        for messages in self.encoded(events, on_error):
            yield from messages

    def encoded(self, events: Iterable[ChangeEvent], on_error: Callable[[EncodeError], None] | None = None
                ) -> Iterator[list[Any]]:
        """The messages of each event, lazily, one list per event written; errors are handled as in ``decode``."""
        for position, event in enumerate(events):
            try:
                messages = self.encode_messages(event)
            except EncodeError as error:
                report(error.at(position, event), on_error)
                continue
            yield messages

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
        """All the messages of one event: one for most formats; a format where a record spans several messages
        (Tablestore rows) overrides this."""
        return [self.encode_event(event)]

    # -- files --------------------------------------------------------------------------------------------------------

    def read_file(self, stream: BinaryIO, on_error: Callable[[DecodeError], None] | None = None
                  ) -> Iterator[ChangeEvent]:
        """The events of a file in this format, lazily. By default a file holds one message per line (JSON lines);
        blank lines are skipped. Formats with a file form of their own (Avro container files) override this."""
        if self.message_type is not bytes:
            raise ConfigurationError(f"{self.name} messages are tuples, which have no file form: use the format "
                                     "that writes the same rows as text")
        return self.decode((line.rstrip(b"\r\n") for line in stream if line.strip()), on_error)

    def write_file(self, stream: BinaryIO, events: Iterable[ChangeEvent],
                   on_error: Callable[[EncodeError], None] | None = None) -> Iterator[int]:
        """Write ``events`` to a file in this format, lazily: yields the number of messages each event took."""
        if self.message_type is not bytes:
            raise ConfigurationError(f"{self.name} messages are tuples, which have no file form: use the format "
                                     "that writes the same rows as text")
        for messages in self.encoded(events, on_error):
            for message in messages:
                stream.write(message)
                stream.write(b"\n")
            yield len(messages)

    # -- what is lost ---------------------------------------------------------------------------------------------

    def dropped(self, event: ChangeEvent) -> list[tuple[str, str]]:
        """The (feature, field path) pairs of ``event`` that this format would not write back exactly.

        An empty list is a promise, checked by the property tests: ``decode(encode(event)) == event``.
        """
        lost = [(feature, path) for feature, path in features_of(event)
                if feature not in self.carries and not self._owns(feature, path, event)]
        if self.shapes is not None and not any(shape.admits(event) for shape in self.shapes):
            lost.append((f"shape {event.op.value}", "op"))
        for image_name in ("before", "after"):
            for index, cell in enumerate(getattr(event, image_name) or ()):
                lost.extend((feature, f"{image_name}[{index}].{detail}") for feature, detail in self.dropped_cell(cell))
        lost.extend(self.dropped_details(event))
        return lost

    def _owns(self, feature: str, path: str, event: ChangeEvent) -> bool:
        if feature != "attributes" or not self.own_attributes:
            return False
        index = int(path[path.index("[") + 1:-1])
        return owns_attribute(self.own_attributes, event.attributes[index][0])

    def dropped_cell(self, cell: Cell) -> Iterable[tuple[str, str]]:
        """(feature, field within the cell) of an image cell that this format would not write back exactly, where
        that depends on the cell's values (a format overrides this where it has such limits)."""
        return ()

    def dropped_details(self, event: ChangeEvent) -> Iterable[tuple[str, str]]:
        """Losses that depend on values rather than on features (a format overrides this where it has them)."""
        return ()


Decoded = TypeVar("Decoded")


def decoded_each(messages: Iterable[Any], decode_one: Callable[[Any], Decoded],
                 on_error: Callable[[DecodeError], None] | None) -> Iterator[Decoded]:
    """The stream loop of ``Codec.decode``: each message through ``decode_one``, errors placed and reported."""
    for position, message in enumerate(messages):
        try:
            event = decode_one(message)
        except DecodeError as error:
            report(error.at(position, message), on_error)
            continue
        yield event


def report(error: CodecError, on_error: Callable[[Any], None] | None) -> None:
    """Raise ``error``, or hand it to ``on_error`` so that the stream goes on."""
    if on_error is None:
        raise error
    on_error(error)
