"""Column types of nested values (``cdcformats.tables``): a value of a type fits it, types it back within it, and
the type's text parses back."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import cdcformats as cf
from cdcformats.tables import ColumnType, nested_type, widened

_FIELD_NAMES = st.from_regex(r"[a-z_][a-z0-9_ ]{0,5}[a-z0-9_]|[a-z_]", fullmatch=True)
_LEAVES = st.sampled_from([ColumnType(name) for name in ("null", "boolean", "int64", "double", "string")])
column_types = st.recursive(_LEAVES, lambda inner: st.one_of(
    inner.map(lambda items: ColumnType("array", items=items)),
    st.lists(st.tuples(_FIELD_NAMES, inner), min_size=1, max_size=4, unique_by=lambda field: field[0]).map(
        lambda fields: ColumnType("struct", fields=tuple(fields)))), max_leaves=8)
nested_types = column_types.filter(lambda column_type: column_type.name in ("array", "struct"))


def values_of(column_type: ColumnType) -> st.SearchStrategy[Any]:
    """Values of a column type: for a struct, any of its fields in its order, each field's value of its type."""
    if column_type.items is not None:
        return st.lists(st.none() | values_of(column_type.items), max_size=4).map(tuple)
    if column_type.fields:
        present = st.lists(st.booleans(), min_size=len(column_type.fields), max_size=len(column_type.fields))
        return present.flatmap(lambda chosen: st.tuples(*[
            st.tuples(st.just(name), st.none() | values_of(field_type))
            for (name, field_type), kept in zip(column_type.fields, chosen, strict=True) if kept]).map(
            lambda fields: cf.Struct(tuple(fields)) if fields else None))
    return {"null": st.none(), "boolean": st.booleans(), "int64": st.integers(-(2**63), 2**63 - 1),
            "double": st.floats(allow_nan=False, allow_infinity=False), "string": st.text()}[column_type.name]


@given(data=st.data(), column_type=nested_types)
def test_a_nested_value_fits_its_column_and_its_own_type_widens_to_it(data: st.DataObject,
                                                                       column_type: ColumnType) -> None:
    value = data.draw(values_of(column_type))
    assert column_type.fits(value)
    if value is not None:
        own = nested_type(value)
        assert own is not None and own.fits(value)
        assert widened(column_type, own) == column_type
        assert widened(own, column_type) is not None


@given(column_type=column_types)
def test_a_column_types_text_parses_back(column_type: ColumnType) -> None:
    assert ColumnType.parse(str(column_type)) == column_type


def test_values_of_no_one_type_have_none() -> None:
    for value in ((1, "a"), (1, 1.5), (True, 1), cf.Struct(()), cf.Struct((("b", b"x"),)), (float("nan"),),
                  cf.Struct((("d", (1, ("x",))),))):
        assert nested_type(value) is None, value
    array_of = ColumnType.parse
    assert widened(array_of("array<int64>"), array_of("array<string>")) is None
    assert widened(array_of("struct<a:int64>"), array_of("struct<a:string>")) is None
    assert widened(array_of("struct<a:int64,b:null>"), array_of("struct<c:string,b:array<double>>")) == array_of(
        "struct<a:int64,b:array<double>,c:string>")


def test_a_millisecond_time_is_an_int32_as_connects_time() -> None:
    """Found by the conversion matrix: a Connect Time holding 2**31 was typed time(3), which Avro's int cannot
    write; it is an int64 column instead, keeping the value."""
    from cdcformats.tables import cell_type

    connect_time = '{"type":"int32","name":"org.apache.kafka.connect.data.Time","version":1}'
    assert ColumnType("time", 3).fits(2**31 - 1) and not ColumnType("time", 3).fits(2**31)
    assert ColumnType("time", 6).fits(2**31)
    assert cell_type(2**31 - 1, connect_time) == ColumnType("time", 3)
    assert cell_type(2**31, connect_time) == ColumnType("int64")
