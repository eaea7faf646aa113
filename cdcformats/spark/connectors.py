"""Spark's Kafka source and Delta Lake for the Spark in use, fetched from Maven Central once (``core.maven``).

A connector must match Spark's own version: Spark's Kafka source is released with Spark under the same version, and
Delta Lake names the Spark it was built for (``delta-spark_4.2_2.13``). Only the jars Spark does not ship itself are
kept (``SPARK_PROVIDES``), so the session's classpath holds one version of each library, Spark's.

    from cdcformats.spark.connectors import streaming_session
    spark = streaming_session()     # local[*], with the Kafka source, Delta Lake and its catalog
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import SparkSession

from ..core import maven
from ..errors import ConfigurationError
from .session import session

# Delta Lake 4.4 is built for Spark 4.0.1, 4.1.0 and 4.2.0; Spark's Kafka source is on Maven Central up to 4.2.0.
DELTA_VERSION = "4.4.0"
DELTA_SPARK_LINES = ("4.0", "4.1", "4.2")
# Groups whose jars PySpark's own jars directory holds, at the versions Spark was built with.
SPARK_PROVIDES = ("com.fasterxml.jackson.core", "org.apache.hadoop", "org.apache.parquet", "org.apache.logging.log4j",
                  "org.slf4j", "org.xerial.snappy", "com.github.luben", "at.yawk.lz4", "org.lz4", "org.roaringbitmap",
                  "org.scala-lang", "org.scala-lang.modules", "com.google.code.findbugs", "io.airlift",
                  "org.locationtech.jts", "commons-pool", "org.antlr")
# A streaming query runs for long, so its driver compiles as the JVM does by default (C2 as well as C1), not with C1
# alone as ``session`` has a local driver do for short jobs; and the code of Spark, its Kafka source and Delta Lake
# overflows C1's default code cache of 48 MiB (the JVM then stops compiling, and every batch runs interpreted).
STREAMING_DRIVER_JAVA_OPTIONS = "-XX:ReservedCodeCacheSize=256m"
DELTA_SETTINGS = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
                  "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog"}


def streaming_artifacts(spark_version: str) -> list[str]:
    """The Maven coordinates of Spark's Kafka source and Delta Lake for ``spark_version`` (``4.2.0``)."""
    line = ".".join(spark_version.split(".")[:2])
    if line not in DELTA_SPARK_LINES:
        raise ConfigurationError(f"Delta Lake {DELTA_VERSION} is built for Spark {', '.join(DELTA_SPARK_LINES)}, not "
                                 f"{spark_version}: install PySpark 4.2.0 (pip install 'pyspark==4.2.0')")
    return [f"org.apache.spark:spark-sql-kafka-0-10_2.13:{spark_version}",
            f"io.delta:delta-spark_{line}_2.13:{DELTA_VERSION}"]


def streaming_jars(spark_version: str = pyspark.__version__) -> list[Path]:
    """The jars of ``streaming_artifacts``, from the cache (``~/.cache/cdcformats/spark-<version>-streaming``),
    fetched there with Maven the first time."""
    directory = maven.cache_root() / f"spark-{spark_version}-streaming"
    try:
        return maven.jars(directory, streaming_artifacts(spark_version), exclude_groups=SPARK_PROVIDES)
    except maven.FetchError as error:
        raise maven.FetchError(f"{error}; Spark's Kafka source is published with each Spark release, and Maven "
                               f"Central may not serve the one for Spark {spark_version} yet") from None


def streaming_session(master: str | None = None, app_name: str = "cdcformats", **config: Any) -> SparkSession:
    """A ``session`` whose classpath holds Spark's Kafka source and Delta Lake (``streaming_jars``), with Delta's
    SQL extension and catalog, and whose driver compiles as the JVM does by default
    (``STREAMING_DRIVER_JAVA_OPTIONS``); on a local master, a shuffle partition per core. The jars are given when the
    JVM starts, so this must be the process's first session: with one running already it fails, naming what is
    missing."""
    active = SparkSession.getActiveSession()
    if active is not None:
        missing = [name for name, value in DELTA_SETTINGS.items() if active.conf.get(name, None) != value]
        if missing or "spark-sql-kafka" not in (active.conf.get("spark.jars", "") or ""):
            raise ConfigurationError("a Spark session without the Kafka source and Delta Lake runs already: start the "
                                     "streaming session first (cdcformats.spark.streaming_session)")
        return active
    jars = ",".join(str(path) for path in streaming_jars())
    settings = {"spark.jars": jars, "spark.driver.defaultJavaOptions": STREAMING_DRIVER_JAVA_OPTIONS, **DELTA_SETTINGS}
    if (master or "local").startswith("local"):
        # A micro-batch is small and every partition of it is a task: one a core, not the 8 of a batch job nor the 50
        # Delta reads its log with. A micro-batch of one change takes a quarter less time (measured on two cores).
        cores = str(os.cpu_count() or 2)
        settings |= {"spark.sql.shuffle.partitions": cores, "spark.databricks.delta.snapshotPartitions": cores}
    return session(master, app_name, **{**settings, **config})
