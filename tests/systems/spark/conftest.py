"""One SparkSession per xdist worker, shared by every Spark test (they all sit in xdist group "spark").

Two JVMs on two cores are slower than one, so every test that starts a query
is marked `@pytest.mark.xdist_group("spark")` and `--dist loadgroup` puts
them on one worker. The session is small (local[2], 2 shuffle partitions,
UI off); each test gets its own work folder (input files, checkpoint, sink).
`get_spark` builds it from `session_config`, so the time-outs set there for a
loaded machine (docs/spark.md, "Spark on a loaded machine") hold here too.
"""

from __future__ import annotations

import os

import pytest

from tests.support.paths import ROOT


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    from converge.engine.runtime.spark.session import get_spark

    # Processors defined by the tests (tests/systems/spark/map_order_probe.py) are pickled by reference:
    # the Python workers must import them from the checkout, as converge itself from its install.
    # The JVM and its workers keep the environment they start with; this process gets its own back.
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *(before.split(os.pathsep) if before else [])])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    local_dir = tmp_path_factory.mktemp(f"spark-local-{worker}")
    try:
        session = get_spark(cores=2, shuffle_partitions=2, driver_memory="768m", local_dir=str(local_dir))
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    yield session
    session.stop()
