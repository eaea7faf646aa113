"""The format plugin registry: which formats exist and how to get a codec for one.

Built-in formats and third-party ones are found the same way and loaded only when first asked for, so that importing
``cdcformats`` stays cheap. A third-party package declares its formats in the entry-point group
``cdcformats.formats``::

    [project.entry-points."cdcformats.formats"]
    my-format = "my_package.my_module:MyCodec"

or calls ``cdcformats.register("my-format", MyCodec)`` at run time.

(Not to be confused with the *schema* registry in ``cdcformats.schema_registry``, where Avro and Protobuf schemas get
their ids.)
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from .contract import Codec
from .errors import ConfigurationError, did_you_mean, install_hint

ENTRY_POINT_GROUP = "cdcformats.formats"

# name -> "module:attribute", imported on first use.
_BUILTIN: dict[str, str] = {
    "aliyun-json": "cdcformats.codecs.aliyun:AliyunJsonCodec",
    "arcion": "cdcformats.codecs.arcion:ArcionCodec",
    "avro": "cdcformats.envelopes.avro:AvroCodec",
    "canal-json": "cdcformats.codecs.canal:CanalJsonCodec",
    "connect-json": "cdcformats.codecs.connect:ConnectJsonCodec",
    "debezium-avro": "cdcformats.codecs.debezium_avro:DebeziumAvroCodec",
    "debezium-json": "cdcformats.codecs.debezium:DebeziumJsonCodec",
    "lindorm": "cdcformats.codecs.lindorm:LindormCodec",
    "lindorm-subscription": "cdcformats.codecs.lindorm_subscription:LindormSubscriptionCodec",
    "maxwell-json": "cdcformats.codecs.maxwell:MaxwellJsonCodec",
    "ots": "cdcformats.codecs.ots:OtsCodec",
    "ots-json": "cdcformats.codecs.ots:OtsJsonCodec",
    "paimon-log": "cdcformats.codecs.paimon:PaimonLogCodec",
    "protobuf": "cdcformats.envelopes.protobuf:ProtobufCodec",
}

_registered: dict[str, type[Codec] | str] = {}
_loaded: dict[str, type[Codec]] = {}
_entry_points: dict[str, Any] | None = None


def _discovered() -> dict[str, Any]:
    global _entry_points
    if _entry_points is None:
        _entry_points = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return _entry_points


def register(name: str, codec_class: type[Codec] | str, *, replace: bool = False) -> None:
    """Make a format available under ``name``: a ``Codec`` subclass or a ``"module:attribute"`` path to one."""
    if not replace and name in formats():
        raise ConfigurationError(f"format {name!r} is already registered; pass replace=True to replace it")
    _registered[name] = codec_class
    _loaded.pop(name, None)


def formats() -> list[str]:
    """The names of every available format, sorted."""
    return sorted({*_BUILTIN, *_discovered(), *_registered})


def codec_class(name: str) -> type[Codec]:
    """The ``Codec`` subclass registered under ``name``, imported on first use."""
    if name in _loaded:
        return _loaded[name]
    target: Any
    if name in _registered:
        target = _registered[name]
    elif name in _BUILTIN:
        target = _BUILTIN[name]
    elif name in _discovered():
        target = _discovered()[name]
    else:
        raise ConfigurationError(f"unknown format {name!r}{did_you_mean(name, formats())}; available formats: "
                                 f"{', '.join(formats())}")
    try:
        loaded = _load(target)
    except ImportError as error:
        raise ConfigurationError(f"format {name!r} needs another package: {install_hint(error)}") from error
    if not (isinstance(loaded, type) and issubclass(loaded, Codec)):
        raise ConfigurationError(f"format {name!r} resolves to {loaded!r}, which is not a cdcformats Codec subclass")
    _loaded[name] = loaded
    return loaded


def _load(target: Any) -> Any:
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module_name), attribute)
    if hasattr(target, "load") and hasattr(target, "group"):  # an importlib.metadata.EntryPoint
        return target.load()
    return target


def schema_formats() -> list[str]:
    """The formats whose messages a schema registry describes (``Codec.writer_schema``): the canonical envelopes.
    A format that cannot be loaded here (a missing dependency) is left out."""
    described = []
    for name in formats():
        try:
            if codec_class(name).writer_schema() is not None:
                described.append(name)
        except ConfigurationError:
            continue
    return described


def codec(name: str, **options: Any) -> Codec:
    """A codec for format ``name`` configured with ``options``; an unknown name or option is a clear error."""
    return codec_class(name)(**options)
