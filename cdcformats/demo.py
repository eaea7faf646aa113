"""``cdcformats demo``: the bundled example streams (the product pages' samples) converted between every pair of
formats, with what each conversion kept and dropped."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from .convert import ConversionStats, convert
from .plugins import codec, formats


@dataclass(frozen=True)
class Example:
    """A bundled example stream: its format, the options that read it, and the names of its key columns."""

    format: str
    title: str
    options: dict[str, Any] = field(default_factory=dict)
    key: tuple[str, ...] = ()

    def messages(self) -> list[bytes]:
        text = (files("cdcformats") / "examples" / f"{self.format}.jsonl").read_bytes()
        return [line for line in text.splitlines() if line.strip()]


EXAMPLES = (
    Example("lindorm", "Lindorm orders: puts with versions, deletes of a version, a column, the row",
            {"key_columns": ["id"]}, ("id",)),
    Example("arcion", "Arcion tpch.region: the NATIVE page's snapshot row and realtime I/U/D",
            {"key_columns": ["r_regionkey"], "table": "tpch.region"}, ("r_regionkey",)),
    Example("ots-json", "Tablestore: the seven rows of the OTSStream Reader page (U, DO, DA, DR)",
            {"primary_key": ["pkName1", "pkName2"], "table": "seed_table"}, ("pkName1", "pkName2")),
)


def _target_options(target: str, example: Example) -> dict[str, Any]:
    """Options that make a target keep the example's key: every format names key columns its own way."""
    if target in ("ots", "ots-json"):
        return {"primary_key": list(example.key)}
    if target in ("lindorm", "arcion"):
        return {"key_columns": list(example.key)}
    return {}


def run(console: Console) -> None:
    console.rule("cdcformats demo: example streams through every format")
    summary = RichTable(title="example streams, decoded")
    for column in ("format", "stream", "messages", "events by op"):
        summary.add_column(column)
    pairs = RichTable(title="conversions: source -> target -> source")
    for column in ("source", "target", "events", "written", "refused", "back to source", "what the target dropped"):
        pairs.add_column(column)
    for example in EXAMPLES:
        source = codec(example.format, **example.options)
        messages = example.messages()
        events = list(source.decode(messages))
        ops = Counter(event.op.value for event in events)
        summary.add_row(example.format, example.title, str(len(messages)),
                        ", ".join(f"{op} {count}" for op, count in sorted(ops.items())))
        normal = list(source.encode(events))
        for target_name in formats():
            if target_name == example.format:
                continue
            target = codec(target_name, **_target_options(target_name, example))
            stats = ConversionStats()
            written = list(convert(messages, source, target, errors="skip", stats=stats))
            back = list(convert(written, target, source, errors="skip"))
            dropped = sorted({feature for event in events for feature, _ in target.dropped(event)})
            pairs.add_row(example.format, target_name, str(stats.events), str(stats.messages_out),
                          str(stats.failed), "exact" if back == normal else "changed", ", ".join(dropped) or "-")
    console.print(summary)
    console.print(pairs)
    console.print("[dim]'exact': converting back gives the source's messages byte for byte (in normal form). "
                  "What a target drops is reported before any data flows by cdcformats.loss(); "
                  "convert(..., strict=True) refuses it instead.[/dim]")
