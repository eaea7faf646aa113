"""Peak memory (and speed) of ``cdcformats convert`` on a large Lindorm JSON-lines file, converted to Avro.

The command streams, so its peak resident memory should not grow with the input: the target is under 100 MB for
1 GB. The input is generated into a temporary directory first (the Lindorm orders of ``sample_streams``).

    .venv/bin/python benchmarks/convert_memory.py [--gigabytes 1.0]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sample_streams import lindorm_messages


def write_input(path: Path, size: int) -> int:
    """Lindorm messages, one per line, until ``size`` bytes; returns how many."""
    written = count = 0
    with path.open("wb") as file:
        while written < size:
            batch = lindorm_messages(10_000, count)
            data = b"\n".join(batch) + b"\n"
            file.write(data)
            written += len(data)
            count += len(batch)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        source, target = Path(directory) / "orders.jsonl", Path(directory) / "orders.avro"
        messages = write_input(source, int(arguments.gigabytes * 1024**3))
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cdcformats.cli", "convert", "--from", "lindorm", "--to", "avro",
                        str(source), str(target), "--no-progress", "--option", 'key_columns=["id"]'], check=True)
        seconds = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kilobytes on Linux
        print(f"cdcformats convert lindorm -> avro: {source.stat().st_size / 1024**2:,.0f} MB in "
              f"({messages:,} messages), {target.stat().st_size / 1024**2:,.0f} MB out, {seconds:.0f} s "
              f"({messages / seconds:,.0f} messages/s), peak RSS {peak_mb:,.0f} MB")
        os.remove(target)


if __name__ == "__main__":
    main()
