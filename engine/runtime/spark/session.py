"""The SparkSession the Spark runtime uses: local, small, quiet, with the settings TWS needs.

Measured with PySpark 4.3 on a 2-core machine: transformWithState
refuses the default HDFS state store, so the RocksDB provider is set; the
driver binds to 127.0.0.1 (resolving the hostname to loopback cost seconds);
the UI and progress bars are off; shuffle partitions are few, because every
partition of a stateful operator opens its own RocksDB instance per batch.
Python workers run this interpreter and import converge from where it is
installed; a PYTHONPATH in the environment is passed on to them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


# Time-outs for a loaded 2-core machine (docs/spark.md, "Spark on a loaded machine"); keys read from
# spark-core 4.3's config definitions (internal/config/Python and Network). A Python worker authenticates its
# socket to the JVM within spark.python.authenticate.socketTimeout (default 15 s), which a worker still importing
# pyspark on a busy core can miss; RPCs and heartbeats inside the one JVM wait spark.network.timeout (120 s).
# The 10 s a simple (non-daemon) Python worker has to connect back is fixed in Spark's code, not a setting.
LOAD_TIMEOUTS = {
    "spark.python.authenticate.socketTimeout": "120s",
    "spark.network.timeout": "600s",
}


def _prepare_environment() -> None:
    """Environment the JVM and its Python workers inherit; set before the JVM starts."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable


def session_config(*, cores: int = 2, shuffle_partitions: int = 1, driver_memory: str = "1g",
                   local_dir: str | None = None) -> dict[str, str]:
    """The configuration `get_spark` applies (tests reuse it for their fixture)."""
    conf = {
        "spark.master": f"local[{cores}]",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.memory": driver_memory,
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.default.parallelism": str(shuffle_partitions),
        "spark.sql.adaptive.enabled": "false",
        "spark.python.worker.reuse": "true",
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        "spark.sql.session.timeZone": "UTC",
        **LOAD_TIMEOUTS,
    }
    if os.environ.get("PYTHONPATH"):
        conf["spark.executorEnv.PYTHONPATH"] = os.environ["PYTHONPATH"]
    if local_dir is not None:
        conf["spark.local.dir"] = local_dir
        conf["spark.sql.warehouse.dir"] = str(Path(local_dir) / "warehouse")
    return conf


def get_spark(**options: Any):
    """The active SparkSession, or a new local one built from `session_config(**options)`.

    An active session is reused as it is (tests share one per xdist worker);
    its state store provider must be RocksDB, which is checked when a query
    is built.
    """
    _prepare_environment()

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName("converge")
    for key, value in session_config(**options).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark

