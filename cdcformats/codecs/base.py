"""What every format plugin is: a ``Codec`` subclass with a name, validated options, the canonical features it can
carry, and a paired streaming ``decode`` / ``encode``.

The feature vocabulary below is the language of ``cf.loss()``: a conversion drops exactly the features that the source
can carry and the target cannot. ``features_of(event)`` finds the features one event actually uses, with the field
path of each, which is how ``strict=True`` names what would be lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from ..errors import CodecError, ConfigurationError, DecodeError, EncodeError
from ..model import CellKind, ChangeEvent, Image, Op

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
    "source.system", "source.position", "source.commit_time", "source.capture_time",
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
            yield _VALUE_FEATURE[type(value)], f"source.position.{name}"
    if source.commit_time_us is not None:
        yield "source.commit_time", "source.commit_time_us"
    if source.capture_time_us is not None:
        yield "source.capture_time", "source.capture_time_us"
    if event.key_only:
        yield "key_only", "key_only"
    if event.attributes:
        yield "attributes", "attributes"
        for name, value in event.attributes:
            yield _VALUE_FEATURE[type(value)], f"attributes.{name}"


def _image_features(cells: Image, image_name: str) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for index, cell in enumerate(cells):
        path = f"{image_name}[{index}]"
        yield _VALUE_FEATURE[type(cell.value)], f"{path}.value"
        if cell.type is not None:
            yield "cell.type", f"{path}.type"
        if cell.version is not None:
            yield "cell.version", f"{path}.version"
        if cell.kind is not CellKind.PUT:
            yield f"cell.kind.{cell.kind.value}", f"{path}.kind"
        if cell.name in seen:
            yield "cell.repeated", f"{path}.name"
        seen.add(cell.name)


@dataclass(frozen=True)
class Option:
    """A codec option: its name, what it means, its default, and a parser that validates and normalizes a value
    (raising ``TypeError`` or ``ValueError`` with a message that reads well after "option NAME: ")."""

    name: str
    doc: str
    default: Any = None
    parse: Callable[[Any], Any] = staticmethod(lambda value: value)  # type: ignore[assignment]


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
    options: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        known = {option.name: option for option in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigurationError(
                f"{self.name}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                f"known options: {', '.join(sorted(known)) or 'none'}")
        self.config: dict[str, Any] = {}
        for option in self.options:
            value = options.get(option.name, option.default)
            try:
                self.config[option.name] = option.parse(value)
            except (TypeError, ValueError) as error:
                raise ConfigurationError(f"{self.name}: option {option.name}: {error}") from None

    def __repr__(self) -> str:
        changed = {key: value for key, value in self.config.items()
                   if value != next(o for o in self.options if o.name == key).default}
        args = "".join(f", {key}={value!r}" for key, value in changed.items())
        return f"codec({self.name!r}{args})"

    # -- streaming ------------------------------------------------------------------------------------------------

    def decode(self, messages: Iterable[Any], on_error: Callable[[DecodeError], None] | None = None
               ) -> Iterator[ChangeEvent]:
        """Decode a stream of messages lazily. A bad message raises ``DecodeError``, or, when ``on_error`` is given,
        is handed to it and decoding goes on with the next message."""
        for position, message in enumerate(messages):
            try:
                event = self.decode_message(message)
            except DecodeError as error:
                _report(error.at(position, message), on_error)
                continue
            yield event

    def encode(self, events: Iterable[ChangeEvent], on_error: Callable[[EncodeError], None] | None = None
               ) -> Iterator[Any]:
        """Encode a stream of events lazily; errors are handled as in ``decode``."""
        for position, event in enumerate(events):
            try:
                message = self.encode_event(event)
            except EncodeError as error:
                _report(error.at(position, event), on_error)
                continue
            yield message

    # -- one at a time --------------------------------------------------------------------------------------------

    def decode_message(self, message: Any) -> ChangeEvent:
        raise NotImplementedError(f"{self.name} decodes streams only: use decode()")

    def encode_event(self, event: ChangeEvent) -> Any:
        raise NotImplementedError(f"{self.name} encodes streams only: use encode()")

    # -- what is lost ---------------------------------------------------------------------------------------------

    def dropped(self, event: ChangeEvent) -> list[tuple[str, str]]:
        """The (feature, field path) pairs of ``event`` that this format would not write back."""
        return [(feature, path) for feature, path in features_of(event) if feature not in self.carries]


def _report(error: CodecError, on_error: Callable[[Any], None] | None) -> None:
    if on_error is None:
        raise error
    on_error(error)
