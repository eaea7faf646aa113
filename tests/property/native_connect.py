"""Native Kafka Connect JSON records (``connect-json``) and Debezium envelopes with their schema
(``debezium-json`` with ``schemas=True``), and their normal forms written out from JsonConverter's schema language
and the codecs' documented choices, independently of the codecs.

``messages`` / ``normal_form`` are for ``connect-json`` with its defaults (schemas on); ``messages_for`` /
``normal_form_for`` take a configuration name of tests/property/test_connect.py.
"""

from __future__ import annotations

import base64
import math
import struct
from decimal import Decimal
from typing import Any

import msgspec
from hypothesis import strategies as st

from cdcformats.contract import KafkaRecord

from . import native
from .strategies import int64s, names

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
SOURCE_TYPE = "__debezium.source.column.type"
NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

# -- the Connect types, their JSON values and the values they read as -------------------------------------------------


def ints(bits: int) -> st.SearchStrategy[int]:
    return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def unscaled_bytes(number: int) -> bytes:
    """Java's BigInteger.toByteArray(): the shortest big-endian two's complement."""
    length = 1
    while not -(2 ** (8 * length - 1)) <= number < 2 ** (8 * length - 1):
        length += 1
    return number.to_bytes(length, "big", signed=True)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


floats_json = st.one_of(st.floats(allow_nan=False, allow_infinity=False), int64s, st.sampled_from(list(NONFINITE)))
# (primitive type, logical name or None, strategy of JSON values)
CONNECT_TYPES: dict[str, tuple[str, str | None, st.SearchStrategy]] = {
    "boolean": ("boolean", None, st.booleans()),
    "int8": ("int8", None, ints(8)),
    "int16": ("int16", None, ints(16)),
    "int32": ("int32", None, ints(32)),
    "int64": ("int64", None, int64s),
    "float": ("float", None, floats_json),
    "double": ("double", None, floats_json),
    "string": ("string", None, native.text_values),
    "bytes": ("bytes", None, st.binary(max_size=8).map(b64)),
    DECIMAL: ("bytes", DECIMAL, st.integers(-(10**30), 10**30).map(lambda n: b64(unscaled_bytes(n)))),
    DATE: ("int32", DATE, ints(32)),
    TIME: ("int32", TIME, ints(32)),
    TIMESTAMP: ("int64", TIMESTAMP, int64s),
}
SOURCE_TYPES = ["VARCHAR", "INT", "integer", "BIGINT", "TINYINT", "FLOAT", "DOUBLE", "DECIMAL(10,2)", "BOOLEAN",
                "VARBINARY", "x", "", "int32", "float", "string", DATE]
# The strategies the composites below draw from, built once rather than on every draw (native.column_or_name says
# why): a schema's value is drawn by schema kind from strategies built once per kind.
_connect_kinds = st.sampled_from(list(CONNECT_TYPES))
_source_types = st.sampled_from(SOURCE_TYPES)
_shapes = st.sampled_from(["primitive"] * 5 + ["array", "map", "struct"])


@st.composite
def primitive_schema(draw: st.DrawFn) -> dict[str, Any]:
    """The schema of a Connect primitive or logical type, without its field name."""
    kind = draw(_connect_kinds)
    primitive, logical, _ = CONNECT_TYPES[kind]
    schema: dict[str, Any] = {"type": primitive, "optional": draw(st.booleans())}
    parameters: dict[str, str] = {}
    if logical is not None:
        schema["name"], schema["version"] = logical, 1
        if logical == DECIMAL:
            parameters["scale"] = str(draw(st.integers(-20, 20)))
    elif draw(st.integers(0, 5)) == 0:  # a schema name that is no Connect logical type: not kept
        schema["name"] = "io.debezium.time.Timestamp"
    if draw(st.booleans()):
        parameters[SOURCE_TYPE] = draw(_source_types)
    if draw(st.integers(0, 5)) == 0:
        parameters["__debezium.source.column.length"] = "10"
    if parameters:
        schema["parameters"] = parameters
    if draw(st.integers(0, 5)) == 0:
        schema["doc"] = "not kept"
    return schema


_primitive_schemas = primitive_schema()
_member_schemas = st.lists(_primitive_schemas, max_size=3)


@st.composite
def column_schema(draw: st.DrawFn) -> dict[str, Any]:
    """A column's schema: mostly a primitive, else an array, a map with text keys or a struct of primitives (a
    Postgres array, a composite type, Debezium's geometry)."""
    shape = draw(_shapes)
    if shape == "primitive":
        return draw(_primitive_schemas)
    optional = draw(st.booleans())
    if shape == "array":
        return {"type": "array", "items": draw(_primitive_schemas), "optional": optional}
    if shape == "map":
        return {"type": "map", "keys": {"type": "string", "optional": False}, "values": draw(_primitive_schemas),
                "optional": optional}
    members = draw(_member_schemas)
    return {"type": "struct", "fields": [{**member, "field": f"f{index}"} for index, member in enumerate(members)],
            "optional": optional}


_column_schemas = column_schema()


def _or_any(typed: st.SearchStrategy) -> st.SearchStrategy:
    # (Hypothesis's one_of draws each distinct branch alike: typed, null and any JSON value a third of the time each.)
    return st.one_of(typed, typed, typed, st.none(), native.json_values)


def _kind(schema: dict[str, Any]) -> str:
    return schema["name"] if schema.get("name") in CONNECT_TYPES else schema["type"]


TYPED = object()  # drawn where a struct's value is its members' values, drawn after it
_primitive_values = {kind: _or_any(typed) for kind, (_, _, typed) in CONNECT_TYPES.items()}
_array_values = {kind: _or_any(st.lists(_primitive_values[kind], max_size=3)) for kind in CONNECT_TYPES}
_map_values = {kind: _or_any(st.dictionaries(names, _primitive_values[kind], max_size=3)) for kind in CONNECT_TYPES}
_struct_values = _or_any(st.just(TYPED))


def value_of(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """A JSON value a producer sends for a column of ``schema``: of its type, null, or any JSON value at all (a
    producer that breaks its own schema: "0" in an int32 column, a number in a Decimal)."""
    if schema["type"] == "array":
        return draw(_array_values[_kind(schema["items"])])
    if schema["type"] == "map":
        return draw(_map_values[_kind(schema["values"])])
    if schema["type"] == "struct":
        value = draw(_struct_values)
        return {member["field"]: value_of(draw, member) for member in schema["fields"]} if value is TYPED else value
    return draw(_primitive_values[_kind(schema)])


@st.composite
def fields(draw: st.DrawFn) -> tuple[dict[str, Any], Any, bool]:
    """A field schema, its JSON value, and whether the payload writes it (a field left out reads as null)."""
    schema = {**draw(_column_schemas), "field": draw(names)}
    return schema, value_of(draw, schema), draw(st.integers(0, 5)) > 0


_fields = fields()
_field_lists = {count: st.lists(_fields, max_size=count, unique_by=lambda field: field[0]["field"]) for count in (4, 5)}
_record_schema_names = st.sampled_from(["pg.public.types.Key", "pg.public.types.Value"]) | st.text(max_size=10)
_undeclared_fields = st.dictionaries(names, native.json_values, max_size=2)


@st.composite
def struct_records(draw: st.DrawFn) -> bytes:
    drawn = draw(_field_lists[5])
    # The struct's own schema: Debezium names its key and row structs after the topic and marks the row optional.
    schema: dict[str, Any] = {"type": "struct", "fields": [field for field, _, _ in drawn],
                              "optional": draw(st.booleans())}
    if draw(st.booleans()):
        schema["name"] = draw(_record_schema_names)
    if draw(st.integers(0, 3)) == 0:
        schema["version"] = draw(st.integers(1, 3))
    if draw(st.integers(0, 5)) == 0:
        schema["doc"] = draw(st.text(max_size=6))
    payload = {field["field"]: value for field, value, written in drawn if written}
    # A field the schema does not declare, as a producer that breaks its own schema sends it.
    undeclared = draw(_undeclared_fields)
    payload.update((name, value) for name, value in undeclared.items() if name not in payload)
    payload = dict(native.permuted(draw, list(payload.items())))
    return msgspec.json.encode({"schema": schema, "payload": payload})


scalars = st.one_of(st.none(), st.booleans(), int64s, st.floats(allow_nan=False, allow_infinity=False),
                    native.text_values)
maps = st.dictionaries(names, scalars | native.json_values, max_size=5)
schemaless_enveloped = maps.map(lambda payload: msgspec.json.encode({"schema": None, "payload": payload}))


def records(part: st.SearchStrategy[bytes]) -> st.SearchStrategy[list[KafkaRecord]]:
    return st.lists(st.builds(KafkaRecord, st.none() | part, st.none() | part), max_size=4)


# -- normal form of connect-json ---------------------------------------------------------------------------------------

DEFAULT_OF_KIND = {type(None): "string", bool: "boolean", int: "int64", float: "double", str: "string",
                   bytes: "bytes", Decimal: DECIMAL}
PRIMITIVE_OF = {name: primitive for name, (primitive, _, _) in CONNECT_TYPES.items()}
SQL_TYPES = {"TINYINT": "int8", "SMALLINT": "int16", "INT": "int32", "INTEGER": "int32", "BIGINT": "int64",
             "LONG": "int64", "FLOAT": "float", "REAL": "float", "DOUBLE": "double", "BOOLEAN": "boolean",
             "BOOL": "boolean", "DECIMAL": DECIMAL, "NUMERIC": DECIMAL, "VARCHAR": "string", "CHAR": "string",
             "TEXT": "string", "BINARY": "bytes", "VARBINARY": "bytes"}
INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def single_precision(value: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:  # beyond the largest single
        return math.copysign(math.inf, value)


def float32(value: float) -> float:
    """A Connect float as Java prints it: the shortest decimal text of the single-precision value."""
    single = single_precision(value)
    if single == 0 or not math.isfinite(single):
        return single
    texts = (f"{single:.{precision}e}" for precision in range(9))
    return next(float(text) for text in texts if single_precision(float(text)) == single)


def reads(field: dict[str, Any], value: Any) -> bool:
    """Whether a JSON value agrees with its field's Connect type (else it is kept as it was sent)."""
    kind = field["name"] if field.get("name") in (DECIMAL, DATE, TIME, TIMESTAMP) else field["type"]
    if kind in ("array", "map", "struct"):
        return type(value) is {"array": list, "map": dict, "struct": dict}[kind]
    primitive = PRIMITIVE_OF[kind]
    if primitive in INT_BITS:
        return type(value) is int and -(2 ** (INT_BITS[primitive] - 1)) <= value < 2 ** (INT_BITS[primitive] - 1)
    if primitive in ("float", "double"):
        return (type(value) is str and value in NONFINITE) or (
            type(value) in (int, float) and math.isfinite(float(value)))
    if primitive == "boolean":
        return type(value) is bool
    if primitive == "string":
        return type(value) is str
    try:
        data = base64.b64decode(value, validate=True)
    except (TypeError, ValueError):
        return False
    return kind != DECIMAL or bool(data)


def read(field: dict[str, Any], value: Any) -> tuple[Any, str | None]:
    """What a field's JSON value is, and its cell's type name."""
    kind = field["name"] if field.get("name") in (DECIMAL, DATE, TIME, TIMESTAMP) else field["type"]
    if value is not None:
        if kind in ("float", "double"):
            value = NONFINITE[value] if type(value) is str else float(value)
            value = float32(value) if kind == "float" else value
        elif kind == "bytes":
            value = base64.b64decode(value)
        elif kind == DECIMAL:
            unscaled = Decimal(int.from_bytes(base64.b64decode(value), "big", signed=True)).as_tuple()
            value = Decimal((unscaled.sign, unscaled.digits, -int(field["parameters"]["scale"])))
    parameters = field.get("parameters", {})
    if SOURCE_TYPE in parameters:
        return value, parameters[SOURCE_TYPE]
    return value, None if DEFAULT_OF_KIND[type(value)] == kind else kind


def fits(value: Any, kind: str) -> bool:
    if value is None:
        return True
    primitive = PRIMITIVE_OF[kind]
    if primitive in INT_BITS and kind != DECIMAL:
        return type(value) is int and -(2 ** (INT_BITS[primitive] - 1)) <= value < 2 ** (INT_BITS[primitive] - 1)
    if kind == "float":
        return type(value) is float and (not math.isfinite(value) or float32(value) == value)
    return DEFAULT_OF_KIND[type(value)] == kind


def written(name: str, value: Any, type_name: str | None) -> tuple[dict[str, Any], Any]:
    """The field schema and JSON value a cell is written as."""
    wanted = type_name if type_name in PRIMITIVE_OF else SQL_TYPES.get((type_name or "").split("(")[0].upper())
    kind = wanted if wanted is not None and fits(value, wanted) else DEFAULT_OF_KIND[type(value)]
    field: dict[str, Any] = {"type": PRIMITIVE_OF[kind], "optional": value is None}
    parameters = {}
    if kind in (DECIMAL, DATE, TIME, TIMESTAMP):
        field["name"], field["version"] = kind, 1
    if kind == DECIMAL:
        parameters["scale"] = "0" if value is None else str(-value.as_tuple().exponent)
    implied = None if DEFAULT_OF_KIND[type(value)] == kind else kind
    if type_name != implied:
        parameters[SOURCE_TYPE] = type_name
    if parameters:
        field["parameters"] = parameters
    field["field"] = name
    if type(value) is bytes:
        value = b64(value)
    elif type(value) is Decimal:
        sign, digits, _ = value.as_tuple()
        value = b64(unscaled_bytes(int("".join(map(str, digits))) * (-1 if sign else 1)))
    elif type(value) is float and not math.isfinite(value):
        value = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    return field, value


def json_of(field: dict[str, Any], value: Any) -> Any:
    """A field's JSON value as written back: what it reads as, in JsonConverter's JSON; a value that disagrees with
    its type as it was sent; a nested value member by member (a struct's fields in the schema's order, then any the
    payload adds)."""
    if value is None or not reads(field, value):
        return value
    if field["type"] == "array":
        return [json_of(field["items"], item) for item in value]
    if field["type"] == "map":
        return {key: json_of(field["values"], item) for key, item in value.items()}
    if field["type"] == "struct":
        members = {member["field"]: json_of(member, value.get(member["field"])) for member in field["fields"]}
        return {**members, **{key: item for key, item in value.items() if key not in members}}
    return written("", read(field, value)[0], None)[1]


def generated(value: Any) -> dict[str, Any] | None:
    """The schema JsonConverter's writer gets for a JSON value read without one (without its field name), None where
    Connect has none: an array whose items differ in schema."""
    if type(value) is dict:
        members = {key: generated(item) for key, item in value.items()}
        if None in members.values():
            return None
        return {"type": "struct", "fields": [{**member, "field": key} for key, member in members.items()
                                             if member is not None], "optional": False}
    if type(value) is list:
        items = [generated(item) for item in value if item is not None]
        if None in items or len({msgspec.json.encode(item) for item in items}) > 1:
            return None
        first = items[0] if items and items[0] is not None else {"type": "string", "optional": True}
        return {"type": "array", "items": {**first, "optional": first["optional"] or None in value}, "optional": False}
    return {"type": DEFAULT_OF_KIND[type(value)], "optional": value is None}


def struct_normal_form(message: bytes, schema_name: str | None) -> dict[str, Any]:
    """A struct as written back: its own schema as it came (its name the option's, when given), a field with a
    schema keeps it whole (the cell's type keeps what generation would not give back), a schemaless field gets the
    schema generated from its value."""
    document = msgspec.json.decode(message)
    schema: dict[str, Any] = {"type": "struct", "fields": [], "optional": False}
    if document["schema"] is not None:
        schema = {**document["schema"], "fields": []}
    if schema_name is not None:
        schema["name"] = schema_name
    payload = {}
    undeclared = document["payload"]
    if document["schema"] is not None:
        schema["fields"] = list(document["schema"]["fields"])
        payload = {field["field"]: json_of(field, document["payload"].get(field["field"]))
                   for field in schema["fields"]}
        undeclared = {name: value for name, value in undeclared.items() if name not in payload}
    # Read without a schema, written with the one generated from the value (a nested value without one as text).
    for name, value in (_with_schema(undeclared) or {}).items():
        if type(value) in (list, dict):
            payload[name] = value
            schema["fields"].append(_json_field(name, value))
        else:
            field, payload[name] = written(name, value, None)
            schema["fields"].append(field)
    return {"schema": schema, "payload": payload}


def normal_form(messages: list[KafkaRecord], schemas: bool = True, value_schema_name: str | None = None,
                key_schema_name: str | None = None, key_columns: tuple[str, ...] = ()) -> list[KafkaRecord]:
    """connect-json: every record as it is written back; a record without a key (or one of no fields) gets the
    value's ``key_columns`` fields (in key order) as its key."""
    def part(message: bytes | None, schema_name: str | None) -> bytes | None:
        if message is None:
            return None
        normal = struct_normal_form(message, schema_name) if schemas else msgspec.json.decode(message)
        return msgspec.json.encode(normal)

    def fields_of(message: bytes | None) -> Any:
        document = msgspec.json.decode(message)
        return document["payload"] if schemas else document

    def key_out_of(value: bytes) -> bytes:
        document = msgspec.json.decode(value)
        if not schemas:
            return msgspec.json.encode({name: document[name] for name in key_columns if name in document})
        by_name = {field["field"]: field for field in document["schema"]["fields"]}
        key_fields = [by_name[name] for name in key_columns if name in by_name]
        schema: dict[str, Any] = {"type": "struct", "fields": key_fields, "optional": False}
        if key_schema_name is not None:
            schema["name"] = key_schema_name
        return msgspec.json.encode({"schema": schema, "payload": {field["field"]: document["payload"][field["field"]]
                                                                  for field in schema["fields"]}})

    normal = []
    for key, value in messages:
        normal_value = part(value, value_schema_name)
        normal_key = part(key, key_schema_name)
        if normal_key is not None and not fields_of(normal_key):
            normal_key = None  # a key without fields is no key
        if normal_key is None and normal_value is not None and key_columns:
            normal_key = part(key_out_of(normal_value), key_schema_name)
            normal_key = normal_key if fields_of(normal_key) else None
        normal.append(KafkaRecord(normal_key, normal_value))
    return normal


messages = records(struct_records() | schemaless_enveloped)


# -- debezium-json with schemas ---------------------------------------------------------------------------------------

def _json_field(name: str, value: Any) -> dict[str, Any]:
    if type(value) in (list, dict):
        return {**generated(value), "field": name}
    kind = {bool: "boolean", int: "int64", float: "double"}.get(type(value), "string")
    return {"type": kind, "optional": value is None, "field": name}


def _with_schema(values: dict[str, Any] | None) -> dict[str, Any] | None:
    """JSON values without a schema as the wrapper writes them: a nested one Connect has no schema for (an array
    whose items differ) as its JSON text."""
    if values is None:
        return None
    return {name: msgspec.json.encode(value).decode() if type(value) in (list, dict) and generated(value) is None
            else value for name, value in values.items()}


def _struct(fields: list[dict[str, Any]], optional: bool, name: str | None, field: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "struct", "fields": fields, "optional": optional}
    if name is not None:
        schema["name"] = name
    return {**schema, "field": field}


_wrapped_struct_names = {
    is_row: st.sampled_from(["dbserver1.inventory.products." + ("Value" if is_row else "Envelope")])
    | st.text(max_size=6) for is_row in (False, True)}


@st.composite
def debezium_wrapped(draw: st.DrawFn) -> dict[str, Any]:
    """A Debezium envelope in the schema wrapper: one row schema of typed columns (int8 .. int64, float, Decimals
    with their scale and maybe precision, arrays, maps, structs, optional or not, named or not) for ``before`` and
    ``after``, each row holding every column (values of its type, or sometimes any JSON value);
    the envelope and row structs optional or not, named or not, versioned or not."""
    document = draw(native.debezium_documents)
    columns = [field for field, _, _ in draw(_field_lists[4])]
    for field in columns:
        if field.get("name") == DECIMAL and draw(st.booleans()):
            field["parameters"]["connect.decimal.precision"] = str(draw(st.integers(1, 40)))

    def row() -> dict[str, Any] | None:
        if draw(st.integers(0, 3)) == 0:
            return None
        return {field["field"]: value_of(draw, field) for field in columns}

    def header(field: str | None) -> dict[str, Any]:
        struct: dict[str, Any] = {"type": "struct", "fields": columns if field else [],
                                  "optional": draw(st.booleans()) if field else False}
        if draw(st.booleans()):
            struct["name"] = draw(_wrapped_struct_names[bool(field)])
        if draw(st.integers(0, 3)) == 0:
            struct["version"] = draw(st.integers(1, 3))
        if field:
            struct["field"] = field
        return struct

    document["before"], document["after"] = row(), row()
    envelope = header(None)
    envelope["fields"] = [header("before"), header("after"), {"type": "string", "optional": False, "field": "op"}]
    return {"schema": envelope, "payload": document}


# Debezium's io.debezium.data.VariableScaleDecimal (decimal.handling.mode=precise): its scale and unscaled bytes.
VARIABLE_SCALE_DECIMAL = {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "scale"},
                                                       {"type": "bytes", "optional": False, "field": "value"}],
                          "optional": True, "name": "io.debezium.data.VariableScaleDecimal", "version": 1,
                          "doc": "Variable scaled decimal"}


def typed_value(draw: st.DrawFn, field: dict[str, Any]) -> Any:
    """A JSON value of a primitive column's type, or of Debezium's variable-scale decimal: null only where the
    column is optional."""
    if field["optional"] and draw(st.booleans()):
        return None
    if field.get("name") == VARIABLE_SCALE_DECIMAL["name"]:
        return {"scale": draw(ints(32)), "value": b64(unscaled_bytes(draw(st.integers(-(10**30), 10**30))))}
    kind = field["name"] if field.get("name") in CONNECT_TYPES else field["type"]
    return draw(CONNECT_TYPES[kind][2])


_connectors = st.sampled_from(list(native.SOURCE_SCHEMAS))
_ops = st.sampled_from(["c", "u", "d", "r", "t"])
_transactions = st.none() | st.fixed_dictionaries({
    "id": st.text(max_size=12), "total_order": int64s, "data_collection_order": int64s})
_blocks = st.sampled_from([{"name": "event.block", "version": 1}, {}])  # Flink's tests name none


@st.composite
def debezium_real_wrapped(draw: st.DrawFn) -> dict[str, Any]:
    """A change event as Debezium's MySQL or PostgreSQL connector writes it through JsonConverter with schemas: its
    source block with its real schema, a transaction block or null, one row schema of typed columns (nullable ones
    holding null, an optional Decimal with its scale) for ``before`` and ``after`` (a TRUNCATE has the schema but no
    rows); the envelope's fields sometimes in another order than the codec generates, and the payload's sometimes in
    another order than its schema's."""
    connector = draw(_connectors)
    source = draw(native.REAL_SOURCES[connector])
    columns = [{"type": "int32", "optional": False, "field": "id"}, {"type": "string", "optional": True,
                                                                      "field": "email"},
               {"type": "bytes", "optional": True, "name": DECIMAL, "version": 1, "parameters": {"scale": "2"},
                "field": "price"}]
    if draw(st.booleans()):
        columns[2]["parameters"]["connect.decimal.precision"] = "10"
    if draw(st.booleans()):  # a PostgreSQL uuid column: a named string with a default
        columns.append({"type": "string", "optional": False, "name": "io.debezium.data.Uuid", "version": 1,
                        "default": "00000000-0000-0000-0000-000000000000", "field": "uuid"})
    if draw(st.booleans()):  # a PostgreSQL numeric without precision: Debezium's variable-scale decimal struct
        columns.append({**VARIABLE_SCALE_DECIMAL, "field": "amount"})
    columns += [{**schema, "field": f"c{index}"} for index, schema in enumerate(draw(_member_schemas))]
    code = draw(_ops)

    def row() -> dict[str, Any]:
        return {column["field"]: typed_value(draw, column) for column in columns}

    table = source["schema"] if connector == "postgresql" else source["db"]
    prefix = f"{source['name']}.{table}.{source['table']}."
    instant = draw(st.integers(-(2**62) // 1000, 2**62 // 1000))
    payload: dict[str, Any] = {"before": row() if code in ("u", "d") else None,
                               "after": row() if code in ("c", "u", "r") else None, "source": source, "op": code,
                               "ts_ms": instant // 1000}
    value = {"type": "struct", "fields": columns, "optional": True, "name": prefix + "Value"}
    fields = [{**value, "field": "before"}, {**value, "field": "after"},
              {"type": "struct", "fields": [field for field in native.SOURCE_SCHEMAS[connector]
                                            if field["field"] in source], "optional": False,
               "name": f"io.debezium.connector.{connector}.Source", "field": "source"},
              {"type": "string", "optional": False, "field": "op"},
              {"type": "int64", "optional": True, "field": "ts_ms"}]
    if draw(st.booleans()):  # Debezium 2.6 and later
        payload["ts_us"], payload["ts_ns"] = instant, instant * 1000
        fields += [{"type": "int64", "optional": True, "field": "ts_us"},
                   {"type": "int64", "optional": True, "field": "ts_ns"}]
    payload["transaction"] = draw(_transactions)
    block = draw(_blocks)
    fields.append({"type": "struct", "fields": TRANSACTION_BLOCK, "optional": True, **block, "field": "transaction"})
    if draw(st.booleans()):
        fields = native.permuted(draw, fields)
    payload = {field["field"]: payload[field["field"]] for field in fields}  # JsonConverter's order: the schema's
    if draw(st.integers(0, 3)) == 0:
        payload = dict(native.permuted(draw, list(payload.items())))
    envelope = {"type": "struct", "fields": fields, "optional": False, "name": prefix + "Envelope"}
    if draw(st.booleans()):
        envelope["version"] = 1
    return {"schema": envelope, "payload": payload}


TRANSACTION_BLOCK = [{"type": "string", "optional": False, "field": "id"},
                     {"type": "int64", "optional": False, "field": "total_order"},
                     {"type": "int64", "optional": False, "field": "data_collection_order"}]


def holds(field: dict[str, Any], value: Any) -> bool:
    """Whether a JSON value agrees with its field schema: null where it is optional, a value of its type, a struct's
    members exactly its fields."""
    if value is None:
        return field.get("optional") is True
    if field["type"] == "struct":
        return type(value) is dict and {member["field"] for member in field["fields"]} == set(value) and all(
            holds(member, value[member["field"]]) for member in field["fields"])
    return field["type"] not in ("array", "map") and reads(field, value)


def debezium_wrapped_normal_form(document: dict[str, Any]) -> dict[str, Any]:
    """A Debezium envelope as the codec documents it is written with schemas: the payload as it came (its columns'
    values read through their schemas), with the schema it came with, where a field's schema holds its value (a
    row's struct holding the columns of its cells, or in a change without rows all the columns it came with); a
    field's schema that does not is replaced by the one Debezium's converter would give it, and a payload without a
    schema gets that one for every field it has."""
    if "payload" in document and document["schema"] is None:  # JsonConverter's wrapper of a schemaless record
        return {"schema": None, "payload": native.debezium_normal_form(document["payload"])}
    given = document["schema"] if "payload" in document else None
    payload = native.debezium_normal_form({**document["payload"]} if given is not None else {**document})
    columns: dict[str, Any] = {}
    if given is not None:
        columns = {column["field"]: column for field in given["fields"] if field["field"] in ("before", "after")
                   for column in field["fields"]}
        for image in ("before", "after"):
            if payload.get(image) is not None:
                payload[image] = {name: json_of(columns[name], value) for name, value in payload[image].items()}
    for name in ("before", "after", "source") if given is None else ("source",):
        if name in payload:
            payload[name] = _with_schema(payload[name])
    source = payload.get("source") or {}
    server = source.get("name") if type(source.get("name")) is str else None
    table_schema = (source["schema"] if "schema" in source else source.get("db")) if "table" in source else None
    parts = [part for part in (server, table_schema, source.get("table")) if part is not None]
    prefix = ".".join(parts) + "." if parts else ""  # an empty name is a part too

    def row_columns(name: str) -> list[dict[str, Any]]:
        other = "after" if name == "before" else "before"
        row = payload.get(name) if payload.get(name) is not None else payload.get(other) or {}
        if given is not None:
            return [columns[column] for column in row]
        return [_json_field(column, column_value) for column, column_value in row.items()]

    def generated(name: str) -> dict[str, Any] | None:
        value = payload.get(name)
        if name not in payload:
            return None
        if name in ("before", "after"):
            return _struct(row_columns(name), True, prefix + "Value", name)
        if name == "source":
            connector = value.get("connector")
            source_name = f"io.debezium.connector.{connector}.Source" if type(connector) is str else None
            return _struct([_json_field(column, column_value) for column, column_value in value.items()],
                           False, source_name, name)
        if name == "transaction":
            members = ([_json_field(column, column_value) for column, column_value in value.items()] if value
                       else TRANSACTION_BLOCK)
            return {"type": "struct", "fields": members, "optional": True, "name": "event.block", "version": 1,
                    "field": name}
        if name == "op":
            return {"type": "string", "optional": False, "field": name}
        if name in ("ts_ms", "ts_us"):
            return {"type": "int64", "optional": True, "field": name}
        return None  # a field the envelope does not know is not described

    if given is None:
        fields = [field for field in map(generated, payload) if field is not None]
        return {"schema": {"type": "struct", "fields": fields, "optional": False, "name": prefix + "Envelope"},
                "payload": payload}
    fields = []
    for field in given["fields"]:
        name = field["field"]
        if name in ("before", "after") and (payload.get("before") is not None or payload.get("after") is not None):
            if payload.get(name) is not None or field.get("optional") is True:
                field = {**field, "fields": row_columns(name)}
            else:
                field = generated(name)
        elif not holds(field, payload.get(name)):  # a change without rows (TRUNCATE) keeps its row structs whole
            field = generated(name)
        if field is not None:
            fields.append(field)
    return {"schema": {**given, "fields": fields}, "payload": payload}


# -- per configuration ------------------------------------------------------------------------------------------------

def messages_for(configuration: str) -> st.SearchStrategy[list[Any]]:
    if configuration == "debezium-json+schemas":
        null_schema = native.debezium_documents.map(lambda document: {"schema": None, "payload": document})
        return st.lists((native.debezium_documents | debezium_wrapped() | debezium_real_wrapped()
                         | null_schema).map(msgspec.json.encode), max_size=4)
    if configuration == "connect-json+schemaless":
        return records(maps.map(msgspec.json.encode))
    return messages


def normal_form_for(configuration: str, messages_in: list[Any]) -> list[Any]:
    if configuration == "debezium-json+schemas":
        return [msgspec.json.encode(debezium_wrapped_normal_form(msgspec.json.decode(message)))
                for message in messages_in]
    if configuration == "connect-json+schemaless":
        return normal_form(messages_in, schemas=False)
    return normal_form(messages_in)


def as_json(messages_out: list[Any]) -> list[Any]:
    """Messages as JSON values, to compare them whatever the spacing and number spelling."""
    def part(data: bytes | None) -> Any:
        return None if data is None else msgspec.json.decode(data)

    return [tuple(map(part, message)) if isinstance(message, tuple) else part(message) for message in messages_out]


# -- garbage ----------------------------------------------------------------------------------------------------------

_field_types = st.sampled_from(["int8", "int64", "string", "float", "double", "bytes", "struct", "array", "boolean"]) \
    | native.json_values
_optional_flags = st.sampled_from([{}, {"optional": False}, {"optional": True}])
json_garbage = st.one_of(
    native.json_values.map(msgspec.json.encode), native.lindorm_documents.map(msgspec.json.encode),
    native.arcion_realtime.map(msgspec.json.encode), native.debezium_documents.map(msgspec.json.encode),
    st.tuples(native.json_values, native.json_values).map(
        lambda parts: msgspec.json.encode({"schema": parts[0], "payload": parts[1]})),
    # A field schema of each type, or of a type that is no type name (a producer's own schemas), with and without
    # its optional flag; in a struct of its own, and as a column of an envelope's row.
    st.tuples(_field_types, _optional_flags, native.json_values).map(
        lambda parts: msgspec.json.encode({"schema": {"type": "struct", "fields": [
            {"type": parts[0], **parts[1], "field": "a"}]}, "payload": {"a": parts[2]}})),
    st.tuples(_field_types, _optional_flags, native.json_values).map(
        lambda parts: msgspec.json.encode({"schema": {"type": "struct", "fields": [
            {"type": "struct", "optional": True, "field": "after", "fields": [
                {"type": parts[0], **parts[1], "field": "a"}]},
            {"type": "string", "optional": False, "field": "op"}]}, "payload": {"after": {"a": parts[2]}, "op": "c"}})),
    st.sampled_from([b"[" * 5000, b'{"schema": {"type": "struct", "fields": [], "parameters": 1}, "payload": {}}',
                     b'{"schema": {"type": "struct", "fields": [{"type": "bytes", "field": "d", "name": '
                     b'"org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "9999999999"}}]}, '
                     b'"payload": {"d": "AQ=="}}', b'"\\ud800"', b'{"a": 1e400}', *native.NOT_UTF8_INSIDE]))
garbage_parts = st.one_of(st.none(), st.binary(max_size=64), json_garbage,
                          json_garbage.map(lambda message: message[: len(message) // 2]))


def garbage_for(configuration: str) -> st.SearchStrategy[list[Any]]:
    if configuration.startswith("debezium-json"):
        return st.lists(garbage_parts.filter(lambda part: part is not None), max_size=5)
    return st.lists(st.one_of(st.builds(KafkaRecord, garbage_parts, garbage_parts), garbage_parts,
                              st.tuples(garbage_parts)), max_size=5)
