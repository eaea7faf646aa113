"""aliyun-json native messages, their normal form written out from the format's docs (DataWorks' message format page
and Paimon's AliyunRecordParser, as summed up in the codec's docstring), and garbage to feed the decoder.

``messages`` draws streams of messages as DataWorks writes them, with update pairs (an UPDATE_BEFORE followed by its
UPDATE_AFTER) among single messages; ``normal_form`` is what the codec must write back for them.
``messages_with_heartbeats`` adds DataWorks' heartbeats (op MHEARTBEAT), which the codec skips with ``skip_ddl``.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import strategies as st

from .native import (
    debezium_documents,
    json_scalars,
    json_values,
    lindorm_documents,
    milliseconds,
    named,
    permuted,
    text_values,
)
from .strategies import int64s, names

encode_json = msgspec.json.encode
decode_json = msgspec.json.decode

OPS = ["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"]
READ_IMAGE = {"INSERT": "after", "UPDATE_BEFORE": "before", "UPDATE_AFTER": "after", "DELETE": "before"}
TYPE_NAMES = ["LONG", "DOUBLE", "STRING", "DATE", "BOOLEAN", "BYTES", "VARCHAR(10)"]
ABSENT = object()  # a field left out of the message

# Values of any JSON kind in any column (Paimon's example has text in a DOUBLE column), and base64 text, canonical
# or not, for BYTES columns.
values = st.one_of(st.none(), st.booleans(), int64s, st.floats(allow_nan=False, allow_infinity=False), text_values,
                   st.binary(max_size=6).map(lambda data: base64.b64encode(data).decode()),
                   st.sampled_from(["QQ", "QQ==\n", "not base64", "Zm9v"]))
times = st.one_of(milliseconds, st.just(-1), st.none())


def _optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    return st.just(ABSENT) | strategy


def _without_absent(document: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in document.items() if value is not ABSENT}


def rows(draw: st.DrawFn, columns: list[str], required: Sequence[str] = ()) -> dict[str, Any]:
    """An image object: some of the columns (the required ones always), in any order."""
    chosen = [name for name in columns if name in required or draw(st.booleans())]
    row = {name: draw(values) for name in permuted(draw, chosen)}
    image: dict[str, Any] = {"dataColumn": row}
    if draw(st.booleans()):
        image["extension"] = draw(json_scalars)  # not kept
    return image


# The strategies a document draws from, built once rather than on every draw (native.column_or_name says why).
# IMAGE stands for an image that rows() then draws over the document's columns; a drawn key column is an index
# into the row's columns (0, 1, ..), or one into all columns counted from the end (-1, -2, ..), or any name.
IMAGE = object()
MAX_COLUMNS = 5
_column_lists = st.lists(st.tuples(names, st.none() | st.sampled_from(TYPE_NAMES)), max_size=MAX_COLUMNS,
                         unique_by=lambda column: column[0])
_ops = st.sampled_from(OPS)
_after_images = _optional(st.none() | st.just(IMAGE))
_ignored_images = _optional(st.none() | json_values) | st.just(IMAGE)  # the decoder ignores it, rows() or not


@functools.cache
def _key_columns(in_row: int, in_schema: int) -> st.SearchStrategy[list[int | str]]:
    """Key columns of a message with ``in_row`` columns in its row, of ``in_schema`` in its schema."""
    any_column = st.sampled_from(range(-in_schema, 0)) | names if in_schema else names
    if in_row:
        return st.lists(st.sampled_from(range(in_row)) | any_column, unique=True, max_size=3)
    return st.lists(any_column, unique=True, max_size=3)


_row_key_columns = {count: st.lists(st.sampled_from(range(count)), unique=True, max_size=2)
                    for count in range(1, MAX_COLUMNS + 1)}
_empty_keys = st.sampled_from([(), ABSENT, None])  # no key columns: [], left out, or null


def _as_list(drawn: Any) -> Any:
    return [] if drawn == () else drawn
_sources = _optional(st.none() | st.fixed_dictionaries({}, optional={
    "dbType": st.none() | st.sampled_from(["MySQL", "Oracle", "PostgreSQL"]), "dbVersion": st.text(max_size=6),
    "dbName": st.none() | st.text(max_size=6), "schemaName": st.none() | st.text(max_size=6),
    "tableName": st.none() | st.text(max_size=8), "extension": json_values}))
_timestamps = _optional(st.none() | st.fixed_dictionaries({}, optional={
    "checkpointTime": times | st.text(max_size=4), "eventTime": times, "systemTime": times,
    "extension": json_scalars}))
_sequence_ids = _optional(st.one_of(st.none(), st.text(max_size=20), int64s, st.just("-1")))
_extensions = _optional(json_values)
_ddls = _optional(st.none() | json_values)
_versions = _optional(st.just("0.0.1"))


@st.composite
def documents(draw: st.DrawFn, op: str | None = None) -> dict[str, Any]:
    columns = draw(_column_lists)
    column_names = [name for name, _ in columns]
    op = op or draw(_ops)
    read = READ_IMAGE[op]
    read_row = rows(draw, column_names)
    # The key's columns are the row's; in every other message, any column may be among them, which the row may lack
    # (DataWorks leaves columns out of a row).
    row_columns = sorted(read_row["dataColumn"])
    if draw(st.booleans()):
        drawn = draw(_key_columns(len(row_columns), len(column_names)))
        # Two draws may name one column (by its place in the row and among all), which is one key column.
        primary_key = list(dict.fromkeys(named(row_columns, column) if isinstance(column, int) and column >= 0
                                         else named(column_names, column) for column in drawn))
    else:
        primary_key = [row_columns[index] for index in draw(_row_key_columns[len(row_columns)])] if row_columns \
            else []
    if op == "UPDATE_AFTER":
        other = draw(_after_images)
        other = rows(draw, column_names, primary_key) if other is IMAGE else other
    else:  # ignored by the decoder, whatever it is
        other = draw(_ignored_images)
        other = rows(draw, column_names) if other is IMAGE else other
    data_column = []
    for name, type_name in columns:
        entry: dict[str, Any] = {"name": name}
        if type_name is not None or draw(st.booleans()):
            entry["type"] = type_name
        data_column.append(entry)
    source = draw(_sources)
    schema = _without_absent({"dataColumn": data_column,
                              "primaryKey": primary_key or _as_list(draw(_empty_keys)),
                              "source": source, "extension": draw(_extensions)})
    timestamp = draw(_timestamps)
    payload = _without_absent({
        read: read_row, "before" if read == "after" else "after": other,
        "sequenceId": draw(_sequence_ids), "timestamp": timestamp, "op": op, "ddl": draw(_ddls),
        "extension": draw(_extensions)})
    return _without_absent({"schema": schema, "payload": payload, "version": draw(_versions),
                            "extension": draw(_extensions)})


_update_befores = documents("UPDATE_BEFORE")
_documents = documents()


@st.composite
def update_pairs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An UPDATE_BEFORE and its UPDATE_AFTER: the same message but for the op and the images."""
    update_before = draw(_update_befores)
    columns = [column["name"] for column in update_before["schema"]["dataColumn"]]
    payload = dict(update_before["payload"], op="UPDATE_AFTER",
                   after=rows(draw, columns, update_before["schema"].get("primaryKey") or []))
    if draw(st.booleans()):
        payload["before"] = None
    else:
        del payload["before"]
    return [update_before, {**update_before, "payload": payload}]


messages = st.lists(st.one_of(_documents.map(lambda document: [document]), update_pairs()), max_size=4).map(
    lambda units: [encode_json(document) for unit in units for document in unit])

HEARTBEAT = "MHEARTBEAT"


@st.composite
def heartbeats(draw: st.DrawFn) -> dict[str, Any]:
    """A heartbeat, which DataWorks writes periodically to show its progress: the docs pin its op only, so it is a
    message whose op is MHEARTBEAT, with anything else a message holds, or with its op and time alone."""
    if draw(st.booleans()):
        return {"payload": _without_absent({"op": HEARTBEAT, "timestamp": draw(_timestamps)})}
    document = draw(_documents)
    return {**document, "payload": {**document["payload"], "op": HEARTBEAT}}


messages_with_heartbeats = st.lists(
    st.one_of(_documents.map(lambda document: [document]), update_pairs(), heartbeats().map(lambda beat: [beat])),
    max_size=4).map(lambda units: [encode_json(document) for unit in units for document in unit])


# -- the normal form --------------------------------------------------------------------------------------------------

def _joined(update_before: dict[str, Any], update_after: dict[str, Any]) -> bool:
    """Whether an UPDATE_AFTER completes the UPDATE_BEFORE before it: no before image of its own, and the same
    message in everything but the op, the images and the schema's columns that neither image holds."""
    if (update_before["payload"]["op"] != "UPDATE_BEFORE" or update_after["payload"]["op"] != "UPDATE_AFTER"
            or update_after["payload"].get("before") is not None):
        return False
    names = {*update_before["payload"]["before"]["dataColumn"], *update_after["payload"]["after"]["dataColumn"]}

    def rest(document: dict[str, Any]) -> bytes:
        schema = {**document["schema"], "dataColumn": [column for column in document["schema"]["dataColumn"]
                                                       if column["name"] in names]}
        payload = {name: value for name, value in document["payload"].items() if name not in ("op", "before", "after")}
        return encode_json({**document, "schema": schema, "payload": payload})

    return rest(update_before) == rest(update_after)


def _row(image: Any, order: list[str]) -> dict[str, Any] | None:
    """The columns of a read image (values as written), in schema order."""
    if image is None:
        return None
    return {name: image["dataColumn"][name] for name in order if name in image["dataColumn"]}


def _in_one_order(first: list[str], second: list[str] | None = None) -> list[str]:
    """The columns of one row, or of an update's two rows, each in schema order: a column of one row only comes
    before the shared column it comes before there, the old row's first."""
    if second is None:
        return first
    ordered: list[str] = []
    while first or second:
        if first and first[0] not in second:
            ordered.append(first.pop(0))
        elif second and second[0] not in first:
            ordered.append(second.pop(0))
        else:  # the shared column that comes next in both
            assert first[0] == second[0], "rows in schema order share their columns in one order"
            ordered.append(first.pop(0))
            second.pop(0)
    return ordered


def _normal_source(source: Any) -> dict[str, Any]:
    source = source or {}
    normal: dict[str, Any] = {}
    if source.get("dbType") is not None:
        normal["dbType"] = source["dbType"]
    structural = ["dbType", "tableName"]
    if source.get("tableName") is not None:
        structural += ["dbName", "schemaName"]
        if "schemaName" in source and source.get("dbName") is not None:
            normal["dbName"], normal["schemaName"] = source["dbName"], source["schemaName"]
        elif (source["schemaName"] if "schemaName" in source else source.get("dbName")) is not None:
            normal["dbName"] = source["schemaName"] if "schemaName" in source else source["dbName"]
        normal["tableName"] = source["tableName"]
    normal.update((name, value) for name, value in source.items() if name not in structural)
    return normal


def _normal(document: dict[str, Any], op: str, before: Any, after: Any, columns_of: list[Any]) -> dict[str, Any]:
    """One message in normal form, writing ``before`` / ``after`` (image objects or None); ``columns_of`` are the
    rows whose columns the schema lists (both images of an update written as two messages)."""
    schema, payload = document["schema"], document["payload"]
    types: dict[str, Any] = {}
    for column in schema["dataColumn"]:
        types.setdefault(column["name"], column.get("type"))
    order = list(types)
    listed = dict.fromkeys(_in_one_order(*[list(_row(row, order) or {}) for row in columns_of]))
    normal_schema = {
        "dataColumn": [{"name": name} if types[name] is None else {"name": name, "type": types[name]}
                       for name in listed],
        "primaryKey": schema.get("primaryKey") or [], "source": _normal_source(schema.get("source")),
        **{name: value for name, value in schema.items() if name not in ("dataColumn", "primaryKey", "source")}}
    normal_payload: dict[str, Any] = {}
    for name, image in (("before", before), ("after", after)):
        row = _row(image, order)
        normal_payload[name] = None if row is None else {"dataColumn": row}
    if "sequenceId" in payload:
        normal_payload["sequenceId"] = payload["sequenceId"]
    timestamp = payload.get("timestamp") or {}
    normal_payload["timestamp"] = {
        **{name: -1 if timestamp.get(name) is None else timestamp[name] for name in ("eventTime", "systemTime")},
        **{name: value for name, value in timestamp.items() if name not in ("eventTime", "systemTime")}}
    normal_payload["op"] = op
    normal_payload.update((name, value) for name, value in payload.items()
                          if name not in ("before", "after", "sequenceId", "timestamp", "op"))
    return {"schema": normal_schema, "payload": normal_payload,
            **{name: value for name, value in document.items() if name not in ("schema", "payload")}}


def _has_key(document: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether an update's old row can be written as an UPDATE_BEFORE, which reads the key from it: it has the key
    columns that the new row, which the key is read from, has."""
    return all(name in before["dataColumn"] for name in document["schema"].get("primaryKey") or []
               if name in after["dataColumn"])


def normal_form(messages: list[bytes], split_updates: bool = False) -> list[bytes]:
    documents_in = [decode_json(message) for message in messages]
    normal = []
    index = 0
    while index < len(documents_in):
        document = documents_in[index]
        payload = document["payload"]
        op = payload["op"]
        if op == HEARTBEAT:  # skipped (skip_ddl), and so not the UPDATE_AFTER of the message before it
            index += 1
            continue
        if index + 1 < len(documents_in) and _joined(document, documents_in[index + 1]):
            before, after = payload["before"], documents_in[index + 1]["payload"]["after"]
            if split_updates and _has_key(document, before, after):
                normal += [_normal(document, "UPDATE_BEFORE", before, None, [before, after]),
                           _normal(documents_in[index + 1], "UPDATE_AFTER", None, after, [before, after])]
            else:
                normal.append(_normal(documents_in[index + 1], "UPDATE_AFTER", before, after, [before, after]))
            index += 2
            continue
        if op == "UPDATE_AFTER" and payload.get("before") is not None and split_updates and _has_key(
                document, payload["before"], payload["after"]):
            before, after = payload["before"], payload["after"]
            normal += [_normal(document, "UPDATE_BEFORE", before, None, [before, after]),
                       _normal(document, "UPDATE_AFTER", None, after, [before, after])]
        else:
            before = payload.get("before") if op in ("UPDATE_BEFORE", "UPDATE_AFTER", "DELETE") else None
            after = payload.get("after") if op in ("INSERT", "UPDATE_AFTER") else None
            normal.append(_normal(document, op, before, after, [before, after]))
        index += 1
    return [encode_json(document) for document in normal]


# -- garbage ----------------------------------------------------------------------------------------------------------

def _broken(document: dict[str, Any], damage: str) -> dict[str, Any]:
    """A message with one thing wrong that the decoder must name."""
    payload = dict(document["payload"])
    if damage == "op":
        payload["op"] = "MHEARTBEAT"
    elif damage == "value":
        payload[READ_IMAGE[payload["op"]]] = {"dataColumn": {"x": {"nested": [1]}}}
    elif damage == "undeclared":
        payload[READ_IMAGE[payload["op"]]] = {"dataColumn": {"\x00undeclared": 1}}
    elif damage == "time":
        payload["timestamp"] = {"eventTime": "soon"}
    elif damage == "huge":
        payload["sequenceId"] = 2**70
    elif damage == "key":
        return {**document, "schema": {**document["schema"], "primaryKey": ["id", 7]}, "payload": payload}
    return {**document, "payload": payload}


garbage = st.lists(st.one_of(
    st.binary(max_size=64),
    json_values.map(encode_json),
    st.one_of(lindorm_documents, debezium_documents).map(encode_json),
    messages.map(lambda batch: batch[0][: len(batch[0]) // 2] if batch else b"{"),
    st.tuples(_documents, st.sampled_from(["op", "value", "undeclared", "time", "huge", "key"])).map(
        lambda pair: encode_json(_broken(*pair))),
    st.sampled_from([b"[" * 5000, b'{"payload": {"op": "INSERT"}, "schema": []}', b'"\\ud800"', b'{"a": 1e400}'])),
    max_size=5)
