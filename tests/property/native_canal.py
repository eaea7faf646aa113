"""Native canal-json messages, and their normal form written out from Canal's and Flink's docs (FlatMessage: ``data``
rows of text, ``old`` holding the previous values of the changed columns, ``mysqlType``, ``pkNames``, ``es``, ``ts``)
and the choices the codec's docstring spells out, independently of the codec.

``messages`` are row changes only; ``messages_with_ddl`` adds the messages that change no row, which the codec skips
with ``skip_ddl`` (and refuses without it).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from cdcformats.codecs._kit.json_message import jackson_float

from .native import (
    column_or_name,
    decode_json,
    encode_json,
    finite_floats,
    garbage_for,
    json_values,
    milliseconds,
    named,
    text_values,
    typed_looking_texts,
)
from .strategies import TYPE_NAMES, int64s, names

ROW_TYPES = ("INSERT", "UPDATE", "DELETE", "INIT")
NO_ROW_TYPES = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX", "GTID", "XACOMMIT", "XAROLLBACK",
                "MHEARTBEAT")
CANAL_FIELDS = ("data", "database", "es", "gtid", "id", "isDdl", "mysqlType", "old", "pkNames", "sql", "sqlType",
                "table", "ts", "type")
MYSQL_TYPES = ["int(11)", "bigint(20)", "bigint(20) unsigned", "tinyint(1)", "decimal(10,2)", "float", "double",
               "varchar(255)", "datetime", "INTEGER", "FLOAT", "VARCHAR(255)", *TYPE_NAMES]

# Canal writes text or null; JSON numbers and booleans are read as their text.
# Numbers as Canal, a Java program, spells them: doubles as Double.toString ("1.0E7", "-3.4E38"), decimals in plain
# digits ("0.000000000001", up to the 38 places of a MySQL column), which the codec types in a number column where
# Python's spellings stay text.
java_spelt_numbers = st.one_of(
    finite_floats.map(lambda value: bytes(jackson_float(value)).decode()),
    st.integers(0, 38).flatmap(lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places))
    .map(lambda value: format(value, "f")))
values = st.one_of(typed_looking_texts, java_spelt_numbers, text_values, st.none(), st.booleans(), int64s,
                   finite_floats)
MAX_COLUMNS = 5
column_lists = st.lists(names, max_size=MAX_COLUMNS, unique=True)
extra_fields = st.dictionaries(st.sampled_from(["canalId", "traceId", "comment", "userId"]) | st.text(max_size=6),
                               json_values, max_size=2).map(
    lambda fields: {name: value for name, value in fields.items() if name not in CANAL_FIELDS})

# What a document draws after its columns, built once for each count of columns (native.column_or_name says why). A
# row, or a column type, is a tuple for every column, or a dict over any columns: a key that is an index names a
# column.
_type_names = st.sampled_from(MYSQL_TYPES)
_row_lists = {count: st.lists(st.tuples(*(values,) * count) | st.dictionaries(names, values, max_size=4), max_size=3)
              for count in range(MAX_COLUMNS + 1)}
_old_rows = {count: st.dictionaries(column_or_name(count), values, max_size=4) for count in range(1, MAX_COLUMNS + 1)}
_old_rows_of_no_columns = st.dictionaries(names, values, max_size=2)
_null_or_empty: st.SearchStrategy[Any] = st.none() | st.builds(list)  # as null or as []
_table_names = st.none() | st.text(max_size=8)
_optional_fields = {count: st.fixed_dictionaries({}, optional={
    "es": st.none() | milliseconds, "ts": st.none() | milliseconds, "id": st.none() | int64s,
    "gtid": st.none() | st.text(max_size=12),
    "mysqlType": st.none() | st.tuples(*(_type_names,) * count) | st.dictionaries(
        column_or_name(count), st.none() | _type_names, max_size=6),
    "sql": st.none() | st.just("") | st.text(max_size=20),
    "sqlType": st.none() | st.dictionaries(names, st.integers(-7, 2005), max_size=4) | json_values,
}) for count in range(MAX_COLUMNS + 1)}
_key_names: dict[int, st.SearchStrategy[list[int | str] | None]] = {
    count: st.none() | st.lists(column_or_name(count), min_size=1, max_size=3) | st.builds(list)
    for count in range(MAX_COLUMNS + 1)}
_type_names_of = {with_ddl: st.sampled_from([*ROW_TYPES, "TRUNCATE", *(NO_ROW_TYPES if with_ddl else ())])
                  for with_ddl in (False, True)}


def _by_name(columns: list[str], drawn: Any) -> dict[str, Any]:
    """A row or the column types: a tuple holds one for every column, a dict's index keys name a column."""
    if type(drawn) is tuple:
        return dict(zip(columns, drawn))
    return {named(columns, column): value for column, value in drawn.items()}


@st.composite
def documents(draw: st.DrawFn, with_ddl: bool = False) -> dict[str, Any]:
    """A message: its rows over the same columns (as Canal writes them), or now and then over any names; ``old``,
    ``mysqlType`` and ``pkNames`` naming those columns, or any."""
    type_name = draw(_type_names_of[with_ddl])
    columns = draw(column_lists)
    document: dict[str, Any] = {}
    if type_name in ROW_TYPES:
        rows = [_by_name(columns, row) for row in draw(_row_lists[len(columns)])]
        document["data"] = rows or draw(_null_or_empty)
        if type_name == "UPDATE":
            document["old"] = [_by_name(sorted(row), draw(_old_rows[len(row)])) if row
                               else draw(_old_rows_of_no_columns) for row in rows]
            if not rows:
                document["old"] = draw(_null_or_empty)
        elif draw(st.booleans()):
            document["old"] = draw(_null_or_empty)
        if draw(st.booleans()):
            document["isDdl"] = False
    else:
        document.update(data=None, old=None, isDdl=True)
    document["type"] = type_name
    table = draw(_table_names)
    document["table"] = table
    document["database"] = None if table is None else draw(_table_names)
    optional = draw(_optional_fields[len(columns)])
    if optional.get("mysqlType") is not None:
        optional["mysqlType"] = _by_name(columns, optional["mysqlType"])
    document.update(optional)
    key_names = draw(_key_names[len(columns)])
    document["pkNames"] = None if key_names is None else [named(columns, name) for name in key_names]
    document.update(draw(extra_fields))
    return document


_documents_with_ddl = documents(with_ddl=True)
messages = st.lists(documents().map(encode_json), max_size=4)
messages_with_ddl = st.lists(_documents_with_ddl.map(encode_json), max_size=4)


def _text(value: Any) -> str | None:
    """A value as Canal writes it: text (JSON numbers and booleans as their text)."""
    if value is None or type(value) is str:
        return value
    if type(value) is bool:
        return "true" if value else "false"
    return repr(value)


def _normal_row(document: dict[str, Any], data: Any, old: Any, types: Any, key_names: Any,
                read_type: str = "INSERT") -> bytes:
    normal: dict[str, Any] = {"data": data, "database": document.get("database"), "es": document.get("es")}
    for field in ("gtid", "id"):
        if field in document:
            normal[field] = document[field]
    normal.update({"isDdl": document["type"] == "TRUNCATE", "mysqlType": types, "old": old, "pkNames": key_names,
                   "sql": document.get("sql") or "", "sqlType": document.get("sqlType"),
                   "table": document.get("table"), "ts": document.get("ts"),
                   "type": read_type if document["type"] == "INIT" else document["type"]})
    normal.update((name, value) for name, value in document.items() if name not in CANAL_FIELDS)
    return encode_json(normal)


def normal_form(messages: list[bytes], read_type: str = "INSERT") -> list[bytes]:
    """One message per row; an UPDATE's ``old`` keeps the columns whose value differs from the row's (in the row's
    order), then those the row lacks; ``mysqlType`` and ``pkNames`` keep the columns the message still has, and
    ``pkNames`` names each once; an INIT row (a snapshot READ) is written with the type ``read_type``."""
    normal = []
    for message in messages:
        document = decode_json(message)
        if document["type"] not in (*ROW_TYPES, "TRUNCATE"):
            continue  # skipped: it changes no row
        if document["type"] == "TRUNCATE":
            normal.append(_normal_row(document, None, None, None, None))
            continue
        all_types = {name: type_name for name, type_name in (document.get("mysqlType") or {}).items()
                     if type_name is not None}
        for index, row in enumerate(document.get("data") or []):
            row = {name: _text(value) for name, value in row.items()}
            old = None
            written_columns = list(row)
            if document["type"] == "UPDATE":
                previous = {name: _text(value) for name, value in document["old"][index].items()}
                changed = {name: previous[name] for name in row if name in previous and previous[name] != row[name]}
                changed.update((name, value) for name, value in previous.items() if name not in row)
                old = [changed]
                written_columns += [name for name in changed if name not in row]
            types = {name: all_types[name] for name in written_columns if name in all_types}
            key_names = list(dict.fromkeys(name for name in document.get("pkNames") or [] if name in row))
            normal.append(_normal_row(document, [row], old, types or None, key_names or None, read_type))
    return normal


# -- garbage ----------------------------------------------------------------------------------------------------------

_damaged_fields = st.sampled_from([*CANAL_FIELDS, "data.0", "old.0"])


@st.composite
def damaged_documents(draw: st.DrawFn) -> bytes:
    """A canal message with one field replaced by any JSON value."""
    document = draw(_documents_with_ddl)
    field = draw(_damaged_fields)
    value = draw(json_values)
    if field.endswith(".0"):
        rows = document.get(field[:-2])
        if rows:
            rows[0] = value if draw(st.booleans()) else {"x": value}
    else:
        document[field] = value
    return encode_json(document)


truncated_documents = damaged_documents().map(lambda message: message[: len(message) // 2])
canal_garbage = st.lists(st.one_of(damaged_documents(), truncated_documents,
                                   st.sampled_from([b'{"type": "INSERT", "data": ' + b"[" * 2000,
                                                    b'{"type": "INSERT", "es": 1' + b"0" * 400 + b"}",
                                                    b'{"type": "INSERT", "id": 1' + b"0" * 30 + b"}",
                                                    b'{"type": "UPDATE", "data": [{}], "old": []}'])), max_size=5)
# Random bytes, truncated and deeply nested JSON, other formats' messages, and canal messages with a field damaged.
garbage = garbage_for("debezium-json") | canal_garbage
