"""The embedded schema registry's storage: one SQLite file with Confluent Schema Registry semantics.

* One global id per distinct schema (type, text up to insignificant whitespace and JSON key order, references),
  whatever the subject.
* Versions per subject; soft delete (hidden unless asked for) and permanent delete (only after a soft delete).
* Compatibility levels, global (BACKWARD unless set) and per subject, checked for real on registration for Avro
  and for Protobuf sent as a descriptor (as confluent-kafka's serializers send it); JSON Schema and .proto text
  are stored but not checked.
* Modes READWRITE, READONLY and IMPORT (which registers with a given id).

Many processes can share one file (Spark workers, a producer, a consumer, the HTTP server): SQLite's write-ahead log
lets readers run beside one writer, and every change is one ``BEGIN IMMEDIATE`` transaction, so ids are handed out
once and a process killed in the middle of a write leaves the previous state intact. The file (and its directory) is
created by the first write: a registry that is only read, such as the default one of a user who has only read
messages, is never created, and reads as an empty registry until it is.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import compatibility, errors

DEFAULT_COMPATIBILITY = "BACKWARD"
MODES = ("READWRITE", "READONLY", "IMPORT")
GLOBAL = ""  # the config and mode rows that apply to every subject
MAX_VERSION = 2**31 - 1
MAX_ID = 2**31 - 1  # Confluent's wire format holds a schema id in 4 bytes; Java reads it as a signed int

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schemas (
    id INTEGER PRIMARY KEY,
    schema_type TEXT NOT NULL,
    schema TEXT NOT NULL,
    refs TEXT NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS versions (
    subject TEXT NOT NULL,
    version INTEGER NOT NULL,
    schema_id INTEGER NOT NULL REFERENCES schemas(id),
    deleted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (subject, version)
);
CREATE INDEX IF NOT EXISTS versions_by_schema ON versions(schema_id);
CREATE TABLE IF NOT EXISTS config (subject TEXT PRIMARY KEY, compatibility TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mode (subject TEXT PRIMARY KEY, mode TEXT NOT NULL);
"""


def _fingerprint(schema_type: str, canonical_schema: str, references: Sequence[dict[str, Any]]) -> str:
    text = json.dumps([schema_type, canonical_schema, [[r["name"], r["subject"], r["version"]] for r in references]])
    return hashlib.sha256(text.encode()).hexdigest()


def _references(references: Any) -> list[dict[str, Any]]:
    if references is None:
        return []
    if not isinstance(references, (list, tuple)):
        raise errors.invalid_schema(f"references must be a list, got {references!r}")
    result = []
    for reference in references:
        if not (isinstance(reference, dict) and isinstance(reference.get("name"), str)
                and isinstance(reference.get("subject"), str)):
            raise errors.invalid_schema(f"a reference needs name, subject and version, got {reference!r}")
        version = parse_version(reference.get("version"))
        if version is None:
            raise errors.invalid_schema(f"a reference names a version number, not latest: {reference!r}")
        result.append({"name": reference["name"], "subject": reference["subject"], "version": version})
    return result


def parse_version(version: Any) -> int | None:
    """A version number, or None for "latest" (also written -1)."""
    if version in ("latest", -1, "-1"):
        return None
    if type(version) is int:
        number = version
    elif type(version) is str and version.isascii() and version.isdigit() and len(version) <= 10:
        number = int(version)
    else:
        raise errors.invalid_version(version)
    if not 1 <= number <= MAX_VERSION:
        raise errors.invalid_version(version)
    return number


class SchemaStore:
    """A schema registry in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()  # one connection, shared by the threads of one process
        # The file's connection, opened by the first write, or the first read once the file exists: reading never
        # creates a registry file (or its directory). Until then reads see an empty registry, in memory.
        self._db: sqlite3.Connection | None = None
        self._empty: sqlite3.Connection | None = None

    def exists(self) -> bool:
        """Whether the registry file exists (a registry only read so far may have none)."""
        return self._db is not None or self.path.exists()

    def close(self) -> None:
        with self._lock:
            for db in (self._db, self._empty):
                if db is not None:
                    db.close()

    def _connection(self, create: bool) -> sqlite3.Connection:
        """The file's connection; for a read of a file that does not exist (``create`` false), an empty registry."""
        if self._db is None:
            if not create and not self.path.exists():
                if self._empty is None:
                    self._empty = _opened(":memory:")
                return self._empty
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = _opened(self.path)
        return self._db

    @contextmanager
    def _transaction(self, begin: str, create: bool) -> Iterator[sqlite3.Connection]:
        """One transaction on the shared connection; rolled back on any error, the commit's own included."""
        with self._lock:
            db = self._connection(create)
            db.execute(begin)
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def _write(self) -> Any:
        return self._transaction("BEGIN IMMEDIATE", True)  # takes the write lock now: no upgrade deadlock later

    def _read(self) -> Any:
        return self._transaction("BEGIN", False)  # a consistent snapshot across the statements of one call

    # -- schemas ----------------------------------------------------------------------------------------------------

    def register(self, subject: str, schema: str, schema_type: str | None = "AVRO",
                 references: Sequence[dict[str, Any]] | None = None, schema_id: int | None = None) -> dict[str, Any]:
        """Register ``schema`` under ``subject``; the id and version it has (an existing one if already there)."""
        schema_type = _schema_type(schema_type)
        refs = _references(references)
        fingerprint = _fingerprint(schema_type, compatibility.canonical(schema_type, schema), refs)
        with self._write() as db:
            mode = self._mode(db, subject)
            if mode == "READONLY":
                raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")
            if schema_id is not None and schema_id != -1 and mode != "IMPORT":
                raise errors.operation_not_permitted("A schema id can only be given in IMPORT mode")
            if schema_id == -1:  # Confluent's "no id given"
                schema_id = None
            if schema_id is not None and (type(schema_id) is not int or not 1 <= schema_id <= MAX_ID):
                raise errors.RegistryError(422, 42207, f"A schema id is an integer from 1 to {MAX_ID}, "
                                                       f"got {schema_id!r}")
            existing = db.execute(
                "SELECT v.version, s.id FROM versions v JOIN schemas s ON s.id = v.schema_id "
                "WHERE v.subject = ? AND s.fingerprint = ? AND v.deleted = 0", (subject, fingerprint)).fetchone()
            if existing is not None:
                return {"subject": subject, "id": existing["id"], "version": existing["version"]}
            parsed = self._parse(db, schema_type, schema, refs)
            if mode != "IMPORT":
                earlier = [self._parse(db, row["schema_type"], row["schema"], json.loads(row["refs"]))
                           for row in self._live_versions(db, subject) if row["schema_type"] == schema_type]
                problems = compatibility.problems(self._compatibility(db, subject), schema_type, parsed, earlier)
                if problems:
                    raise errors.incompatible(problems)
            known = db.execute("SELECT id FROM schemas WHERE fingerprint = ?", (fingerprint,)).fetchone()
            if known is not None:
                new_id = known["id"]
                if schema_id is not None and schema_id != new_id:
                    raise errors.RegistryError(422, 42207, f"Schema already registered with id {new_id} instead "
                                                           f"of input id {schema_id}")
            else:
                if schema_id is not None and db.execute("SELECT 1 FROM schemas WHERE id = ?", (schema_id,)).fetchone():
                    raise errors.RegistryError(422, 42207, f"Id {schema_id} is taken by another schema")
                new_id = db.execute(
                    "INSERT INTO schemas (id, schema_type, schema, refs, fingerprint) VALUES (?, ?, ?, ?, ?)",
                    (schema_id, schema_type, schema, json.dumps(refs), fingerprint)).lastrowid
                if new_id > MAX_ID:
                    raise errors.RegistryError(422, 42209, f"No schema id is left below {MAX_ID}")
            version = db.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM versions WHERE subject = ?",
                                 (subject,)).fetchone()[0]
            db.execute("INSERT INTO versions (subject, version, schema_id) VALUES (?, ?, ?)",
                       (subject, version, new_id))
            return {"subject": subject, "id": new_id, "version": version}

    def lookup(self, subject: str, schema: str, schema_type: str | None = "AVRO",
               references: Sequence[dict[str, Any]] | None = None, deleted: bool = False) -> dict[str, Any]:
        """The version of ``subject`` that holds ``schema``."""
        schema_type = _schema_type(schema_type)
        refs = _references(references)
        fingerprint = _fingerprint(schema_type, compatibility.canonical(schema_type, schema), refs)
        with self._read() as db:
            self._require_subject(db, subject, deleted)
            row = db.execute(
                "SELECT v.subject, v.version, v.deleted, s.* FROM versions v JOIN schemas s ON s.id = v.schema_id "
                "WHERE v.subject = ? AND s.fingerprint = ? AND (v.deleted = 0 OR ?) ORDER BY v.version DESC",
                (subject, fingerprint, deleted)).fetchone()
            if row is None:
                raise errors.schema_not_found()
            return _version_record(row)

    def schema(self, schema_id: int) -> dict[str, Any]:
        if not 1 <= schema_id <= MAX_ID:
            raise errors.schema_not_found(f"Schema {schema_id} not found")
        with self._read() as db:
            row = db.execute("SELECT * FROM schemas WHERE id = ?", (schema_id,)).fetchone()
            if row is None:
                raise errors.schema_not_found(f"Schema {schema_id} not found")
            return _schema_record(row)

    def schemas(self) -> dict[int, dict[str, Any]]:
        """Every schema the registry holds, by id (as ``schema`` gives each)."""
        with self._read() as db:
            return {row["id"]: _schema_record(row) for row in db.execute("SELECT * FROM schemas ORDER BY id")}

    def schema_types(self) -> list[str]:
        return list(compatibility.SCHEMA_TYPES)

    def subjects_of(self, schema_id: int, deleted: bool = False) -> list[dict[str, Any]]:
        """The (subject, version) pairs that hold the schema ``schema_id``."""
        if not 1 <= schema_id <= MAX_ID:
            raise errors.schema_not_found(f"Schema {schema_id} not found")
        with self._read() as db:
            if db.execute("SELECT 1 FROM schemas WHERE id = ?", (schema_id,)).fetchone() is None:
                raise errors.schema_not_found(f"Schema {schema_id} not found")
            rows = db.execute("SELECT subject, version FROM versions WHERE schema_id = ? AND (deleted = 0 OR ?) "
                              "ORDER BY subject, version", (schema_id, deleted)).fetchall()
            return [{"subject": row["subject"], "version": row["version"]} for row in rows]

    # -- subjects and versions --------------------------------------------------------------------------------------

    def subjects(self, prefix: str = "", deleted: bool = False) -> list[str]:
        with self._read() as db:
            rows = db.execute("SELECT DISTINCT subject FROM versions WHERE (deleted = 0 OR ?) ORDER BY subject",
                              (deleted,)).fetchall()
            return [row["subject"] for row in rows if row["subject"].startswith(prefix)]

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        with self._read() as db:
            self._require_subject(db, subject, deleted)
            return [row["version"] for row in db.execute(
                "SELECT version FROM versions WHERE subject = ? AND (deleted = 0 OR ?) ORDER BY version",
                (subject, deleted))]

    def version(self, subject: str, version: Any = "latest", deleted: bool = False) -> dict[str, Any]:
        with self._read() as db:
            return _version_record(self._version_row(db, subject, version, deleted))

    def referenced_by(self, subject: str, version: Any = "latest") -> list[int]:
        """The ids of live schemas that reference this version."""
        with self._read() as db:
            number = self._version_row(db, subject, version, False)["version"]
            return [row["id"] for row in self._live_referrers(db) if any(
                ref["subject"] == subject and ref["version"] == number for ref in json.loads(row["refs"]))]

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        with self._write() as db:
            rows = db.execute("SELECT version, deleted FROM versions WHERE subject = ? ORDER BY version",
                              (subject,)).fetchall()
            if not rows:
                raise errors.subject_not_found(subject)
            live = [row["version"] for row in rows if not row["deleted"]]
            if permanent:
                if live:
                    raise errors.subject_not_soft_deleted(subject)
                self._refuse_if_referenced(db, subject, None)
                db.execute("DELETE FROM versions WHERE subject = ?", (subject,))
                db.execute("DELETE FROM config WHERE subject = ?", (subject,))
                db.execute("DELETE FROM mode WHERE subject = ?", (subject,))
                return [row["version"] for row in rows]
            if not live:
                raise errors.subject_soft_deleted(subject)
            self._refuse_if_referenced(db, subject, None)
            db.execute("UPDATE versions SET deleted = 1 WHERE subject = ?", (subject,))
            return live

    def delete_version(self, subject: str, version: Any, permanent: bool = False) -> int:
        number = parse_version(version)
        with self._write() as db:
            self._require_subject(db, subject, deleted=True)
            if number is None:
                row = db.execute("SELECT version, deleted FROM versions WHERE subject = ? AND deleted = 0 "
                                 "ORDER BY version DESC LIMIT 1", (subject,)).fetchone()
            else:
                row = db.execute("SELECT version, deleted FROM versions WHERE subject = ? AND version = ?",
                                 (subject, number)).fetchone()
            if row is None:
                raise errors.version_not_found(subject, version)
            found = row["version"]
            self._refuse_if_referenced(db, subject, found)
            if permanent:
                if not row["deleted"]:
                    raise errors.version_not_soft_deleted(subject, found)
                db.execute("DELETE FROM versions WHERE subject = ? AND version = ?", (subject, found))
            else:
                if row["deleted"]:
                    raise errors.version_soft_deleted(subject, found)
                db.execute("UPDATE versions SET deleted = 1 WHERE subject = ? AND version = ?", (subject, found))
            return found

    def test_compatibility(self, subject: str, schema: str, schema_type: str | None = "AVRO",
                           references: Sequence[dict[str, Any]] | None = None, version: Any = "latest",
                           all_versions: bool = False) -> list[str]:
        """Why ``schema`` could not be registered next under ``subject``: against one version, or (``all_versions``)
        against the latest or every version, as the subject's compatibility level says."""
        schema_type = _schema_type(schema_type)
        with self._read() as db:
            parsed = self._parse(db, schema_type, schema, _references(references))
            rows = [row for row in self._live_versions(db, subject) if row["schema_type"] == schema_type]
            if not all_versions:
                number = parse_version(version)
                rows = [row for row in rows if number is None or row["version"] == number][-1:]
                if not rows and db.execute("SELECT 1 FROM versions WHERE subject = ?", (subject,)).fetchone():
                    raise errors.version_not_found(subject, version)
            earlier = [self._parse(db, row["schema_type"], row["schema"], json.loads(row["refs"])) for row in rows]
            return compatibility.problems(self._compatibility(db, subject), schema_type, parsed, earlier)

    # -- config and mode --------------------------------------------------------------------------------------------

    def compatibility(self, subject: str | None = None, default_to_global: bool = False) -> str:
        with self._read() as db:
            row = db.execute("SELECT compatibility FROM config WHERE subject = ?", (subject or GLOBAL,)).fetchone()
            if row is not None:
                return row["compatibility"]
            if subject and not default_to_global:
                raise errors.compatibility_not_configured(subject)
            return self._compatibility(db, GLOBAL)

    def set_compatibility(self, level: Any, subject: str | None = None) -> str:
        if not isinstance(level, str) or level.upper() not in compatibility.LEVELS:
            raise errors.invalid_compatibility_level(level)
        level = level.upper()
        with self._write() as db:
            db.execute("INSERT INTO config (subject, compatibility) VALUES (?, ?) ON CONFLICT(subject) "
                       "DO UPDATE SET compatibility = excluded.compatibility", (subject or GLOBAL, level))
        return level

    def delete_compatibility(self, subject: str | None = None) -> str:
        with self._write() as db:
            level = self._compatibility(db, subject or GLOBAL)
            if subject and db.execute("SELECT 1 FROM config WHERE subject = ?", (subject,)).fetchone() is None:
                raise errors.compatibility_not_configured(subject)
            db.execute("DELETE FROM config WHERE subject = ?", (subject or GLOBAL,))
            return level

    def mode(self, subject: str | None = None, default_to_global: bool = True) -> str:
        with self._read() as db:
            if subject and not default_to_global:
                row = db.execute("SELECT mode FROM mode WHERE subject = ?", (subject,)).fetchone()
                if row is None:
                    raise errors.mode_not_configured(subject)
            return self._mode(db, subject or GLOBAL)

    def set_mode(self, mode: Any, subject: str | None = None, force: bool = False) -> str:
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise errors.invalid_mode(mode)
        mode = mode.upper()
        with self._write() as db:
            if mode == "IMPORT" and not force and db.execute(
                    "SELECT 1 FROM versions WHERE subject = ? OR ? = ''", (subject or GLOBAL, subject or GLOBAL)
            ).fetchone():
                raise errors.operation_not_permitted("Cannot import since found existing subjects")
            db.execute("INSERT INTO mode (subject, mode) VALUES (?, ?) ON CONFLICT(subject) DO UPDATE SET "
                       "mode = excluded.mode", (subject or GLOBAL, mode))
        return mode

    def delete_mode(self, subject: str) -> str:
        with self._write() as db:
            mode = self._mode(db, subject)
            db.execute("DELETE FROM mode WHERE subject = ?", (subject,))
            return mode

    # -- inside a transaction ---------------------------------------------------------------------------------------

    def _compatibility(self, db: sqlite3.Connection, subject: str) -> str:
        for key in (subject, GLOBAL):
            row = db.execute("SELECT compatibility FROM config WHERE subject = ?", (key,)).fetchone()
            if row is not None:
                return row["compatibility"]
        return DEFAULT_COMPATIBILITY

    def _mode(self, db: sqlite3.Connection, subject: str | None) -> str:
        for key in (subject or GLOBAL, GLOBAL):
            row = db.execute("SELECT mode FROM mode WHERE subject = ?", (key,)).fetchone()
            if row is not None:
                return row["mode"]
        return "READWRITE"

    def _version_row(self, db: sqlite3.Connection, subject: str, version: Any, deleted: bool) -> sqlite3.Row:
        number = parse_version(version)
        self._require_subject(db, subject, deleted)
        if number is None:
            row = db.execute(
                "SELECT v.subject, v.version, v.deleted, s.* FROM versions v JOIN schemas s ON s.id = v.schema_id "
                "WHERE v.subject = ? AND (v.deleted = 0 OR ?) ORDER BY v.version DESC LIMIT 1",
                (subject, deleted)).fetchone()
        else:
            row = db.execute(
                "SELECT v.subject, v.version, v.deleted, s.* FROM versions v JOIN schemas s ON s.id = v.schema_id "
                "WHERE v.subject = ? AND v.version = ? AND (v.deleted = 0 OR ?)", (subject, number, deleted)).fetchone()
        if row is None:
            raise errors.version_not_found(subject, version)
        return row

    def _live_referrers(self, db: sqlite3.Connection) -> list[sqlite3.Row]:
        """Schemas with references that some live version uses."""
        return db.execute("SELECT s.id, s.refs FROM schemas s WHERE s.refs != '[]' AND EXISTS "
                          "(SELECT 1 FROM versions v WHERE v.schema_id = s.id AND v.deleted = 0) ORDER BY s.id"
                          ).fetchall()

    def _require_subject(self, db: sqlite3.Connection, subject: str, deleted: bool) -> None:
        if db.execute("SELECT 1 FROM versions WHERE subject = ? AND (deleted = 0 OR ?) LIMIT 1",
                      (subject, deleted)).fetchone() is None:
            raise errors.subject_not_found(subject)

    def _live_versions(self, db: sqlite3.Connection, subject: str) -> list[sqlite3.Row]:
        return db.execute("SELECT v.version, s.* FROM versions v JOIN schemas s ON s.id = v.schema_id "
                          "WHERE v.subject = ? AND v.deleted = 0 ORDER BY v.version", (subject,)).fetchall()

    def _parse(self, db: sqlite3.Connection, schema_type: str, schema: str, refs: list[dict[str, Any]]) -> Any:
        if schema_type == "AVRO":
            return compatibility.parse_avro(schema, self._referenced_texts(db, refs, set()))
        if schema_type == "PROTOBUF":
            for ref in refs:  # references must exist, as Confluent checks
                self._referenced_row(db, ref)
            return compatibility.parse_protobuf(schema)
        return None  # JSON Schema: stored, not checked

    def _referenced_row(self, db: sqlite3.Connection, ref: dict[str, Any]) -> sqlite3.Row:
        row = db.execute("SELECT s.* FROM versions v JOIN schemas s ON s.id = v.schema_id "
                         "WHERE v.subject = ? AND v.version = ?", (ref["subject"], ref["version"])).fetchone()
        if row is None:
            raise errors.invalid_schema(f"reference {ref['name']} to {ref['subject']} version {ref['version']} "
                                        "does not exist")
        return row

    def _referenced_texts(self, db: sqlite3.Connection, refs: list[dict[str, Any]], seen: set) -> list[str]:
        """The texts of the referenced schemas, dependencies first."""
        texts: list[str] = []
        for ref in refs:
            key = (ref["subject"], ref["version"])
            if key in seen:
                continue
            seen.add(key)
            row = self._referenced_row(db, ref)
            texts += self._referenced_texts(db, json.loads(row["refs"]), seen)
            texts.append(row["schema"])
        return texts

    def _refuse_if_referenced(self, db: sqlite3.Connection, subject: str, version: int | None) -> None:
        for row in self._live_referrers(db):
            for ref in json.loads(row["refs"]):
                if ref["subject"] == subject and (version is None or ref["version"] == version):
                    raise errors.reference_exists(f"One or more references exist to the schema "
                                                  f"{{subject={subject}, version={ref['version']}}}")


def _opened(target: str | Path) -> sqlite3.Connection:
    """A connection to a registry database (a file, or ``:memory:``), its tables created if it has none."""
    db = sqlite3.connect(target, timeout=60, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("BEGIN IMMEDIATE")
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("COMMIT")
    return db


def _schema_type(schema_type: Any) -> str:
    schema_type = str(schema_type or "AVRO").upper()
    if schema_type not in compatibility.SCHEMA_TYPES:
        raise errors.invalid_schema(f"unknown schema type {schema_type}")
    return schema_type


def _schema_record(row: sqlite3.Row) -> dict[str, Any]:
    record: dict[str, Any] = {"schema": row["schema"]}
    if row["schema_type"] != "AVRO":
        record["schemaType"] = row["schema_type"]
    references = json.loads(row["refs"])
    if references:
        record["references"] = references
    return record


def _version_record(row: sqlite3.Row) -> dict[str, Any]:
    return {"subject": row["subject"], "version": row["version"], "id": row["id"], **_schema_record(row)}
