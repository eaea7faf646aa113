"""The ``cdcformats`` command line."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table as RichTable

from . import __version__
from .codecs.base import FEATURES
from .plugins import codec_class, formats


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cdcformats")
def main() -> None:
    """Convert change-data-capture streams between formats through one canonical change event."""


@main.command("formats")
def formats_command() -> None:
    """List the formats and which canonical features each can carry."""
    names = formats()
    classes = [codec_class(name) for name in names]
    console = Console()
    summary = RichTable(title="formats")
    summary.add_column("format")
    summary.add_column("messages")
    summary.add_column("description")
    summary.add_column("options")
    for name, cls in zip(names, classes):
        summary.add_row(name, cls.message_type.__name__, cls.description,
                        ", ".join(option.name for option in cls.options) or "-")
    console.print(summary)
    carried = RichTable(title="canonical features carried (yes / -)")
    carried.add_column("feature")
    for name in names:
        carried.add_column(name, justify="center")
    for feature in FEATURES:
        carried.add_row(feature, *("yes" if feature in cls.carries else "-" for cls in classes))
    console.print(carried)


@main.group("registry")
def registry_group() -> None:
    """The embedded schema registry."""


@registry_group.command("serve")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), default=None,
              help="Registry file (SQLite); default: $CDCFORMATS_SCHEMA_REGISTRY or the user's data directory.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8081, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--user", default=None, help="Require HTTP basic auth with this user name.")
@click.option("--password", envvar="CDCFORMATS_REGISTRY_PASSWORD", default=None,
              help="Password for --user (better: the environment variable CDCFORMATS_REGISTRY_PASSWORD).")
@click.option("--max-request-bytes", default=4 * 1024 * 1024, show_default=True, type=click.IntRange(1),
              help="Refuse request bodies larger than this.")
def registry_serve_command(db_path: str | None, host: str, port: int, user: str | None, password: str | None,
                           max_request_bytes: int) -> None:
    """Serve a registry file over HTTP with the Confluent Schema Registry REST API."""
    from .schema_registry import default_path
    from .schema_registry.server import serve
    from .schema_registry.store import SchemaStore

    if (user is None) != (password is None):
        raise click.UsageError("--user and --password (or CDCFORMATS_REGISTRY_PASSWORD) go together")
    path = db_path or default_path()
    click.echo(f"schema registry {path} on http://{host}:{port}" + (" (basic auth)" if user else ""), err=True)
    serve(SchemaStore(path), host, port, credentials=(user, password) if user else None,
          max_request_bytes=max_request_bytes)


@main.group("schemas")
def schemas_group() -> None:
    """The canonical envelope schemas."""


@schemas_group.command("register")
@click.option("--registry", "target", default=None,
              help="Registry URL (http/https) or file; default: the embedded registry.")
@click.option("--format", "schema_format", type=click.Choice(["avro", "protobuf"]), multiple=True,
              default=["avro", "protobuf"], show_default=True, help="Which envelope(s) to register.")
@click.option("--topic", default=None, help="Topic whose subject to register under (topic strategies).")
@click.option("--strategy", type=click.Choice(["topic", "record", "topic-record"]), default="topic",
              show_default=True, help="Subject name strategy, as Confluent spells them.")
@click.option("--key", "is_key", is_flag=True, help="Register as the key schema (<topic>-key).")
def schemas_register_command(target: str | None, schema_format: tuple[str, ...], topic: str | None, strategy: str,
                             is_key: bool) -> None:
    """Register the canonical Avro and/or Protobuf envelope and print subject and id."""
    from .schema_registry import connect, register_envelope

    if strategy != "record" and topic is None:
        raise click.UsageError(f"--strategy {strategy} needs --topic")
    if strategy == "topic" and len(schema_format) > 1:
        raise click.UsageError("one topic subject holds one schema: pick --format avro or --format protobuf")
    registry = connect(target)
    for name in schema_format:
        subject, schema_id = register_envelope(registry, name, topic, strategy, is_key)
        click.echo(f"{name}\t{subject}\t{schema_id}")


def _format_options(pairs: tuple[str, ...]) -> dict[str, object]:
    """NAME=VALUE pairs; a VALUE that parses as JSON (a list, a number, true) is taken as that."""
    import json

    options: dict[str, object] = {}
    for pair in pairs:
        name, equals, text = pair.partition("=")
        if not equals:
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}")
        try:
            options[name] = json.loads(text)
        except ValueError:
            options[name] = text
    return options


@main.command("convert")
@click.option("--from", "--source-format", "source", required=True, metavar="FORMAT", help="Format of the input.")
@click.option("--to", "--target-format", "target", required=True, metavar="FORMAT", help="Format to write.")
@click.argument("input_file", metavar="[IN]", type=click.File("rb"), default="-")
@click.argument("output_file", metavar="[OUT]", type=click.File("wb", atomic=False), default="-")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A format option, given to whichever format declares it (JSON values: key_columns='[\"id\"]').")
@click.option("--strict", is_flag=True, help="Refuse (as an error) every event the target would write only by "
              "dropping something.")
@click.option("--errors", type=click.Choice(["fail", "skip", "dead-letter"]), default="fail", show_default=True,
              help="What a message or event that cannot be converted does: stop with exit code 1, be skipped, or be "
              "written to --dead-letter.")
@click.option("--dead-letter", "dead_letter", type=click.File("w"), default=None,
              help="JSON-lines file for --errors dead-letter: each error with the raw input (base64).")
@click.option("--progress/--no-progress", default=None, help="A progress bar on stderr (default: when stderr is a "
              "terminal).")
def convert_command(source: str, target: str, input_file: Any, output_file: Any, options: tuple[str, ...],
                    strict: bool, errors: str, dead_letter: Any, progress: bool | None) -> None:
    """Convert IN (default stdin) into OUT (default stdout), streaming, in flat memory whatever the size.

    Files are JSON lines for the JSON formats, Avro container files for avro, and length-delimited messages for
    protobuf. A summary of the counts goes to stderr at the end.
    """
    import sys
    import time

    from .convert import ConversionStats, convert_file
    from .errors import CdcFormatsError

    if errors == "dead-letter" and dead_letter is None:
        raise click.UsageError("--errors dead-letter needs --dead-letter FILE")
    stats = ConversionStats()
    handler: Any = errors if errors != "dead-letter" else _dead_letter_writer(dead_letter)
    show_progress = sys.stderr.isatty() if progress is None else progress
    started = time.perf_counter()
    try:
        with _progress(input_file, show_progress) as reader:
            convert_file(reader, output_file, source, target, strict=strict, errors=handler, stats=stats,
                         **_format_options(options))
        output_file.flush()
    except CdcFormatsError as error:
        _summary(source, target, stats, time.perf_counter() - started)
        raise click.ClickException(str(error)) from None
    _summary(source, target, stats, time.perf_counter() - started)


def _dead_letter_writer(stream: Any) -> Any:
    import base64
    import json

    def write(error: Any) -> None:
        raw = error.raw
        record = {"kind": type(error).__name__, "format": error.format, "position": error.position,
                  "field": error.field, "reason": error.reason}
        if isinstance(raw, (bytes, bytearray)):
            record["raw_base64"] = base64.b64encode(raw).decode("ascii")
        else:
            record["raw"] = repr(raw)
        stream.write(json.dumps(record) + "\n")
    return write


def _progress(stream: Any, show: bool) -> Any:
    """``stream``, wrapped in a progress bar on stderr when ``show`` (with a total when it is a regular file)."""
    import contextlib
    import os
    import stat

    if not show:
        return contextlib.nullcontext(stream)
    from rich.progress import Progress

    total = None
    with contextlib.suppress(OSError, ValueError, AttributeError):
        status = os.fstat(stream.fileno())
        total = status.st_size if stat.S_ISREG(status.st_mode) else None

    @contextlib.contextmanager
    def wrapped() -> Any:
        with Progress(console=Console(stderr=True), transient=True) as bar:
            yield bar.wrap_file(stream, total=total, description="converting")
    return wrapped()


def _summary(source: str, target: str, stats: Any, seconds: float) -> None:
    rate = f", {stats.events / seconds:,.0f} events/s" if seconds > 0 and stats.events else ""
    click.echo(f"{source} -> {target}: {stats.events:,} events, {stats.messages_out:,} messages written, "
               f"{stats.failed:,} failed in {seconds:.1f} s{rate}", err=True)


@main.command("bridge")
@click.option("--source-topic", required=True, help="Topic to consume.")
@click.option("--source-format", "--from", "source_format", required=True,
              help="Format of the source topic's values.")
@click.option("--target-topic", required=True, help="Topic to produce to.")
@click.option("--target-format", "--to", "target_format", required=True, help="Format to write.")
@click.option("--bootstrap-servers", required=True, help="Kafka bootstrap servers (host:port,...).")
@click.option("--group-id", default="cdcformats-bridge", show_default=True, help="Consumer group (its offsets are "
              "committed only after the converted messages are acknowledged).")
@click.option("--dead-letter-topic", default=None, help="Where messages that cannot be converted go, with the error "
              "in a header; without it, such a message stops the bridge.")
@click.option("--schema-registry", default=None, help="Registry URL or file for avro/protobuf (default: embedded).")
@click.option("--source-option", multiple=True, metavar="NAME=VALUE", help="A source format option (JSON values).")
@click.option("--target-option", multiple=True, metavar="NAME=VALUE", help="A target format option (JSON values).")
@click.option("--tombstones", is_flag=True, help="Follow each converted delete with a tombstone.")
@click.option("--idle-timeout", type=float, default=None, help="Stop after this many seconds without input.")
@click.option("--progress-interval", type=float, default=1.0, show_default=True,
              help="Seconds between progress lines on stderr.")
def bridge_command(source_topic: str, source_format: str, target_topic: str, target_format: str,
                   bootstrap_servers: str, group_id: str, dead_letter_topic: str | None, schema_registry: str | None,
                   source_option: tuple[str, ...], target_option: tuple[str, ...], tombstones: bool,
                   idle_timeout: float | None, progress_interval: float) -> None:
    """Convert a topic into another format, at least once, until SIGINT/SIGTERM (or --idle-timeout)."""
    import sys

    from .kafka.bridge import Bridge, run_until_signalled

    bridge = Bridge(source_topic, source_format, target_topic, target_format, bootstrap_servers, group_id,
                    dead_letter_topic, schema_registry, _format_options(source_option),
                    _format_options(target_option), tombstones, idle_timeout=idle_timeout, progress=sys.stderr,
                    progress_interval=progress_interval)
    run_until_signalled(bridge)


@main.command("spark-convert")
@click.option("--input", "input_path", required=True, help="File or directory of messages: JSON lines or text (one "
              "message per line), or Parquet with a value column.")
@click.option("--source-format", "--from", "source_format", required=True, help="Format of the input messages.")
@click.option("--output", "output_path", required=True, help="Directory to write (it must not exist yet).")
@click.option("--target-format", "--to", "target_format", required=True, help="Format to write.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL (spark://..., yarn, ...).")
@click.option("--input-kind", type=click.Choice(["auto", "jsonl", "text", "parquet"]), default="auto",
              show_default=True, help="auto: Parquet for a path ending in .parquet, else lines.")
@click.option("--output-kind", type=click.Choice(["parquet", "text"]), default="parquet", show_default=True,
              help="Parquet with a binary value column, or text lines (for the JSON formats).")
@click.option("--errors", type=click.Choice(["fail", "skip", "dead-letter"]), default="dead-letter",
              show_default=True, help="What a message that cannot be converted does.")
@click.option("--dead-letter", "dead_letter", default=None, help="Directory for the dead letters (Parquet: the "
              "error and the raw message); required with --errors dead-letter.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A format option, or strict=true, schema_registry=URL|FILE, framing=none (JSON values).")
def spark_convert_command(input_path: str, source_format: str, output_path: str, target_format: str, master: str,
                          input_kind: str, output_kind: str, errors: str, dead_letter: str | None,
                          options: tuple[str, ...]) -> None:
    """Convert files of change messages with Spark, on this machine (local[*]) or a cluster (--master)."""
    from .errors import ConfigurationError
    from .spark import register, session
    from .spark.job import convert_files

    spark = session(master, "cdcformats spark-convert")
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    try:
        counts = convert_files(spark, input_path, source_format, output_path, target_format, input_kind=input_kind,
                               output_kind=output_kind, errors="null" if errors == "skip" else errors,
                               dead_letter=dead_letter, options=_format_options(options))
    except ConfigurationError as error:
        raise click.UsageError(str(error)) from None
    finally:
        spark.stop()
    click.echo(str(counts), err=True)


@main.command("demo")
@click.option("--size", type=int, default=20_000, show_default=True,
              help="Messages per generated stream (records, for Tablestore).")
@click.option("--master", default="local[2]", show_default=True, help="Spark master for the Spark stage.")
def demo_command(size: int, master: str) -> None:
    """The whole product on one machine: conversions between every format, generated change streams through the
    embedded schema registry and Kafka broker, and Spark SQL over them, with a report of counts, losslessness and
    throughput."""
    from .demo import run

    run(Console(), size=size, master=master)


if __name__ == "__main__":
    main()
