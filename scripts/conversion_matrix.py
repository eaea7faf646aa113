"""The conversion matrix as a table: for each ordered pair of formats, the share of a source's generated events that
the target writes exactly, writes with drops, or refuses.

The events are the property tests' (tests/property/test_matrix.py): decoded from each source's own native messages,
and for the canonical envelope, drawn from the whole model. Run from the repository root:

    .venv/bin/python scripts/conversion_matrix.py [--examples 200] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cdcformats.losses import refused  # noqa: E402
from tests.property.test_matrix import SOURCES, TARGET_CODECS, source_events  # noqa: E402


def tally(source: str, examples: int) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {target: Counter() for target in TARGET_CODECS}

    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def draw(data: st.DataObject) -> None:
        _, events = data.draw(source_events(source))
        for event in events:
            for name, target in TARGET_CODECS.items():
                losses = target.dropped(event)
                counts[name]["refused" if refused(losses) else "dropped" if losses else "exact"] += 1

    draw()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200, help="draws of native messages per source")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table instead of aligned text")
    arguments = parser.parse_args()
    rows = []
    for source in SOURCES:
        for target, counts in tally(source, arguments.examples).items():
            if target.split("+")[0] == source:
                continue
            total = sum(counts.values()) or 1
            rows.append((source, target, total, *(f"{100 * counts[kind] / total:.0f}%"
                                                  for kind in ("exact", "dropped", "refused"))))
    header = ("source", "target", "events", "exact", "with drops", "refused")
    if arguments.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(map(str, row)) + " |")
        return
    print(f"{header[0]:22} {header[1]:28} {header[2]:>7} {header[3]:>6} {header[4]:>10} {header[5]:>8}")
    for source, target, total, exact, dropped, refusals in rows:
        print(f"{source:22} {target:28} {total:>7} {exact:>6} {dropped:>10} {refusals:>8}")


if __name__ == "__main__":
    main()
