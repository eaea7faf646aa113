"""Spark SQL functions and DataFrame helpers for change events, vectorized with Arrow.

    from cdcformats.spark import register, session
    spark = session()                      # local[*] by default; session("spark://host:7077") for a cluster
    register(spark)
    spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM raw")

SQL functions (``options`` is an optional ``map(...)`` of strings; see ``OPTIONS``):

* ``cdc_decode(format, value[, options])`` -> the canonical event, of type ``EVENT_TYPE`` (``EVENT_DDL``);
* ``cdc_encode(format, event[, options])`` -> binary;
* ``cdc_convert(value, source_format, target_format[, options])`` -> binary;
* ``cdc_encode_or_error`` / ``cdc_convert_or_error``: the same, as ``struct<value binary, error ...>``, so that a row
  that cannot be written is kept with its error instead of becoming null;
* ``cdc_event_id(event)`` -> the event's deterministic id (``ChangeEvent.event_id``), the same as in Python and Kafka.

Bad input never kills a job unless asked: ``errors`` is ``dead-letter`` for ``cdc_decode`` by default (the row's
``error`` field holds the format, reason, field and the raw message, as ``from_json`` keeps a corrupt record), and
``null`` for ``cdc_encode`` / ``cdc_convert``; ``fail`` raises. Rows in = events + rows with an error (+ null input).

All functions run as ``arrow_udf``: whole Arrow batches, never row-at-a-time pickling. A format that can decode a
batch at once (``Codec.decode_arrow``, Lindorm) does so with Arrow's JSON reader and compute kernels.

``avro`` and ``protobuf`` read and write Confluent's wire format against a schema registry (option
``schema_registry``: a URL, or a file for the embedded registry; default: the embedded one), exactly as
``cdcformats.kafka`` does; the option ``framing`` = ``none`` reads and writes the bare envelope instead.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import BinaryType, StringType, StructType

from .. import arrow
from ..convert import _split_options
from ..errors import ConfigurationError, LossyConversionError
from ..model import ChangeEvent
from ..plugins import codec, codec_class

EVENT_TYPE: StructType = from_arrow_type(arrow.EVENT)
EVENT_DDL: str = EVENT_TYPE.simpleString()
EVENT_FIELDS = [field.name for field in arrow.EVENT]
WRITE_RESULT = pa.struct([("value", pa.binary()), ("error", arrow.ERROR)])
WRITE_RESULT_TYPE: StructType = from_arrow_type(WRITE_RESULT)

# Options of the functions themselves; every other option goes to the codec(s) that declare it.
OPTIONS = {
    "errors": "fail, null or dead-letter: what a bad row becomes",
    "strict": "true: refuse (as a bad row) an event the target would write only by dropping something",
    "schema_registry": "avro/protobuf: the registry URL, or the file of an embedded registry",
    "framing": "avro/protobuf: confluent (default) or none (the bare envelope)",
    "topic": "avro/protobuf: the topic, for the topic and topic-record subject name strategies",
    "subject_name_strategy": "avro/protobuf: topic, record or topic-record (default: topic with a topic, else record)",
}
_ENVELOPES = ("avro", "protobuf")


def session(master: str | None = None, app_name: str = "cdcformats", **config: str) -> SparkSession:
    """A Spark session for these functions: ``local[*]`` unless ``master`` says otherwise, its Python workers on this
    interpreter (so they see the same installed packages), and the Arrow settings the functions rely on."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master or "local[*]").appName(app_name)
    for key, value in {"spark.ui.showConsoleProgress": "false", **config}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


# -- options ----------------------------------------------------------------------------------------------------------

def _option_value(text: Any) -> Any:
    """A map value is text: JSON where it parses as JSON (``["id"]``, ``true``, ``1048576``), else the text."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


Options = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class _Context:
    """The part of confluent-kafka's SerializationContext that subject names need."""

    topic: str | None
    field: str = "value"


@dataclass(frozen=True)
class _Call:
    """What one call needs, built once per worker process for each distinct (formats, options)."""

    errors: str
    read: Callable[[Any], ChangeEvent] | None = None
    read_batch: arrow.BatchDecoder | None = None
    write: Callable[[ChangeEvent], bytes] | None = None
    target: str = ""


@lru_cache(maxsize=64)
def _call(source: str | None, target: str | None, given: Options, defaults: Options, default_errors: str) -> _Call:
    """Build the reader and writer of a call. ``given`` are the call's options, which a codec must declare;
    ``defaults`` (from ``register``) go to whichever codec declares them."""
    from ..kafka import ChangeEventDeserializer, ChangeEventSerializer

    call_options = {name: _option_value(value) for name, value in given}
    options = {name: _option_value(value) for name, value in defaults}
    options.update(call_options)
    errors = arrow.check_errors_mode(options.pop("errors", default_errors))
    strict = options.pop("strict", False)
    if strict not in (True, False):
        raise ConfigurationError(f"strict must be true or false, not {strict!r}")
    framing = options.pop("framing", "confluent")
    if framing not in ("confluent", "none"):
        raise ConfigurationError(f"framing must be confluent or none, not {framing!r}")
    topic = options.pop("topic", None)
    registry = {"schema_registry": options.pop("schema_registry", None), "framing": framing == "confluent"}
    strategy = options.pop("subject_name_strategy", "topic" if topic else "record")
    context = _Context(topic)
    source_options, target_options = _codec_options(source, target, options, set(call_options))
    read = read_batch = write = None
    if source is not None:
        reader = ChangeEventDeserializer(source, **registry, **source_options)

        def read(message: Any) -> ChangeEvent:
            return reader(message.encode("utf-8") if isinstance(message, str) else message, context)
        if reader.framing is None:
            read_batch = getattr(reader.codec, "decode_arrow", None)
    if target is not None:
        writer = ChangeEventSerializer(target, **registry, subject_name_strategy=strategy, **target_options)

        def write(event: ChangeEvent) -> bytes:
            if strict:
                dropped = writer.codec.dropped(event)
                if dropped:
                    feature, path = dropped[0]
                    raise LossyConversionError(target, f"{target} cannot carry {feature}", field=path)
            return writer(event, context)
    return _Call(errors, read, read_batch, write, target or "")


def _codec_options(source: str | None, target: str | None, options: dict[str, Any], from_call: set[str]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Give each option to the codec(s) that declare it; an option of the call that neither declares is an error,
    a registration default that neither declares is not (it is meant for other formats)."""
    declared = {role: {option.name for option in codec_class(name).options} if name else set()
                for role, name in (("source", source), ("target", target))}
    unknown = sorted(name for name in set(options) & from_call if not any(name in names for names in declared.values()))
    if unknown:
        formats = " and ".join(name for name in (source, target) if name)
        known = sorted(set(OPTIONS) | declared["source"] | declared["target"])
        raise ConfigurationError(f"option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} unknown to {formats}; "
                                 f"known options: {', '.join(known)}")
    return ({name: value for name, value in options.items() if name in declared["source"]},
            {name: value for name, value in options.items() if name in declared["target"]})


# -- running a call over a batch, one group of rows per distinct (formats, options) ------------------------------------

def _grouped(keys: list[Any], run: Callable[[Any, pa.Array | None], pa.Array], result_type: pa.DataType) -> pa.Array:
    """Run ``run(key, rows)`` once for each distinct key (``rows`` None: the whole batch) and put the results back
    in row order. Rows whose key is None (a null format) give null."""
    distinct = list(dict.fromkeys(keys))
    if len(distinct) == 1:
        return run(distinct[0], None) if distinct[0] is not None else pa.nulls(len(keys), result_type)
    parts, order = [], []
    for key in distinct:
        rows = [index for index, row_key in enumerate(keys) if row_key == key]
        indexes = pa.array(rows, pa.int64())
        parts.append(run(key, indexes) if key is not None else pa.nulls(len(rows), result_type))
        order.extend(rows)
    inverse = [0] * len(keys)
    for position, row in enumerate(order):
        inverse[row] = position
    return pa.concat_arrays([part.cast(result_type) for part in parts]).take(pa.array(inverse, pa.int64()))


def _keys(formats: list[pa.Array], options: tuple[pa.Array, ...]) -> list[Any]:
    """One key per row: its formats, and its options map as a tuple of pairs (None where a format is null)."""
    columns = [array.to_pylist() for array in formats]
    option_rows = options[0].to_pylist() if options else [None] * len(formats[0])
    return [None if None in names else (*names, tuple(option_row or ()))
            for *names, option_row in zip(*columns, option_rows)]


def _decode_batch(formats: pa.Array, values: pa.Array, options: tuple[pa.Array, ...], defaults: Options
                  ) -> pa.Array:
    def run(key: tuple, rows: pa.Array | None) -> pa.Array:
        format_name, given = key
        call = _call(format_name, None, given, defaults, "dead-letter")
        part = values if rows is None else values.take(rows)
        return arrow.decode_array(part, call.read, call.errors, call.read_batch)
    return _grouped(_keys([formats], options), run, arrow.EVENT)


def _binary(results: list[Any]) -> pa.Array:
    return pa.array([result if isinstance(result, bytes) else None for result in results], pa.binary())


def _with_errors(results: list[Any]) -> pa.Array:
    return pa.array([None if result is None else {"value": result} if isinstance(result, bytes)
                     else {"error": arrow.error_row(result)["error"]} for result in results], WRITE_RESULT)


def _write_batch(events: pa.Array, call: _Call, keep_errors: bool) -> pa.Array:
    results = arrow.encode_array(events, call.write, call.target, call.errors)
    return _with_errors(results) if keep_errors else _binary(results)


def _encode_batch(formats: pa.Array, events: pa.Array, options: tuple[pa.Array, ...], defaults: Options,
                  keep_errors: bool) -> pa.Array:
    def run(key: tuple, rows: pa.Array | None) -> pa.Array:
        format_name, given = key
        call = _call(None, format_name, given, defaults, "dead-letter" if keep_errors else "null")
        return _write_batch(events if rows is None else events.take(rows), call, keep_errors)
    return _grouped(_keys([formats], options), run, WRITE_RESULT if keep_errors else pa.binary())


def _convert_batch(values: pa.Array, sources: pa.Array, targets: pa.Array, options: tuple[pa.Array, ...],
                   defaults: Options, keep_errors: bool) -> pa.Array:
    def run(key: tuple, rows: pa.Array | None) -> pa.Array:
        source, target, given = key
        call = _call(source, target, given, defaults, "dead-letter" if keep_errors else "null")
        part = values if rows is None else values.take(rows)
        # A message that cannot be read becomes an error row, which the writer passes on as it is.
        return _write_batch(arrow.decode_array(part, call.read, call.errors, call.read_batch), call, keep_errors)
    return _grouped(_keys([sources, targets], options), run, WRITE_RESULT if keep_errors else pa.binary())


def _event_ids(events: pa.Array) -> pa.Array:
    ids = []
    for row in events.to_pylist():
        try:
            ids.append(None if row is None else arrow.event_from_row(row).event_id)
        except Exception:  # a dead-letter row or a malformed struct has no id
            ids.append(None)
    return pa.array(ids, pa.string())


# -- registration -----------------------------------------------------------------------------------------------------

def register(spark: SparkSession, **defaults: Any) -> None:
    """Register the ``cdc_*`` SQL functions in ``spark``. Keyword arguments are defaults for every call (an
    ``options`` map given to a call overrides them): ``errors``, ``strict``, ``schema_registry``, ... (``OPTIONS``),
    and format options (``key_columns=["id"]``), each given only to the formats that declare it."""
    registered: Options = tuple((name, value if isinstance(value, str) else json.dumps(value))
                                for name, value in defaults.items())

    @arrow_udf(EVENT_TYPE)  # type: ignore[misc]
    def cdc_decode(format: pa.Array, value: pa.Array, *options: pa.Array) -> pa.Array:
        return _decode_batch(format, value, options, registered)

    @arrow_udf(BinaryType())  # type: ignore[misc]
    def cdc_encode(format: pa.Array, event: pa.Array, *options: pa.Array) -> pa.Array:
        return _encode_batch(format, event, options, registered, keep_errors=False)

    @arrow_udf(WRITE_RESULT_TYPE)  # type: ignore[misc]
    def cdc_encode_or_error(format: pa.Array, event: pa.Array, *options: pa.Array) -> pa.Array:
        return _encode_batch(format, event, options, registered, keep_errors=True)

    @arrow_udf(BinaryType())  # type: ignore[misc]
    def cdc_convert(value: pa.Array, source_format: pa.Array, target_format: pa.Array, *options: pa.Array
                    ) -> pa.Array:
        return _convert_batch(value, source_format, target_format, options, registered, keep_errors=False)

    @arrow_udf(WRITE_RESULT_TYPE)  # type: ignore[misc]
    def cdc_convert_or_error(value: pa.Array, source_format: pa.Array, target_format: pa.Array, *options: pa.Array
                             ) -> pa.Array:
        return _convert_batch(value, source_format, target_format, options, registered, keep_errors=True)

    @arrow_udf(StringType())  # type: ignore[misc]
    def cdc_event_id(event: pa.Array) -> pa.Array:
        return _event_ids(event)

    for function in (cdc_decode, cdc_encode, cdc_encode_or_error, cdc_convert, cdc_convert_or_error, cdc_event_id):
        spark.udf.register(function.__name__, function)
