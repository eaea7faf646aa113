"""The error hierarchy.

Bad *input* raises a ``CodecError`` and nothing else: it names the format, the position of the message in the stream,
the field path inside the message and a short excerpt of what was there. Bad *configuration* (an unknown format or
option) raises a ``ConfigurationError`` before any data flows.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Self

EXCERPT_LIMIT = 80


# The packages of each extra in pyproject.toml, so that a missing one is answered with what to install.
_EXTRA_OF_PACKAGE = {"confluent_kafka": "kafka", "starlette": "registry", "uvicorn": "registry",
                     "platformdirs": "registry", "avro": "registry", "pyspark": "spark", "pyarrow": "spark",
                     "pandas": "spark"}


def install_hint(error: ImportError) -> str:
    """What to install for a package that an ``ImportError`` found missing: the extra of cdcformats that has it."""
    package = (error.name or "").partition(".")[0] or str(error)
    extra = _EXTRA_OF_PACKAGE.get(package)
    return f"the package {package} is not installed: pip install " + (
        f"'cdcformats[{extra}]'" if extra else package)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choices closest to a misspelt ``word``, or nothing when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=2, cutoff=0.7)
    return f" (did you mean {' or '.join(repr(choice) for choice in close)}?)" if close else ""


def excerpt(data: object, limit: int = EXCERPT_LIMIT) -> str:
    """A short, printable rendering of the offending input as a user wrote it, not as Python spells it: bytes as
    their UTF-8 text, a Kafka record as its key and value, a row as a JSON array; control characters and line
    separators are escaped as Python writes them (``\\x00``, ``\\n``), so that the error stays one line. (Only those:
    which other characters print depends on the Unicode version, and the JVM decoders must write the same.)"""
    # Only as many characters as can show (escaping only lengthens them): a refused event's text may be long.
    shown = _shown(data)[: limit + 1]
    text = "".join(ascii(character)[1:-1] if _breaks_lines(character) else character for character in shown)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _breaks_lines(character: str) -> bool:
    point = ord(character)
    return point < 0x20 or 0x7F <= point <= 0x9F or point in (0x2028, 0x2029)


def _shown(data: object) -> str:
    if isinstance(data, (bytes, bytearray)):
        return bytes(data).decode("utf-8", "backslashreplace")
    if isinstance(data, str):
        return data
    if data is None:
        return "null"
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named record: a Kafka record's key and value
        return ", ".join(f"{name} {_shown(part)}" for name, part in zip(data._fields, data))
    if isinstance(data, (tuple, list)):  # a row of a tabular format, as its text form writes it
        return json.dumps(data, ensure_ascii=False, default=_shown)  # its bytes as text, a decimal as its repr
    return repr(data)  # an event the target refused: no form but the model's own


class CdcFormatsError(Exception):
    """Base of every error cdcformats raises on purpose."""


class ConfigurationError(CdcFormatsError, ValueError):
    """An unknown format, an unknown option or an option with a bad value."""


class CodecError(CdcFormatsError):
    """A message or event that a codec cannot handle.

    ``position`` is the 0-based index of the message (decoding) or event (encoding) in the stream given to the codec,
    or, for a file, the 1-based number of the line or record that holds the message; the text says which, and counts
    from 1 either way, as people do ("message 1" is the first);
    ``field`` the path inside it (``data[2].ts``); ``raw`` the offending message itself, so that a dead-letter sink
    loses nothing. In a conversion, ``messages`` holds the source message(s) the error is about, also for an event
    the target refused: the raw input that a dead letter keeps.
    """

    _unit = "item"
    _counted_from = 0  # what the first position is: 0 in a stream, 1 in a file
    messages: tuple[object, ...] = ()

    def __init__(self, format: str, reason: str, *, position: int | None = None, field: str | None = None,
                 raw: object = None) -> None:
        self.format = format
        self.reason = reason
        self.position = position
        self.field = field
        self.raw = raw
        super().__init__(self._render())

    def _render(self) -> str:
        where = [self.format]
        if self.position is not None:
            where.append(f"{self._unit} {self.position - self._counted_from + 1}")
        if self.field:
            where.append(f"field {self.field}")
        text = f"{': '.join(where)}: {self.reason}"
        if self.raw is not None:
            text += f" (input: {excerpt(self.raw)})"
        return text

    def relabeled(self, format: str) -> Self:
        """This error, reported by ``format`` (a format built on another one's code, such as ots-json on ots)."""
        self.format = format
        self.args = (self._render(),)
        return self

    def in_file(self, unit: str, number: int) -> Self:
        """This error, placed in a file: at ``unit`` (line, record) ``number``, counted from 1 as editors do."""
        self._unit = unit
        self._counted_from = 1
        self.position = number
        self.args = (self._render(),)
        return self

    def at(self, position: int, raw: object) -> Self:
        """This error, placed at ``position`` in the stream (codecs raise it deep down, where they don't know)."""
        self.position = position
        return self.with_input(raw)

    def with_input(self, raw: object) -> Self:
        """This error, with ``raw`` as its input where it names none (shown in its text, as ``at`` shows it)."""
        if self.raw is None:
            self.raw = raw
        self.args = (self._render(),)
        return self


class DecodeError(CodecError):
    """A message that is not valid in its format."""

    _unit = "message"


class EncodeError(CodecError):
    """An event that the target format cannot write at all."""

    _unit = "event"


class LossyConversionError(CodecError):
    """Under ``strict=True``: an event that the target format would write only by dropping something."""

    _unit = "event"
