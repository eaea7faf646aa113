"""The one conversion pipeline: ``convert()`` and ``convert_file()``, the Kafka bridge and the Spark job each run it
over their own transport, so that an error mode and a count mean the same in each.

An adapter decides what is its own: how its messages become decoded units (lines of a file, records of a topic, rows
of a partition), how an event is written (a codec, or a serializer with Confluent's framing), where an error is
placed, and what becomes of the messages written. The pipeline decides the rest, alike for all three:

- an event that ``strict`` finds the target would write only by dropping something is refused, as is one the target
  cannot write at all (an ``EncodeError``); a message the source refused was refused before it got here;
- each such error, given the source message(s) it is about, stops the run under ``"fail"`` (raised), is left out
  under ``"skip"``, and is handed to a dead-letter sink (a callable) under ``"dead-letter"``;
- ``ConversionStats`` counts it all, and its counts add up whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from .contract import DecodedUnit, report
from .core.error_modes import error_mode
from .errors import CodecError, EncodeError
from .model import ChangeEvent


@dataclass
class ConversionStats:
    """Counts of one conversion, filled in as its stream is consumed. They add up, whatever happened:

    - source messages (lines, Avro records, Kafka records, rows): ``messages_read`` = ``messages_decoded`` +
      ``messages_failed`` (the source refused them) + ``messages_skipped`` (they hold no change: a control message
      under ``skip_ddl``, such as a Canal DDL message or a Maxwell bootstrap marker, a Kafka tombstone, a null row);
    - events, decoded from those messages (a Canal message holds one per row; the rows of one Tablestore record, or
      an Aliyun UPDATE_BEFORE and its UPDATE_AFTER, decode together into one): ``events`` = ``events_written`` +
      ``events_refused`` (the target could not write it, or ``strict`` refused it);
    - ``messages_written``: the target's messages for the events written (a Tablestore record is several rows);
    - ``tombstones``: tombstones written beside those, which are no event's message (the bridge passes a source
      tombstone on, and adds one after each delete with ``tombstones=True``);
    - the errors (``failed``) were all left out under ``errors="skip"``, or all handed to the dead-letter sink
      (``dead_lettered``); under ``"fail"`` the run stops at the first, which is counted, so that only what it got
      to is counted.

    ``errors`` holds every error that was left out or dead-lettered, where the run keeps them (``convert`` and
    ``convert_file`` do; the bridge, which runs for ever, does not)."""

    messages_read: int = 0
    messages_decoded: int = 0
    messages_failed: int = 0
    messages_skipped: int = 0
    events: int = 0
    events_written: int = 0
    events_refused: int = 0
    messages_written: int = 0
    tombstones: int = 0
    dead_lettered: int = 0
    errors: list[CodecError] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """Messages the source refused and events the target refused: the errors."""
        return self.messages_failed + self.events_refused

    def counts(self) -> dict[str, int]:
        """The counts by name, without the errors."""
        return {name: getattr(self, name) for name in COUNTS}

    def add(self, other: ConversionStats) -> None:
        """Add the counts (and errors) of ``other``, a part of the same conversion (a Spark partition's)."""
        for name in COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(other.errors)


COUNTS = tuple(counter.name for counter in fields(ConversionStats) if counter.name != "errors")


class Written(NamedTuple):
    """An event the target wrote, with the unit it came from and the target's messages for it."""

    unit: DecodedUnit
    event: ChangeEvent
    messages: list[Any]


def error_handler(errors: str | Callable[[CodecError], None], counts: ConversionStats, *, keep: bool = True
                  ) -> Callable[[CodecError], None] | None:
    """What ``errors`` does with an error: ``"fail"`` raises it (None); ``"skip"`` leaves it out; a callable, the
    dead-letter sink, is handed it. ``keep`` keeps each one left out or dead-lettered in ``counts.errors``."""
    if callable(errors):
        sink = errors

        def dead_letter(error: CodecError) -> None:
            counts.dead_lettered += 1
            if keep:
                counts.errors.append(error)
            sink(error)
        return dead_letter
    if error_mode(errors, ("fail", "skip"), or_else="a callable (a dead-letter sink)") == "fail":
        return None
    return counts.errors.append if keep else _left_out


def _left_out(error: CodecError) -> None:
    """``"skip"`` where errors are not kept: the error is counted already, and nothing else is done with it."""


def as_raised(error: CodecError, unit: DecodedUnit, event: ChangeEvent, event_index: int) -> CodecError:
    """An event's error placed as the writer raised it (where the adapter has no better place to give)."""
    return error


def converted(units: Iterable[DecodedUnit], encode: Callable[[ChangeEvent], list[Any]], counts: ConversionStats,
              on_error: Callable[[CodecError], None] | None, *,
              refuse: Callable[[ChangeEvent], CodecError | None] | None = None,
              place: Callable[[CodecError, DecodedUnit, ChangeEvent, int], CodecError] = as_raised
              ) -> Iterator[Written]:
    """Each event of ``units`` that the target writes, with its messages (``encode``), lazily and counted.

    ``refuse`` is ``strict``'s check: the error an event is refused with, or None. ``on_error`` is an
    ``error_handler``. ``place`` places an event's error (given the event's 0-based index among all the events);
    a decode error comes placed in its unit. Every error is given the source message(s) it is about."""
    for unit in units:
        size = len(unit.messages)
        counts.messages_read += size
        if unit.error is not None:
            counts.messages_failed += size
            unit.error.messages = unit.messages
            report(unit.error, on_error)
            continue
        if not unit.events:
            counts.messages_skipped += size
            continue
        counts.messages_decoded += size
        for event in unit.events:
            counts.events += 1
            error = refuse(event) if refuse is not None else None
            if error is None:
                try:
                    messages = encode(event)
                except EncodeError as encode_error:
                    error = encode_error
            if error is not None:
                counts.events_refused += 1
                error.messages = unit.messages
                report(place(error, unit, event, counts.events - 1), on_error)
                continue
            counts.events_written += 1
            counts.messages_written += len(messages)
            yield Written(unit, event, messages)
