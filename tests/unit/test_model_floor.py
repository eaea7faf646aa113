"""The by-hand codecs of ``benchmarks/model_floor.py`` do each format's codec's job, only without its checks: a floor
that did less (or other) work than the codec would make every ratio of the benchmark meaningless."""

import gc
import sys
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats.registry import codec_class

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import model_floor  # noqa: E402  (a script beside the tests, found through the path above)

CHANGES = 300
# The formats the package ships: other test modules register formats of their own as they are collected.
SHIPPED = sorted(name for name in cf.formats() if codec_class(name).__module__.startswith("cdcformats."))


@pytest.fixture(scope="module")
def changes() -> list:
    return model_floor.region_changes(CHANGES)


def test_every_shipped_format_has_a_by_hand_codec() -> None:
    assert sorted([*model_floor.BY_HAND, "debezium-avro"]) == SHIPPED


def test_the_sample_holds_every_kind_of_relational_change(changes: list) -> None:
    ops = {event.op for event in changes}
    assert ops == {cf.Op.READ, cf.Op.INSERT, cf.Op.UPDATE, cf.Op.DELETE}
    assert any(event.before is not None and event.after is not None for event in changes)


@pytest.mark.parametrize("name", SHIPPED)
def test_by_hand_decoder_gives_the_codecs_events(name: str, changes: list) -> None:
    sample = model_floor.sample(name, changes)
    assert len(sample.events) > CHANGES // 2  # ots groups rows of one key into fewer records, never into few
    assert sample.by_hand.decode(sample.messages) == sample.events


@pytest.mark.parametrize("name", SHIPPED)
def test_by_hand_encoder_writes_what_decodes_as_the_codecs_own_output(name: str, changes: list) -> None:
    sample = model_floor.sample(name, changes)
    by_hand = sample.by_hand.encode(sample.events)
    assert list(sample.codec.decode(by_hand)) == list(sample.codec.decode(list(sample.codec.encode(sample.events))))
    assert list(sample.codec.decode(by_hand)) == sample.events  # the events the format holds whole come back


@pytest.mark.parametrize("name", SHIPPED)
def test_the_codec_finds_every_event_of_its_own_messages_whole(name: str, changes: list) -> None:
    """Encode's fast path (``encode_whole``) is taken for the events each codec decodes from its own messages, which
    the benchmark encodes: else it would time the normal form of each, not the writer."""
    sample = model_floor.sample(name, changes)
    assert [event for event in sample.events if sample.codec.encode_whole(event) is None] == []


@pytest.mark.parametrize("name", SHIPPED)
def test_the_floor_reads_and_writes_back_every_message(name: str, changes: list) -> None:
    sample = model_floor.sample(name, changes)
    written = [sample.by_hand.write(sample.by_hand.parse(message)) for message in sample.messages]
    assert list(sample.codec.decode(written)) == sample.events


def test_the_table_marks_each_ratio_over_its_bound(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert model_floor._ratio(1.31, 1.0, model_floor.DECODE_BOUND).endswith("!")
    assert not model_floor._ratio(1.29, 1.0, model_floor.DECODE_BOUND).endswith("!")
    monkeypatch.setattr(sys, "argv", ["model_floor.py", "--messages", "60", "--formats", "canal-json,ots"])
    # The benchmark collects garbage before each of its 60 timed runs; frozen, what the tests before this one left on
    # the heap is not scanned again each time (in a full run that scanning took half a minute).
    gc.freeze()
    try:
        model_floor.main()
    finally:
        gc.unfreeze()
    rows = capsys.readouterr().out.splitlines()[3:]
    assert [row.split()[0] for row in rows] == ["canal-json", "ots"]
    assert all(len(row.split()) == 9 for row in rows)  # format, then floor, by hand, codec, ratio twice
