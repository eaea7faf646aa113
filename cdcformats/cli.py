"""The ``cdcformats`` command line."""

from __future__ import annotations

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


@main.command("demo")
def demo_command() -> None:
    """Convert the bundled example streams between every pair of formats and report what survived."""
    from .demo import run

    run(Console())


if __name__ == "__main__":
    main()
