"""A Spark session fit for the ``cdc_*`` functions, locally or on a cluster."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession


def session(master: str | None = None, app_name: str = "cdcformats", **config: str) -> SparkSession:
    """A Spark session for these functions: ``local[*]`` unless ``master`` says otherwise. On a local master the
    Python workers run this interpreter, so they see the packages installed with it, and shuffles use 8 partitions;
    on a cluster, its executors need cdcformats installed (``PYSPARK_PYTHON`` and ``spark.archives`` as usual).
    ``config`` entries are Spark settings and win over these."""
    master = master or "local[*]"
    settings = {"spark.ui.showConsoleProgress": "false"}
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings["spark.sql.shuffle.partitions"] = "8"  # not 200: one machine has a few cores
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**settings, **config}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
