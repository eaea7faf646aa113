"""Every format configuration the property tests run: the codec as users configure it, native messages of the format,
their normal form (written from the format's docs, independently of the codec), how two lists of messages compare,
and the garbage its decoder must survive."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hypothesis import strategies as st

import cdcformats as cf
from cdcformats.codecs.ots import SINGLE_VERSION

from . import native, native_aliyun, native_canal, native_connect, native_lindorm_subscription, native_maxwell


@dataclass(frozen=True)
class Configuration:
    format: str
    options: dict[str, Any]
    messages: st.SearchStrategy[list[Any]]
    normal_form: Callable[[list[Any]], list[Any]]
    garbage: st.SearchStrategy[list[Any]]
    same: Callable[[list[Any], list[Any]], bool] = field(default=operator.eq)

    def codec(self) -> cf.Codec:
        return cf.codec(self.format, **self.options)


def _as_json_equal(left: list[Any], right: list[Any]) -> bool:
    return native_connect.as_json(left) == native_connect.as_json(right)


def _described(name: str, options: dict[str, Any]) -> Configuration:
    """A configuration whose native messages are described in ``native`` by its name."""
    return Configuration(name.split("+")[0], options, native.messages_for(name), partial(native.normal_form, name),
                         native.garbage_for(name), partial(native.same, name))


def _connect(name: str, options: dict[str, Any]) -> Configuration:
    schemas = options.get("schemas", True)
    if name.startswith("debezium-json"):
        messages, normal_form = (native_connect.messages_for("debezium-json+schemas"),
                                 partial(native_connect.normal_form_for, "debezium-json+schemas"))
    else:
        messages = native_connect.messages_for("connect-json" if schemas else "connect-json+schemaless")
        normal_form = partial(native_connect.normal_form, schemas=schemas,
                              value_schema_name=options.get("value_schema_name"),
                              key_schema_name=options.get("key_schema_name"),
                              key_columns=tuple(options.get("key_columns", ())))
    return Configuration(name.split("+")[0], options, messages, normal_form, native_connect.garbage_for(name),
                         _as_json_equal)


# The source formats, in the configurations users run: with and without key options.
SOURCES = {name: _described(name, options) for name, options in {
    "lindorm": dict(),
    "lindorm+keys": dict(key_columns=["id", "name"]),
    "arcion": dict(),
    "arcion+keys": dict(key_columns={"region": ["id"]}, table="tpch.region"),
    "debezium-json": dict(),
    "debezium-json+keys": dict(key_columns=["id", "name"]),
    "debezium-json+skip_control": dict(skip_control=True),
    "ots": dict(primary_key=["pk1", "pk2"]),
    "ots-json": dict(primary_key=["id"]),
    "ots+single": dict(primary_key=["id"], mode=SINGLE_VERSION, columns=["id", "name", "col_a", "x"]),
}.items()}

# The formats that carry converted events on to other systems.
INTEROP = {
    **{name: _described(name, options) for name, options in {
        "paimon-log": dict(),
        "paimon-log+upsert": dict(changelog_mode="upsert"),
    }.items()},
    **{name: _connect(name, options) for name, options in {
        "connect-json": dict(),
        "connect-json+names": dict(value_schema_name="shop.items.Value", key_schema_name="shop.items.Key"),
        "connect-json+keys": dict(key_columns=["id", "name"]),
        "connect-json+schemaless": dict(schemas=False),
        "debezium-json+schemas+keys": dict(schemas=True, key_columns=["id", "name"]),
    }.items()},
    "canal-json": Configuration("canal-json", {}, native_canal.messages, native_canal.normal_form,
                                native_canal.garbage),
    "canal-json+skip_ddl+init": Configuration(
        "canal-json", dict(skip_ddl=True, read_type="INIT"), native_canal.messages_with_ddl,
        partial(native_canal.normal_form, read_type="INIT"), native_canal.garbage),
    **{name: Configuration("maxwell-json", {"key_columns": list(key_columns)} if key_columns else {},
                           native_maxwell.messages_for(key_columns),
                           partial(native_maxwell.normal_form, key_columns=key_columns), native_maxwell.garbage,
                           native_maxwell.same)
       for name, key_columns in (("maxwell-json", ()), ("maxwell-json+keys", ("id",)))},
    "maxwell-json+skip_ddl": Configuration("maxwell-json", dict(skip_ddl=True), native_maxwell.messages_with_control,
                                           native_maxwell.normal_form, native_maxwell.garbage, native_maxwell.same),
    **{name: Configuration("aliyun-json", dict(split_updates=split), native_aliyun.messages,
                           partial(native_aliyun.normal_form, split_updates=split), native_aliyun.garbage,
                           _as_json_equal)
       for name, split in (("aliyun-json", False), ("aliyun-json+split", True))},
    "aliyun-json+skip_ddl": Configuration("aliyun-json", dict(skip_ddl=True), native_aliyun.messages_with_heartbeats,
                                          native_aliyun.normal_form, native_aliyun.garbage, _as_json_equal),
    **{name: Configuration("lindorm-subscription", options, native_lindorm_subscription.messages,
                           partial(native_lindorm_subscription.normal_form, schemas=options.get("schemas", True)),
                           native_lindorm_subscription.garbage, native_lindorm_subscription.same)
       for name, options in (("lindorm-subscription", dict()),
                             ("lindorm-subscription+keys", dict(key_columns=["id", "name"])),
                             ("lindorm-subscription+bare+keys", dict(schemas=False, key_columns=["id"])))},
}

CONFIGURATIONS = {**SOURCES, **INTEROP}
