"""Every format, in every configuration users run: lossless both ways for what it declares it carries, exact through
the canonical envelopes, safe on garbage, and honest about what it drops from other formats' events."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import DecodeError, EncodeError

from .configurations import CONFIGURATIONS, INTEROP, SOURCES
from .strategies import events_for


def round_trip(codec: cf.Codec, event: cf.ChangeEvent) -> list[cf.ChangeEvent]:
    return list(codec.decode(codec.encode([event])))


# events_for filters the events it draws by the codec's own dropped(); formats that read the key out of a row by the
# names the message gives (canal-json) keep few of them, which is slow, not wrong.
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_decode_inverts_encode_for_every_event_the_format_carries(configuration: str, data: st.DataObject) -> None:
    codec = CONFIGURATIONS[configuration].codec()
    event = data.draw(events_for(codec))
    assert round_trip(codec, event) == [event]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_encode_of_decode_is_the_normal_form(configuration: str, data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = described.codec()
    messages = data.draw(described.messages)
    normal = list(codec.encode(codec.decode(messages)))
    assert described.same(normal, described.normal_form(messages))
    assert described.same(list(codec.encode(codec.decode(normal))), normal)  # the normal form reads back as itself


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("envelope", ["avro", "protobuf"])
@given(data=st.data())
def test_native_to_envelope_and_back_is_the_normal_form(configuration: str, envelope: str,
                                                        data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = described.codec()
    assert cf.loss(codec, envelope) == []
    messages = data.draw(described.messages)
    through_envelope = list(cf.convert(cf.convert(messages, codec, envelope), envelope, codec))
    assert described.same(through_envelope, described.normal_form(messages))


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@given(data=st.data())
def test_garbage_raises_only_decode_error(configuration: str, data: st.DataObject) -> None:
    described = CONFIGURATIONS[configuration]
    codec = described.codec()
    errors: list[DecodeError] = []
    events = list(codec.decode(data.draw(described.garbage), on_error=errors.append))
    assert all(isinstance(event, cf.ChangeEvent) for event in events)
    for error in errors:
        assert error.format in (codec.name, "ots-json") and error.position is not None and error.reason


TARGETS = {"lindorm": dict(), "arcion": dict(), "ots": dict(primary_key=["pk1", "pk2"]), "debezium-json": dict(),
           "avro": dict()}
# The interop configurations that write differently (the others differ in reading, or in names only): each is a target
# of the lindorm, arcion and Tablestore events.
INTEROP_TARGETS = ["paimon-log", "paimon-log+upsert", "connect-json", "connect-json+schemaless",
                   "debezium-json+schemas+keys", "canal-json", "maxwell-json", "aliyun-json+split",
                   "lindorm-subscription", "lindorm-subscription+bare+keys"]
PAIRS = [(source, target) for source in SOURCES for target in TARGETS if source.split("+")[0] != target] + [
    (source, target) for source in ("lindorm+keys", "arcion", "ots") for target in INTEROP_TARGETS]


@pytest.mark.parametrize("source, target", PAIRS)
@given(data=st.data())
def test_what_dropped_calls_kept_survives_a_conversion(source: str, target: str, data: st.DataObject) -> None:
    """For events of one format written by another: when the target reports nothing dropped, nothing is; when it
    refuses an event, it had reported a loss for it."""
    target_codec = INTEROP[target].codec() if target in INTEROP else cf.codec(target, **TARGETS[target])
    event = data.draw(events_for(SOURCES[source].codec()))
    dropped = target_codec.dropped(event)
    try:
        converted = round_trip(target_codec, event)
    except EncodeError:
        assert dropped, "the target refused an event without reporting what it would lose"
        return
    if not dropped:
        assert converted == [event]
