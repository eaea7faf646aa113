"""SQL type names (MySQL, PostgreSQL, Oracle, Lindorm, Spark and Hive, DataWorks, Tablestore) and the column type each
declares, as ``tables.ColumnType`` names it: the one table that ``tables.declared_type`` reads a cell's type by and that
``typed_text`` types text by (the kind of value a column of the declared type holds).

A type name is matched without regard to case or to the spaces between its words, and without its parameters and
MySQL's attributes of a number type: "decimal(10,2)" is DECIMAL with the parameters (10, 2); "int unsigned" (as
Canal's table-meta history writes a column's type) and "int(10) unsigned zerofill" (as MySQL's DESC does) are INT,
unsigned; "double  precision" is DOUBLE PRECISION.

Where one name means different types in different databases, the table holds the type of the database whose messages
send that name: PostgreSQL's INT8 (a bigint, not ClickHouse's 8-bit Int8), FLOAT4 and FLOAT8, SERIAL (an integer;
MySQL's SERIAL column is reported by MySQL as "bigint unsigned"), REAL (a 32-bit float; MySQL reports its REAL columns
as "double"); Oracle's NUMBER (a decimal); Spark's and DataWorks' BYTE, SHORT and LONG (Oracle's LONG, a long text,
is not among them). A name that declares nothing here leaves its values as they come.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

COLUMN_TYPES: dict[str, str] = {
    **dict.fromkeys(["TINYINT", "INT1", "BYTE"], "int8"),
    **dict.fromkeys(["SMALLINT", "INT2", "SHORT", "SMALLSERIAL"], "int16"),
    **dict.fromkeys(["MEDIUMINT", "MIDDLEINT", "INT3", "INT", "INTEGER", "INT4", "SERIAL"], "int32"),
    **dict.fromkeys(["BIGINT", "INT8", "LONG", "BIGSERIAL"], "int64"),
    **dict.fromkeys(["FLOAT", "REAL", "FLOAT4"], "float"),
    **dict.fromkeys(["DOUBLE", "DOUBLE PRECISION", "FLOAT8"], "double"),
    **dict.fromkeys(["DECIMAL", "NUMERIC", "NUMBER", "DEC"], "decimal"),
    **dict.fromkeys(["BOOLEAN", "BOOL"], "boolean"),
    **dict.fromkeys(["CHAR", "VARCHAR", "NCHAR", "NVARCHAR", "VARCHAR2", "NVARCHAR2", "TEXT", "TINYTEXT",
                     "MEDIUMTEXT", "LONGTEXT", "STRING", "CLOB", "ENUM", "UUID", "CHARACTER",
                     "CHARACTER VARYING"], "string"),
    **dict.fromkeys(["BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BYTEA", "BYTES",
                     "RAW"], "bytes"),
    **dict.fromkeys(["JSON", "JSONB"], "json"),
    "DATE": "date", "TIME": "time", "DATETIME": "timestamp", "TIMESTAMP": "timestamp",
}
# MySQL's attributes of a number type, written after its name or its parameters. Only UNSIGNED changes the type.
ATTRIBUTES = ("UNSIGNED", "SIGNED", "ZEROFILL")
# The parameters in parentheses after a name: a length or precision, and a scale, which Oracle allows negative.
_PARAMETERS = re.compile(r"\s*([0-9]+)\s*(?:,\s*(-?[0-9]+)\s*)?\)(.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SqlType:
    """What a SQL type name says: ``column`` the column type it declares (a ``tables.ColumnType`` name);
    ``parameters`` the numbers in parentheses after it, () for none, None where the parentheses hold anything but one
    or two numbers and MySQL's attributes (``enum('a','b')``); ``unsigned`` whether it is MySQL's unsigned number."""

    column: str
    parameters: tuple[int, ...] | None
    unsigned: bool


@functools.lru_cache(maxsize=4096)  # a stream has few type names, and every value it reads or writes asks
def sql_type(type_name: str | None) -> SqlType | None:
    """What ``type_name`` says, or None for a name that is not in the table."""
    if not type_name:
        return None
    head, parenthesis, rest = type_name.partition("(")
    words = head.upper().split()
    unsigned = False
    while len(words) > 1 and words[-1] in ATTRIBUTES:
        unsigned = unsigned or words.pop() == "UNSIGNED"
    column = COLUMN_TYPES.get(" ".join(words))
    if column is None:
        return None
    if not parenthesis:
        return SqlType(column, (), unsigned)
    match = _PARAMETERS.fullmatch(rest)
    attributes = match.group(3).upper().split() if match else []
    if match is None or not all(word in ATTRIBUTES for word in attributes):
        return SqlType(column, None, unsigned)
    first, second = match.group(1), match.group(2)
    return SqlType(column, (int(first),) if second is None else (int(first), int(second)),
                   unsigned or "UNSIGNED" in attributes)
