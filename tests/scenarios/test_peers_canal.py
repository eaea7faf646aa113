"""What Canal 1.1.7 really sends from MariaDB (tests/fixtures/peers/mariadb/canal.jsonl), converted as a user
converts it: each scenario a problem the recording showed."""

from __future__ import annotations

import json

from .conftest import Runner, jsonl

# A row as Canal writes it with its table-meta history on (canal.deployer's default): MySQL's attributes after the
# type's name, and MEDIUMINT, a MySQL integer of its own.
UNSIGNED = """
{"data":[{"id":"7","c_tinyint_u":"255","c_mediumint":"-8388608","c_int_u":"4294967295","c_bigint_u":"10",
"c_zerofill":"42"}],"database":"shop","es":1795698565000,"gtid":"","id":1,"isDdl":false,
"mysqlType":{"id":"int unsigned","c_tinyint_u":"tinyint unsigned","c_mediumint":"mediumint",
"c_int_u":"int unsigned","c_bigint_u":"bigint unsigned","c_zerofill":"int(10) unsigned zerofill"},"old":null,
"pkNames":["id"],"sql":"","sqlType":{"id":4,"c_tinyint_u":5,"c_mediumint":4,"c_int_u":-5,"c_bigint_u":-5,
"c_zerofill":4},"table":"types","ts":1795698567087,"type":"INSERT"}
""".replace("\n", "")


def test_unsigned_and_mediumint_columns_are_numbers_in_debezium_json(cdcformats: Runner) -> None:
    """Canal names an unsigned column "int unsigned": its values were kept as text, so a Debezium consumer got the
    id "7" where an "int(10) unsigned" column gave 7."""
    ran = cdcformats("convert", "--from", "canal-json", "--to", "debezium-json", stdin=jsonl(UNSIGNED))
    assert ran.returncode == 0, ran.stderr
    after = json.loads(ran.stdout)["after"]
    assert after == {"id": 7, "c_tinyint_u": 255, "c_mediumint": -8388608, "c_int_u": 4294967295, "c_bigint_u": 10,
                     "c_zerofill": 42}
    assert "1 written" in ran.stderr
    # and typed, they are written back to canal-json as they came
    again = cdcformats("convert", "--from", "canal-json", "--to", "canal-json", stdin=jsonl(UNSIGNED))
    assert again.returncode == 0, again.stderr
    assert again.stdout.decode() == UNSIGNED + "\n"


# Numbers as Canal, a Java program, spells them: a FLOAT or DOUBLE as Java's Double.toString, beyond 10^7 and below
# 10^-3 with an exponent; a DECIMAL in plain digits, where Python would write 1E-12.
JAVA_NUMBERS = """
{"data":[{"id":"3","c_float":"-3.4E38","c_double":"1.7E308","c_big":"1.2345678E7","c_small":"1.0E-4",
"c_decimal_wide":"0.000000000001"}],"database":"shop","es":1795698565000,"gtid":"","id":1,"isDdl":false,
"mysqlType":{"id":"int","c_float":"float","c_double":"double","c_big":"float","c_small":"double",
"c_decimal_wide":"decimal(38,12)"},"old":null,"pkNames":["id"],"sql":"","sqlType":{"id":4,"c_float":7,"c_double":8,
"c_big":7,"c_small":8,"c_decimal_wide":3},"table":"types","ts":1795698567088,"type":"INSERT"}
""".replace("\n", "")


def test_numbers_spelt_as_java_spells_them_are_numbers(cdcformats: Runner) -> None:
    """Canal's "-3.4E38" in a FLOAT column and "0.000000000001" in a DECIMAL(38,12) one were kept as text, since
    Python spells them "-3.4e+38" and "1E-12": a Debezium consumer got strings in number columns."""
    ran = cdcformats("convert", "--from", "canal-json", "--to", "debezium-json", stdin=jsonl(JAVA_NUMBERS))
    assert ran.returncode == 0, ran.stderr
    after = json.loads(ran.stdout)["after"]
    assert {name: after[name] for name in ("c_float", "c_double", "c_big", "c_small")} == \
        {"c_float": -3.4e38, "c_double": 1.7e308, "c_big": 12345678.0, "c_small": 0.0001}
    with_schemas = cdcformats("convert", "--from", "canal-json", "--to", "debezium-json", "--option", "schemas=true",
                              stdin=jsonl(JAVA_NUMBERS))
    assert with_schemas.returncode == 0, with_schemas.stderr
    fields = json.loads(with_schemas.stdout)["schema"]["fields"][1]["fields"]
    assert [field for field in fields if field["field"] == "c_decimal_wide"][0]["name"] == \
        "org.apache.kafka.connect.data.Decimal"
    # and typed, they are written back to canal-json as they came
    again = cdcformats("convert", "--from", "canal-json", "--to", "canal-json", stdin=jsonl(JAVA_NUMBERS))
    assert again.returncode == 0, again.stderr
    assert again.stdout.decode() == JAVA_NUMBERS + "\n"
