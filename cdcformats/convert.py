"""Conversion pipelines, and what a conversion drops.

``convert()`` chains a source codec's streaming decode into a target codec's streaming encode: an iterator in, an
iterator out, one event in flight at a time, so memory stays flat whatever the input size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from .codecs.base import FEATURES, Codec, owns_attribute, report
from .errors import CodecError, ConfigurationError, LossyConversionError
from .model import ChangeEvent
from .plugins import codec, codec_class

ERROR_MODES = ("fail", "skip")


@dataclass
class ConversionStats:
    """Counts of one conversion, filled in as its stream is consumed: ``events`` handed to the target (decoded, and
    not refused under ``strict``), ``messages_out`` written, and every error that ``errors="skip"`` or a dead-letter
    handler took. For formats with one message per event: messages in = ``events`` + the decode and strict errors,
    and ``messages_out`` = ``events`` - the encode errors. An error's ``position`` counts messages for decode errors
    and events for the others."""

    events: int = 0
    messages_out: int = 0
    errors: list[CodecError] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.errors)


def _split_options(source: type[Codec], target: type[Codec], options: dict[str, Any]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Give each keyword to every codec that declares it; one that neither declares is an error."""
    source_names = {option.name for option in source.options}
    target_names = {option.name for option in target.options}
    unknown = sorted(set(options) - source_names - target_names)
    if unknown:
        raise ConfigurationError(
            f"option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} known to neither {source.name} "
            f"({', '.join(sorted(source_names)) or 'no options'}) nor {target.name} "
            f"({', '.join(sorted(target_names)) or 'no options'})")
    return ({name: value for name, value in options.items() if name in source_names},
            {name: value for name, value in options.items() if name in target_names})


def convert(messages: Iterable[Any], source: str | Codec, target: str | Codec, *, strict: bool = False,
            errors: str | Callable[[CodecError], None] = "fail", stats: ConversionStats | None = None,
            **options: Any) -> Iterator[Any]:
    """Convert a stream of ``source`` messages into a stream of ``target`` messages, lazily.

    ``source`` and ``target`` are format names (options go to whichever codec declares them) or configured codecs.
    ``strict=True`` refuses any event the target would write only by dropping something, with a
    ``LossyConversionError`` naming the event and field. ``errors`` decides what a bad message or event does:
    ``"fail"`` raises, ``"skip"`` drops it, a callable receives the ``CodecError`` (which holds the raw input) and the
    stream goes on: that is how a dead-letter sink is attached. ``stats`` is filled in as the stream is consumed.
    """
    source_codec, target_codec = _codecs(source, target, options)
    counts = stats if stats is not None else ConversionStats()
    on_error = _error_handler(errors, counts)
    # Everything above runs now, so that a bad configuration fails here; the pipeline below runs as it is consumed.
    events = _checked(source_codec.decode(messages, on_error=on_error), target_codec, strict, on_error, counts)
    return _counted_messages(target_codec.encode(events, on_error=on_error), counts)


def convert_file(source_file: BinaryIO, target_file: BinaryIO, source: str | Codec, target: str | Codec, *,
                 strict: bool = False, errors: str | Callable[[CodecError], None] = "fail",
                 stats: ConversionStats | None = None, **options: Any) -> ConversionStats:
    """Convert a whole file, streaming: ``source_file`` is read in ``source``'s file form (JSON lines for the JSON
    formats, an Avro container file, length-delimited Protobuf) and ``target_file`` written in ``target``'s.
    Arguments are as for ``convert``; returns the counts."""
    source_codec, target_codec = _codecs(source, target, options)
    counts = stats if stats is not None else ConversionStats()
    on_error = _error_handler(errors, counts)
    events = _checked(source_codec.read_file(source_file, on_error=on_error), target_codec, strict, on_error, counts)
    for written in target_codec.write_file(target_file, events, on_error=on_error):
        counts.messages_out += written
    return counts


def _checked(events: Iterable[ChangeEvent], target: Codec, strict: bool,
             on_error: Callable[[CodecError], None] | None, counts: ConversionStats) -> Iterator[ChangeEvent]:
    """The decoded events that go on to the target: under ``strict``, those it can write without loss; counted."""
    if strict:
        events = _refuse_losses(events, target, on_error)
    return _counted(events, counts)


def _codecs(source: str | Codec, target: str | Codec, options: dict[str, Any]) -> tuple[Codec, Codec]:
    if isinstance(source, str) and isinstance(target, str):
        source_options, target_options = _split_options(codec_class(source), codec_class(target), options)
        return codec(source, **source_options), codec(target, **target_options)
    if options:
        raise ConfigurationError("options can only be given with format names; configure the codecs instead")
    return (codec(source) if isinstance(source, str) else source, codec(target) if isinstance(target, str) else target)


def _counted_messages(messages: Iterable[Any], counts: ConversionStats) -> Iterator[Any]:
    for message in messages:
        counts.messages_out += 1
        yield message


def _error_handler(errors: str | Callable[[CodecError], None], counts: ConversionStats
                   ) -> Callable[[CodecError], None] | None:
    if errors == "fail":
        return None
    if errors == "skip":
        return counts.errors.append
    if callable(errors):
        def dead_letter(error: CodecError) -> None:
            counts.errors.append(error)
            errors(error)
        return dead_letter
    raise ConfigurationError(f"errors must be one of {', '.join(ERROR_MODES)} or a callable, not {errors!r}")


def _counted(events: Iterable[ChangeEvent], counts: ConversionStats) -> Iterator[ChangeEvent]:
    for event in events:
        counts.events += 1
        yield event


def _refuse_losses(events: Iterable[ChangeEvent], target: Codec, on_error: Callable[[CodecError], None] | None
                   ) -> Iterator[ChangeEvent]:
    for position, event in enumerate(events):
        error = refusal(target, event)
        if error is None:
            yield event
            continue
        report(error.at(position, event), on_error)


def refusal(target: Codec, event: ChangeEvent) -> LossyConversionError | None:
    """The error ``strict`` refuses ``event`` with, naming the first field ``target`` would drop; None when it would
    drop nothing."""
    dropped = target.dropped(event)
    if not dropped:
        return None
    first = dropped[0]
    reason = f"{target.name} cannot carry {first.feature}" + (f": {first.why}" if first.why else "")
    return LossyConversionError(target.name, reason, field=first.path)


def loss(source: str | Codec, target: str | Codec, **options: Any) -> list[str]:
    """What converting ``source`` to ``target`` drops, known before any data flows.

    Canonical features (``FEATURES``) the source can carry and the target cannot; ``attributes.<name>`` for a
    source's own attributes that the target does not write back; ``shape ...`` for a kind of change the source
    expresses and the target cannot (Lindorm, say, turns an UPDATE that puts values into an UPSERT). Format names
    without options answer for the format in general; configured codecs (or options, routed as in ``convert``)
    answer for that configuration, since options such as ``key_columns`` change what a format carries.
    """
    if options:
        source_options, target_options = _split_options(codec_class(source), codec_class(target), options)
        source, target = codec(source, **source_options), codec(target, **target_options)
    carrier_of_source = codec_class(source) if isinstance(source, str) else source
    carrier_of_target = codec_class(target) if isinstance(target, str) else target
    return _lost(carrier_of_source, carrier_of_target)


def _lost(source: type[Codec] | Codec, target: type[Codec] | Codec) -> list[str]:
    lost = [feature for feature in FEATURES if feature in source.carries and feature not in target.carries]
    if "attributes" not in target.carries:
        lost.extend(f"attributes.{name}{'*' if name.endswith('.') else ''}" for name in sorted(source.own_attributes)
                    if not owns_attribute(target.own_attributes, name))
    if target.shapes is not None:
        if source.shapes is None:
            lost.append(f"shapes other than {'; '.join(map(str, target.shapes))}")
        else:
            lost.extend(f"shape {shape}" for shape in source.shapes
                        if not any(carried.covers(shape) for carried in target.shapes))
    return lost
