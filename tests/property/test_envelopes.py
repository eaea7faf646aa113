"""The canonical envelopes carry every canonical event exactly, and refuse garbage only with DecodeError."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError

from .strategies import events

ENVELOPES = ["avro", "protobuf"]


@pytest.mark.parametrize("name", ENVELOPES)
@given(event=events())
def test_decode_inverts_encode(name: str, event: cf.ChangeEvent) -> None:
    codec = cf.codec(name)
    message = codec.encode_event(event)
    decoded = codec.decode_message(message)
    assert decoded == event
    assert decoded.event_id == event.event_id
    assert codec.encode_event(decoded) == message  # the encoding is deterministic


@given(event=events())
def test_avro_to_protobuf_to_avro_is_the_identity(event: cf.ChangeEvent) -> None:
    avro_message = cf.codec("avro").encode_event(event)
    protobuf_messages = list(cf.convert([avro_message], "avro", "protobuf", strict=True))
    assert list(cf.convert(protobuf_messages, "protobuf", "avro", strict=True)) == [avro_message]


def _valid_then_mutated(name: str) -> st.SearchStrategy[bytes]:
    """Real messages with bytes flipped, cut or appended: garbage that gets past the first bytes of a parser."""
    def mutate(message: bytes, data: st.DataObject) -> bytes:
        buffer = bytearray(message)
        for _ in range(data.draw(st.integers(1, 4))):
            if not buffer:
                break
            index = data.draw(st.integers(0, len(buffer) - 1))
            buffer[index] = data.draw(st.integers(0, 255))
        return bytes(buffer[: data.draw(st.integers(0, len(buffer)))]) + data.draw(st.binary(max_size=4))

    codec = cf.codec(name)
    return st.builds(lambda event, data: mutate(codec.encode_event(event), data), events(), st.data())


# Built once, not per example: a new events() is a new strategy tree for Hypothesis to set up.
GARBAGE = {name: st.one_of(st.binary(max_size=200), _valid_then_mutated(name)) for name in ENVELOPES}


@pytest.mark.parametrize("name", ENVELOPES)
@given(data=st.data())
@example(data=None)
def test_garbage_raises_only_decode_error(name: str, data: st.DataObject | None) -> None:
    codec = cf.codec(name)
    messages = [b"\x00\x00\xfe\xff\xff\xff\xff\xff\xff\xff\x7f", b"\xff" * 64] if data is None else [
        data.draw(GARBAGE[name])]
    for message in messages:
        try:
            event = codec.decode_message(message)
        except DecodeError as error:
            assert error.format == name
            assert error.reason
        else:
            assert isinstance(event, cf.ChangeEvent)


@given(events())
def test_the_avro_body_writer_writes_what_fastavro_writes(event: cf.ChangeEvent) -> None:
    import io

    import fastavro

    from cdcformats.envelopes.avro import record_from_event
    from cdcformats.schemas import avro_schema

    expected = io.BytesIO()
    fastavro.schemaless_writer(expected, fastavro.parse_schema(avro_schema()), record_from_event(event))
    assert cf.codec("avro").encode_event(event) == expected.getvalue()


def test_a_lone_surrogate_is_an_encode_error_in_avro() -> None:
    event = cf.ChangeEvent(cf.Op.INSERT, after=(cf.Cell("name", "\ud800"),))
    with pytest.raises(cf.EncodeError, match="surrogates not allowed"):
        cf.codec("avro").encode_event(event)
