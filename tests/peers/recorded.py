"""The recorded messages of real producers (``tests/fixtures/peers``), for tests that need neither a database nor
Java."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

POSTGRES = Path(__file__).parents[1] / "fixtures" / "peers" / "postgres"


@dataclass(frozen=True)
class Recorded:
    """One record as Debezium emitted it, as JsonConverter wrote it with schemas and without."""

    capture: str
    number: int  # its line in the capture, from 1
    topic: str
    key: str | None
    value: str | None
    key_plain: str | None
    value_plain: str | None

    @property
    def where(self) -> str:
        return f"{self.capture}:{self.number} ({self.topic})"

    @property
    def is_change(self) -> bool:
        """A row change (not a tombstone, a heartbeat or a transaction's BEGIN or END)."""
        return self.value_plain is not None and "op" in json.loads(self.value_plain)


def captures() -> list[str]:
    return sorted(path.stem for path in POSTGRES.glob("*.jsonl"))


def postgres(capture: str | None = None) -> list[Recorded]:
    """Every record of one capture, or of all of them."""
    recorded = []
    for name in [capture] if capture else captures():
        for number, line in enumerate((POSTGRES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines(), 1):
            recorded.append(Recorded(name, number, **json.loads(line)))
    return recorded
