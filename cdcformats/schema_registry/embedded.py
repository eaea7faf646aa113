"""A schema registry client for the embedded registry: the methods of confluent-kafka's ``SchemaRegistryClient``
that its serializers and deserializers call, answered from the SQLite store in this process, no server needed.

Every process that opens the same file sees the same ids, which confluent-kafka's ``mock://`` client cannot give
(it hands out a new id per registration and keeps nothing). Errors are confluent-kafka's ``SchemaRegistryError``
with Confluent's HTTP statuses and error codes, so code written against a real registry behaves the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import RegisteredSchema, Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError

from . import errors
from .store import SchemaStore


@contextmanager
def _confluent_errors() -> Iterator[None]:
    try:
        yield
    except errors.RegistryError as error:
        raise SchemaRegistryError(error.http_status, error.error_code, error.message) from None


def _references(schema: Schema) -> list[dict[str, Any]]:
    return [{"name": ref.name, "subject": ref.subject, "version": ref.version} for ref in schema.references or ()]


def _text(schema: Schema) -> str:
    """The schema's text; a ``Schema`` without one (confluent-kafka allows None) is an invalid schema."""
    if schema.schema_str is None:
        raise errors.invalid_schema("no schema text")
    return schema.schema_str


def _schema(record: dict[str, Any]) -> Schema:
    return Schema.from_dict({"schemaType": "AVRO", **record})


def _registered(record: dict[str, Any]) -> RegisteredSchema:
    return RegisteredSchema.from_dict({"schemaType": "AVRO", **record})


class EmbeddedSchemaRegistryClient:
    """confluent-kafka's SchemaRegistryClient interface over a registry file (``path``)."""

    def __init__(self, path: str | Path) -> None:
        self.store = SchemaStore(path)

    def __repr__(self) -> str:
        return f"EmbeddedSchemaRegistryClient({str(self.store.path)!r})"

    def __enter__(self) -> EmbeddedSchemaRegistryClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    def config(self) -> dict[str, Any]:
        return {"url": self.store.path.absolute().as_uri()}

    # -- registration and lookup ------------------------------------------------------------------------------------

    def register_schema(self, subject_name: str, schema: Schema, normalize_schemas: bool = False) -> int:
        registered = self.register_schema_full_response(subject_name, schema, normalize_schemas)
        assert registered.schema_id is not None  # register_schema_full_response always gives the id
        return registered.schema_id

    def register_schema_full_response(self, subject_name: str, schema: Schema, normalize_schemas: bool = False
                                      ) -> RegisteredSchema:
        with _confluent_errors():
            result = self.store.register(subject_name, _text(schema), schema.schema_type, _references(schema))
        return RegisteredSchema(schema_id=result["id"], guid=None, schema=schema, subject=result["subject"],
                                version=result["version"])

    def lookup_schema(self, subject_name: str, schema: Schema, normalize_schemas: bool = False, fmt: str | None = None,
                      deleted: bool = False) -> RegisteredSchema:
        with _confluent_errors():
            return _registered(self.store.lookup(subject_name, _text(schema), schema.schema_type,
                                                 _references(schema), deleted=deleted))

    def get_schema(self, schema_id: int, subject_name: str | None = None, fmt: str | None = None,
                   reference_format: str | None = None) -> Schema:
        with _confluent_errors():
            return _schema(self.store.schema(schema_id))

    def get_schema_by_guid(self, guid: str, fmt: str | None = None) -> Schema:
        raise SchemaRegistryError(404, 40403, f"Schema {guid} not found: the embedded registry has no GUIDs")

    # -- subjects and versions --------------------------------------------------------------------------------------

    def get_subjects(self, subject_prefix: str | None = None, deleted: bool = False, deleted_only: bool = False,
                     offset: int = 0, limit: int = -1) -> list[str]:
        subjects = self.store.subjects(subject_prefix or "", deleted or deleted_only)
        if deleted_only:
            live = set(self.store.subjects(subject_prefix or ""))
            subjects = [subject for subject in subjects if subject not in live]
        return subjects[offset:] if limit < 0 else subjects[offset:offset + limit]

    def get_versions(self, subject_name: str, deleted: bool = False, deleted_only: bool = False, offset: int = 0,
                     limit: int = -1) -> list[int]:
        with _confluent_errors():
            versions = self.store.versions(subject_name, deleted or deleted_only)
            if deleted_only:
                live = set(self.store.versions(subject_name))
                versions = [version for version in versions if version not in live]
        return versions[offset:] if limit < 0 else versions[offset:offset + limit]

    def get_latest_version(self, subject_name: str, fmt: str | None = None) -> RegisteredSchema:
        return self.get_version(subject_name, "latest")

    def get_version(self, subject_name: str, version: int | str = "latest", deleted: bool = False,
                    fmt: str | None = None) -> RegisteredSchema:
        with _confluent_errors():
            return _registered(self.store.version(subject_name, version, deleted))

    def get_latest_with_metadata(self, subject_name: str, metadata: dict[str, str], deleted: bool = False,
                                 fmt: str | None = None) -> RegisteredSchema:
        raise SchemaRegistryError(404, 40401, f"No version of subject '{subject_name}' has metadata {metadata}: "
                                              "the embedded registry keeps no schema metadata")

    def delete_subject(self, subject_name: str, permanent: bool = False) -> list[int]:
        with _confluent_errors():
            return self.store.delete_subject(subject_name, permanent)

    def delete_version(self, subject_name: str, version: int, permanent: bool = False) -> int:
        with _confluent_errors():
            return self.store.delete_version(subject_name, version, permanent)

    # -- compatibility ----------------------------------------------------------------------------------------------

    def set_compatibility(self, subject_name: str | None = None, level: str | None = None) -> dict[str, str]:
        with _confluent_errors():
            return {"compatibility": self.store.set_compatibility(level, subject_name)}

    def get_compatibility(self, subject_name: str | None = None) -> str:
        with _confluent_errors():
            return self.store.compatibility(subject_name)

    def test_compatibility(self, subject_name: str, schema: Schema, version: int | str = "latest",
                           normalize: bool = False, verbose: bool = False) -> bool:
        with _confluent_errors():
            return not self.store.test_compatibility(subject_name, _text(schema), schema.schema_type,
                                                     _references(schema), version)

    def get_associations_by_resource_name(self, *args: Any, **kwargs: Any) -> list[Any]:
        """No topic is associated with a subject here, so serializers fall back to their subject name strategy."""
        return []
