"""The format plugin registry: built-ins, third-party formats by entry point or register(), lazy loading."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cdcformats as cf
from cdcformats import ConfigurationError
from cdcformats.envelopes.avro import AvroCodec

REPO = Path(__file__).resolve().parents[2]


def test_builtin_formats_are_listed() -> None:
    assert {"avro", "protobuf"} <= set(cf.formats())


def test_unknown_format_lists_what_exists() -> None:
    with pytest.raises(ConfigurationError,
                       match=r"unknown format 'avor' \(did you mean 'avro'\?\); available formats: .*avro.*protobuf"):
        cf.codec("avor")


def test_unknown_option_names_it_and_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match=r"avro: unknown options colour, size; known options: none"):
        cf.codec("avro", size=1, colour="red")


def test_a_required_option_must_be_given() -> None:
    class Keyed(AvroCodec):
        name = "keyed-avro"
        options = (cf.Option("primary_key", "key columns", None, required=True, names_key_columns=True),
                   cf.Option("table", "table name", None, required=True))

    with pytest.raises(ConfigurationError, match=r"keyed-avro: the options primary_key, table are required"):
        Keyed()
    with pytest.raises(ConfigurationError, match=r"keyed-avro: the option table is required"):
        Keyed(primary_key=["id"])
    assert Keyed(primary_key=["id"], table="t").config == {"primary_key": ["id"], "table": "t"}


def test_option_values_are_validated() -> None:
    class Sized(AvroCodec):
        name = "sized-avro"
        options = (cf.Option("limit", "largest message, bytes", 10, lambda value: _positive(value)),)

    cf.register("sized-avro", Sized)
    assert cf.codec("sized-avro", limit=5).config == {"limit": 5}
    with pytest.raises(ConfigurationError, match=r"sized-avro: option limit: must be positive, got -1"):
        cf.codec("sized-avro", limit=-1)


def _positive(value: int) -> int:
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")
    return value


def test_register_refuses_a_taken_name_unless_told() -> None:
    with pytest.raises(ConfigurationError, match="already registered"):
        cf.register("avro", AvroCodec)


def test_register_accepts_only_codecs() -> None:
    cf.register("not-a-codec", "builtins:dict")
    with pytest.raises(ConfigurationError, match="not a cdcformats Codec subclass"):
        cf.codec("not-a-codec")


def test_missing_dependency_is_a_clear_error() -> None:
    cf.register("needs-missing", "a_package_that_is_not_installed.module:Codec")
    with pytest.raises(ConfigurationError, match=r"needs another package: the package a_package_that_is_not_installed "
                                                 r"is not installed: pip install a_package_that_is_not_installed$"):
        cf.codec("needs-missing")


def test_entry_point_format_is_indistinguishable_from_a_builtin(tmp_path: Path) -> None:
    """A third-party distribution on sys.path declares a format; cdcformats finds it, lists it, loads it lazily."""
    (tmp_path / "reversed_avro.py").write_text(textwrap.dedent('''
        from cdcformats.envelopes.avro import AvroCodec

        class ReversedAvro(AvroCodec):
            """Avro with the bytes reversed: a format no built-in knows."""
            name = "reversed-avro"

            def decode_message(self, message):
                return super().decode_message(bytes(message)[::-1])

            def encode_event(self, event):
                return super().encode_event(event)[::-1]
    '''))
    dist_info = tmp_path / "reversed_avro-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: reversed-avro\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[cdcformats.formats]\nreversed-avro = reversed_avro:ReversedAvro\n")
    script = textwrap.dedent('''
        import sys
        import cdcformats as cf
        assert "reversed-avro" in cf.formats(), cf.formats()
        assert "reversed_avro" not in sys.modules  # listed, not yet imported
        event = cf.ChangeEvent(cf.Op.INSERT, after=(cf.Cell("id", 7),))
        [message] = cf.convert(cf.codec("avro").encode([event]), "avro", "reversed-avro")
        assert message == cf.codec("avro").encode_event(event)[::-1]
        assert list(cf.codec("reversed-avro").decode([message])) == [event]
        print("ok")
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                            env={"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_importing_the_package_is_cheap() -> None:
    script = ("import sys, cdcformats; heavy = [m for m in ('pyspark', 'confluent_kafka', 'fastavro', "
              "'google.protobuf', 'pyarrow') if m in sys.modules]; print(heavy)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True)
    assert result.stdout.strip() == "[]"
