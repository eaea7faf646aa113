"""Where the canonical Avro and Protobuf envelopes get their schema ids.

    from cdcformats.schema_registry import connect
    registry = connect()                               # the embedded registry, in the user's data directory
    registry = connect("/data/registry.sqlite")        # an embedded registry file that many processes share
    registry = connect("https://sr.example.com", **{"basic.auth.user.info": "user:secret"})  # any Confluent-
                                                                                             # compatible one

Either is accepted wherever confluent-kafka's serializers take a registry client. ``cdcformats registry serve``
serves an embedded file over HTTP with the Confluent REST API, for other processes, languages and tools.

The clients are ``client``; the subjects and schemas of the envelopes ``subjects``; the embedded registry's file
``store`` (``embedded``: its client), served over HTTP by ``server``.

(Not to be confused with the *plugin* registry in ``cdcformats.registry``, which knows the formats.)
"""

from .client import (
    ENVIRONMENT_VARIABLE,
    FILE_SUFFIXES,
    REMOTE_SCHEMES,
    RegistryError,
    address,
    check_address,
    connect,
    default_path,
    reach,
)
from .subjects import ENVELOPE_RECORD_NAME, STRATEGIES, envelope_schema, register_envelope, subject_name

__all__ = [
    "ENVELOPE_RECORD_NAME", "ENVIRONMENT_VARIABLE", "FILE_SUFFIXES", "REMOTE_SCHEMES", "RegistryError", "STRATEGIES",
    "address", "check_address", "connect", "default_path", "envelope_schema", "reach", "register_envelope",
    "subject_name",
]
