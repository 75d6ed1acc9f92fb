"""One SparkSession per xdist worker, shared by every Spark test (they all sit in xdist group "spark").

Two JVMs on two cores are slower than one, so every test that starts a query
is marked `@pytest.mark.xdist_group("spark")` and `--dist loadgroup` puts
them on one worker. The session is small (local[2], 2 shuffle partitions,
UI off); each test gets its own work folder (input files, checkpoint, sink).
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    from converge.engine.runtime.spark.session import get_spark

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    local_dir = tmp_path_factory.mktemp(f"spark-local-{worker}")
    session = get_spark(cores=2, shuffle_partitions=2, driver_memory="768m", local_dir=str(local_dir))
    yield session
    session.stop()
