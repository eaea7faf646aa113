"""debezium-avro's JVM decoder asking a registry over HTTP (``WriterSchemas`` with a ``schema_registry`` URL, as
``jvm_settings`` gives it for a registry URL), here ``cdcformats registry serve`` with basic auth in the URL: each
record of the golden file reads as the Python codec reads it through confluent-kafka's client, and a registry's
refusal (an unknown id, a wrong password) is the same one-line error. Checked by ``tests/jvm/GoldenCheck.java`` on
lines written as the golden file's are (``tests/jvm_golden.py``)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cdcformats as cf
from tests import jvm_golden

from .test_jvm_golden import check, classes  # noqa: F401  (classes: the fixture of the compiled decoders)
from .test_schema_registry_http import Server

pytestmark = pytest.mark.slow


# The golden file's records written by hand and from the peers' recordings (the others, each of schemas of its own,
# would ask the registry for hundreds), and a registry file holding the writer schemas they name under their ids.
GOLDEN = [line for _, line in jvm_golden.read("debezium-avro")
          if line["where"].startswith(("by hand", "tests/fixtures/peers"))]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    schemas: dict[str, dict[str, str]] = {}
    for line in GOLDEN:
        schemas.update(json.loads(line["decoder"]["settings"]["writer_schemas"]))
    given = jvm_golden.GivenRegistry(schemas)
    running = Server(given.client.store.path, "--user", "ann", "--password", "s3cret")
    yield running
    running.stop()


def _line(codec: cf.Codec, where: str, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """A golden line of a record: the decoder the codec names, and what the codec reads the record as."""
    decoder = codec.jvm_decoder()
    assert decoder is not None
    return {"where": where, "options": {}, "decoder": {"class": decoder.class_name, "settings": decoder.settings},
            "key_base64": None if key is None else base64.b64encode(key).decode(),
            "value_base64": None if value is None else base64.b64encode(value).decode(),
            **jvm_golden.record_outcome(codec, key, value)}


def test_the_jvm_decoder_fetches_writer_schemas_over_http_as_the_python_codec_does(
        served: Server, classes: Path, tmp_path: Path) -> None:  # noqa: F811
    url = served.url.replace("http://", "http://ann:s3cret@")
    reader = cf.codec("debezium-avro", schema_registry=url)
    assert reader.jvm_decoder().settings == {  # type: ignore[union-attr]
        "registry_address": f"the schema registry {served.url}", "schema_registry": url}
    lines = [_line(reader, line["where"], *(None if line[part] is None else base64.b64decode(line[part])
                                            for part in ("key_base64", "value_base64")))
             for line in GOLDEN]
    assert [line.get("event") for line in lines] == [line.get("event") for line in GOLDEN]
    assert sum("error" in line for line in lines) == sum("error" in line for line in GOLDEN)
    value = base64.b64decode(next(line["value_base64"] for line in GOLDEN if "event" in line))
    lines.append(_line(cf.codec("debezium-avro", schema_registry=url.replace("s3cret", "wrong")), "a wrong password",
                       None, value))
    assert any("schema id 999999 cannot be fetched" in line.get("error", "") for line in lines)
    assert "Unauthorized (HTTP status code 401, SR code 40101)" in lines[-1]["error"]

    path = tmp_path / "debezium-avro.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = check(classes, path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == f"{len(lines)} messages checked, 0 differences"
