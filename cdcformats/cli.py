"""The ``cdcformats`` command line.

Every error reaches the user as one line naming what to fix, with exit code 1 (2 for a usage or configuration error,
as click has it); ``cdcformats --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import click
from rich.console import Console

from . import __version__
from .contract import FEATURES
from .errors import CdcFormatsError, ConfigurationError, install_hint
from .options import parse_pairs
from .registry import codec_class, formats

# What a conversion of files or topics does with what it cannot convert (of cdcformats.core.error_modes.ERROR_MODES).
FILE_ERROR_MODES = ("fail", "skip", "dead-letter")


class _ConfigurationProblem(click.ClickException):
    """A bad option value, format or address: one line, and the exit code of a usage error."""

    exit_code = 2


class _CommandLine(click.Group):
    """The top-level group: whatever a command raises is shown as one line, unless ``--debug`` asks for more."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own, shown as click shows them
        except BrokenPipeError:  # the reader went away (| head -1): end quietly, as a command SIGPIPE ends
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that Python's last flush is quiet
            raise click.exceptions.Exit(128 + signal.SIGPIPE) from None
        except KeyboardInterrupt as interrupt:
            signal_number = interrupt.signal_number if isinstance(interrupt, _Signalled) else signal.SIGINT
            click.echo(f"Error: stopped by {signal.Signals(signal_number).name}", err=True)
            raise click.exceptions.Exit(128 + signal_number) from None  # as a shell reports a command a signal ended
        except Exception as error:
            if ctx.params.get("debug"):
                raise
            raise _one_line(error) from None


class _Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, as Python raises SIGINT: so that every file being written is
    cleaned up on the way out as it is for an error."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number


def _raise_signalled(signal_number: int, frame: Any) -> None:
    raise _Signalled(signal_number)


def _signals_recorded() -> list[int]:
    """From now on SIGINT, SIGTERM and SIGHUP are recorded, in the list returned, instead of interrupting: for a
    command that ends its own run when asked."""
    received: list[int] = []

    def record(signal_number: int, frame: Any) -> None:
        received.append(signal_number)

    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signal_number, record)
    return received


def _one_line(error: Exception) -> click.ClickException:
    text = " ".join(str(error).split())
    if isinstance(error, ConfigurationError):
        return _ConfigurationProblem(text)
    if isinstance(error, CdcFormatsError):
        return click.ClickException(text)
    if isinstance(error, ImportError):
        return click.ClickException(install_hint(error))
    if isinstance(error, OSError) and error.filename is not None:
        return click.ClickException(f"{error.filename}: {error.strerror}")
    return click.ClickException(f"{text or type(error).__name__} ({type(error).__name__}; cdcformats --debug shows "
                                "where it came from)")


@click.group(cls=_CommandLine, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cdcformats")
@click.option("--debug", is_flag=True, help="Show the traceback of an error instead of one line.")
def main(debug: bool) -> None:
    """Convert change-data-capture streams between formats through one canonical change event."""
    for signal_number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signal_number, _raise_signalled)


@main.command("formats")
@click.argument("names", metavar="[FORMAT]...", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of text.")
def formats_command(names: tuple[str, ...], as_json: bool) -> None:
    """List the formats, or describe the FORMATs named: options, and which canonical features each carries.

    Example: cdcformats formats lindorm debezium-json
    """
    import shutil
    import textwrap

    for name in names:
        codec_class(name)  # an unknown format: the ConfigurationError that names the known ones
    described = [_described(name) for name in names or formats()]
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    width = max(40, shutil.get_terminal_size().columns)  # COLUMNS, the terminal, or 80 when piped

    def paragraph(label: str, text: str) -> str:
        return textwrap.fill(text, width, initial_indent=f"  {label}", subsequent_indent=" " * (2 + len(label)),
                             break_on_hyphens=False)

    for entry in described:
        click.echo(f"{entry['name']} ({entry['messages']} messages)")
        click.echo(paragraph("", entry["description"]))
        if names:
            for option in entry["options"]:
                required = " (required)" if option["required"] else ""
                click.echo(paragraph(f"{option['name']}{required}: ", option["doc"]))
            click.echo(paragraph("carries: ", ", ".join(entry["carries"]) or "-"))
            click.echo(paragraph("does not carry: ", ", ".join(entry["does_not_carry"]) or "-"))
        else:
            click.echo(paragraph("options: ", ", ".join(option["name"] for option in entry["options"]) or "-"))
        click.echo("")
    if not names:
        click.echo(textwrap.fill("cdcformats formats FORMAT describes a format's options and the canonical features "
                                 "it carries; --json prints everything for scripts.", width))


def _described(name: str) -> dict[str, Any]:
    cls = codec_class(name)
    return {"name": name, "messages": cls.message_type.__name__, "description": cls.description,
            "options": [{"name": option.name, "required": option.required, "doc": " ".join(option.doc.split())}
                        for option in cls.options],
            "carries": [feature for feature in FEATURES if feature in cls.carries],
            "does_not_carry": [feature for feature in FEATURES if feature not in cls.carries]}


@main.group("registry")
def registry_group() -> None:
    """The embedded schema registry."""


@registry_group.command("serve")
@click.option("--registry", "--db", "db_path", type=click.Path(dir_okay=False), default=None,
              help="Registry file (SQLite) to serve; default: the one 'cdcformats registry where' prints.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8081, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port, printed).")
@click.option("--user", default=None, help="Require HTTP basic auth with this user name.")
@click.option("--password", envvar="CDCFORMATS_REGISTRY_PASSWORD", default=None,
              help="Password for --user (better: the environment variable CDCFORMATS_REGISTRY_PASSWORD).")
@click.option("--max-request-bytes", default=4 * 1024 * 1024, show_default=True, type=click.IntRange(1),
              help="Refuse request bodies larger than this.")
def registry_serve_command(db_path: str | None, host: str, port: int, user: str | None, password: str | None,
                           max_request_bytes: int) -> None:
    """Serve a registry file over HTTP with the Confluent Schema Registry REST API, until SIGINT or SIGTERM.

    Example: cdcformats registry serve --registry registry.sqlite --port 8081
    """
    from .schema_registry.client import default_path
    from .schema_registry.server import listen, serve
    from .schema_registry.store import SchemaStore

    if (user is None) != (password is None):
        raise click.UsageError("--user and --password (or CDCFORMATS_REGISTRY_PASSWORD) go together")
    path = db_path or default_path()
    try:
        server_socket = listen(host, port)
    except OSError as error:
        raise click.ClickException(f"cannot listen on {host}:{port}: {os.strerror(error.errno or 0)}") from None
    bound_port = server_socket.getsockname()[1]
    click.echo(f"schema registry {path} on http://{host}:{bound_port}" + (" (basic auth)" if user else ""), err=True)
    # password is not None when user is (checked above); the test says so to mypy
    serve(SchemaStore(path), server_socket, credentials=(user, password) if user and password is not None else None,
          max_request_bytes=max_request_bytes)


@registry_group.command("where")
def registry_where_command() -> None:
    """Print the registry file that commands use when given no --registry, and why that one.

    Example: cdcformats registry where
    """
    from .schema_registry.client import ENVIRONMENT_VARIABLE, default_path

    path = default_path()
    why = f"${ENVIRONMENT_VARIABLE}" if os.environ.get(ENVIRONMENT_VARIABLE) else \
        f"the user's data directory (set ${ENVIRONMENT_VARIABLE} to use another file)"
    click.echo(str(path))
    state = "it exists" if path.exists() else "not created yet: the first schema written creates it"
    click.echo(f"from {why}; {state}", err=True)


@main.group("schemas")
def schemas_group() -> None:
    """The canonical envelope schemas."""


@schemas_group.command("register")
@click.option("--registry", "target", default=None, help="Registry URL (http://, https://) or file (an existing "
              "one, or a path ending in .sqlite or .db); default: the file 'cdcformats registry where' prints.")
@click.option("--format", "-f", "schema_format", multiple=True, metavar="FORMAT",
              help="Which format's schema to register: a canonical envelope, avro or protobuf (default: avro under a "
              "topic subject, which holds one schema; each under --strategy record).")
@click.option("--topic", default=None, help="Topic whose subject to register under (topic strategies).")
@click.option("--strategy", type=click.Choice(["topic", "record", "topic-record"]), default="topic",
              show_default=True, help="Subject name strategy, as Confluent spells them.")
@click.option("--key", "is_key", is_flag=True, help="Register as the key schema (<topic>-key).")
def schemas_register_command(target: str | None, schema_format: tuple[str, ...], topic: str | None, strategy: str,
                             is_key: bool) -> None:
    """Register the canonical Avro and/or Protobuf envelope and print subject and id.

    Example: cdcformats schemas register --registry http://localhost:8081 --topic changes
    """
    from .registry import schema_formats
    from .schema_registry.client import RegistryError, connect
    from .schema_registry.subjects import register_envelope

    described = schema_formats()
    # a topic subject holds one schema: the first envelope's (avro), unless asked for another
    schema_format = schema_format or (tuple(described) if strategy == "record" else tuple(described[:1]))
    unknown = [name for name in schema_format if name not in described]
    if unknown:
        raise click.UsageError(f"--format {unknown[0]}: the formats with a registered schema are "
                               f"{', '.join(described)}")
    if strategy != "record" and topic is None:
        raise click.UsageError(f"--strategy {strategy} needs --topic TOPIC (--strategy record needs none)")
    if strategy == "topic" and len(schema_format) > 1:
        raise click.UsageError(f"one topic subject holds one schema: pick one --format of {', '.join(described)}")
    _reach_registries({"schema_registry": target})
    registry = connect(target)
    for name in schema_format:
        try:
            subject, schema_id = register_envelope(registry, name, topic, strategy, is_key)
        except CdcFormatsError:
            raise
        except Exception as error:  # the client's own errors: unreachable, 401, a conflict
            raise RegistryError(f"schema registry {target or 'file (the default)'}: {' '.join(str(error).split())}"
                                ) from error
        click.echo(f"{name}\t{subject}\t{schema_id}")


def _format_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """NAME=VALUE pairs; a VALUE that parses as JSON (a list, a number, true) is taken as that."""
    try:
        return parse_pairs(pairs)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@main.command("loss")
@click.option("--from", "-f", "--source-format", "source", required=True, metavar="FORMAT",
              help="Format of the input.")
@click.option("--to", "-t", "--target-format", "target", required=True, metavar="FORMAT", help="Format to write.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A format option, as convert takes it: options such as key_columns change what a format carries.")
@click.option("--source-option", "source_options", multiple=True, metavar="NAME=VALUE",
              help="An option of the source format only.")
@click.option("--target-option", "target_options", multiple=True, metavar="NAME=VALUE",
              help="An option of the target format only.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array for scripts instead of a line each.")
def loss_command(source: str, target: str, options: tuple[str, ...], source_options: tuple[str, ...],
                 target_options: tuple[str, ...], as_json: bool) -> None:
    """What converting FORMAT to FORMAT can drop, before any data flows (cdcformats.loss): a line for each canonical
    feature, attribute or kind of change the target cannot carry, and what it requires of an event; nothing when the
    conversion is lossless. convert --strict refuses the events that would lose one.

    Example: cdcformats loss -f arcion -t maxwell-json --option 'key_columns=["r_regionkey"]'
    """
    from .convert import configure, loss

    source_codec, target_codec = configure(source, target, source_options=_format_options(source_options),
                                           target_options=_format_options(target_options),
                                           **_format_options(options))
    lost = loss(source_codec, target_codec)
    if as_json:
        click.echo(json.dumps(lost))
    elif lost:
        click.echo("\n".join(lost))
    else:
        click.echo(f"{source_codec.name} -> {target_codec.name}: nothing is lost", err=True)


@main.command("convert")
@click.option("--from", "-f", "--source-format", "source", required=True, metavar="FORMAT",
              help="Format of the input.")
@click.option("--to", "-t", "--target-format", "target", required=True, metavar="FORMAT", help="Format to write.")
@click.argument("input_path", metavar="[IN]", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
                default="-")
@click.argument("output_path", metavar="[OUT]", type=click.Path(dir_okay=False, allow_dash=True), default=None,
                required=False)
@click.option("--output", "-o", "output_option", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="OUT, as an option; -o - writes a binary format to a terminal too.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A format option, given to whichever format declares it, or to both when both do (JSON values: "
              "key_columns='[\"id\"]').")
@click.option("--source-option", "source_options", multiple=True, metavar="NAME=VALUE",
              help="An option of the source format only.")
@click.option("--target-option", "target_options", multiple=True, metavar="NAME=VALUE",
              help="An option of the target format only.")
@click.option("--strict", is_flag=True, help="Refuse (as an error) every event the target would write only by "
              "dropping something.")
@click.option("--errors", type=click.Choice(FILE_ERROR_MODES), default=None,
              help="What a message or event that cannot be converted does: stop with exit code 1 (the default), be "
              "skipped, or be written to --dead-letter (the default with --dead-letter).")
@click.option("--dead-letter", "dead_letter", type=click.Path(dir_okay=False), default=None,
              help="JSON-lines file for what cannot be converted: each error with the raw source message(s) in "
              "base64. Give it as IN, with the same --from, to convert its messages again.")
@click.option("--registry", default=None, help="Schema registry URL (http://, https://) or file (.sqlite, .db) for "
              "the formats that register schemas (debezium-avro): the option schema_registry of each format that has "
              "it; default: the file 'cdcformats registry where' prints.")
@click.option("--progress/--no-progress", default=None, help="A progress display on stderr (default: when stderr "
              "is a terminal).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display and no summary; errors are still shown.")
@click.option("--summary", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="The summary on stderr as a sentence, or as one JSON object for scripts.")
def convert_command(source: str, target: str, input_path: str, output_path: str | None, output_option: str | None,
                    options: tuple[str, ...], source_options: tuple[str, ...], target_options: tuple[str, ...],
                    strict: bool, errors: str | None, dead_letter: str | None, registry: str | None,
                    progress: bool | None, quiet: bool, summary: str) -> None:
    """Convert IN (default stdin) into OUT (default stdout), streaming, in flat memory whatever the size.

    Files are JSON lines for the JSON formats, Avro container files for avro, and length-delimited messages for
    protobuf. A regular OUT is written beside itself and replaces the old OUT only when the run ends as asked: a
    failed run leaves it untouched; a FIFO, a device or /dev/stdout is written directly. IN may be a dead-letter file
    written by --dead-letter: its messages are converted again. A summary of the counts goes to stderr at the end;
    positions in errors are lines (records, for avro and protobuf files) of IN.

    Example: cdcformats convert -f lindorm -t debezium-json changes.jsonl out.jsonl --option 'key_columns=["id"]'
    """
    import time

    from .convert import configure, convert_file, dead_letter_writer, output, replaces, same_file
    from .pipeline import ConversionStats

    asked_for_output = _given_once("OUT", output_path, "--output", output_option)
    output_path = asked_for_output or "-"
    errors = _errors_mode(errors, dead_letter)
    files = {"IN": input_path, "OUT": output_path, "--dead-letter": dead_letter}
    named = [(name, path) for name, path in files.items() if path is not None and path != "-"]
    for index, (name, path) in enumerate(named):
        for other_name, other_path in named[index + 1:]:
            if same_file(path, other_path):
                raise click.UsageError(f"{other_name} {other_path} is {name}: give another file")
    if input_path == "-" and sys.stdin.isatty():
        raise click.UsageError("no IN given and stdin is a terminal: give IN, or pipe the input in")
    given = _format_options(options)
    if registry is not None:
        given.setdefault("schema_registry", registry)
    source_codec, target_codec = configure(source, target, source_options=_format_options(source_options),
                                           target_options=_format_options(target_options), **given)
    _reach_registries(source_codec.config, target_codec.config)
    if asked_for_output is None and target_codec.file_unit != "line" and sys.stdout.isatty():
        raise click.UsageError(f"{target_codec.name} files are binary and stdout is a terminal: give OUT, redirect "
                               "stdout, or write to the terminal all the same with -o -")
    stats = ConversionStats()
    show_progress = not quiet and (sys.stderr.isatty() if progress is None else progress)
    # What a run that stops before its end leaves: nothing, where OUT is replaced only by a whole new file.
    written_stays = output_path == "-" or not replaces(output_path)
    started = time.perf_counter()
    try:
        with contextlib.ExitStack() as files_open:
            input_stream = sys.stdin.buffer if input_path == "-" else files_open.enter_context(open(input_path, "rb"))
            handler: Any = errors
            if errors == "dead-letter":
                assert dead_letter is not None  # _errors_mode: --errors dead-letter comes with --dead-letter FILE
                letters = files_open.enter_context(io.TextIOWrapper(files_open.enter_context(output(dead_letter)),
                                                                    encoding="utf-8"))
                handler = dead_letter_writer(letters, source_codec.name)
            reader = files_open.enter_context(_progress(input_stream, show_progress, stats))
            convert_file(reader, sys.stdout.buffer if output_path == "-" else output_path, source_codec,
                         target_codec, strict=strict, errors=handler, stats=stats)
            sys.stdout.flush()
    except BaseException:
        # the counts up to a bad message, once the progress display is gone; a run that could not start has none
        if stats.messages_read and not quiet:
            _summary(source_codec.name, target_codec.name, stats, time.perf_counter() - started, summary,
                     stopped=True, left_as_it_was=None if written_stays else output_path)
        raise
    if not quiet:
        _summary(source_codec.name, target_codec.name, stats, time.perf_counter() - started, summary)


def _reach_registries(*configurations: dict[str, Any]) -> None:
    """Ask each schema registry URL given to a format once, before any input is read, so that one that is down or
    refuses is said at once and not after the input was read."""
    from .schema_registry.client import reach

    for configuration in configurations:
        reach(configuration.get("schema_registry"))


def _errors_mode(errors: str | None, dead_letter: str | None) -> str:
    """--dead-letter implies --errors dead-letter; each of them needs the other."""
    if dead_letter is None:
        if errors == "dead-letter":
            raise click.UsageError("--errors dead-letter needs --dead-letter FILE")
        return errors or "fail"
    if errors not in (None, "dead-letter"):
        raise click.UsageError(f"--dead-letter goes with --errors dead-letter, not --errors {errors}")
    return "dead-letter"


@contextlib.contextmanager
def _progress(stream: BinaryIO, show: bool, stats: Any) -> Iterator[BinaryIO]:
    """``stream``, counted into a progress display on stderr when ``show``: a bar with a total when the input is a
    regular file, else (a pipe) the bytes and events so far."""
    import stat

    from .convert import RelayedReader

    if not show:
        yield stream
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TransferSpeedColumn,
    )

    total = None
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        status = os.fstat(stream.fileno())
        total = status.st_size if stat.S_ISREG(status.st_mode) else None
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("converting", total=total)

        def advance(size: int) -> None:
            bar.update(task, advance=size, description=f"{stats.events:,} events")
        yield io.BufferedReader(RelayedReader(stream, counted=advance))


def _summary(source: str, target: str, stats: Any, seconds: float, form: str, stopped: bool = False,
             left_as_it_was: str | None = None) -> None:
    """The counts of a run on stderr, as text or as one JSON object. ``left_as_it_was`` is the OUT of a run that
    stopped before its end and so was not written at all: its messages are said to be converted, never written."""
    if form == "json":
        counts = {name: getattr(stats, name) for name in (
            "messages_read", "messages_decoded", "messages_failed", "messages_skipped", "events", "events_written",
            "events_refused", "messages_written")}
        if left_as_it_was is not None:
            counts["messages_written"] = 0
        click.echo(json.dumps({"source": source, "target": target, "stopped": stopped, **counts,
                               "left_as_it_was": left_as_it_was, "seconds": round(seconds, 3)}), err=True)
        return
    rate = f", {stats.events / seconds:,.0f} events/s" if seconds > 0 and stats.events else ""
    messages_written = _counted(stats.messages_written, "message")
    converted, written = ("written", f"{messages_written} written in {seconds:.1f} s{rate}") \
        if left_as_it_was is None else ("converted", f"stopped before the end: nothing written, {left_as_it_was} is "
                                                     f"as it was ({seconds:.1f} s{rate})")
    click.echo(f"{source} -> {target}: {_counted(stats.messages_read, 'message')} read ({stats.messages_decoded:,} "
               f"decoded, {stats.messages_failed:,} failed, {stats.messages_skipped:,} skipped), "
               f"{_counted(stats.events, 'event')} "
               f"({stats.events_written:,} {converted}, {stats.events_refused:,} refused), {written}", err=True)


def _counted(number: int, noun: str) -> str:
    """``number`` of ``noun``, as a sentence says it: 1 message, 2 messages."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


@main.command("bridge")
@click.option("--source-topic", required=True, help="Topic to consume.")
@click.option("--from", "-f", "--source-format", "source_format", required=True, metavar="FORMAT",
              help="Format of the source topic's values.")
@click.option("--target-topic", required=True, help="Topic to produce to.")
@click.option("--to", "-t", "--target-format", "target_format", required=True, metavar="FORMAT",
              help="Format to write.")
@click.option("--bootstrap-server", "-b", "--bootstrap-servers", "bootstrap_servers", required=True,
              metavar="HOST:PORT[,...]", help="Kafka bootstrap servers, as the Kafka tools and kcat take them.")
@click.option("--group-id", default="cdcformats-bridge", show_default=True, help="Consumer group (its offsets are "
              "committed only after the converted messages are acknowledged).")
@click.option("--dead-letter-topic", default=None, help="Where messages that cannot be converted go, with the error "
              "in a header (--errors dead-letter, implied); without it, such a message stops the bridge.")
@click.option("--registry", "--schema-registry", "schema_registry", default=None, help="Schema registry URL "
              "(http://, https://) or file (an existing one, or a path ending in .sqlite or .db) for avro, protobuf "
              "and debezium-avro; default: the file 'cdcformats registry where' prints.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A format option, given to whichever format declares it, or to both when both do (JSON values).")
@click.option("--source-option", multiple=True, metavar="NAME=VALUE", help="A source format option (JSON values).")
@click.option("--target-option", multiple=True, metavar="NAME=VALUE", help="A target format option (JSON values).")
@click.option("--tombstones", is_flag=True, help="Follow each converted delete with a tombstone.")
@click.option("--strict", is_flag=True, help="Refuse (as an error) every event the target would write only by "
              "dropping something.")
@click.option("--errors", type=click.Choice(FILE_ERROR_MODES), default=None,
              help="What a message or event that cannot be converted does: stop the bridge (the default), be left "
              "out and counted (skip), or go to the dead-letter topic (dead-letter, the default with "
              "--dead-letter-topic).")
@click.option("--exactly-once", is_flag=True, help="Commit each batch's converted messages, dead letters and "
              "consumed offsets in one Kafka transaction: read_committed consumers see every source message's results "
              "once, however often the bridge is killed and restarted.")
@click.option("--transactional-id", default=None, help="The transactional id of --exactly-once's producer (default: "
              "GROUP_ID/SOURCE_TOPIC); a bridge started with the same one takes over and fences this one.")
@click.option("--idle-timeout", type=float, default=None, help="Stop after this many seconds without input.")
@click.option("--progress-interval", type=float, default=1.0, show_default=True,
              help="Seconds between progress lines on stderr.")
def bridge_command(source_topic: str, source_format: str, target_topic: str, target_format: str,
                   bootstrap_servers: str, group_id: str, dead_letter_topic: str | None, schema_registry: str | None,
                   options: tuple[str, ...], source_option: tuple[str, ...], target_option: tuple[str, ...],
                   tombstones: bool, strict: bool, errors: str | None, exactly_once: bool,
                   transactional_id: str | None, idle_timeout: float | None,
                   progress_interval: float) -> None:
    """Convert a topic into another format, at least once (or exactly once, --exactly-once), until SIGINT/SIGTERM
    (or --idle-timeout).

    Example: cdcformats bridge -b localhost:9092 --source-topic orders -f canal-json --target-topic orders.dbz
    -t debezium-json
    """
    from .convert import options_of_each
    from .kafka.bridge import Bridge, run_until_signalled

    source_options, target_options = options_of_each(source_format, target_format, _format_options(options),
                                                     _format_options(source_option), _format_options(target_option))
    _reach_registries({"schema_registry": schema_registry}, source_options, target_options)
    bridge = Bridge(source_topic, source_format, target_topic, target_format, bootstrap_servers, group_id,
                    dead_letter_topic, schema_registry, source_options, target_options, tombstones,
                    idle_timeout=idle_timeout, progress=sys.stderr, progress_interval=progress_interval, strict=strict,
                    errors=errors, exactly_once=exactly_once, transactional_id=transactional_id)
    run_until_signalled(bridge)


@main.command("broker")
@click.option("--port", default=9092, show_default=True, type=click.IntRange(0, 65535),
              help="Port for clients, on 127.0.0.1 (0: any free one, printed).")
@click.option("--controller-port", default=0, type=click.IntRange(0, 65535),
              help="Port of the KRaft controller, on 127.0.0.1 (default: any free one).")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Keep the broker's topics (and its log) in this directory, to be found again by the next start "
              "with it; default: a temporary directory, removed at stop.")
@click.option("--heap", default=None, metavar="SIZE", help="The Java heap's ceiling, as -Xmx takes it (default: "
              "256m).")
@click.option("--fetch-only", is_flag=True, help="Fetch the broker's jars with Maven (once) and print where they are; "
              "start nothing (make kafka).")
def broker_command(port: int, controller_port: int, directory: str | None, heap: str | None,
                   fetch_only: bool) -> None:
    """Run a single-node Apache Kafka broker on this machine until Ctrl-C or SIGTERM, and print its bootstrap
    address. Its jars are fetched with Maven on first use; it needs Java 17.

    Example: cdcformats broker --port 9092, then cdcformats bridge -b 127.0.0.1:9092 ...
    """
    import time

    from .kafka import broker as local

    if fetch_only:
        click.echo(str(local.fetch_jars()))
        return
    if port and port == controller_port:
        raise click.UsageError(f"--port and --controller-port are both {port}: give two ports")
    started = local.start_broker(directory, port=port, controller_port=controller_port,
                                 heap=heap or local.DEFAULT_HEAP)
    # From here a signal is the way to stop a broker, not an interruption: it ends the run as a success.
    stopping = _signals_recorded()
    try:
        # Two short lines rather than one long one, which a narrow terminal breaks in the middle of the path.
        click.echo(f"Apache Kafka {local.KAFKA_VERSION} broker at {started.bootstrap_servers}, started in "
                   f"{started.started_seconds:.1f} s; Ctrl-C stops it.", err=True)
        kept = f"topics kept in {started.directory}" if directory else "topics removed at stop"
        click.echo(f"{kept}; log: {started.log_path}", err=True)
        click.echo(started.bootstrap_servers)
        while not stopping and started.running():
            time.sleep(0.2)
    finally:
        code = started.stop(keep_directory=not stopping)  # stopped by itself: keep the log that says why
    if not stopping:
        raise local.BrokerError(f"the Kafka broker stopped by itself (exit code {code}): "
                                f"{started.why_it_stopped()} (its log: {started.log_path})")
    click.echo(f"broker stopped ({signal.Signals(stopping[0]).name})", err=True)


@main.command("spark-convert")
@click.argument("input_argument", metavar="[IN]", required=False)
@click.argument("output_argument", metavar="[OUT]", required=False)
@click.option("--input", "-i", "input_option", default=None, metavar="PATH",
              help="IN, as an option: a file or directory of messages: JSON lines or text (one message per line), or "
              "Parquet with a value column (and a key column, for the formats of Kafka records).")
@click.option("--from", "-f", "--source-format", "source_format", required=True, metavar="FORMAT",
              help="Format of the input messages.")
@click.option("--output", "-o", "output_option", default=None, metavar="DIRECTORY",
              help="OUT, as an option: the directory to write (it must not exist yet).")
@click.option("--to", "-t", "--target-format", "target_format", required=True, metavar="FORMAT",
              help="Format to write.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL (spark://..., yarn, ...).")
@click.option("--input-kind", type=click.Choice(["auto", "jsonl", "text", "parquet"]), default="auto",
              show_default=True, help="auto: Parquet for a path ending in .parquet, else lines.")
@click.option("--output-kind", type=click.Choice(["parquet", "text"]), default="parquet", show_default=True,
              help="Parquet with a binary value column, one message a row as on Kafka (and key, for the formats of "
              "Kafka records; avro and protobuf bodies Confluent-framed unless --option framing=none), or text lines "
              "(for the JSON formats).")
@click.option("--errors", type=click.Choice(FILE_ERROR_MODES), default="dead-letter",
              show_default=True, help="What a message that cannot be converted does.")
@click.option("--dead-letter", "dead_letter", default=None, metavar="DIRECTORY",
              help="Directory for the dead letters (Parquet: the error and the raw message); required with --errors "
              "dead-letter.")
@click.option("--registry", default=None, help="Schema registry URL (http://, https://) or file (.sqlite, .db) for "
              "avro, protobuf and debezium-avro (the option schema_registry); default: the file 'cdcformats registry "
              "where' prints.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A format option, or strict=true, schema_registry=URL|FILE, framing=none (JSON values).")
def spark_convert_command(input_argument: str | None, output_argument: str | None, input_option: str | None,
                          source_format: str, output_option: str | None, target_format: str, master: str,
                          input_kind: str, output_kind: str, errors: str, dead_letter: str | None,
                          registry: str | None, options: tuple[str, ...]) -> None:
    """Convert files of change messages IN into the directory OUT with Spark, on this machine (local[*]) or a
    cluster (--master).

    Example: cdcformats spark-convert -f lindorm -t debezium-json changes.jsonl out/ --errors skip
    """
    input_path = _required_once("IN", input_argument, "--input", input_option)
    output_path = _required_once("OUT", output_argument, "--output", output_option)
    if errors == "dead-letter" and dead_letter is None:  # before Spark starts, which takes seconds
        raise click.UsageError("--errors dead-letter (the default) needs --dead-letter DIRECTORY; or give --errors "
                               "skip or --errors fail")
    from .spark import session
    from .spark.job import convert_files, summary

    given = _format_options(options)
    if registry is not None:
        given.setdefault("schema_registry", registry)
    _reach_registries(given)
    spark = session(master, "cdcformats spark-convert")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        counts = convert_files(spark, input_path, source_format, output_path, target_format, input_kind=input_kind,
                               output_kind=output_kind, errors=errors, dead_letter=dead_letter, options=given)
    finally:
        spark.stop()
    click.echo(summary(counts), err=True)


@main.command("stream")
@click.option("--from", "-f", "--source-format", "source_format", required=True, metavar="FORMAT",
              help="Format of the topic's messages.")
@click.option("--bootstrap-server", "-b", "--bootstrap-servers", "bootstrap_servers", required=True,
              metavar="HOST:PORT[,...]", help="Kafka bootstrap servers, as the Kafka tools and kcat take them.")
@click.option("--topic", required=True, help="Topic to read.")
@click.option("--table", required=True, metavar="PATH",
              help="Directory of the Delta table to apply the changes to (the first batch creates it).")
@click.option("--checkpoint", required=True, metavar="PATH",
              help="The query's checkpoint directory: a restart with the same one goes on where it stopped.")
@click.option("--source-table", default=None, metavar="NAME",
              help="Whose changes apply (name, schema.name or catalog.schema.name), where the topic holds several "
              "tables'; default: the table of the first micro-batch's changes.")
@click.option("--key", "key_columns", multiple=True, metavar="COLUMN",
              help="A key column (repeat for a compound key); default: the key the changes carry.")
@click.option("--schema", "schema_json", default=None, metavar="JSON",
              help="The table's columns and types, as a JSON object ('{\"id\": \"string\", \"amount\": "
              "\"decimal(10,2)\"}'); default: each micro-batch's, derived from its changes.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE", help="A format option (JSON values).")
@click.option("--errors", type=click.Choice(FILE_ERROR_MODES), default=None,
              help="What a record that cannot be read does: stop the query before anything of its batch is written "
              "(fail, the default), be left out and counted (skip), or go to the dead-letter table (dead-letter, "
              "the default with --dead-letters).")
@click.option("--dead-letters", default=None, metavar="PATH",
              help="Directory of a Delta table for the records that cannot be read, with their error.")
@click.option("--starting-offsets", default="earliest", show_default=True,
              help="Where a new query starts: earliest, latest, or Spark's JSON of offsets per partition.")
@click.option("--max-records-per-batch", type=click.IntRange(1), default=None,
              help="At most this many records a micro-batch (Spark's maxOffsetsPerTrigger).")
@click.option("--available-now", is_flag=True,
              help="Apply what the topic holds now, then stop (else run until SIGINT/SIGTERM).")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL (spark://..., yarn, ...).")
def stream_command(source_format: str, bootstrap_servers: str, topic: str, table: str, checkpoint: str,
                   source_table: str | None, key_columns: tuple[str, ...], schema_json: str | None,
                   options: tuple[str, ...], errors: str | None, dead_letters: str | None, starting_offsets: str,
                   max_records_per_batch: int | None, available_now: bool, master: str) -> None:
    """Apply a topic of changes to a Delta table with Spark Structured Streaming, each change once, even across
    crashes and restarts; a line of counts per micro-batch on stderr.

    Example: cdcformats stream -f lindorm -b localhost:9092 --topic orders --table data/orders --checkpoint
    data/orders.checkpoint --option key_columns='["id"]' --dead-letters data/orders.dead-letters
    """
    if errors == "dead-letter" and dead_letters is None:  # before Spark starts, which takes seconds
        raise click.UsageError("--errors dead-letter needs --dead-letters PATH")
    codec_class(source_format)  # an unknown format fails here, naming the known ones
    schema = _schema_option(schema_json)
    for option, path in (("--table", table), ("--checkpoint", checkpoint), ("--dead-letters", dead_letters)):
        if path is not None and os.path.exists(path) and not os.path.isdir(path):
            raise click.BadParameter(f"{path} is not a directory (a Delta table and a checkpoint are directories)",
                                     param_hint=option)
    from pyspark.errors import StreamingQueryException

    from .spark.connectors import streaming_session
    from .spark.streaming import StreamError, query_failure, quiet_query_failures, reach_brokers, stream_to_table

    reach_brokers(bootstrap_servers)  # before Spark starts, which takes seconds
    spark = streaming_session(master, "cdcformats stream")
    spark.sparkContext.setLogLevel("ERROR")
    quiet_query_failures(spark)
    try:
        stream = stream_to_table(
            spark, source_format, bootstrap_servers=bootstrap_servers, topic=topic, table=os.path.abspath(table),
            checkpoint=checkpoint, source_table=source_table, key_columns=list(key_columns) or None, schema=schema,
            options=_format_options(options), dead_letters=dead_letters and os.path.abspath(dead_letters),
            errors=errors, starting_offsets=starting_offsets, max_records_per_batch=max_records_per_batch,
            available_now=available_now, progress=lambda counts: click.echo(counts.line(), err=True))
        # A signal is the way to end a query that runs until stopped: it stops the query once the batch in flight is
        # applied, rather than interrupting Py4J's call into the JVM, which leaves Spark unreachable.
        stopping = _signals_recorded()
        try:
            while not stopping and not stream.query.awaitTermination(1):
                pass
        except StreamingQueryException as error:
            raise StreamError(query_failure(error)) from None
        finally:
            stream.stop()
        totals = stream.totals()
        stopped = f"stopped by {signal.Signals(stopping[0]).name}: " if stopping else ""
        click.echo(f"{stopped}applied {_counted(totals.changes, 'change')} to {_counted(totals.rows, 'row')} in "
                   f"{len(stream.batches):,} micro-batch{'' if len(stream.batches) == 1 else 'es'}; "
                   f"{totals.dead_lettered:,} dead-lettered, {totals.other_tables:,} of other tables, "
                   f"{totals.empty:,} empty", err=True)
    finally:
        spark.stop()


def _schema_option(text: str | None) -> dict[str, Any] | None:
    """``--schema``: a JSON object of column names and type names, each type checked as ``ColumnType`` reads it."""
    if text is None:
        return None
    from .tables import ColumnType

    try:
        schema = json.loads(text)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}", param_hint="--schema") from None
    if not isinstance(schema, dict) or not all(isinstance(value, str) for value in schema.values()):
        raise click.BadParameter("give a JSON object of column names and type names", param_hint="--schema")
    for name, type_name in schema.items():
        try:
            ColumnType.parse(type_name)
        except ValueError as error:
            raise click.BadParameter(f"column {name}: {error}", param_hint="--schema") from None
    return schema


def _given_once(name: str, argument: str | None, option_name: str, option: str | None) -> str | None:
    """A path given as an argument or as an option, not both; None when neither is given."""
    if argument is not None and option is not None:
        raise click.UsageError(f"{name} given twice, as {argument} and as {option_name} {option}: give one")
    return argument if argument is not None else option


def _required_once(name: str, argument: str | None, option_name: str, option: str | None) -> str:
    given = _given_once(name, argument, option_name, option)
    if given is None:
        raise click.UsageError(f"give {name} (or {option_name})")
    return given


@main.command("demo")
@click.option("--size", type=int, default=20_000, show_default=True,
              help="Messages per generated stream (records, for Tablestore).")
@click.option("--master", default="local[2]", show_default=True, help="Spark master for the Spark stage.")
def demo_command(size: int, master: str) -> None:
    """The whole product on one machine: conversions between every format, generated change streams through the
    embedded schema registry and Kafka broker, and Spark SQL over them, with a report of counts, losslessness and
    throughput.

    Example: cdcformats demo --size 5000
    """
    from .demo import run

    run(Console(), size=size, master=master)


if __name__ == "__main__":
    main()
