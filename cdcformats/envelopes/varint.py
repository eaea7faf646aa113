"""Base-128 varints, as Protobuf's length-delimited framing, Confluent's Protobuf message indexes and Avro's longs
write them."""

from __future__ import annotations

from typing import BinaryIO


def varint(number: int) -> bytes:
    """``number`` (not negative) in base-128, least significant group first."""
    out = bytearray()
    put_varint(out, number)
    return bytes(out)


def put_varint(out: bytearray, number: int) -> None:
    """``varint(number)`` appended to ``out``, for the envelope writers, which build a message in one bytearray."""
    while number > 0x7F:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)


def read_varint(stream: BinaryIO) -> int | None:
    """The next varint of ``stream``; None when the stream ends before its first byte. A varint cut short, or longer
    than 64 bits, raises ``ValueError`` saying which, for the caller to place."""
    number = shift = 0
    while True:
        byte = stream.read(1)
        if not byte:
            if shift:
                raise ValueError("ends inside a varint")
            return None
        number |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return number
        shift += 7
        if shift > 63:
            raise ValueError("a varint is longer than 64 bits")


def unzigzag(number: int) -> int:
    """A signed number from its zigzag form (0, -1, 1, -2, ... as 0, 1, 2, 3, ...), as Avro and Confluent write."""
    return (number >> 1) ^ -(number & 1)
