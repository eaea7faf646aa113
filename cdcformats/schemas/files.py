"""The canonical envelope schemas, read from the package's files (wherever it is installed)."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

AVRO_SCHEMA_NAME = "cdcformats.v1.ChangeEvent"
PROTO_FILE_NAME = "cdcformats/v1/change_event.proto"
_PACKAGE = files(__name__.rpartition(".")[0])  # cdcformats.schemas, which holds the files


def avro_schema_text() -> str:
    """The canonical Avro schema, as the .avsc file says it."""
    return (_PACKAGE / "avro" / "change_event.avsc").read_text(encoding="utf-8")


@cache
def avro_schema() -> dict:
    """The canonical Avro schema as a JSON object (parse it with fastavro before writing with it)."""
    return json.loads(avro_schema_text())


def proto_schema_text() -> str:
    """The canonical Protobuf schema, as the .proto file says it."""
    return (_PACKAGE / "proto" / PROTO_FILE_NAME).read_text(encoding="utf-8")
