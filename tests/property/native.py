"""Strategies for native messages of each source format, their normal forms written out from the format docs, and
garbage to feed the decoders.

The normal forms here are written from FORMATS.md, independently of the codecs: they are the spec that
``encode(decode(m))`` is checked against.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import msgspec
from hypothesis import strategies as st

from cdcformats.contract import KafkaRecord
from cdcformats.model import INT64_MAX

from .strategies import TYPE_NAMES, int64s, names

encode_json = msgspec.json.encode
decode_json = msgspec.json.decode

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
json_scalars = st.one_of(st.none(), st.booleans(), int64s, finite_floats, st.text())
json_values = st.recursive(json_scalars, lambda children: st.one_of(
    st.lists(children, max_size=3), st.dictionaries(st.text(max_size=5), children, max_size=3)), max_leaves=8)
milliseconds = st.integers(-(2**63 // 1000), INT64_MAX // 1000)  # that fit in microseconds
# Texts that look like typed values, so that typing by column type is exercised both ways ("7" and "007").
typed_looking_texts = st.one_of(
    int64s.map(str), finite_floats.map(repr), st.sampled_from(["007", "+1", "1.50", "1e3", "NaN", "Infinity",
                                                               "-Infinity", "nan", "true", "false", "TRUE", "1.10",
                                                               "-0", "-0.0", "1E+5", " 1", "sNaN", ""]))
text_values = st.one_of(st.text(), typed_looking_texts)


# -- drawing what depends on an earlier draw ---------------------------------------------------------------------------
# Hypothesis sets up every new strategy object on its first draw (validation, emptiness, labels), which costs more than
# the draw itself: a composite that builds ``st.sampled_from(columns)`` or ``st.permutations(items)`` from what it drew
# pays that on every example. These are built once per count instead, and draw the same choices.

@functools.cache
def column_or_name(count: int) -> st.SearchStrategy[int | str]:
    """One of ``count`` columns by its index, or any name, drawn as ``st.sampled_from(columns) | names`` draws them
    for every list of ``count`` columns (``names`` alone for none); :func:`named` tells the name."""
    return st.sampled_from(range(count)) | names if count else names


def named(columns: list[str], drawn: int | str) -> str:
    """The name a draw of :func:`column_or_name` stands for."""
    return columns[drawn] if isinstance(drawn, int) else drawn


@functools.cache
def _orders(count: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(range(count))


def permuted(draw: st.DrawFn, items: list[Any]) -> list[Any]:
    """``items`` in any order, drawn as ``st.permutations(items)`` draws it."""
    return [items[index] for index in draw(_orders(len(items)))]


# -- Lindorm ----------------------------------------------------------------------------------------------------------

LINDORM_OPS = ["Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"]
version_fields = st.one_of(st.just(""), milliseconds.map(str), milliseconds)
# An entry's ts is blank (a cell of the default version, as in Lindorm's own example), absent or a version: names
# collide often, so one column has blank and absent ones side by side, which no rule by column name keeps apart.
lindorm_entries = st.fixed_dictionaries(
    {"name": names},
    optional={"type": st.sampled_from(TYPE_NAMES), "ts": version_fields,
              "value": st.one_of(text_values, st.none(), st.booleans(), int64s, finite_floats)})
lindorm_documents = st.fixed_dictionaries(
    {"op": st.sampled_from(LINDORM_OPS), "data": st.lists(lindorm_entries, max_size=5)},
    optional={"table": st.text(max_size=10), "ts": version_fields,
              "keyOnly": st.sampled_from(["true", "false", "TRUE", "False", True, False, 0, 1]),
              "before": json_values, "extension": json_values})


def _text_of(value: Any) -> str:
    """How the Lindorm docs write a scalar: as a string; booleans as Java writes them."""
    if value is True or value is False:
        return "true" if value else "false"
    return repr(value) if type(value) is float else str(value)


def lindorm_normal_form(document: dict[str, Any]) -> dict[str, Any]:
    normal: dict[str, Any] = {"op": document["op"]}
    if document.get("table") is not None:
        normal["table"] = document["table"]
    if document.get("ts") not in (None, ""):
        normal["ts"] = str(int(document["ts"]))
    key_only = document.get("keyOnly", "false")
    normal["keyOnly"] = "true" if str(key_only).lower() in ("true", "1") else "false"
    normal["data"] = []
    for entry in document["data"]:
        entry_normal: dict[str, Any] = {}
        if entry.get("type") is not None:
            entry_normal["type"] = entry["type"]
        entry_normal["name"] = entry["name"]
        if entry.get("ts") is not None:  # blank stays blank: a cell of the default version, as Lindorm wrote it
            entry_normal["ts"] = entry["ts"] if entry["ts"] == "" else str(int(entry["ts"]))
        if entry.get("value") is not None:
            entry_normal["value"] = _text_of(entry["value"])
        normal["data"].append(entry_normal)
    normal.update((name, value) for name, value in document.items() if name not in (*normal, "ts", "keyOnly"))
    return normal


# -- Arcion -----------------------------------------------------------------------------------------------------------

arcion_rows = st.dictionaries(names.filter(lambda name: name != "opType"),
                              st.one_of(text_values, st.none(), st.booleans(), int64s, finite_floats, json_values),
                              max_size=5)
# The cursor differs per source database: any object, or MySQL's, whose timestamp is the commit time in milliseconds
# (sometimes not a time at all, which then dates nothing).
arcion_cursors = st.one_of(
    st.dictionaries(st.text(max_size=12), st.one_of(json_scalars, json_values), max_size=6),
    st.fixed_dictionaries(
        {"extractorId": st.integers(0, 3), "timestamp": st.one_of(milliseconds, milliseconds, int64s, json_values)},
        optional={"extractionTimestamp": milliseconds, "log": st.text(max_size=16), "position": int64s,
                  "logSeqNum": int64s, "slaveServerId": int64s, "v": st.integers(0, 3)}))
arcion_realtime = st.fixed_dictionaries({
    "tableName": st.fixed_dictionaries(
        {"name": st.sampled_from(["region", "nation", ""]) | st.text(max_size=8)},
        optional={"namespace": st.fixed_dictionaries(
            {}, optional={"catalog": st.none() | st.text(max_size=5), "schema": st.none() | st.text(max_size=5),
                          "hash": int64s}),
            "hash": int64s}),
    "opType": st.sampled_from(["I", "U", "D"]),
}, optional={
    "cursor": arcion_cursors,
    "before": st.none() | arcion_rows,
    "after": st.none() | arcion_rows,
    "extension": json_values,
})


def arcion_normal_form(document: dict[str, Any]) -> dict[str, Any]:
    if "opType" not in document:
        return document  # a snapshot row is written back as it is
    table = document["tableName"]
    namespace = table.get("namespace", {})
    normal_namespace = {"catalog": namespace.get("catalog"), "schema": namespace.get("schema")}
    if "hash" in namespace:
        normal_namespace["hash"] = namespace["hash"]
    normal_table = {"namespace": normal_namespace, "name": table["name"]}
    if "hash" in table:
        normal_table["hash"] = table["hash"]
    envelope = {"tableName": normal_table, "opType": document["opType"], "cursor": document.get("cursor", {}),
                "before": document.get("before"), "after": document.get("after")}
    return {**envelope, **{name: value for name, value in document.items() if name not in envelope}}


# -- Debezium ---------------------------------------------------------------------------------------------------------

# Values of every kind a producer sends, nested ones too (a Postgres array, a MySQL JSON column, a document).
debezium_rows = st.dictionaries(names, st.one_of(text_values, st.none(), st.booleans(), int64s, finite_floats,
                                                 json_values), max_size=5)
microseconds = st.integers(-(2**63) + 1000, 2**63 - 1000)


@st.composite
def debezium_times(draw: st.DrawFn) -> dict[str, int]:
    """``ts_ms``, and maybe ``ts_us``, of one instant (Debezium 2.6 writes both)."""
    instant = draw(microseconds)
    times = {"ts_ms": instant // 1000}
    if draw(st.booleans()):
        times["ts_us"] = instant
    return times


# Debezium's source blocks as its connectors write them, each field with its Connect schema (Debezium 2.x; PostgreSQL
# from 2.6 has ts_us and ts_ns). ``snapshot`` is an enum with a default; optional fields may hold null.
SNAPSHOT_SCHEMA = {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
                   "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"}


def _source_field(name: str, kind: str, optional: bool = False) -> dict[str, Any]:
    return {"type": kind, "optional": optional, "field": name}


COMMON_SOURCE_SCHEMA = [_source_field("version", "string"), _source_field("connector", "string"),
                        _source_field("name", "string"), _source_field("ts_ms", "int64"), SNAPSHOT_SCHEMA,
                        _source_field("db", "string"), _source_field("sequence", "string", True)]
SOURCE_SCHEMAS = {
    "mysql": COMMON_SOURCE_SCHEMA + [
        _source_field("table", "string", True), _source_field("server_id", "int64"),
        _source_field("gtid", "string", True), _source_field("file", "string"), _source_field("pos", "int64"),
        _source_field("row", "int32"), _source_field("thread", "int64", True), _source_field("query", "string", True)],
    "postgresql": COMMON_SOURCE_SCHEMA + [
        _source_field("ts_us", "int64", True), _source_field("ts_ns", "int64", True), _source_field("schema", "string"),
        _source_field("table", "string"), _source_field("txId", "int64", True), _source_field("lsn", "int64", True),
        _source_field("xmin", "int64", True)],
}
_SOURCE_VALUES = {"string": st.text(max_size=8), "int64": int64s, "int32": st.integers(-(2**31), 2**31 - 1)}
_source_instants = st.integers(-(2**62) // 1000, 2**62 // 1000)
_source_versions = st.sampled_from(["2.7.0.Final", "1.9.7.Final", "3.0.1.Final"])
_source_servers = st.sampled_from(["dbserver1", "inventory"])
_source_snapshots = st.sampled_from(["true", "last", "false", "incremental", None])


@st.composite
def debezium_real_sources(draw: st.DrawFn, connector: str) -> dict[str, Any]:
    """A source block of Debezium's MySQL or PostgreSQL connector, its fields in Debezium's order: one instant in
    ts_ms, ts_us and ts_ns (ts_us sometimes null), names as Debezium writes them, and null in optional fields."""
    instant = draw(_source_instants)
    values: dict[str, Any] = {"version": draw(_source_versions), "connector": connector,
                              "name": draw(_source_servers), "ts_ms": instant // 1000,
                              "ts_us": instant if draw(st.integers(0, 4)) else None, "ts_ns": instant * 1000,
                              "snapshot": draw(_source_snapshots)}
    source = {}
    before_2_6 = connector == "postgresql" and draw(st.booleans())  # PostgreSQL's source had no ts_us, ts_ns
    for field in SOURCE_SCHEMAS[connector]:
        name = field["field"]
        if before_2_6 and name in ("ts_us", "ts_ns"):
            continue
        if name in values:
            source[name] = values[name]
        elif field["optional"] and name != "table" and draw(st.booleans()):  # a row change names its table
            source[name] = None
        else:
            source[name] = draw(_SOURCE_VALUES[field["type"]])
    return source


REAL_SOURCES = {connector: debezium_real_sources(connector) for connector in SOURCE_SCHEMAS}
debezium_sources = st.tuples(
    st.fixed_dictionaries({}, optional={
        "version": st.text(max_size=8), "connector": st.sampled_from(["mysql", "postgresql"]) | st.none(),
        "name": st.text(max_size=8), "snapshot": st.sampled_from(["true", "false", "last"]),
        "db": st.none() | st.text(max_size=6), "schema": st.none() | st.text(max_size=6), "table": st.text(max_size=8),
        "file": st.text(max_size=8), "pos": int64s, "lsn": int64s, "gtid": st.none() | st.text(max_size=8)}),
    st.none() | debezium_times()).map(lambda parts: {**parts[0], **(parts[1] or {})}) | st.sampled_from(
    list(SOURCE_SCHEMAS)).flatmap(REAL_SOURCES.__getitem__)
_debezium_documents_in_order = st.tuples(
    st.fixed_dictionaries({"op": st.sampled_from(["c", "u", "d", "r", "t"])}, optional={
        "before": st.none() | debezium_rows, "after": st.none() | debezium_rows, "source": st.none() | debezium_sources,
        "transaction": st.none() | st.fixed_dictionaries(
            {"id": st.text(max_size=8), "total_order": int64s, "data_collection_order": int64s}),
        "extension": json_values}),
    st.none() | debezium_times()).map(lambda parts: {**parts[0], **(parts[1] or {})})


@st.composite
def _debezium_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A Debezium envelope, its fields in the order drawn or in any other."""
    document = draw(_debezium_documents_in_order)
    return dict(permuted(draw, list(document.items()))) if draw(st.booleans()) else document


debezium_documents = _debezium_documents()


# What Debezium sends beside the row changes, which the option skip_control skips: heartbeats, transactions' BEGIN
# and END records (with provide.transaction.metadata) and logical-decoding messages (op m).
debezium_control_messages = st.one_of(
    st.fixed_dictionaries({"ts_ms": int64s}),
    st.fixed_dictionaries({"status": st.sampled_from(["BEGIN", "END"]), "id": st.text(max_size=8)}, optional={
        "event_count": st.none() | int64s, "ts_ms": int64s, "data_collections": st.none() | st.lists(
            st.fixed_dictionaries({"data_collection": st.text(max_size=8), "event_count": int64s}), max_size=2)}),
    st.fixed_dictionaries({"op": st.just("m")}, optional={
        "source": debezium_sources, "ts_ms": int64s,
        "message": st.fixed_dictionaries({"prefix": st.text(max_size=5), "content": st.text(max_size=8)})}),
)


def _debezium_times(fields: dict[str, Any]) -> dict[str, Any]:
    """One instant in ``ts_ms`` and ``ts_us``, from ``ts_us`` where it is not null, else from ``ts_ms``: a null one
    of the two is written as the other says."""
    instant = fields.get("ts_us") if fields.get("ts_us") is not None else (
        fields["ts_ms"] * 1000 if fields.get("ts_ms") is not None else None)
    if instant is None:
        return fields
    times = {"ts_ms": instant // 1000, "ts_us": instant}
    return {name: times[name] if name in times else value for name, value in fields.items()}


def debezium_normal_form(document: dict[str, Any]) -> dict[str, Any]:
    """A Debezium envelope is written back as it came, its fields and its source's in their order, null ones
    included; only a null source becomes an empty one, and a null time one the other time says (the event cannot
    tell them apart)."""
    document = _debezium_times(document)
    if "source" in document:
        document = {**document, "source": _debezium_times(document["source"] or {})}
    return document


# -- Paimon log -------------------------------------------------------------------------------------------------------

paimon_keys = st.dictionaries(names, st.one_of(st.none(), st.booleans(), int64s, finite_floats, st.text(max_size=6)),
                              max_size=3)


def paimon_records(upsert: bool) -> st.SearchStrategy[KafkaRecord]:
    """Records of the Paimon log: an upsert log always has a key, and holds ``c`` values or tombstones."""
    if upsert:
        keys = paimon_keys.filter(bool).map(encode_json)
        values = st.none() | st.tuples(debezium_documents, debezium_rows).map(
            lambda parts: {**parts[0], "op": "c", "after": parts[1]}).map(encode_json)
    else:
        keys = st.none() | paimon_keys.map(encode_json)
        values = st.none() | debezium_documents.map(encode_json)
    return st.builds(KafkaRecord, keys, values)


def paimon_normal_form(record: KafkaRecord, upsert: bool) -> KafkaRecord:
    key = decode_json(record.key) if record.key is not None else None
    value = decode_json(record.value) if record.value is not None else None
    if value is None and not upsert:  # a tombstone is a delete of the key, which the all log writes as a d envelope
        value = {"before": None, "after": None, "op": "d"}
    if value is not None:
        value = debezium_normal_form({**value, "before": None} if upsert and "before" in value else value)
    return KafkaRecord(encode_json(key) if key else None, None if value is None else encode_json(value))


# -- Tablestore -------------------------------------------------------------------------------------------------------

key_values = st.one_of(st.text(max_size=6), int64s, st.binary(max_size=6))
ots_values = st.one_of(st.text(max_size=8), int64s, st.floats(), st.booleans(), st.binary(max_size=8), st.none())
column_names = st.sampled_from(["col_a", "col_b", "name"]) | st.text(max_size=6).filter(
    lambda name: name not in ("id", "pk1", "pk2"))  # attribute columns never share a primary key name
_record_kinds = st.sampled_from(["put", "update", "delete"])
_update_ops = st.sampled_from(["U", "DO", "DA"])


@st.composite
def ots_records(draw: st.DrawFn, key_width: int, sequence_info: bool, index: int) -> list[tuple]:
    """The rows of one Tablestore record: PutRow (DR, then U rows), UpdateRow (U/DO/DA rows) or DeleteRow (DR)."""
    key = tuple(draw(key_values) for _ in range(key_width))
    kind = draw(_record_kinds)
    rows: list[tuple] = []
    if kind in ("put", "delete"):
        rows.append((*key, None, None, None, "DR"))
    if kind == "put":
        rows += [(*key, draw(column_names), draw(int64s), draw(ots_values), "U")
                 for _ in range(draw(st.integers(0, 4)))]
    elif kind == "update":
        for _ in range(draw(st.integers(1, 4))):
            op = draw(_update_ops)
            rows.append((*key, draw(column_names), None if op == "DA" else draw(int64s),
                         draw(ots_values) if op == "U" else None, op))
    if sequence_info:
        prefix = (f"{draw(st.integers(0, 99)):010d}_{draw(st.integers(0, 2**62)):020d}_{index:010d}_"
                  f"{draw(st.text(max_size=6))}")
        rows = [(*row, f"{prefix}:{column_index:010d}") for column_index, row in enumerate(rows)]
    return rows


def ots_streams(key_width: int) -> st.SearchStrategy[list[tuple]]:
    """Up to four records, with sequence info or without: each count's records built once, not in every draw."""
    records = {(sequence_info, count): st.tuples(*(ots_records(key_width, sequence_info, index)
                                                   for index in range(count)))
               for sequence_info in (False, True) for count in range(5)}
    return st.tuples(st.booleans(), st.integers(0, 4)).flatmap(records.__getitem__).map(
        lambda drawn: [row for record in drawn for row in record])


def ots_single_version_rows(width: int) -> st.SearchStrategy[list[tuple]]:
    return st.lists(st.tuples(*([key_values] + [ots_values.filter(lambda value: value is not None) | st.none()]
                                * (width - 1))).map(lambda row: row[:width]), max_size=4)


def to_json_value(value: Any) -> Any:
    """A tuple field as ots-json writes it (bytes and non-finite floats have no JSON form of their own)."""
    import base64
    if type(value) is bytes:
        return {"base64": base64.b64encode(value).decode()}
    if type(value) is float and not math.isfinite(value):
        return {"float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    return value


# -- per configuration ------------------------------------------------------------------------------------------------

def messages_for(configuration: str) -> st.SearchStrategy[list[Any]]:
    documents: st.SearchStrategy
    if configuration.startswith("lindorm"):
        documents = lindorm_documents
    elif configuration == "arcion":
        documents = arcion_realtime | arcion_rows
    elif configuration == "arcion+keys":
        documents = arcion_realtime | arcion_rows.filter(lambda row: "opType" not in row)
    elif configuration == "debezium-json+skip_control":
        documents = debezium_documents | debezium_control_messages
    elif configuration.startswith("debezium-json"):
        documents = debezium_documents
    elif configuration.startswith("paimon-log"):
        return st.lists(paimon_records(configuration.endswith("upsert")), max_size=4)
    elif configuration == "ots":
        return ots_streams(2)
    elif configuration == "ots-json":
        return ots_streams(1).map(lambda rows: [encode_json([to_json_value(v) for v in row]) for row in rows])
    else:
        return ots_single_version_rows(4)
    return st.lists(documents.map(encode_json), max_size=4)


def normal_form(configuration: str, messages: list[Any]) -> list[Any]:
    if configuration.startswith("lindorm"):
        return [encode_json(lindorm_normal_form(decode_json(message))) for message in messages]
    if configuration.startswith("arcion"):
        return [encode_json(arcion_normal_form(decode_json(message))) for message in messages]
    if configuration.startswith("debezium-json"):  # control messages (in +skip_control) have no op, or op m
        return [encode_json(debezium_normal_form(document)) for document in map(decode_json, messages)
                if document.get("op", "m") != "m"]
    if configuration.startswith("paimon-log"):
        return [paimon_normal_form(record, configuration.endswith("upsert")) for record in messages]
    if configuration == "ots+single":
        return messages  # rows are written back as they are
    return messages  # generated Tablestore rows are in normal form already


def same(configuration: str, left: list[Any], right: list[Any]) -> bool:
    """Equal as the format's values: JSON messages compare as JSON values, tuples field by field (NaN == NaN)."""
    if configuration.startswith(("lindorm", "arcion", "debezium-json")) or configuration == "ots-json":
        return [decode_json(message) for message in left] == [decode_json(message) for message in right]
    if configuration.startswith("paimon-log"):
        return [[None if part is None else decode_json(part) for part in record] for record in left] == [
            [None if part is None else decode_json(part) for part in record] for record in right]
    return [repr(row) for row in left] == [repr(row) for row in right]


# Fields that hold an object or an array where the format has a name: a decoder must not look them up as they are.
UNHASHABLE_FIELDS = [
    b'{"op": []}', b'{"op": {}}', b'{"type": []}', b'{"payload": {"op": []}, "schema": {}}',
    b'{"schema": {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": [{"type": [], '
    b'"field": "a"}]}]}, "payload": {"op": "c", "after": {"a": 1}}}',
    b'{"schema": {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": [{"type": "bytes", '
    b'"name": {}, "field": "a"}]}]}, "payload": {"op": "c", "after": {"a": "AA=="}}}',
]


_json_like = st.one_of(json_values.map(encode_json), lindorm_documents.map(encode_json),
                       arcion_realtime.map(encode_json), debezium_documents.map(encode_json))
# One message of garbage for a JSON decoder: bytes, JSON that is no message or a message cut short, and the worst cases.
# Messages that a reader which keeps a part as its text (a wrapper's schema) or reads typed rows takes for JSON until
# it meets a byte that is no UTF-8, or an array nested deeper than any reader goes.
NOT_UTF8_INSIDE = [
    b'{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"string","optional":false,'
    b'"field":"i\xffd"}],"optional":true,"field":"after"}]},"payload":{"op":"c","after":{"id":"a"}}}',
    b'{"schema":{"type":"struct","fields":[]},"payload":{"op":"c","after":{"id":"\xff"}}}',
    b'{"schema":{"type":"struct","fields":[]},"payload":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'["k","c",1,"\xff","U"]',
]


garbage_bytes = st.one_of(st.binary(max_size=64), _json_like,
                          _json_like.map(lambda message: message[: len(message) // 2]),
                          st.sampled_from([b"[" * 5000, b"{\"op\": \"Put\", \"ts\": 1" + b"0" * 400 + b"}",
                                           b"\"\\ud800\"", b"{\"a\": 1e400}", *UNHASHABLE_FIELDS,
                                           *NOT_UTF8_INSIDE]))


def garbage_for(configuration: str) -> st.SearchStrategy[list[Any]]:
    if configuration in ("ots", "ots+single"):
        scalar = st.one_of(st.none(), st.text(max_size=4), int64s, st.integers(), st.floats(), st.binary(max_size=4),
                           st.booleans(), st.sampled_from(["U", "DO", "DA", "DR", "0000000001_00000000000000000001_"
                                                           "0000000001_s:0000000000"]))
        rows = st.lists(scalar, max_size=8).map(tuple)
        return st.lists(st.one_of(rows, st.binary(max_size=8), st.none()), max_size=6)
    if configuration.startswith("paimon-log"):  # Kafka records of garbage, and things that are no record at all
        parts = st.none() | garbage_bytes | paimon_keys.map(encode_json)
        return st.lists(st.one_of(st.builds(KafkaRecord, parts, parts), garbage_bytes, st.tuples(st.integers())),
                        max_size=5)
    return st.lists(garbage_bytes, max_size=5)
