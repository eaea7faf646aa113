"""The canonical envelope schemas, shipped inside the package and loaded from wherever it is installed.

``avro/change_event.avsc`` and ``proto/cdcformats/v1/change_event.proto`` (also reachable as the top-level ``avro/``
and ``proto/`` folders of the repository) are the single source of truth; ``change_event_pb2.py`` is generated from
the .proto by ``make protobuf`` and checked against it by the tests.
"""

from .files import AVRO_SCHEMA_NAME, PROTO_FILE_NAME, avro_schema, avro_schema_text, proto_schema_text

__all__ = ["AVRO_SCHEMA_NAME", "PROTO_FILE_NAME", "avro_schema", "avro_schema_text", "proto_schema_text"]
