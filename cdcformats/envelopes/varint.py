"""Base-128 varints, as Protobuf's length-delimited framing and Avro's longs write them."""

from __future__ import annotations


def varint(number: int) -> bytes:
    """``number`` (not negative) in base-128, least significant group first."""
    out = bytearray()
    while number > 0x7F:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)
