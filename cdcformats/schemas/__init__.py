"""The canonical envelope schemas, shipped inside the package and loaded from wherever it is installed.

``avro/change_event.avsc`` and ``proto/cdcformats/v1/change_event.proto`` (also reachable as the top-level ``avro/``
and ``proto/`` folders of the repository) are the single source of truth; ``change_event_pb2.py`` is generated from
the .proto by ``make protobuf`` and checked against it by the tests.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

AVRO_SCHEMA_NAME = "cdcformats.v1.ChangeEvent"
PROTO_FILE_NAME = "cdcformats/v1/change_event.proto"


def avro_schema_text() -> str:
    """The canonical Avro schema, as the .avsc file says it."""
    return (files(__name__) / "avro" / "change_event.avsc").read_text(encoding="utf-8")


@cache
def avro_schema() -> dict:
    """The canonical Avro schema as a JSON object (parse it with fastavro before writing with it)."""
    return json.loads(avro_schema_text())


def proto_schema_text() -> str:
    """The canonical Protobuf schema, as the .proto file says it."""
    return (files(__name__) / "proto" / PROTO_FILE_NAME).read_text(encoding="utf-8")
