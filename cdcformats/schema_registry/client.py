"""A schema registry client (``connect``): the embedded registry in a file, or any Confluent-compatible one by URL;
an address checked before any data flows (``check_address``, ``reach``); and where a client asks, as errors name it
(``address``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import CdcFormatsError, ConfigurationError

ENVIRONMENT_VARIABLE = "CDCFORMATS_SCHEMA_REGISTRY"
REMOTE_SCHEMES = ("http://", "https://", "mock://")
FILE_SUFFIXES = (".sqlite", ".db")


class RegistryError(CdcFormatsError):
    """A registry that could not be reached, or that refused a request (a 401, a conflict): the address and why."""


def default_path() -> Path:
    """The embedded registry file: $CDCFORMATS_SCHEMA_REGISTRY, else schema-registry.sqlite in the user's data
    directory."""
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return Path(os.environ[ENVIRONMENT_VARIABLE])
    from platformdirs import user_data_path

    return user_data_path("cdcformats") / "schema-registry.sqlite"


def connect(target: Any = None, **config: Any) -> Any:
    """A schema registry client: for an ``http://`` or ``https://`` URL (or ``mock://``, confluent-kafka's in-memory
    registry for tests), confluent-kafka's ``SchemaRegistryClient`` (``config`` holds its settings, such as
    ``basic.auth.user.info`` or ``ssl.ca.location``); for an existing file or a path ending in ``.sqlite`` or ``.db``,
    the embedded registry in that file; for nothing, the default file. Anything else (``localhost:8081``) is a
    ``ConfigurationError`` that shows the fix, rather than a new registry file of that name. A client is returned as
    it is."""
    if target is None or isinstance(target, (str, os.PathLike)):
        text = str(target) if target is not None else ""
        if text.startswith(REMOTE_SCHEMES):
            from confluent_kafka.schema_registry import SchemaRegistryClient

            return SchemaRegistryClient.new_client({"url": text, **config})  # mock:// gives the in-memory client
        if config:
            raise TypeError(f"settings {', '.join(sorted(config))} are for a registry URL, not an embedded file")
        from .embedded import EmbeddedSchemaRegistryClient

        if target is None:
            return EmbeddedSchemaRegistryClient(default_path())
        check_address(target)
        return EmbeddedSchemaRegistryClient(Path(target))
    return target


def check_address(target: Any) -> None:
    """The ``ConfigurationError`` that ``connect`` raises for ``target`` (``localhost:8081`` for a URL), raised now
    without connecting: so that a format given a registry refuses a bad address before any data flows."""
    if isinstance(target, (str, os.PathLike)):
        text, path = str(target), Path(target)
        if not (text.startswith(REMOTE_SCHEMES) or path.is_file() or path.suffix in FILE_SUFFIXES):
            raise ConfigurationError(_address_fix(text))


def jvm_settings(client: Any) -> dict[str, str] | None:
    """How the JVM's decoders find the writer schemas of framed messages in the registry ``client``
    (``cdcformats/jvm/decoders/WriterSchemas.java``): a registry's URL, which each executor asks once per id; or, for
    the embedded registry, a file that only Python reads, every schema it holds as the query is planned. None where
    the JVM cannot ask as the client does: settings beyond a URL (auth, TLS), confluent-kafka's in-memory ``mock://``
    registry, or a client of the caller's own."""
    from .embedded import EmbeddedSchemaRegistryClient

    settings = {"registry_address": address(client)}
    if isinstance(client, EmbeddedSchemaRegistryClient):
        schemas = client.store.schemas() if client.store.exists() else {}
        if any(schema.get("references") for schema in schemas.values()):
            return None  # a schema with references is read with them, which WriterSchemas does not fetch
        return {**settings, "writer_schemas": json.dumps(
            {str(schema_id): {"type": schema.get("schemaType", "AVRO"), "text": schema["schema"]}
             for schema_id, schema in schemas.items()})}
    try:
        config = dict(client.config())
    except Exception:  # a client of its own kind, which tells no URL
        return None
    url = str(config.pop("url", ""))
    if config or not url.startswith(REMOTE_SCHEMES[:2]):
        return None
    return {**settings, "schema_registry": url}


def reach(target: Any) -> None:
    """That a registry URL answers, asked once with no retries (for a command to say so before it reads any input);
    a ``RegistryError`` that names it and says why otherwise: it cannot be reached, or it refused the request (a
    401). An embedded file or a client is not asked: there is nothing to reach."""
    if not str(target).startswith(REMOTE_SCHEMES[:2]) or not isinstance(target, (str, os.PathLike)):
        return
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    client = connect(target, **{"max.retries": 0, "timeout": 10})
    try:
        client.get_subjects()
    except SchemaRegistryError as error:
        raise RegistryError(f"{address(client)} refused the request: {' '.join(str(error).split())}") from None
    except Exception as error:  # the HTTP client's own: refused, unknown host, timed out
        raise RegistryError(f"cannot reach {address(client)}: {' '.join(str(error).split()) or type(error).__name__}"
                            ) from None


def address(client: Any) -> str:
    """Where a registry client asks, as errors name it: the embedded registry's file (saying so where it does not
    exist), or a registry's URL, without the credentials a URL may hold."""
    try:
        url = str(client.config()["url"])
    except Exception:  # a client of its own kind, which tells no URL
        return f"the schema registry {client!r}"
    if url.startswith("file:"):
        path = Path(unquote(urlsplit(url).path))
        return f"the schema registry file {path}{'' if path.exists() else ' (no such file)'}"
    return f"the schema registry {re.sub(r'//[^/@]*@', '//', url)}"


def _address_fix(text: str) -> str:
    known = f"a registry is a URL ({', '.join(REMOTE_SCHEMES[:2])}) or a file (an existing one, or a path ending in " \
            f"{' or '.join(FILE_SUFFIXES)})"
    if re.fullmatch(r"[\w.-]+:\d+(/.*)?", text):
        return f"schema registry {text!r}: did you mean http://{text}? ({known})"
    return f"schema registry {text!r}: {known}"
