"""Conversions of streams and files, and what a conversion drops.

``convert()`` runs the conversion pipeline (``pipeline.py``, which the Kafka bridge and the Spark job run too) from
a source codec's streaming decode into a target codec's streaming encode: an iterator in, an iterator out, one
message in flight at a time, so memory stays flat whatever the input size. Each event travels with the source
message(s) it came from, so that an event the target refuses is dead-lettered as its raw input. ``convert_file()``
does the same between files, and never leaves a partial output behind.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import io
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, BinaryIO

from .contract import FEATURES, Codec, DecodedUnit, KafkaRecord, in_file, numbered_lines, owns_attribute
from .errors import CodecError, ConfigurationError, DecodeError, LossyConversionError
from .loss_probes import Rewrites, configuration
from .model import ChangeEvent
from .options import routed
from .pipeline import ConversionStats, Written, converted, error_handler
from .registry import codec, codec_class

# The first field of every dead letter, so that a dead-letter file given as input is recognised by its first bytes.
DEAD_LETTER_MARK = "cdcformats_dead_letter"
_DEAD_LETTER_START = b'{"' + DEAD_LETTER_MARK.encode() + b'":'


def configure(source: str | Codec, target: str | Codec, *, source_options: dict[str, Any] | None = None,
              target_options: dict[str, Any] | None = None, **options: Any) -> tuple[Codec, Codec]:
    """The source and target codecs of a conversion. ``options`` go to whichever format declares them (to both when
    both do; one that neither declares is an error); ``source_options`` and ``target_options`` to one side only."""
    if isinstance(source, str) and isinstance(target, str):
        source_side, target_side = options_of_each(source, target, options, source_options, target_options)
        return codec(source, **source_side), codec(target, **target_side)
    if options or source_options or target_options:
        raise ConfigurationError("options can only be given with format names; configure the codecs instead")
    return (codec(source) if isinstance(source, str) else source, codec(target) if isinstance(target, str) else target)


def options_of_each(source: str, target: str, options: dict[str, Any], source_options: dict[str, Any] | None = None,
                    target_options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The options of the source and of the target format: ``options`` go to whichever declares them (to both when
    both do; one that neither declares is an error), ``source_options`` and ``target_options`` to one side only."""
    shared_source, shared_target = routed(options, [codec_class(source), codec_class(target)])
    return (_merged(shared_source, source_options or {}, source),
            _merged(shared_target, target_options or {}, target))


def _merged(shared: dict[str, Any], own: dict[str, Any], format_name: str) -> dict[str, Any]:
    twice = sorted(set(shared) & set(own))
    if twice:
        raise ConfigurationError(f"{format_name}: option {', '.join(twice)} given both for both formats and for "
                                 f"{format_name} alone")
    return {**shared, **own}


def convert(messages: Iterable[Any], source: str | Codec, target: str | Codec, *, strict: bool = False,
            errors: str | Callable[[CodecError], None] = "fail", stats: ConversionStats | None = None,
            **options: Any) -> Iterator[Any]:
    """Convert a stream of ``source`` messages into a stream of ``target`` messages, lazily.

    ``source`` and ``target`` are format names (options go to whichever codec declares them, as ``configure``
    says) or configured codecs. ``strict=True`` refuses any event the target would write only by dropping something,
    with a ``LossyConversionError`` naming the event and field. ``errors`` decides what a bad message or event does:
    ``"fail"`` raises, ``"skip"`` drops it, a callable receives the ``CodecError`` (whose ``messages`` hold the
    source message(s) it is about) and the stream goes on: that is how a dead-letter sink is attached. ``stats`` is
    filled in as the stream is consumed. Positions count messages for decode errors and events for the others.
    """
    source_codec, target_codec = configure(source, target, **options)
    counts = stats if stats is not None else ConversionStats()
    on_error = error_handler(errors, counts)
    # Everything above runs now, so that a bad configuration fails here; the pipeline below runs as it is consumed.
    written = _converted(source_codec.decode_units(enumerate(messages)), target_codec, strict, on_error, counts, None)
    return (message for event in written for message in event.messages)


def convert_file(source_file: str | os.PathLike[str] | BinaryIO, target_file: str | os.PathLike[str] | BinaryIO,
                 source: str | Codec, target: str | Codec, *, strict: bool = False,
                 errors: str | Callable[[CodecError], None] = "fail", stats: ConversionStats | None = None,
                 **options: Any) -> ConversionStats:
    """Convert a whole file, streaming: ``source_file`` is read in ``source``'s file form (JSON lines for the JSON
    formats, an Avro container file, length-delimited Protobuf) and ``target_file`` written in ``target``'s. Each is
    a path or an open binary file; arguments are as for ``convert``, and the counts are returned.

    A path is written by its kind (``output``): a regular file, or a link to one, through a temporary file beside it
    that replaces it only when the run ends as asked (not when ``errors="fail"`` stopped it), so that a failed run
    leaves an existing file untouched and no partial one; a device, a FIFO or ``/dev/stdout`` directly. An output that
    is the input is refused before anything is read; an Avro container is complete however the run ends. Errors
    are placed at the 1-based line (or record) of the input that holds the message, also when the target refuses its
    event. A dead-letter file (``dead_letter_writer``) is read as the source messages it holds: converting
    it replays them."""
    source_codec, target_codec = configure(source, target, **options)
    counts = stats if stats is not None else ConversionStats()
    on_error = error_handler(errors, counts)
    if same_file(source_file, target_file):
        raise ConfigurationError(f"the output {_name_of(target_file)} is the input file: write to another file")
    with contextlib.ExitStack() as files:
        if isinstance(source_file, (str, os.PathLike)):
            source_file = files.enter_context(open(source_file, "rb"))
        units, file_unit = _file_units(source_codec, source_file)
        if isinstance(target_file, (str, os.PathLike)):
            target_file = files.enter_context(output(target_file))
        writer = target_codec.file_writer(target_file)
        try:
            for event in _converted(units, target_codec, strict, on_error, counts, file_unit):
                writer.write(event.messages)
        finally:
            writer.close()
    return counts


def _converted(units: Iterable[DecodedUnit], target: Codec, strict: bool,
               on_error: Callable[[CodecError], None] | None, counts: ConversionStats, file_unit: str | None
               ) -> Iterator[Written]:
    """The pipeline with ``target`` writing each event. Under strict an event found to lose nothing is written as it
    is, without a second ``dropped()``. An error is placed at the source message's position in a file
    (``file_unit``: lines or records), else at the event's in the stream."""
    def placed(error: CodecError, unit: DecodedUnit, event: ChangeEvent, event_index: int) -> CodecError:
        if file_unit is None:
            return error.at(event_index, event)
        if error.raw is None:
            error.raw = unit.messages[0] if len(unit.messages) == 1 else unit.messages
        return error.in_file(file_unit, unit.position)
    return converted(units, target.encode_exact if strict else target.encode_messages, counts, on_error,
                     refuse=(lambda event: refusal(target, event)) if strict else None, place=placed)


# -- files ------------------------------------------------------------------------------------------------------------

def same_file(first: str | os.PathLike[str] | IO[Any], second: str | os.PathLike[str] | IO[Any]) -> bool:
    """Whether two paths or open files are one file however they are named: the same file on disk (through a link or
    another spelling of its path), or the same path once links are followed where it does not exist yet. A character
    device (a null device, a terminal) may be named twice: writing into it twice loses nothing."""
    one, other = _identity(first), _identity(second)
    return one is not None and one == other


def _identity(file: str | os.PathLike[str] | IO[Any]) -> tuple[Any, ...] | None:
    try:
        status = os.stat(file) if isinstance(file, (str, os.PathLike)) else os.fstat(file.fileno())
    except FileNotFoundError:
        return ("path", os.path.realpath(file)) if isinstance(file, (str, os.PathLike)) else None
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):  # not a file with a descriptor
        return None
    return None if stat.S_ISCHR(status.st_mode) else ("file", status.st_dev, status.st_ino)


def _name_of(file: str | os.PathLike[str] | IO[Any]) -> str:
    return os.fspath(file) if isinstance(file, (str, os.PathLike)) else str(getattr(file, "name", "file"))


def replaces(path: str | os.PathLike[str]) -> bool:
    """Whether ``output(path)`` writes a new file that replaces the old one only when the run ends as asked (a regular
    file, a link to one, or a path that does not exist yet), rather than into the file itself (a device, a FIFO, a
    socket, or a descriptor of this process such as ``/dev/stdout``)."""
    if _descriptor_of(path) is not None:
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def _descriptor_of(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process that ``path`` names through links, as ``/dev/stdout`` names 1, or None."""
    here = os.path.abspath(path)
    for _ in range(40):  # the kernel's own bound on a chain of links
        parent = os.path.realpath(os.path.dirname(here))
        if parent in ("/dev/fd", "/proc/self/fd", f"/proc/{os.getpid()}/fd"):
            name = os.path.basename(here)
            return int(name) if name.isdigit() else None
        here = os.path.join(parent, os.path.basename(here))
        if not os.path.islink(here):
            return None
        here = os.path.join(parent, os.readlink(here))
    return None


@contextlib.contextmanager
def output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """``path`` opened for writing by its kind:

    - a regular file, a link to one, or a new path (``replaces``): a temporary file beside the file the links lead
      to, which replaces it when the block ends without an exception (keeping the old file's permissions and the
      links) and is removed when it does not, so that the file always holds the old contents or the whole new ones;
    - a descriptor of this process (``/dev/stdout``, ``/dev/fd/3``): written through that descriptor;
    - anything else that exists (a device, a FIFO, a socket): opened and written as it is, since it cannot be
      replaced; what was written before an error stays written.
    """
    descriptor = _descriptor_of(path)
    if descriptor is not None:
        with os.fdopen(os.dup(descriptor), "wb") as stream:
            yield stream
    elif replaces(path):
        with _replacing(os.path.realpath(path), os.fspath(path)) as stream:
            yield stream
    else:
        with open(path, "wb") as stream:
            yield stream


@contextlib.contextmanager
def _replacing(path: str, asked: str) -> Iterator[BinaryIO]:
    """A temporary file beside ``path`` that replaces it when the block ends without an exception and is removed
    when it does not, so that ``path`` always holds the old file or the whole new one."""
    directory, name = os.path.split(path)
    if not os.path.isdir(directory):  # said of the path asked for, not of the temporary file mkstemp would name
        raise FileNotFoundError(errno.ENOENT, "no such directory", asked)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            yield stream
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _mode_for(path: str) -> int:
    """The permissions of the file at ``path``, or what a new file gets (mkstemp's are owner-only)."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _file_units(source: Codec, stream: BinaryIO) -> tuple[Iterator[DecodedUnit], str]:
    """The units of the input file and what its positions count: a dead-letter file, recognised by its first bytes,
    holds source messages to replay, one dead letter a line; any other file is read in the source's file form."""
    head = _read_up_to(stream, len(_DEAD_LETTER_START))
    whole = io.BufferedReader(RelayedReader(stream, head))
    if head == _DEAD_LETTER_START:
        return _replayed_units(source, whole), "line"
    return source.read_units(whole), source.file_unit


def _read_up_to(stream: BinaryIO, size: int) -> bytes:
    head = b""
    while len(head) < size:
        chunk = stream.read(size - len(head))
        if not chunk:
            break
        head += chunk
    return head


class RelayedReader(io.RawIOBase):
    """A binary stream that relays another: first ``head``, bytes already read from it (to recognise a dead-letter
    file), then the rest; ``counted`` hears how many bytes each read took (a progress display)."""

    def __init__(self, stream: BinaryIO, head: bytes = b"", counted: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self.stream = stream
        self.head = head
        self.counted = counted

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            data, self.head = self.head[:len(buffer)], self.head[len(buffer):]
        else:  # read1: what is there, without waiting for a whole buffer (a pipe fed as it goes)
            read = getattr(self.stream, "read1", self.stream.read)
            data = read(len(buffer))
        buffer[:len(data)] = data
        if self.counted is not None:
            self.counted(len(data))
        return len(data)

    def fileno(self) -> int:
        return self.stream.fileno()


# -- dead letters -----------------------------------------------------------------------------------------------------

def dead_letter_writer(stream: IO[str], source: str) -> Callable[[CodecError], None]:
    """An ``errors`` handler that writes each error as a JSON line on ``stream`` (flushed, so that the reader of a
    FIFO has each as it comes), with the raw ``source`` message(s) it is about, also for an event the target refused::

        {"cdcformats_dead_letter": 1, "source_format": "lindorm", "error": "lindorm: line 6: field op: ...",
         "format": "lindorm", "position": 6, "field": "op", "reason": "...", "messages": [{"base64": "eyJvc..."}]}

    A message is ``{"base64": ...}``, or ``{"key_base64": ..., "value_base64": ...}`` for a ``KafkaRecord`` (null
    for a missing part); one dead letter holds several when the source's change spans several messages (the rows of a
    Tablestore record). ``convert_file`` given such a file as input converts the messages it holds: a replay."""
    def write(error: CodecError) -> None:
        letter = {DEAD_LETTER_MARK: 1, "source_format": source, "error": str(error), "format": error.format,
                  "position": error.position, "field": error.field, "reason": error.reason,
                  "messages": [_message_out(message) for message in error.messages]}
        stream.write(json.dumps(letter) + "\n")
        stream.flush()
    return write


def _message_out(message: Any) -> dict[str, Any]:
    if isinstance(message, KafkaRecord):
        return {"key_base64": _base64(message.key), "value_base64": _base64(message.value)}
    if isinstance(message, (bytes, bytearray)):
        return {"base64": _base64(message)}
    return {"repr": repr(message)}  # a message with no file form (a tuple row): kept readable, not replayable


def _base64(data: bytes | bytearray | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _replayed_units(source: Codec, stream: BinaryIO) -> Iterator[DecodedUnit]:
    """The source messages of a dead-letter file, decoded; each placed at the line of its dead letter."""
    for number, line in numbered_lines(stream):
        try:
            messages = _dead_letter_messages(line, source.name)
        except DecodeError as error:
            yield DecodedUnit(number, (line,), [], error.in_file("line", number))
            continue
        yield from in_file(source.decode_units((number, message) for message in messages), "line")


def _dead_letter_messages(line: bytes, source_name: str) -> list[Any]:
    try:
        letter = json.loads(line)
        if type(letter) is not dict or letter.get(DEAD_LETTER_MARK) != 1:
            raise ValueError(f"expected an object with {DEAD_LETTER_MARK}: 1")
        messages = [_message_in(message) for message in letter["messages"]]
    except (ValueError, TypeError, KeyError, binascii.Error) as error:
        raise DecodeError(source_name, f"not a dead letter ({type(error).__name__}: {error})", raw=line) from None
    if letter.get("source_format") != source_name:  # the whole file is another format's: a usage error
        raise ConfigurationError(f"the dead letters hold {letter.get('source_format')} messages, not {source_name}: "
                                 f"replay them with --from {letter.get('source_format')}")
    return messages


def _message_in(message: dict[str, Any]) -> Any:
    if "base64" in message:
        return base64.b64decode(message["base64"], validate=True)
    return KafkaRecord(*(None if message[part] is None else base64.b64decode(message[part], validate=True)
                         for part in ("key_base64", "value_base64")))


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

    Canonical features (``FEATURES``) the source can carry and the target cannot, or that the target writes otherwise
    in some change the source sends; ``attributes.<name>`` for a source's own attributes that the target does not
    write back; ``shape ...`` for a kind of change the source expresses and the target cannot (Lindorm, say, turns an
    UPDATE that puts values into an UPSERT). Format names without options answer for the format in general;
    configured codecs (or options, routed as in ``convert``) answer for that configuration, since options such as
    ``key_columns`` change what a format carries.
    """
    return declared_loss(source, target, **options).listed()


def declared_loss(source: str | Codec, target: str | Codec, **options: Any) -> DeclaredLoss:
    """``cf.loss(source, target)``'s answer, found only as far as asked (``item in answer``); the same for each pair
    of configurations."""
    if options:
        source, target = configure(source, target, **options)
    carrier_of_source = codec_class(source) if isinstance(source, str) else source
    carrier_of_target = codec_class(target) if isinstance(target, str) else target
    pair = (configuration(carrier_of_source), configuration(carrier_of_target))
    if pair not in _DECLARED:
        _DECLARED[pair] = DeclaredLoss(carrier_of_source, carrier_of_target)
    return _DECLARED[pair]


class DeclaredLoss:
    """What ``cf.loss`` lists for one pair of configurations: what the formats say they carry, at once, and what
    the target rewrites of the changes the source sends (``Rewrites``), found by asking the target about hundreds of
    probes, as far as asked."""

    def __init__(self, source: type[Codec] | Codec, target: type[Codec] | Codec) -> None:
        self.source, self.target = source, target
        self.rewrites = Rewrites(source, target)
        # The source's own attributes that the target has no place for at all, as cf.loss names them.
        self.unowned = set() if "attributes" in target.carries else {
            f"{name}*" if name.endswith(".") else name for name in source.own_attributes
            if not owns_attribute(target.own_attributes, name)}
        self.others: list[str] = []  # the kinds of change the target has no form for, and what it requires
        if target.shapes is not None:
            if source.shapes is None:
                self.others.append(f"shapes other than {'; '.join(map(str, target.shapes))}")
            else:
                self.others.extend(f"shape {shape}" for shape in source.shapes
                                   if not any(carried.covers(shape) for carried in target.shapes))
        self.others.extend(f"requires {what}" for what in target.requires)

    def __contains__(self, item: str) -> bool:
        if item.startswith("attributes."):
            name = item[len("attributes."):]
            return name in self.unowned or self.rewrites.drops_attribute(name)
        if item in FEATURES:
            return item in self.source.carries and item not in self.target.carries or self.rewrites.changes(item)
        return item in self.others

    def listed(self) -> list[str]:
        rewritten = self.rewrites.all_features()
        lost = [feature for feature in FEATURES if feature in self.source.carries and feature not in
                self.target.carries or feature in rewritten]
        attributes = self.unowned | self.rewrites.all_dropped_attributes()
        return [*lost, *(f"attributes.{name}" for name in sorted(attributes)), *self.others]


# cf.loss's answer for each pair of configurations, as far as found.
_DECLARED: dict[tuple[object, object], DeclaredLoss] = {}
