"""What a message or event that cannot be converted does, in every adapter's words, and the one check of a mode
given: ``convert()``, the command line, the Kafka bridge, the Spark functions and the Arrow column functions each
take an ``errors`` mode, and each allows the modes that make sense where it is given."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..errors import ConfigurationError

ERROR_MODES = {
    "fail": "stop at the first one, with its error",
    "skip": "leave it out and go on (it is counted)",
    "null": "give a null in its place (a column function keeps one row per row)",
    "dead-letter": "keep it, with its error and raw input, where dead letters go, and go on",
}


def error_mode(mode: Any, allowed: Collection[str], *, or_else: str = "") -> str:
    """``mode``, checked to be one of the ``ERROR_MODES`` that the place it is given ``allowed`` (``or_else`` names
    what else that place takes, for the message)."""
    if mode not in allowed:
        raise ConfigurationError(f"errors must be one of {', '.join(allowed)}{' or ' + or_else if or_else else ''}, "
                                 f"not {mode!r}")
    return str(mode)
