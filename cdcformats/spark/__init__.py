"""Spark for change events: the ``cdc_*`` SQL functions (``functions``), a session for them (``session``),
DataFrame helpers (``frames``), typed tables (``tables``) and the batch conversion job (``job``).

    from cdcformats.spark import register, session
    spark = session()                      # local[*] by default; session("spark://host:7077") for a cluster
    register(spark)
    spark.sql("SELECT cdc_decode('lindorm', value) AS event FROM raw")
"""

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
from .tables import merge_into, table_rows, table_schema

__all__ = [
    "EVENT_DDL", "EVENT_TYPE", "JAR", "OPTIONS", "WRITE_RESULT", "WRITE_RESULT_TYPE", "arrow_name", "decode",
    "dedupe", "event_id", "jvm_encoders", "jvm_formats", "latest_state", "merge_into", "register", "session",
    "table_rows", "table_schema", "tuple_events",
]
