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
