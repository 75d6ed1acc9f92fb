"""Keys sharing buckets on a real Spark query, across a stop, a failed batch and restarts from the checkpoint.

The default suite runs every Spark test with the default bucket count, where
small scenarios rarely put two keys in one group; here every node has one or
two buckets, so Spark's ValueState blobs and timers are shared by many keys.
(tests/systems/spark/test_buckets.py checks the same without a JVM, on many more
scenarios.) Slow: four query starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent
from converge.engine.runtime.local import run_scenario
from tests.conftest import examples
from tests.support.spark_runs import committed, generated, two_keys_padded_by_timers_only

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark"), pytest.mark.slow]


def test_shared_buckets_restart_from_the_checkpoint_event_by_event(spark, tmp_path: Path) -> None:
    from converge.engine.runtime.spark.job import SparkJoinJob

    scenarios = generated(examples(3), seed=11, families=("regular", "multiway"))
    marker = tmp_path / "fail-now"
    victim, fail_seq = next((i, seq) for i, s in enumerate(scenarios) for seq in range(len(s.events) // 2, len(s.events))
                            if isinstance(s.events[seq], ChangeEvent))
    job = SparkJoinJob(scenarios, spark=spark, work_dir=tmp_path / "job", batches=3, buckets=2,
                       fail_marker=str(marker), fail_event=(victim, fail_seq))
    job.write_batches(1)
    job.run()                                                   # stops after the first micro-batch
    job.write_batches()
    marker.write_text("fail")
    with pytest.raises(Exception, match="injected failure"):
        job.run()
    marker.unlink()
    job.run()                                                   # restart from the checkpoint
    assert committed(job)[:job.files_written] == list(range(job.files_written))
    for scenario, got in zip(scenarios, job.results(), strict=False):
        assert not isinstance(got, BadInputError), got
        assert got.per_event == run_scenario(scenario).per_event, scenario.name


def test_one_bucket_wakes_its_keys_by_spark_timers_across_a_restart(spark, tmp_path: Path) -> None:
    from converge.engine.runtime.spark.job import SparkJoinJob

    scenario = two_keys_padded_by_timers_only()
    job = SparkJoinJob([scenario], spark=spark, work_dir=tmp_path / "job", bounds=[4, 6], buckets=1)
    job.write_batches(2)
    job.run()                                                   # key 1 padded; key 2's timer still pending
    job.write_batches()
    job.run()                                                   # the bucket's timer survives the restart
    assert job.result().per_event == run_scenario(scenario).per_event
