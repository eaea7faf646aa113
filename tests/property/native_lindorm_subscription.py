"""Native LindormTable data-subscription messages, and their normal form written from the Lindorm data-format page
(https://www.alibabacloud.com/help/en/lindorm/user-guide/data-format) and the choices of the codec's docstring,
independently of the codec.

Messages come bare (the envelope alone) or in the documented wrapper ``{"payload": <envelope>, "schema": <Connect
struct schema>}``, whose column types say which text is base64 bytes or a Connect Decimal.
"""

from __future__ import annotations

import base64
from decimal import Decimal
from typing import Any

import msgspec
from hypothesis import strategies as st

from .native import debezium_times, garbage_for, json_scalars, json_values, text_values
from .strategies import int64s, names

encode_json = msgspec.json.encode
decode_json = msgspec.json.decode

OPS = ["c", "u", "d", "r"]
ENVELOPE_FIELDS = ("op", "ts_ms", "ts_us", "before", "after", "source")
DECIMAL = "org.apache.kafka.connect.data.Decimal"

row_values = st.one_of(text_values, st.none(), st.booleans(), int64s, st.floats(allow_nan=False, allow_infinity=False))
rows = st.dictionaries(names, row_values, max_size=5)

sources = st.tuples(
    st.fixed_dictionaries({}, optional={
        "version": st.sampled_from(["v1.0", "v2.0"]) | st.text(max_size=4),
        "db": st.none() | st.sampled_from(["ld-xxxx", "ld-bp1"]) | st.text(max_size=6),
        "namespace": st.none() | st.sampled_from(["default", "ns1"]) | st.text(max_size=6),
        "table": st.sampled_from(["customers", "t"]) | st.text(max_size=8),
        "connector": st.none() | st.just("lindorm"),
        "schema": st.text(max_size=4), "seq": int64s, "extra": json_scalars}),
    st.none() | debezium_times()).map(lambda parts: {**parts[0], **(parts[1] or {})})


def envelopes(images: st.SearchStrategy[dict[str, Any] | None]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(
        st.fixed_dictionaries({"op": st.sampled_from(OPS)}, optional={
            "before": images, "after": images, "source": st.none() | sources,
            "transaction": st.none() | json_values, "extension": json_values}),
        st.none() | debezium_times()).map(lambda parts: {**parts[0], **(parts[1] or {})})


# -- the schema wrapper -----------------------------------------------------------------------------------------------

def _decimal_bytes(unscaled: int) -> str:
    """A Connect Decimal's unscaled value: big-endian two's complement, as few bytes as Java's BigInteger writes."""
    length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


COLUMN_VALUES = {
    "int32": st.integers(-(2**31), 2**31 - 1), "int64": int64s, "string": text_values, "boolean": st.booleans(),
    "double": st.floats(allow_nan=False, allow_infinity=False),
    "bytes": st.binary(max_size=8).map(lambda data: base64.b64encode(data).decode()),
    # Up to 38 digits, as a DECIMAL(38, s) column holds.
    "decimal": st.integers(-(10**38) + 1, 10**38 - 1).map(_decimal_bytes),
}


# A Connect Decimal's scale is a 32-bit integer; negative scales multiply by a power of ten. connect_schema refuses
# the scale -2**31 (it keeps exponents within +-(2**31 - 1)), which Java would allow: that limit is noted, not drawn.
scales = st.one_of(st.integers(-3, 40), st.sampled_from([-(2**31) + 1, 2**31 - 1]))


def _column_schema(name: str, kind: str, scale: int) -> dict[str, Any]:
    if kind == "decimal":
        return {"type": "bytes", "optional": True, "name": DECIMAL, "version": 1,
                "parameters": {"scale": str(scale)}, "field": name}
    return {"type": kind, "optional": True, "field": name}


# What wrapped_messages draws, built once rather than on every draw (native.column_or_name says why).
_columns = st.dictionaries(names, st.tuples(st.sampled_from(sorted(COLUMN_VALUES)), scales), max_size=5)
_cells = {kind: st.none() | values for kind, values in COLUMN_VALUES.items()}
_envelopes_without_images = envelopes(st.just(None))


@st.composite
def wrapped_messages(draw: st.DrawFn) -> dict[str, Any]:
    columns = draw(_columns)

    def image() -> dict[str, Any] | None:
        if draw(st.booleans()):
            return None
        return {name: draw(_cells[kind]) for name, (kind, _) in columns.items() if draw(st.booleans())}

    envelope = draw(_envelopes_without_images)
    envelope["before"], envelope["after"] = image(), image()
    struct = [_column_schema(name, kind, scale) for name, (kind, scale) in columns.items()]
    schema = {"type": "struct", "optional": False, "fields": [
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
        {"type": "struct", "fields": struct, "optional": True, "field": "before"},
        {"type": "struct", "fields": struct, "optional": True, "field": "after"},
        {"type": "struct", "fields": [{"type": "string", "optional": False, "field": name}
                                      for name in ("version", "db", "namespace", "table")],
         "optional": False, "field": "source"}]}
    return {"payload": envelope, "schema": schema}


# The wrapper with a null schema (what JsonConverter writes for a record without one) reads as the bare envelope.
null_schema = envelopes(st.none() | rows).map(lambda envelope: {"payload": envelope, "schema": None})
documents = st.one_of(envelopes(st.none() | rows), wrapped_messages(), null_schema)
messages = st.lists(documents.map(encode_json), max_size=4)


# -- normal form ------------------------------------------------------------------------------------------------------

def _time(fields: dict[str, Any], normal: dict[str, Any]) -> None:
    """``ts_ms``, plus ``ts_us`` when the instant has microseconds; ``ts_us`` is the finer of the two."""
    instant = fields["ts_us"] if fields.get("ts_us") is not None else (
        fields["ts_ms"] * 1000 if fields.get("ts_ms") is not None else None)
    if instant is not None:
        normal["ts_ms"] = instant // 1000
        if instant % 1000:
            normal["ts_us"] = instant


def _decimal_text(text: str, scale: int) -> str:
    """The decimal unscaled * 10**-scale, exactly, in the standard scientific text (Java's BigDecimal.toString)."""
    unscaled = int.from_bytes(base64.b64decode(text), "big", signed=True)
    return str(Decimal((int(unscaled < 0), tuple(int(digit) for digit in str(abs(unscaled))), -scale)))


def _image(row: dict[str, Any] | None, decimals: dict[str, int]) -> dict[str, Any] | None:
    """A row as written without the wrapper: a decimal column's value as the decimal's text."""
    if row is None:
        return None
    return {name: _decimal_text(value, decimals[name]) if name in decimals and value is not None else value
            for name, value in row.items()}


def envelope_normal_form(envelope: dict[str, Any], decimals: dict[str, int] | None) -> dict[str, Any]:
    """The payload as written; ``decimals`` (column -> scale) for the bare form, None when the wrapper is written."""
    normal: dict[str, Any] = {"op": envelope["op"]}
    _time(envelope, normal)
    for name in ("before", "after"):
        normal[name] = envelope.get(name) if decimals is None else _image(envelope.get(name), decimals)
    source = envelope.get("source") or {}
    normal_source: dict[str, Any] = {}
    if source.get("connector") is not None:
        normal_source["connector"] = source["connector"]
    has_table = "table" in source
    table_fields = ("db", "namespace", "table") if has_table else ()
    normal_source.update((name, value) for name, value in source.items()
                         if name not in ("connector", "ts_ms", "ts_us", *table_fields))
    if has_table:
        normal_source.update(db=source.get("db"), namespace=source.get("namespace"), table=source["table"])
    _time(source, normal_source)
    normal["source"] = normal_source
    normal.update((name, value) for name, value in envelope.items() if name not in ENVELOPE_FIELDS)
    return normal


def _image_columns(schema: dict[str, Any] | None) -> dict[str, dict[str, dict[str, Any]]]:
    """The column schemas of the wrapper's ``before`` and ``after``, by image and name."""
    if schema is None:
        return {}
    return {image["field"]: {column["field"]: column for column in image["fields"]} for image in schema["fields"]
            if image["field"] in ("before", "after")}


# A bare value's Connect type, by its JSON kind; a null is an optional string.
_KIND_TYPES = {bool: "boolean", int: "int64", float: "double", str: "string", type(None): "string"}


def _column(name: str, value: Any, column: dict[str, Any] | None) -> dict[str, Any]:
    """A column's schema as written: the wrapper's own, whole (the cell's type keeps what generation from the value
    would not give back: optional with a value, a null decimal's scale); a bare value's by its JSON kind."""
    if column is None:
        return {"type": _KIND_TYPES[type(value)], "optional": value is None, "field": name}
    return column


def _schema(payload: dict[str, Any], columns: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The documented layout: op, ts_ms (ts_us), before/after structs, source typed by its JSON values."""
    fields: list[dict[str, Any]] = [{"type": "string", "optional": False, "field": "op"}]
    fields += [{"type": "int64", "optional": False, "field": name} for name in ("ts_ms", "ts_us") if name in payload]
    for name in ("before", "after"):
        image = name if payload[name] is not None else ("after" if name == "before" else "before")
        row = payload[image] or {}
        fields.append({"type": "struct", "fields": [_column(column, value, columns.get(image, {}).get(column))
                                                    for column, value in row.items()],
                       "optional": True, "field": name})
    fields.append({"type": "struct", "fields": [
        {"type": _KIND_TYPES[type(value)], "optional": value is None, "field": column}
        for column, value in payload["source"].items()], "optional": False, "field": "source"})
    return {"type": "struct", "fields": fields, "optional": False}


def _decimal_columns(schema: dict[str, Any] | None) -> dict[str, int]:
    """Decimal columns of the wrapper's images, by name, with their scale (both images share the columns here)."""
    return {name: int(column["parameters"]["scale"]) for image in _image_columns(schema).values()
            for name, column in image.items() if column.get("name") == DECIMAL}


def normal_form(messages: list[bytes], schemas: bool = True) -> list[bytes]:
    """What lindorm-subscription writes for ``messages``: with ``schemas``, the wrapper, else the payload alone."""
    result = []
    for message in messages:
        document = decode_json(message)
        envelope, schema = (document["payload"], document["schema"]) if "payload" in document else (document, None)
        if schemas:
            payload = envelope_normal_form(envelope, None)
            result.append(encode_json({"payload": payload, "schema": _schema(payload, _image_columns(schema))}))
        else:
            result.append(encode_json(envelope_normal_form(envelope, _decimal_columns(schema))))
    return result


def same(left: list[bytes], right: list[bytes]) -> bool:
    """Equal as JSON values, key order included (the normal form fixes it)."""
    return [list(_items(decode_json(message))) for message in left] == [
        list(_items(decode_json(message))) for message in right]


def _items(value: Any) -> Any:
    if type(value) is dict:
        return [(name, _items(item)) for name, item in value.items()]
    if type(value) is list:
        return [_items(item) for item in value]
    return value


# -- garbage ----------------------------------------------------------------------------------------------------------

def wrapped_after(value: bytes, column: bytes) -> bytes:
    """A wrapped insert whose ``after`` has the one column ``p``, with this value and this column schema."""
    return (b'{"payload": {"op": "c", "after": {"p": ' + value + b'}}, "schema": {"type": "struct", "fields": '
            b'[{"field": "after", "type": "struct", "fields": [{"field": "p", ' + column + b'}]}]}}')


BAD_MESSAGES = [
    b'{"payload": ' + b"[" * 5000 + b', "schema": {}}', b'{"op": "c", "after": ' + b'{"a": ' * 5000 + b"}",
    b'{"payload": {"op": "c"}, "schema": {"type": "struct", "fields": [{"field": "after", "fields": 7}]}}',
    b'{"payload": {"op": "u", "source": {"table": null}}, "schema": {"type": "struct", "fields": []}}',
    b'{"op": "c", "source": {"table": "t", "db": 5}}', b'{"op": "t"}', b'{"op": "c", "ts_ms": 1e3}',
    wrapped_after(b'"%%%"', b'"type": "bytes"'), wrapped_after(b"2147483648", b'"type": "int32"'),
    wrapped_after(b'"x"', b'"type": "map"'),
    *(wrapped_after(b'"AQ=="', b'"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", '
                                b'"parameters": {"scale": "' + scale + b'"}') for scale in (b"--2", "²".encode(),
                                                                                           b"9" * 5000)),
]
garbage = st.lists(st.one_of(
    garbage_for("lindorm"),
    messages.map(lambda messages: [message[: len(message) // 2] for message in messages]),
    st.lists(st.sampled_from(BAD_MESSAGES), max_size=3)), max_size=3).map(
    lambda lists: [message for messages in lists for message in messages])
