"""Times in the units formats write them (seconds, milliseconds), as the microseconds of the canonical event.

One rounding rule: a time is written in a coarser unit floored (towards the past), as ``Codec.dropped`` reports a
sub-millisecond time, except that a time before the earliest whole unit of the signed 64-bit microsecond range
becomes that earliest unit, so that what is written always reads back.
"""

from __future__ import annotations

from typing import Any

from ..model import INT64_MAX, INT64_MIN

# Units, in microseconds.
SECOND = 1_000_000
MILLISECOND = 1_000
MICROSECOND = 1


def earliest(unit: int) -> int:
    """The earliest whole ``unit``, in microseconds, within the 64-bit range."""
    return -(-INT64_MIN // unit * unit)


def to_microseconds(count: Any, unit: int) -> int | None:
    """``count`` units in microseconds; None when ``count`` is no integer, or the microseconds leave 64 bits."""
    if type(count) is not int or not INT64_MIN <= count * unit <= INT64_MAX:
        return None
    return count * unit


def in_unit(microseconds: int, unit: int) -> int:
    """A time in ``unit``, floored: what a format writes."""
    return microseconds // unit


def floored(microseconds: int, unit: int) -> int:
    """A time, in microseconds, as a format that writes ``unit`` gives it back: floored to the unit, but not before
    its earliest whole unit."""
    return max(microseconds - microseconds % unit, earliest(unit))
