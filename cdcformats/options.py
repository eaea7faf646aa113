"""Options as users give them, decided once for every adapter: which format an option goes to, what a textual value
means.

``convert()``, the command line, the Kafka bridge and the Spark functions all take options for two formats at once
(``key_columns=["id"]``), as text where the place they come from has only text (``--option NAME=VALUE``, a Spark
``map``). Each rule is here once, so that they cannot drift apart. (What a bad message or event does, the ``errors``
mode, is ``cdcformats.core.error_modes``.)
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from .contract import Codec
from .errors import ConfigurationError, did_you_mean


def option_value(text: Any) -> Any:
    """An option given as text: JSON where it parses as JSON (``["id"]``, ``true``, ``1048576``), else the text."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_pairs(pairs: Iterable[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs, each value read by ``option_value``; a pair without ``=`` is a ``ValueError``."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, equals, text = pair.partition("=")
        if not equals:
            raise ValueError(f"expected NAME=VALUE, got {pair!r}")
        options[name] = option_value(text)
    return options


def routed(options: dict[str, Any], codecs: Sequence[type[Codec]], *, checked: Collection[str] | None = None,
           own: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """``options`` shared out among ``codecs``: each goes to every codec that declares it (to both when both do).

    An option that no codec declares is an error naming what each one knows, ``own`` options of the caller (the
    Spark functions' ``errors``, ...) included; only the names in ``checked`` are checked, where given, so that
    defaults meant for other formats pass."""
    declared = [{option.name for option in codec.options} for codec in codecs]
    candidates = set(options) if checked is None else set(options) & set(checked)
    unknown = sorted(name for name in candidates if not any(name in names for names in declared))
    if unknown:
        holders = [f"{codec.name} ({', '.join(sorted(names)) or 'no options'})"
                   for codec, names in zip(codecs, declared)]
        if own:
            holders.append(f"the call ({', '.join(sorted(own))})")
        known = f"known to neither {' nor '.join(holders)}" if len(holders) > 1 else f"unknown to {holders[0]}"
        suggestion = did_you_mean(unknown[0], sorted({name for names in declared for name in names}))
        raise ConfigurationError(f"option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}{suggestion} {known}")
    return [{name: value for name, value in options.items() if name in names} for names in declared]
