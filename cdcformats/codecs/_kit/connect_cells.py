"""debezium-avro's cells as ``debezium-json`` reads them: typed by the Connect field schema that Debezium sent
(``connect_schema``), Debezium's variable-scale decimal, Connect's ``float`` (a single) as Java prints it; and a
change's cells as they type the columns of its table (``as_typed``).
"""

from __future__ import annotations

import struct
from decimal import Decimal

from msgspec.structs import replace

from ...errors import DecodeError
from ...model import Cell, ChangeEvent, Image, Struct, Value, value_key
from ...tables import TableSchema, connect_type
from .avro_columns import ANY_DECIMAL, FLOAT, NAME
from .connect_schema import connect_float, json_value, kept_schema, read_value


def type_read(type_name: str | None, value: Value) -> str | None:
    """The type name of a cell of ``value`` in a column whose type name is ``type_name``: that name, or where it is a
    Connect field schema (which ``debezium-json`` keeps whole where a short name would not say all of it), the name
    that ``debezium-json`` reads the value with through that schema: a null in an optional field has the short name
    (``int32``), a value in it the whole schema."""
    schema = kept_schema(type_name)
    if schema is None:
        return type_name
    try:
        read = read_value(json_value(value), schema, NAME, "")[1]
    except DecodeError:  # a value that the schema does not read: the column's type name, as it is
        return type_name
    return type_name if kept_schema(read) == schema else read  # the whole schema as it was written


def is_connect_float(type_name: str | None) -> bool:
    """Whether a type name is Connect's ``float`` (a single), whose values ``debezium-json`` reads as Java prints
    them (``connect_float``: 3.4E38 is 3.4e38, not the single's 3.3999999521443642e38); a float column of that name
    is Debezium's Avro ``float``, read back so."""
    return connect_type(type_name) == FLOAT


def _single(value: Value) -> float | None:
    """The single-precision float nearest ``value``, or None beyond the singles' range."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except (OverflowError, struct.error):
        return None


def connect_struct(type_name: str | None) -> bool:
    """Whether a type name is the Connect struct schema of Debezium's ``io.debezium.data.VariableScaleDecimal``, as
    ``debezium-json`` keeps it for such a column, whose cells hold the struct ``{scale, value}`` that its JSON sends.
    Another struct schema (a column typed otherwise elsewhere in the event) says nothing of how a decimal reads."""
    schema = kept_schema(type_name)
    return schema is not None and schema.get("type") == "struct" and connect_type(type_name) == ANY_DECIMAL


def variable_scale_decimal(cell: Cell) -> Decimal | None:
    """The decimal that a cell of Debezium's variable-scale decimal holds as ``debezium-json`` reads it (a Connect
    struct schema of that name, and a struct of an int32 ``scale`` and the unscaled ``value``'s bytes), or None for
    any other cell. Such a column is Debezium's record of it, which holds the struct as it is."""
    value = cell.value
    if type(value) is not Struct or not connect_struct(cell.type):
        return None
    if [name for name, _ in value.fields] != ["scale", "value"]:
        return None
    scale, unscaled = value.get("scale"), value.get("value")
    if type(scale) is not int or not -(2**31) <= scale < 2**31 or type(unscaled) is not bytes:
        return None
    return decimal_of(scale, unscaled)


def decimal_of(scale: int, unscaled: bytes) -> Decimal:
    """The decimal of Debezium's variable-scale decimal record."""
    # exact: Decimal arithmetic would round to 28 digits
    return Decimal(f"{int.from_bytes(unscaled, 'big', signed=True)}E{-scale}")


def as_typed(event: ChangeEvent, schema: TableSchema | None) -> ChangeEvent:
    """``event`` as its cells type the columns of its table (``schema``, as it is so far): a variable-scale decimal
    (``variable_scale_decimal``) as the decimal it holds; a null whose type name is the short one that a Connect
    field schema gives a null, with that schema, where the column has it (another cell of the change, or else the
    column as it is), since a null says nothing of its column."""
    schemas = {cell.name: cell.type for cell in (*event.key, *(event.before or ()), *(event.after or ()))
               if cell.value is not None and kept_schema(cell.type) is not None}
    for column in schema.columns if schema is not None else ():
        if column.name not in schemas and kept_schema(column.source_type) is not None:
            schemas[column.name] = column.source_type

    def typed(cell: Cell) -> Cell:
        decimal = variable_scale_decimal(cell)
        if decimal is not None:
            return replace(cell, value=decimal)
        single = _single(cell.value) if type(cell.value) is float and is_connect_float(cell.type) else None
        if single is not None and value_key(connect_float(single)) == value_key(cell.value):
            return replace(cell, value=single)  # a Connect float, as Java prints its single: a float column
        kept = schemas.get(cell.name)
        if cell.value is None and kept is not None and cell.type != kept and type_read(kept, None) == cell.type:
            return replace(cell, type=kept)
        return cell

    def image(cells: Image | None) -> Image | None:
        return None if cells is None else tuple(map(typed, cells))

    return replace(event, key=tuple(map(typed, event.key)), before=image(event.before), after=image(event.after))
