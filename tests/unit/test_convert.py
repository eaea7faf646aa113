"""convert() and loss(): streaming, error modes that keep counts, strict mode that names what would be lost."""

from __future__ import annotations

import pytest

import cdcformats as cf
from cdcformats import Cell, ChangeEvent, ConfigurationError, DecodeError, LossyConversionError, Op
from cdcformats.codecs.base import ALL_FEATURES
from cdcformats.codecs.avro import AvroCodec


class AvroWithoutVersions(AvroCodec):
    """A test format that declares it cannot carry cell versions."""

    name = "avro-without-versions"
    carries = ALL_FEATURES - {"cell.version"}


cf.register(AvroWithoutVersions.name, AvroWithoutVersions, replace=True)

EVENTS = [ChangeEvent(Op.INSERT, after=(Cell("id", n),)) for n in range(5)]


def test_convert_is_lazy() -> None:
    consumed = []

    def messages():
        for event in EVENTS:
            consumed.append(event)
            yield cf.codec("avro").encode_event(event)

    stream = cf.convert(messages(), "avro", "protobuf")
    assert consumed == []
    next(stream)
    assert len(consumed) == 1


def test_errors_fail_raises_with_position() -> None:
    messages = [cf.codec("avro").encode_event(EVENTS[0]), b"\x99garbage"]
    with pytest.raises(DecodeError, match=r"^avro: message 1: .*\(input: b'\\x99garbage'\)"):
        list(cf.convert(messages, "avro", "protobuf"))


@pytest.mark.parametrize("errors", ["skip", "dead-letter"])
def test_skip_and_dead_letter_keep_counts_that_add_up(errors: str) -> None:
    good = [cf.codec("avro").encode_event(event) for event in EVENTS]
    messages = good[:2] + [b"\x99bad"] + good[2:] + [b""]
    dead_letters: list[cf.CodecError] = []
    stats = cf.ConversionStats()
    handler = "skip" if errors == "skip" else dead_letters.append
    out = list(cf.convert(messages, "avro", "protobuf", errors=handler, stats=stats))
    assert len(out) == stats.messages_out == stats.events == 5
    assert stats.failed == 2 and stats.events + stats.failed == len(messages)
    assert [error.position for error in stats.errors] == [2, 6]
    if errors == "dead-letter":
        assert [error.raw for error in dead_letters] == [b"\x99bad", b""]


def test_strict_names_the_event_and_field_that_would_be_lost() -> None:
    events = [EVENTS[0], ChangeEvent(Op.UPSERT, after=(Cell("a", "x"), Cell("b", "y", version=3)))]
    messages = list(cf.codec("avro").encode(events))
    assert len(list(cf.convert(messages, "avro", "avro-without-versions"))) == 2  # not strict: written anyway
    with pytest.raises(LossyConversionError, match=r"event 1: field after\[1\]\.version: .*cannot carry cell.version"):
        list(cf.convert(messages, "avro", "avro-without-versions", strict=True))
    stats = cf.ConversionStats()
    assert len(list(cf.convert(messages, "avro", "avro-without-versions", strict=True, errors="skip",
                               stats=stats))) == 1
    assert stats.failed == 1


def test_loss_lists_what_the_target_cannot_carry() -> None:
    assert cf.loss("avro", "protobuf") == []
    assert cf.loss("protobuf", "avro") == []
    assert cf.loss("avro", "avro-without-versions") == ["cell.version"]
    assert cf.loss("avro-without-versions", "avro") == []


def test_options_go_to_the_codec_that_declares_them() -> None:
    with pytest.raises(ConfigurationError, match="option colour known to neither avro .* nor protobuf"):
        cf.convert([], "avro", "protobuf", colour="red")
    with pytest.raises(ConfigurationError, match="errors must be one of fail, skip or a callable"):
        list(cf.convert([], "avro", "protobuf", errors="ignore"))
