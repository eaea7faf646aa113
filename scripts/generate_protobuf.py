"""Regenerate cdcformats/schemas/change_event_pb2.py from the canonical .proto (run by `make protobuf`).

tests/unit/test_schemas.py runs generate() into a temporary folder and compares, so the checked-in code cannot drift
from the schema.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "cdcformats" / "schemas" / "proto"
PROTO_FILE = "cdcformats/v1/change_event.proto"
GENERATED = ROOT / "cdcformats" / "schemas" / "change_event_pb2.py"


def generate(out_dir: Path) -> Path:
    """Run protoc (from grpcio-tools) on the canonical schema; return the path of the generated module."""
    from grpc_tools import protoc

    status = protoc.main(["protoc", f"-I{PROTO_ROOT}", f"--python_out={out_dir}", PROTO_FILE])
    if status != 0:
        raise RuntimeError(f"protoc failed with status {status}")
    return out_dir / PROTO_FILE.replace(".proto", "_pb2.py")


if __name__ == "__main__":
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as temporary:
        shutil.copyfile(generate(Path(temporary)), GENERATED)
    print(f"wrote {GENERATED.relative_to(ROOT)}", file=sys.stderr)
