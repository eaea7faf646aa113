"""Maxwell JSON messages as Maxwell writes them under its various output options, their normal form written out from
Maxwell's docs (dataformat, config, bootstrapping) independently of the codec, and garbage to feed the decoder.

``messages`` and ``normal_form`` are the configuration without options; ``messages_for(key_columns)`` and
``normal_form(messages, key_columns)`` the one with the option ``key_columns`` (the same key column names for
every table). ``messages_with_control`` adds the messages that change no row (bootstrap markers, output_ddl's schema
changes), which the codec skips with ``skip_ddl`` and refuses without it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import strategies as st

from cdcformats.model import INT64_MAX

from . import native
from .strategies import int64s, names

encode_json = msgspec.json.encode
decode_json = msgspec.json.decode

ROW_TYPES = ["insert", "update", "delete", "bootstrap-insert"]
# The fields Maxwell's output options add, in the order Maxwell writes them.
POSITION_FIELDS = ["xid", "xoffset", "commit", "position", "gtid", "server_id", "thread_id"]
READ_FIELDS = ["database", "table", "type", "ts", *POSITION_FIELDS, "primary_key_columns", "data", "old"]

MAX_COLUMNS = 5
scalars = st.one_of(st.none(), st.booleans(), int64s, native.finite_floats, st.text(max_size=8),
                    native.typed_looking_texts)
# SET columns come as arrays, JSON columns as any JSON.
column_values = st.one_of(scalars, scalars, native.json_values)
columns = st.dictionaries(names, column_values, max_size=MAX_COLUMNS)
seconds = st.integers(-(2**63 // 1_000_000), INT64_MAX // 1_000_000)
position_fields = st.fixed_dictionaries({}, optional={
    "xid": int64s, "xoffset": int64s, "commit": st.booleans(),
    "position": st.from_regex(r"mysql-bin\.[0-9]{6}:[0-9]{1,9}", fullmatch=True) | st.text(max_size=6),
    "gtid": st.none() | st.text(max_size=12), "server_id": int64s, "thread_id": int64s})
# Fields of output_row_query, output_schema_id, output_push_timestamp, output_naming_strategy, and anything else.
other_fields = st.fixed_dictionaries({}, optional={
    "query": st.text(max_size=12), "schema_id": int64s, "push_timestamp": native.finite_floats,
    "serverId": int64s, "extension": native.json_values})
# What a document draws, built once rather than on every draw (native.column_or_name says why); what depends on the
# row's columns once for each count of them, drawing indices into the sorted columns.
_databases = st.none() | st.text(max_size=6)
_row_types = st.sampled_from(ROW_TYPES)
_times = st.none() | seconds
_key_names = {count: st.lists(native.column_or_name(count), max_size=3) for count in range(1, MAX_COLUMNS + 1)}
_key_names_of_no_columns = st.lists(names, max_size=2)
_changed = {count: st.lists(st.sampled_from(range(count)), unique=True) for count in range(1, MAX_COLUMNS + 1)}
_other_columns = st.dictionaries(names, column_values, max_size=2)


@st.composite
def documents(draw: st.DrawFn, key_columns: tuple[str, ...] = ()) -> dict[str, Any]:
    """One row message; ``key_columns``: the key the consumer's option names, for primary_key without its columns."""
    document: dict[str, Any] = {}
    if draw(st.integers(0, 5)):  # a table, sometimes written without its database
        if draw(st.booleans()):
            document["database"] = draw(_databases)
        document["table"] = draw(st.text(max_size=8))
    row_type = draw(_row_types)
    document["type"] = row_type
    if draw(st.booleans()):
        document["ts"] = draw(_times)
    document.update(draw(position_fields))
    document.update(draw(other_fields))
    data = draw(columns)
    sorted_columns = sorted(data)
    key_names = [native.named(sorted_columns, name) for name in draw(_key_names[len(data)])] if data else \
        draw(_key_names_of_no_columns)
    named = key_names if draw(st.booleans()) else None  # output_primary_key_columns
    if draw(st.booleans()):  # output_primary_keys: one value per key column, which the consumer may know
        value_names = named or list(key_columns)
        if value_names and draw(st.booleans()):  # as Maxwell writes them, out of the row
            document["primary_key"] = [data.get(name) for name in value_names]
        else:
            count = len(value_names) if value_names else draw(st.integers(0, 3))
            document["primary_key"] = draw(st.lists(column_values, min_size=count, max_size=count))
    if named is not None:
        document["primary_key_columns"] = named
    document["data"] = data
    if row_type == "update" and draw(st.integers(0, 3)):
        changed = [sorted_columns[index] for index in draw(_changed[len(data)])] if data else []
        old = {name: draw(column_values) for name in changed}
        old.update(draw(_other_columns))  # columns data does not show
        document["old"] = old
    return document


# Maxwell's messages that change no row: a bootstrap's markers, and the schema changes that output_ddl adds.
BOOTSTRAP_MARKERS = ["bootstrap-start", "bootstrap-complete"]
DDL_TYPES = [f"{kind}-{change}" for kind in ("database", "table") for change in ("create", "alter", "drop")]
_control_types = st.sampled_from([*BOOTSTRAP_MARKERS, *DDL_TYPES])
_definitions = st.fixed_dictionaries({}, optional={"def": native.json_values, "old": native.json_values})


@st.composite
def control_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A bootstrap marker, as Maxwell writes it around the bootstrap-insert rows (an empty ``data``), or a schema
    change of output_ddl (the statement, and the table's definition before and after)."""
    row_type = draw(_control_types)
    document: dict[str, Any] = {"type": row_type, "database": draw(st.text(max_size=6))}
    if row_type.startswith("table-") or row_type in BOOTSTRAP_MARKERS:
        document["table"] = draw(st.text(max_size=8))
    document["ts"] = draw(seconds)
    if row_type in BOOTSTRAP_MARKERS:
        document["data"] = {}
    else:
        document.update(draw(position_fields))
        document["sql"] = draw(st.text(max_size=20))
        document.update(draw(_definitions))
    return document


def messages_for(key_columns: tuple[str, ...] = (), with_control: bool = False) -> st.SearchStrategy[list[bytes]]:
    drawn = st.one_of(documents(key_columns), control_documents()) if with_control else documents(key_columns)
    return st.lists(drawn.map(encode_json), max_size=4)


messages = messages_for()
messages_with_control = messages_for(with_control=True)


def _canonical(value: Any) -> bytes:
    """Two JSON values are the same value when they are written the same (1 is not 1.0, -0.0 not 0.0)."""
    return encode_json(value)


def normal_document(document: dict[str, Any], key_columns: tuple[str, ...] = ()) -> dict[str, Any]:
    data = document["data"]
    named = document.get("primary_key_columns") or []
    if named:
        key_names = list(named)
        key_values = document["primary_key"] if "primary_key" in document else [data.get(name) for name in named]
    elif key_columns and "primary_key" in document:
        key_names, key_values = list(key_columns), document["primary_key"]
    else:
        key_names = [name for name in key_columns if name in data]
        key_values = [data[name] for name in key_names]
    key: dict[str, Any] = {}
    for name, value in zip(key_names, key_values):
        key.setdefault(name, value)  # a column named twice is one key column, with its first value
    key_names, key_values = list(key), list(key.values())
    # The key columns are columns of the row (Paimon reads the key values out of data): those data lacks come first.
    data = {**{name: value for name, value in zip(key_names, key_values) if name not in data}, **data}
    reads_primary_key = bool(named or key_columns)
    normal: dict[str, Any] = {}
    if document.get("table") is not None:
        if document.get("database") is not None:
            normal["database"] = document["database"]
        normal["table"] = document["table"]
    normal["type"] = document["type"]
    if document.get("ts") is not None:
        normal["ts"] = document["ts"]
    normal.update((name, document[name]) for name in POSITION_FIELDS if name in document)
    normal.update((name, value) for name, value in document.items()
                  if name not in READ_FIELDS and not (name == "primary_key" and reads_primary_key))
    if key_names:
        normal["primary_key"] = key_values
    normal["primary_key_columns"] = key_names
    normal["data"] = data
    changed = {name: value for name, value in document.get("old", {}).items()
               if name not in data or _canonical(value) != _canonical(data[name])}
    if changed:
        normal["old"] = changed
    return normal


def normal_form(messages: list[bytes], key_columns: tuple[str, ...] = ()) -> list[bytes]:
    """One message per row change; a message that changes no row is skipped (with ``skip_ddl``)."""
    documents = [decode_json(message) for message in messages]
    return [encode_json(normal_document(document, key_columns)) for document in documents
            if document["type"] not in (*BOOTSTRAP_MARKERS, *DDL_TYPES)]


def _strict(value: Any) -> Any:
    """A JSON value in a form whose equality tells 1 from 1.0 and -0.0 from 0.0, but not object field order."""
    if type(value) is dict:
        return {name: _strict(item) for name, item in value.items()}
    if type(value) is list:
        return [_strict(item) for item in value]
    return (type(value).__name__, repr(value))


def same(left: list[bytes], right: list[bytes]) -> bool:
    return [_strict(decode_json(message)) for message in left] == [_strict(decode_json(message)) for message in right]


# -- garbage ----------------------------------------------------------------------------------------------------------

_documents = documents()
_broken_fields = st.sampled_from([*READ_FIELDS, "primary_key"])
_broken_values = native.json_values | st.sampled_from(["table-create", "bootstrap-start", 2**64])


@st.composite
def broken_documents(draw: st.DrawFn) -> bytes:
    """A row message with one field replaced by any JSON value, or removed."""
    document = draw(_documents)
    field = draw(_broken_fields)
    if draw(st.booleans()):
        document.pop(field, None)
    else:
        document[field] = draw(_broken_values)
    return encode_json(document)


garbage = st.lists(st.one_of(
    st.binary(max_size=64), broken_documents(), native.json_values.map(encode_json),
    native.debezium_documents.map(encode_json), native.lindorm_documents.map(encode_json),
    _documents.map(encode_json).map(lambda message: message[: len(message) // 2]),
    st.sampled_from([b"[" * 5000, b'{"type": "insert", "data": ' + b"[" * 5000, b'"\\ud800"', b'{"ts": 1e400}',
                     b'{"type": "insert", "ts": 1' + b"0" * 30 + b', "data": {}}',
                     b'{"type": "insert", "data": {"id": 1' + b"0" * 30 + b"}}"])), max_size=5)
