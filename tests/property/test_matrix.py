"""The conversion matrix: every format written by every other.

For each source, events are drawn from the source's own native messages (the canonical envelopes' from every event
the model can hold), and each is written by every target, without ``strict``. The target either writes its normal
form of the event, which reads back exactly, which is the event with what ``dropped()`` reports applied
(``cf.without``), each drop of which ``cf.loss(source, target)`` declared, and which it then carries exactly (where
it writes an event by the fast path of encode, ``encode_whole``, that event is its own normal form, written as
``encode_exact`` writes it); or it refuses a change it has no form for, which ``cf.loss(source, target)`` declared
before any data flowed. ``strict`` refuses exactly the events with drops.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats import EncodeError
from cdcformats.codecs.ots import OtsCodec
from cdcformats.convert import DeclaredLoss, declared_loss, refusal
from cdcformats.losses import refused, without
from cdcformats.schema_registry import connect

from .configurations import CONFIGURATIONS
from .strategies import events

# Each format once as a source, in the configuration users run by default; the envelopes from every event.
SOURCES = ["lindorm", "arcion", "ots", "ots-json", "debezium-json", "connect-json", "canal-json", "maxwell-json",
           "aliyun-json", "lindorm-subscription", "paimon-log", "avro"]

# Each format as a target, and the configurations that write differently: keyed by columns, with Connect schemas,
# schemaless, Paimon's upsert log, aliyun's split updates, Canal's snapshot rows as INIT.
TARGETS: dict[str, tuple[str, dict[str, Any]]] = {
    "lindorm": ("lindorm", {}),
    "lindorm+keys": ("lindorm", {"key_columns": ["id", "name"]}),
    "arcion": ("arcion", {}),
    "ots": ("ots", {"primary_key": ["id"]}),
    "ots+default_version": ("ots", {"primary_key": ["id"], "default_version": 1_000}),
    "ots-json": ("ots-json", {"primary_key": ["id", "name"]}),
    "debezium-json": ("debezium-json", {}),
    "debezium-json+schemas+keys": ("debezium-json", {"schemas": True, "key_columns": ["id"]}),
    "connect-json": ("connect-json", {}),
    "connect-json+schemaless": ("connect-json", {"schemas": False}),
    "canal-json": ("canal-json", {}),
    "canal-json+init": ("canal-json", {"read_type": "INIT"}),
    "maxwell-json": ("maxwell-json", {}),
    "aliyun-json": ("aliyun-json", {}),
    "aliyun-json+split": ("aliyun-json", {"split_updates": True}),
    "lindorm-subscription": ("lindorm-subscription", {}),
    "paimon-log": ("paimon-log", {}),
    "paimon-log+upsert": ("paimon-log", {"changelog_mode": "upsert"}),
    "avro": ("avro", {}),
    "protobuf": ("protobuf", {}),
    # An embedded registry file of this process, which refuses an invalid schema or an incompatible version as a real
    # registry does (confluent-kafka's mock:// client accepts any).
    "debezium-avro": ("debezium-avro", {"schema_registry": connect(
        Path(tempfile.mkdtemp(prefix="matrix-registry-")) / "registry.sqlite")}),
}
# Targets whose form of a change depends on the changes before it (debezium-avro's table schemas): a new codec for
# each example, so that an example is checked alike however often Hypothesis runs it. Each writes its subjects under a
# topic prefix of its own into the one registry client.
STATEFUL_TARGETS = ("debezium-avro",)
_EXAMPLE_PREFIXES = (f"matrix{number}" for number in itertools.count())


def source_events(source: str) -> st.SearchStrategy[tuple[cf.Codec, list[cf.ChangeEvent]]]:
    """Each example's source codec and the events it decoded; the codec is a new one for each example, as a decoder
    may keep what a stream's earlier messages told it."""
    if source == "avro":
        return st.lists(events(), min_size=1, max_size=3).map(lambda drawn: (cf.codec("avro"), drawn))
    configuration = CONFIGURATIONS[source]

    def decoded(messages: list[Any]) -> tuple[cf.Codec, list[cf.ChangeEvent]]:
        codec = configuration.codec()
        return codec, list(codec.decode(messages, on_error=lambda _: None))

    return configuration.messages.map(decoded)


# Built once, not per example: a new events() is a new strategy tree for Hypothesis to set up.
SOURCE_EVENTS = {source: source_events(source) for source in SOURCES}


def declared(lost: DeclaredLoss, source: cf.Codec, refusal_feature: str, event: cf.ChangeEvent) -> bool:
    """Whether ``cf.loss`` listed the refused change: a shape of the source's that admits it, or its feature (asked
    last: what the target rewrites is found by probing it)."""
    if source.shapes is None:
        if any(item.startswith("shapes other than") for item in lost.others):
            return True
    elif any(f"shape {shape}" in lost for shape in source.shapes if shape.admits(event)):
        return True
    return refusal_feature in lost


def declared_drop(lost: DeclaredLoss, source: cf.Codec, loss: cf.Loss, event: cf.ChangeEvent) -> bool:
    """Whether ``cf.loss`` listed a drop: its feature; for an attribute, its name or that of the source's own prefix
    it has; for a row or an op written in another form, a shape of the source's that admits the event."""
    if loss.feature == "attributes" and loss.path.startswith("attributes["):
        name = event.attributes[int(loss.path[len("attributes["):].split("]")[0])][0]
        if f"attributes.{name}" in lost or any(f"attributes.{prefix}*" in lost for prefix in source.own_attributes
                                               if prefix.endswith(".") and name.startswith(prefix)):
            return True
    if loss.feature in ("before", "after", "key") or loss.feature.startswith("op."):
        return declared(lost, source, loss.feature, event)
    return loss.feature in lost


# Tablestore writes a cell that nothing dates at the time of writing: the codec's clock, fixed here so that the version
# dropped() reports is the one that encode, a moment later, writes.
FIXED_CLOCK_MS = 1_700_000_000_000


def target_codec(format_name: str, **options: Any) -> cf.Codec:
    codec = cf.codec(format_name, **options)
    if isinstance(codec, OtsCodec):
        codec.clock = lambda: FIXED_CLOCK_MS
    return codec


TARGET_CODECS = {name: target_codec(format_name, **options) for name, (format_name, options) in TARGETS.items()}


def check_target(source: cf.Codec, target: cf.Codec, target_name: str, event: cf.ChangeEvent) -> None:
    whole = target.encode_whole(event)
    if whole is not None:  # the fast path of encode: never taken for an event the target changes
        assert target.normal_form(event) == event, f"{target_name} claims to write {event} whole"
        assert whole == target.encode_exact(event), f"{target_name}'s fast path writes {event} otherwise"
    losses = target.dropped(event)
    assert (refusal(target, event) is None) == (not losses), "strict refuses exactly the events with drops"
    refused_loss = refused(losses)
    # cf.loss asked of the target made once: it answers once for each configuration, which a new codec of each
    # example has too, and a stateful target's prefix would make new; and only as far as each drop needs
    # (declared_loss: what the target rewrites is found by asking it about hundreds of probes).
    lost = declared_loss(source, TARGET_CODECS[target_name])
    if refused_loss is None:  # asked before writing: a target's form of a change depends on the changes before it
        expected = target.normal_form(event)
        assert without(event, losses) == expected, f"dropped() does not name each difference: {losses}"
        undeclared = [loss for loss in losses if not declared_drop(lost, source, loss, event)]
        assert not undeclared, f"cf.loss({source.name}, {target_name}) did not declare {undeclared[0]}"
    try:
        messages = list(target.encode([event]))
    except EncodeError as error:
        assert refused_loss is not None, f"{target_name} refused {event} without a REFUSED loss: {error}"
        assert declared(lost, source, refused_loss.feature, event), (
            f"{target_name} refused {refused_loss}, which cf.loss({source.name}, {target_name}) did not declare")
        return
    assert refused_loss is None, f"{target_name} wrote {event} although it reported {refused_loss}"
    back = list(target.decode(messages))
    assert back == [expected], f"{source.name} -> {target_name}: {losses}"
    assert target.normal_form(expected) == expected, f"{target_name} does not carry its own form of {event}"


@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data())
def test_every_target_writes_what_it_can_and_declares_the_rest(source: str, data: st.DataObject) -> None:
    codec, drawn = data.draw(SOURCE_EVENTS[source])
    targets = {**TARGET_CODECS, **{name: target_codec(TARGETS[name][0], **TARGETS[name][1],
                                                      topic_prefix=next(_EXAMPLE_PREFIXES))
                                   for name in STATEFUL_TARGETS}}
    for event in drawn:
        for target_name, target in targets.items():
            check_target(codec, target, target_name, event)
