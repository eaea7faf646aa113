"""The one SQL type table (``cdcformats/core/sql_types.py``) and its users: ``tables.declared_type`` declares the column
type the table gives a name, ``typed_text`` types text as the kind of value that column type holds, and the JVM
decoders' ``TypedText`` types the same names."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from cdcformats.core import sql_types, typed_text
from cdcformats.core.sql_types import SqlType, sql_type
from cdcformats.tables import ColumnType, connect_type, declared_type

TYPED_TEXT_JAVA = Path(__file__).resolve().parents[2] / "cdcformats" / "jvm" / "decoders" / "TypedText.java"
KIND_OF_COLUMN = {"int8": int, "int16": int, "int32": int, "int64": int, "float": float, "double": float,
                  "boolean": bool, "decimal": Decimal}
# A text each kind of typed column reads as a value of its kind.
TEXT_OF_KIND = {int: "7", float: "1.5", bool: "true", Decimal: "10.50"}


def spellings(name: str) -> list[str]:
    """The ways a source writes a type name: its case, spaces, parameters and MySQL's attributes."""
    spaced = name.replace(" ", "  ")
    return [name, name.lower(), name.title(), f" {spaced} ", f"{name}(10)", f"{name.lower()}(10, 2)",
            f"{name} UNSIGNED", f"{name.lower()}(20) unsigned zerofill"]


@pytest.mark.parametrize("name", sorted(sql_types.COLUMN_TYPES))
def test_the_two_users_agree_on_every_name_in_the_table(name: str) -> None:
    column = sql_types.COLUMN_TYPES[name]
    for spelling in spellings(name):
        declared = declared_type(spelling)
        kind = typed_text.kind_of(spelling)
        # "int8" is Kafka Connect's 8-bit integer before it is PostgreSQL's bigint: a type name of Connect's is
        # always Connect's (tables.connect_type), and its values are integers either way.
        connect = connect_type(spelling)
        expected = column if connect is None else connect.name
        assert declared is not None and declared.name in (expected, {"int8": "int16", "int16": "int32",
                                                                      "int32": "int64"}.get(expected)), spelling
        assert kind is KIND_OF_COLUMN.get(column), spelling
        if kind is not None:  # the value typed text reads is one its declared column holds
            value = typed_text.parse(TEXT_OF_KIND[kind], spelling)
            assert type(value) is kind and (declared.fits(value) or declared.name == "decimal"), spelling
        assert (name in typed_text.TYPED_NAMES) is (kind is not None)


def test_the_names_where_the_two_tables_disagreed_declare_their_databases_types() -> None:
    declared = {name: str(declared_type(name)) for name in (
        "INT8", "int8", "Int8", "INT4", "INT2", "INT1", "SERIAL", "BIGSERIAL", "SMALLSERIAL", "FLOAT4", "FLOAT8",
        "DOUBLE PRECISION", "NUMBER", "NUMBER(10,2)", "DEC(5,1)", "BYTE", "SHORT", "MIDDLEINT", "INT3")}
    assert declared == {
        "INT8": "int64", "int8": "int8", "Int8": "int64", "INT4": "int32", "INT2": "int16", "INT1": "int8",
        "SERIAL": "int32", "BIGSERIAL": "int64", "SMALLSERIAL": "int16", "FLOAT4": "float", "FLOAT8": "double",
        "DOUBLE PRECISION": "double", "NUMBER": "decimal", "NUMBER(10,2)": "decimal(10,2)",
        "DEC(5,1)": "decimal(5,1)", "BYTE": "int8", "SHORT": "int16", "MIDDLEINT": "int32", "INT3": "int32"}
    assert typed_text.parse("7", "INT8") == 7 and typed_text.parse("007", "INT8") == "007"
    assert typed_text.parse("10.50", "NUMBER") == Decimal("10.50")
    assert typed_text.parse("2.5", "double precision") == 2.5


def test_a_name_says_its_parameters_and_whether_it_is_unsigned() -> None:
    assert sql_type("decimal(10,2)") == SqlType("decimal", (10, 2), False)
    assert sql_type("bigint(20) unsigned zerofill") == SqlType("int64", (20,), True)
    assert sql_type("int unsigned") == SqlType("int32", (), True)
    assert sql_type("Number( 5 , -2 )") == SqlType("decimal", (5, -2), False)
    assert sql_type("enum('a','b')") == SqlType("string", None, False)
    assert sql_type("decimal(10") == SqlType("decimal", None, False)
    assert sql_type("varchar(20) character set utf8mb4") == SqlType("string", None, False)
    assert [sql_type(name) for name in (None, "", "geometry", "unsigned", "int64", '{"type": "int32"}')] == [None] * 6


def test_a_name_whose_parameters_declare_no_type_leaves_its_values_theirs() -> None:
    # A decimal's scale beyond its precision, a negative scale, no digits at all, parentheses left open: the values
    # decide the column's type, and typed text still reads the name's kind.
    for name in ("decimal(2,5)", "number(5,-2)", "decimal(0)", "DECIMAL(0,0)", "decimal(10"):
        assert declared_type(name) is None and typed_text.kind_of(name) is Decimal, name
    assert declared_type("enum('a','b')") is None and typed_text.kind_of("enum('a','b')") is None
    assert declared_type("decimal(1)") == ColumnType("decimal", 1, 0)


def test_the_jvm_decoders_type_the_same_names_as_typed_text() -> None:
    """``TypedText.java`` lists the typed names by kind; the golden files check that it types them alike."""
    source = TYPED_TEXT_JAVA.read_text(encoding="utf-8")
    java_kinds = {"INTEGER": int, "FLOAT": float, "BOOLEAN": bool, "DECIMAL": Decimal}
    listed = {}
    for kind, names in re.findall(r"kinds\(Kind\.(\w+), ([^;]*)\);", source):
        listed.update(dict.fromkeys(re.findall(r'"([^"]+)"', names), java_kinds[kind]))
    assert listed == {name: typed_text.kind_of(name) for name in typed_text.TYPED_NAMES}
