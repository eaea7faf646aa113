"""A Spark session fit for the ``cdc_*`` functions, locally or on a cluster."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

# The driver's JVM on a local master compiles with C1 alone (the JIT's quick tier, without C2's optimizing one). A
# local session mostly runs small jobs whose time goes to compiling Spark's own code: a cold JVM JIT-compiles the
# Catalyst planner and Janino, which compile each query's generated classes (``latest_state`` of a few hundred events
# runs some 50 stages and 100 generated classes), and C2's compiler threads take the cores the tasks need. With C1
# alone the JVM starts in half the time and such jobs take a third less CPU; code that runs for minutes peaks some
# way below C2's. ``spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=4`` (or this setting given to ``session``)
# gives the JVM's default back. Only the first session of a Python process starts the JVM, so only it applies this.
LOCAL_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
# How many generated classes (whole-stage code, projections) Spark keeps compiled; its default, 100, is fewer than one
# ``latest_state`` query generates (about 110), which then evicts its own classes, so that every later query over the
# state compiles them again (some 5 s of Janino per query on a small machine).
CODEGEN_CACHE_ENTRIES = "1000"


def session(master: str | None = None, app_name: str = "cdcformats", **config: str) -> SparkSession:
    """A Spark session for these functions: ``local[*]`` unless ``master`` says otherwise. On a local master the
    Python workers run this interpreter, so they see the packages installed with it, shuffles use 8 partitions, and
    the JVM compiles with C1 alone (``LOCAL_DRIVER_JAVA_OPTIONS``: quicker to start and to plan small jobs); on a
    cluster, its executors need cdcformats installed (``PYSPARK_PYTHON`` and ``spark.archives`` as usual). On any
    master, Spark keeps up to 1,000 generated classes compiled (``CODEGEN_CACHE_ENTRIES``) rather than 100.
    ``config`` entries are Spark settings and win over these."""
    master = master or "local[*]"
    settings = {"spark.ui.showConsoleProgress": "false", "spark.sql.codegen.cache.maxEntries": CODEGEN_CACHE_ENTRIES}
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings["spark.sql.shuffle.partitions"] = "8"  # not 200: one machine has a few cores
        # Before spark.driver.extraJavaOptions, so that an option given there wins.
        settings["spark.driver.defaultJavaOptions"] = LOCAL_DRIVER_JAVA_OPTIONS
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**settings, **config}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
