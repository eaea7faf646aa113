"""Spark SQL functions for change events: run inside Spark's JVM where the formats have JVM codecs, else vectorized
with Arrow.

    from cdcformats.spark import register, session
    spark = session()                      # local[*] by default; session("spark://host:7077") for a cluster
    register(spark)
    spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM raw")

SQL functions (``options`` is an optional ``map(...)`` of strings; see ``OPTIONS``):

* ``cdc_decode(format, value[, options])`` -> the canonical event, of type ``EVENT_TYPE`` (``EVENT_DDL``);
* ``cdc_encode(format, event[, options])`` -> binary;
* ``cdc_convert(value, source_format, target_format[, options])`` -> binary;
* ``cdc_encode_or_error`` / ``cdc_convert_or_error``: the same, as ``struct<key binary, value binary, error ...>``,
  so that a row that cannot be written is kept with its error instead of becoming null;
* ``cdc_event_id(event)`` -> the event's deterministic id (``ChangeEvent.event_id``), the same as in Python and Kafka.

Bad input never kills a job unless asked: ``errors`` is ``dead-letter`` for ``cdc_decode`` by default (the row's
``error`` field holds the format, reason, field and the raw message, as ``from_json`` keeps a corrupt record), and
``null`` for ``cdc_encode`` / ``cdc_convert``; ``fail`` raises. Rows in = events + rows with an error (+ null input).

A call runs inside Spark's JVM when its formats are literals with JVM codecs (a decoder for ``cdc_decode``'s format,
``jvm_formats()``; an encoder for ``cdc_encode``'s, ``jvm_encoders()``; both for ``cdc_convert``) and its options, if
any, are a literal map: the plan then holds no Python. A map of ``errors`` alone runs with the codecs ``register`` set
up; for any other, the JVM asks Python (``_CallSettings``, through Py4J's callback server) as the call is resolved,
which reads the options as the Arrow path does and gives the Java codecs' settings for them, or none. Every other
call runs as the function's Arrow UDF, which ``register`` also keeps under the function's name with ``_arrow`` after
it (``arrow_name``), to force it. The JVM writes the same bytes as the Arrow path and handles each row that cannot be
written as it does, ``strict``'s refusals included.

The Arrow UDFs take whole Arrow batches, never row-at-a-time pickling. A format that can decode
a batch at once (``Codec.batch_decoder``: Lindorm) does so there with Arrow's JSON reader and compute kernels.

A format whose messages are Kafka records (``Codec.message_type`` ``KafkaRecord``: ``connect-json``, ``paimon-log``,
``debezium-avro``) reads a ``struct(key, value)``, as Spark's Kafka source has them, or a line of its file form; it
writes a record's ``key`` and ``value`` in the ``_or_error`` functions' result (``cdc_encode`` and ``cdc_convert``,
whose binary holds no key, refuse it). A record that holds no change (``debezium-avro``'s tombstone) reads as null.
``debezium-avro`` registers the schemas of the tables it writes (option ``schema_registry``): each Python worker
evolves a table's schema from the latest registered version by the changes it writes, so workers that see different
columns of one table may register different versions, every one BACKWARD compatible and named by its records.

A format whose messages a schema registry describes (``Codec.writer_schema``: ``avro``, ``protobuf``) is read and
written in Confluent's wire format against a schema registry (option ``schema_registry``: a URL, or a file for the
embedded registry; default: the embedded one), exactly as ``cdcformats.kafka`` does; the option ``framing`` =
``none`` reads and writes the bare envelope instead.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import BinaryType, StringType, StructType

from ..contract import Codec, JvmDecoder, JvmEncoder, KafkaRecord
from ..convert import refusal
from ..core.error_modes import error_mode
from ..envelopes import arrow
from ..errors import CodecError, ConfigurationError, DecodeError
from ..model import ChangeEvent
from ..options import option_value, routed
from ..registry import codec, codec_class, formats

if TYPE_CHECKING:
    from ..kafka.serdes import ChangeEventSerializer


def _struct_type(arrow_type: pa.DataType) -> StructType:
    """The Spark type of an Arrow struct type."""
    spark_type = from_arrow_type(arrow_type)
    assert isinstance(spark_type, StructType)  # Spark maps an Arrow struct to a StructType
    return spark_type


EVENT_TYPE: StructType = _struct_type(arrow.EVENT)
EVENT_DDL: str = EVENT_TYPE.simpleString()
# A record format's message has a key as well (null for the other formats).
WRITE_RESULT = pa.struct([("key", pa.binary()), ("value", pa.binary()), ("error", arrow.ERROR)])
WRITE_RESULT_TYPE: StructType = _struct_type(WRITE_RESULT)

# Options of the functions themselves; every other option goes to the codec(s) that declare it.
OPTIONS = {
    "errors": "fail, null or dead-letter: what a bad row becomes",
    "strict": "true: refuse (as a bad row) an event the target would write only by dropping something",
    "schema_registry": "avro/protobuf: the registry URL, or the file of an embedded registry",
    "framing": "avro/protobuf: confluent (default) or none (the bare envelope)",
    "topic": "avro/protobuf: the topic, for the topic and topic-record subject name strategies",
    "subject_name_strategy": "avro/protobuf: topic, record or topic-record (default: topic with a topic, else record)",
}


# -- options ----------------------------------------------------------------------------------------------------------

Options = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class _Context:
    """The part of confluent-kafka's SerializationContext that subject names need."""

    topic: str | None
    field: str = "value"


@dataclass(frozen=True)
class _Call:
    """What one call needs, built once per worker process for each distinct (formats, options). ``read`` and
    ``write`` are the column functions' (one row in, one row out); ``read_all``, ``write_exact`` and ``refuse``, the
    conversion pipeline's that ``spark-convert`` runs (every change of a message; ``strict``'s check apart)."""

    errors: str
    read: Callable[[Any], ChangeEvent | None] | None = None
    read_all: Callable[[Any], list[ChangeEvent]] | None = None
    read_batch: arrow.BatchDecoder | None = None
    write: Callable[[ChangeEvent], bytes | KafkaRecord | None] | None = None
    write_exact: Callable[[ChangeEvent], bytes | KafkaRecord | None] | None = None
    refuse: Callable[[ChangeEvent], CodecError | None] | None = None
    target: str = ""
    writes_records: bool = False
    strict: bool = False
    # The bytes every message of the call starts with (Confluent's framing of an envelope: the magic byte and the
    # schema id, which asks the registry), or None where the registry gives no id; and the formats' JVM codecs. Both
    # are asked each time a query is planned, not once per call: the registry (the writer schemas of framed messages,
    # which a file registry gives whole) changes as others write to it.
    prefix: Callable[[], bytes | None] = lambda: b""
    framed: bool = False
    reads_framed: bool = False
    jvm_encoder: JvmEncoder | None = None
    jvm_decoder: Callable[[], JvmDecoder | None] = lambda: None


@lru_cache(maxsize=64)
def _call(source: str | None, target: str | None, given: Options, defaults: Options, default_errors: str) -> _Call:
    """Build the reader and writer of a call. ``given`` are the call's options, which a codec must declare;
    ``defaults`` (from ``register``) go to whichever codec declares them."""
    from ..kafka.serdes import ChangeEventDeserializer, ChangeEventSerializer, registry_options

    call_options = dict(given)
    options = {**dict(defaults), **call_options}
    # The functions' own options are text; codec options are JSON where they parse as JSON.
    errors = error_mode(options.pop("errors", default_errors), arrow.COLUMN_ERROR_MODES)
    strict = option_value(options.pop("strict", "false"))
    if strict not in (True, False):
        raise ConfigurationError(f"strict must be true or false, not {strict!r}")
    framing = options.pop("framing", "confluent")
    if framing not in ("confluent", "none"):
        raise ConfigurationError(f"framing must be confluent or none, not {framing!r}")
    topic = options.pop("topic", None)
    schema_registry = options.pop("schema_registry", None)
    strategy = options.pop("subject_name_strategy", None)
    context = _Context(topic)
    options = {name: option_value(value) for name, value in options.items()}
    roles = [name for name in (source, target) if name is not None]
    # A default of register() that neither format declares is meant for other formats; an option of the call is not.
    shares: dict[str | None, dict[str, Any]] = dict(zip(
        roles, routed(options, [codec_class(name) for name in roles], checked=set(call_options), own=OPTIONS),
        strict=True))
    source_options, target_options = shares.get(source, {}), shares.get(target, {})
    call = _Call(errors, target=target or "")
    if source is not None and codec_class(source).message_type is KafkaRecord:
        record_codec = codec(source, **registry_options(source, schema_registry, source_options))
        read_all = _record_reader(record_codec)
        call = replace(call, read=_one_change(read_all, record_codec.name), read_all=read_all,
                       jvm_decoder=record_codec.jvm_decoder)
    elif source is not None:
        reader = ChangeEventDeserializer(source, schema_registry, framing=framing == "confluent", **source_options)

        def read(message: Any) -> ChangeEvent:
            event = reader(message.encode("utf-8") if isinstance(message, str) else message, context)
            assert event is not None  # only a null message reads as None, and decode_rows keeps those to itself
            return event

        def read_all(message: Any) -> list[ChangeEvent]:
            return reader.events(message.encode("utf-8") if isinstance(message, str) else message, context)
        # The batch decoder reads a codec's own bytes, not Confluent's framing.
        read_batch = reader.codec.batch_decoder() if reader.framing is None else None
        call = replace(call, read=read, read_all=read_all, read_batch=read_batch, jvm_decoder=reader.jvm_decoder,
                       reads_framed=reader.framing is not None)
    if target is not None:
        if strategy is None and codec_class(target).writer_schema() is not None:
            strategy = "topic" if topic else "record"  # an envelope's subject: a row has no topic unless given one
        writer = ChangeEventSerializer(target, schema_registry, framing=framing == "confluent",
                                       subject_name_strategy=strategy, **target_options)
        writes_records = writer.codec.message_type is KafkaRecord
        encode = writer.record if writes_records else writer

        def write_exact(event: ChangeEvent) -> bytes | KafkaRecord | None:
            return encode(event, context)

        def refuse(event: ChangeEvent) -> CodecError | None:
            return refusal(writer.codec, event)

        def write(event: ChangeEvent) -> bytes | KafkaRecord | None:
            lossy = refuse(event) if strict else None
            if lossy is not None:
                raise lossy
            return encode(event, context)
        call = replace(call, write=write, write_exact=write_exact, refuse=refuse if strict else None,
                       writes_records=writes_records, strict=strict, jvm_encoder=writer.codec.jvm_encoder(),
                       prefix=lambda: _prefix(writer, context), framed=writer.framing is not None)
    return call


def _prefix(writer: ChangeEventSerializer, context: _Context) -> bytes | None:
    """The bytes ``writer`` puts before every message's own (its framing), or None where it cannot tell them: the
    registry gave no schema id, which the Arrow path then reports for each row."""
    if writer.framing is None:
        return b""
    try:
        return writer.framing.frame(b"", context)
    except CodecError:
        return None


def pipeline_ends(source: str, target: str, given: Options
                  ) -> tuple[Callable[[Any], list[ChangeEvent]], Callable[[ChangeEvent], bytes | KafkaRecord | None],
                             Callable[[ChangeEvent], CodecError | None] | None]:
    """The ends of the conversion pipeline that ``spark-convert`` runs in each partition, for the options ``given``
    (as text, as a SQL map has them): how a message is read (every change it holds), how an event is written, and
    ``strict``'s check (None without ``strict``). Built once per worker process, as a call's reader and writer are."""
    call = _call(source, target, given, (), "fail")
    assert call.read_all is not None and call.write_exact is not None  # a call with a source and a target has both
    return call.read_all, call.write_exact, call.refuse


def _one_change(read_all: Callable[[Any], list[ChangeEvent]], format_name: str
                ) -> Callable[[Any], ChangeEvent | None]:
    """A column function's reader of records, which gives one row for one: the one change of a record, None where it
    holds none (``debezium-avro``'s tombstone), and an error where it holds several."""
    def read(message: Any) -> ChangeEvent | None:
        events = read_all(message)
        if len(events) > 1:
            raise DecodeError(format_name, f"a record holds one change, this one {len(events)}")
        return events[0] if events else None
    return read


def _record_reader(record_codec: Codec) -> Callable[[Any], list[ChangeEvent]]:
    """How a format whose messages are Kafka records reads one: a struct of its ``key`` and ``value`` (Spark's Kafka
    source has both), or a line of its file form. A record that holds no change (a tombstone after a delete, in
    ``debezium-avro``) reads as none. A record that cannot be read is kept as its file form's line, key and value."""
    record_of_line = getattr(record_codec, "record_of_line", None)

    def read(message: Any) -> list[ChangeEvent]:
        if isinstance(message, dict):
            record = KafkaRecord(message.get("key"), message.get("value"))
        elif record_of_line is None:
            raise DecodeError(record_codec.name, "give a struct(key, value): this format has no lines of records")
        else:
            record = record_of_line(message.encode("utf-8") if isinstance(message, str) else message)
        try:
            events = record_codec.decode_messages(record)
        except DecodeError as error:
            if isinstance(message, dict):
                line = io.BytesIO()
                record_codec.file_writer(line).write([record])
                error.raw = line.getvalue().rstrip(b"\n")
            raise
        return events
    return read


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
        assert call.read is not None  # a call with a source has a reader
        part = values if rows is None else values.take(rows)
        return arrow.decode_array(part, call.read, call.errors, call.read_batch)
    return _grouped(_keys([formats], options), run, arrow.EVENT)


def _binary(results: list[Any]) -> pa.Array:
    return pa.array([result if isinstance(result, bytes) else None for result in results], pa.binary())


def _with_errors(results: list[Any]) -> pa.Array:
    return pa.array([None if result is None else {"value": result} if isinstance(result, bytes)
                     else {"key": result.key, "value": result.value} if isinstance(result, KafkaRecord)
                     else {"error": arrow.error_row(result)["error"]} for result in results], WRITE_RESULT)


def _write_batch(events: pa.Array, call: _Call, keep_errors: bool) -> pa.Array:
    if call.errors == "dead-letter" and not keep_errors:
        raise ConfigurationError("cdc_encode and cdc_convert return binary, which cannot hold an error: use "
                                 "cdc_encode_or_error / cdc_convert_or_error to keep dead letters")
    if call.writes_records and not keep_errors:
        raise ConfigurationError(f"{call.target} writes Kafka records, a key and a value, which binary cannot hold: "
                                 "use cdc_encode_or_error / cdc_convert_or_error, whose result has both")
    assert call.write is not None  # a call with a target has a writer
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
        assert call.read is not None  # a call with a source has a reader
        part = values if rows is None else values.take(rows)
        # A message that cannot be read becomes an error row, which the writer passes on as it is.
        return _write_batch(arrow.decode_array(part, call.read, call.errors, call.read_batch), call, keep_errors)
    return _grouped(_keys([sources, targets], options), run, WRITE_RESULT if keep_errors else pa.binary())


def _event_ids(events: pa.Array) -> pa.Array:
    ids = []
    for row in events.to_pylist():
        try:
            ids.append(None if row is None else arrow.event_from_row(row).event_id)
        except CodecError:  # a dead-letter row, or a struct that is not an event, has no id
            ids.append(None)
    return pa.array(ids, pa.string())


# -- registration -----------------------------------------------------------------------------------------------------

def register(spark: SparkSession, **defaults: Any) -> None:
    """Register the ``cdc_*`` SQL functions in ``spark``. Keyword arguments are defaults for every call (an
    ``options`` map given to a call overrides them): ``errors``, ``strict``, ``schema_registry``, ... (``OPTIONS``),
    and format options (``key_columns=["id"]``), each given only to the formats that declare it."""
    registered = _as_options(defaults)

    @arrow_udf(EVENT_TYPE)  # type: ignore[call-overload]  # stub requires functionType, inferred at run time
    def cdc_decode(format: pa.Array, value: pa.Array, *options: pa.Array) -> pa.Array:
        return _decode_batch(format, value, options, registered)

    @arrow_udf(BinaryType())  # type: ignore[call-overload]  # stub requires functionType, inferred at run time
    def cdc_encode(format: pa.Array, event: pa.Array, *options: pa.Array) -> pa.Array:
        return _encode_batch(format, event, options, registered, keep_errors=False)

    @arrow_udf(WRITE_RESULT_TYPE)  # type: ignore[call-overload]  # stub requires functionType, inferred at run time
    def cdc_encode_or_error(format: pa.Array, event: pa.Array, *options: pa.Array) -> pa.Array:
        return _encode_batch(format, event, options, registered, keep_errors=True)

    @arrow_udf(BinaryType())  # type: ignore[call-overload]  # stub requires functionType, inferred at run time
    def cdc_convert(value: pa.Array, source_format: pa.Array, target_format: pa.Array, *options: pa.Array
                    ) -> pa.Array:
        return _convert_batch(value, source_format, target_format, options, registered, keep_errors=False)

    @arrow_udf(WRITE_RESULT_TYPE)  # type: ignore[call-overload]  # stub requires functionType, inferred at run time
    def cdc_convert_or_error(value: pa.Array, source_format: pa.Array, target_format: pa.Array, *options: pa.Array
                             ) -> pa.Array:
        return _convert_batch(value, source_format, target_format, options, registered, keep_errors=True)

    # Told as not deterministic, though they are, so that Spark runs each once per row: the optimizer copies a
    # deterministic function into each filter on its result, where it runs a second time (as the JVM functions say).
    functions = {function.__name__: function.asNondeterministic()
                 for function in (cdc_decode, cdc_encode, cdc_encode_or_error, cdc_convert, cdc_convert_or_error)}
    for name, function in functions.items():
        spark.udf.register(arrow_name(name), function)
    if not _register_jvm_functions(spark, registered):
        for name, function in functions.items():
            spark.udf.register(name, function)
    spark.udf.register("cdc_event_id", _event_id_function())


def arrow_name(function: str) -> str:
    """The name under which ``register`` keeps the Arrow UDF of a ``cdc_*`` function: what a call the JVM does not
    run is built by, and what a query may call to run the Arrow path whatever the JVM could do."""
    return f"{function}_arrow"


# -- running inside the JVM -------------------------------------------------------------------------------------------

# The package's Java classes (setup.py builds them): the formats' Java codecs and the Spark expressions that run them.
JAR = Path(__file__).parent / "jvm" / "cdcformats.jar"


def jvm_formats(**defaults: Any) -> dict[str, JvmDecoder]:
    """The formats whose messages ``cdc_decode`` decodes inside the JVM when ``register`` is given these defaults,
    with their decoders (``Codec.jvm_decoder``)."""
    return {name: decoder for name, call in _format_calls(_as_options(defaults), reading=True)
            if (decoder := call.jvm_decoder()) is not None}


def _as_options(defaults: dict[str, Any]) -> Options:
    """Options given as keywords, as a call's options map holds them: text, or JSON for any other value."""
    return tuple((name, value if isinstance(value, str) else json.dumps(value)) for name, value in defaults.items())


def jvm_encoders(**defaults: Any) -> dict[str, JvmEncoder]:
    """The formats that ``cdc_encode`` writes inside the JVM when ``register`` is given these defaults (a format of
    Kafka records: ``cdc_encode_or_error``, whose result holds the key), with their encoders (``Codec.jvm_encoder``)."""
    return {name: call.jvm_encoder for name, call in _format_calls(_as_options(defaults), reading=False)
            if call.jvm_encoder is not None}


def _format_calls(registered: Options, reading: bool) -> Iterator[tuple[str, _Call]]:
    """Each format and the call that reads it (``reading``) or writes it with the ``registered`` defaults and no
    options of its own."""
    for name in formats():
        source, target = (name, None) if reading else (None, name)
        try:
            call = _call(source, target, (), registered, "null")
        except ConfigurationError:  # a required option (ots's primary_key) that only a call can give
            continue
        yield name, call


def _encoder_settings(call: _Call) -> dict[str, str] | None:
    """The settings the JVM functions take for the encoder of ``call``, or None where it runs no encoder in the JVM
    (as where the registry gives an envelope no schema id: the Arrow path reports that for each row)."""
    if call.jvm_encoder is None:
        return None
    prefix = call.prefix()
    if prefix is None:
        return None
    strict = {"strict": "true"} if call.strict else {}
    return {"class": call.jvm_encoder.class_name, "prefix": prefix.hex(), **strict, **call.jvm_encoder.settings}


class _CallSettings:
    """``cdcformats.spark.jvm.CodecSettings``, which the JVM functions ask through Py4J as a call with a literal
    options map is resolved: the settings of the Java codecs that run the call with those options, as ``_call`` reads
    them for the Arrow path."""

    def __init__(self, registered: Options) -> None:
        self.registered = registered

    def settings(self, source: str | None, target: str | None, options: str) -> str | None:
        try:
            call = _call(source, target, tuple(json.loads(options).items()), self.registered, "null")
        except Exception:  # noqa: BLE001 - whatever the options do, the Arrow UDF reports it as it does without the JVM
            return None
        decoder = call.jvm_decoder()
        return json.dumps({"decoder": None if decoder is None else {"class": decoder.class_name, **decoder.settings},
                           "encoder": _encoder_settings(call) if target is not None else None})

    class Java:
        implements = ["cdcformats.spark.jvm.CodecSettings"]


def _register_jvm_functions(spark: SparkSession, registered: Options) -> bool:
    """Register the ``cdc_*`` functions as the JVM functions that run a call in the JVM where its formats are
    literals with JVM decoders and encoders, and hand every other call to its Arrow UDF; False where the JVM cannot be
    reached (Spark Connect) or the jar was not built, and the Arrow UDFs are then the functions themselves."""
    java_session = getattr(spark, "_jsparkSession", None)  # None under Spark Connect: no JVM to reach
    if java_session is None or not JAR.exists():
        if java_session is not None:
            warnings.warn(f"{JAR} was not built (it needs javac when the package is built): the cdc_* functions run "
                          "as Arrow UDFs for every format", RuntimeWarning, stacklevel=3)
        return False
    defaults = dict(registered)
    errors = error_mode(defaults["errors"], arrow.COLUMN_ERROR_MODES) if "errors" in defaults else None
    # An envelope's framing asks the registry (a schema id to write with, the schemas to read with): left to each
    # query that reads or writes it, not done here.
    decoders = {name: {"class": decoder.class_name, **decoder.settings}
                for name, call in _format_calls(registered, reading=True)
                if not call.reads_framed and (decoder := call.jvm_decoder()) is not None}
    encoders = {name: encoder for name, call in _format_calls(registered, reading=False)
                if not call.framed and (encoder := _encoder_settings(call)) is not None}
    jvm = spark._jvm
    assert jvm is not None  # a classic session (it has _jsparkSession) has its gateway
    result = WRITE_RESULT_TYPE.simpleString()
    try:
        java_session.sessionState().resourceLoader().addJar(str(JAR))
        functions = jvm.cdcformats.spark.jvm.Functions  # a class of the jar: once the jar is added
        settings = _call_settings(spark, registered)
        functions.registerDecode(java_session, "cdc_decode", arrow_name("cdc_decode"), decoders,
                                 errors or "dead-letter", EVENT_DDL, settings)
        for name, result_ddl, default_errors in (("cdc_encode", None, "null"),
                                                 ("cdc_encode_or_error", result, "dead-letter")):
            functions.registerEncode(java_session, name, arrow_name(name), encoders, errors or default_errors,
                                     result_ddl, EVENT_DDL, settings)
        for name, result_ddl, default_errors in (("cdc_convert", None, "null"),
                                                 ("cdc_convert_or_error", result, "dead-letter")):
            functions.registerConvert(java_session, name, arrow_name(name), decoders, encoders,
                                      errors or default_errors, result_ddl, settings)
    except (Py4JError, PySparkException) as error:  # a Spark whose internals the jar was not compiled against
        warnings.warn(f"the JVM functions do not load in this Spark ({str(error).splitlines()[0]}): the cdc_* "
                      "functions run as Arrow UDFs for every format", RuntimeWarning, stacklevel=3)
        return False
    return True


def _call_settings(spark: SparkSession, registered: Options) -> _CallSettings | None:
    """What the JVM functions ask about calls with other options than ``errors``, through Py4J's callback server;
    None where it does not start, and such calls then run as Arrow UDFs."""
    try:
        ensure_callback_server_started(spark.sparkContext._gateway)
    except (Py4JError, OSError) as error:
        warnings.warn(f"Py4J's callback server does not start ({error}): a call with options other than errors runs "
                      "as an Arrow UDF", RuntimeWarning, stacklevel=4)
        return None
    return _CallSettings(registered)


# -- the functions as Columns ----------------------------------------------------------------------------------------

def decode(format: str, value: Column | str, **options: Any) -> Column:
    """``cdc_decode(format, value[, options])`` as a Column (after ``register``): decoded inside the JVM where the
    format has a JVM decoder and ``options`` hold nothing but ``errors``. An option that is not text is given as
    JSON, as in SQL."""
    arguments = [F.lit(format), F.col(value) if isinstance(value, str) else value]
    if options:
        arguments.append(F.create_map(*[F.lit(part) for name, option in options.items()
                                        for part in (name, option if isinstance(option, str) else json.dumps(option))]))
    return F.call_function("cdc_decode", *arguments)


@lru_cache(maxsize=1)
def _event_id_function() -> Any:
    return arrow_udf(_event_ids, StringType())  # type: ignore[call-overload]  # stub requires functionType, inferred at run time


def event_id(event: Column | str) -> Column:
    """The deterministic id of each event (``ChangeEvent.event_id``), as a Column."""
    return _event_id_function()(event)
