"""Formats whose Kafka record key is part of the format (Kafka Connect JSON for sinks, the Paimon log): a message is a
``KafkaRecord(key, value)``, and a null value, a tombstone, says something (a delete) instead of nothing.

Their file form is JSON lines of the two parts, each written as the JSON it is (both formats write JSON keys and
values), ``null`` for a missing key or a tombstone::

    {"key": {"id": 7}, "value": {"before": null, "after": {"id": 7, "name": "x"}, "op": "c"}}
    {"key": {"id": 7}, "value": null}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import msgspec

from ...contract import Codec, DecodedUnit, FileWriter, KafkaRecord, in_file, numbered_lines
from ...errors import DecodeError
from ...model import ChangeEvent


class _Line(msgspec.Struct, forbid_unknown_fields=True):
    key: msgspec.Raw = msgspec.Raw(b"null")
    value: msgspec.Raw = msgspec.Raw(b"null")


_read_line = msgspec.json.Decoder(_Line).decode
_NULL = b"null"


class KafkaRecordCodec(Codec):
    """Base of the formats whose messages are Kafka records: a subclass implements ``decode_record``."""

    message_type = KafkaRecord

    def decode_message(self, message: Any) -> ChangeEvent:
        if type(message) is KafkaRecord:  # most messages: told without a call
            key, value = message
            if (key is None or type(key) is bytes) and (value is None or type(value) is bytes):
                return self.decode_record(key, value)
        if not (isinstance(message, tuple) and len(message) == 2
                and (message[0] is None or isinstance(message[0], bytes))
                and (message[1] is None or isinstance(message[1], bytes))):
            raise DecodeError(self.name, f"expected a KafkaRecord(key, value) of bytes or None, got "
                                         f"{type(message).__name__}")
        return self.decode_record(*message)

    def decode_record(self, key: bytes | None, value: bytes | None) -> ChangeEvent:
        raise NotImplementedError

    def read_units(self, stream: BinaryIO) -> Iterator[DecodedUnit]:
        """The records of a file of JSON lines, each fed to the incremental decoder at its line number; a line that
        is no record is refused there."""
        decoder = self.incremental_decoder()
        for number, line in numbered_lines(stream):
            try:
                record = self.record_of_line(line)
            except DecodeError as error:
                yield DecodedUnit.refused(number, line, error.in_file(self.file_unit, number))
                continue
            yield from in_file(decoder.feed(number, record), self.file_unit)
        yield from in_file(decoder.flush(), self.file_unit)

    def record_of_line(self, line: bytes) -> KafkaRecord:
        """A line of the file form as the record it holds (``DecodeError`` if it holds none)."""
        try:
            parts = _read_line(line)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as error:
            reason = "nested too deeply" if isinstance(error, RecursionError) else error
            raise DecodeError(self.name, f"not a line of the form {{\"key\": ..., \"value\": ...}}: {reason}") from None
        key, value = bytes(parts.key), bytes(parts.value)
        return KafkaRecord(None if key == _NULL else key, None if value == _NULL else value)

    def file_writer(self, stream: BinaryIO) -> FileWriter:
        return _RecordLineWriter(stream)


class _RecordLineWriter(FileWriter):
    def write(self, messages: list[Any]) -> None:
        for record in messages:
            self.stream.write(msgspec.json.encode({"key": msgspec.Raw(record.key or _NULL),
                                                   "value": msgspec.Raw(record.value or _NULL)}))
            self.stream.write(b"\n")
