"""Spark for change events: the ``cdc_*`` SQL functions (``functions``), a session for them (``session``),
DataFrame helpers (``frames``), typed tables (``tables``), the batch conversion job (``job``), and a change stream on
Kafka applied to a Delta table (``streaming``, in a session with Spark's Kafka source and Delta Lake: ``connectors``).

    from cdcformats.spark import register, session
    spark = session()                      # local[*] by default; session("spark://host:7077") for a cluster
    register(spark)
    spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM raw")
"""

from .connectors import streaming_session
from .frames import dedupe, latest_state, tuple_events
from .functions import (
    EVENT_DDL,
    EVENT_TYPE,
    JAR,
    OPTIONS,
    WRITE_RESULT,
    WRITE_RESULT_TYPE,
    arrow_name,
    decode,
    event_id,
    jvm_encoders,
    jvm_formats,
    register,
)
from .session import session
from .streaming import BatchCounts, TableStream, stream_to_table
from .tables import merge_into, table_rows, table_schema

__all__ = [
    "EVENT_DDL", "EVENT_TYPE", "JAR", "OPTIONS", "WRITE_RESULT", "WRITE_RESULT_TYPE", "BatchCounts", "TableStream",
    "arrow_name", "decode", "dedupe", "event_id", "jvm_encoders", "jvm_formats", "latest_state", "merge_into",
    "register", "session", "stream_to_table", "streaming_session", "table_rows", "table_schema", "tuple_events",
]
