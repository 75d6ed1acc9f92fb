"""Many keys per Spark group: keys hashed into buckets, one state blob per bucket, one Spark timer per bucket.

Without a JVM (tests/systems/spark/in_memory.py stands in for Spark's grouping,
ValueState and timers), so Hypothesis can put every key of a node into one
or a few groups and compare every event with the local runtime; the layout
check that refuses a checkpoint grouped differently; the bucket hash being
the same in every process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.changelog import Change
from converge.engine.model.errors import ApiMisuseError
from converge.engine.runtime.local import run_scenario
from tests.conftest import examples
from tests.support.spark_runs import (
    MINIBATCH,
    SCENARIOS,
    first_difference,
    local_outcome,
    two_keys_padded_by_timers_only,
)
from tests.systems.spark.in_memory import run_all_in_memory, run_in_memory

pytest.importorskip("pyspark")

from converge.engine.runtime.spark.job import LAYOUT_FILE, SparkJoinJob, check_layout
from converge.engine.runtime.spark.processor import bucket_of


@settings(max_examples=examples(120), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(SCENARIOS, MINIBATCH), min_size=1, max_size=3), st.integers(1, 5), st.integers(1, 3),
       st.integers(0, 2**16), st.booleans())
def test_keys_sharing_a_bucket_reproduce_the_local_runtime_event_by_event(scenarios, batches, buckets, shuffle_seed,
                                                                         fresh_workers) -> None:
    """One to three buckets per node: almost every key shares its group and its blob with others (and
    with `fresh_workers` every micro-batch starts from the saved blobs alone, as after a restart)."""
    got = run_all_in_memory(scenarios, batches=batches, shuffle_seed=shuffle_seed, fresh_workers=fresh_workers,
                            buckets=buckets)
    for scenario, outcome in zip(scenarios, got, strict=False):
        difference = first_difference(outcome, local_outcome(scenario))
        assert difference is None, f"{scenario.name} ({batches} micro-batches, {buckets} buckets): {difference}"


@pytest.mark.parametrize("shuffle_seed", [0, 1, 2])
def test_one_bucket_fires_the_timers_of_its_keys_in_the_batches_they_are_due(shuffle_seed) -> None:
    """Both keys in the one bucket; no change reaches them after the first micro-batch, so only the
    bucket's Spark timer can wake them: first for key 1 (due in micro-batch 2), then, re-registered,
    for key 2 (due in micro-batch 3). Each padding is placed at the watermark event that fires it."""
    scenario = two_keys_padded_by_timers_only()
    want = run_scenario(scenario).per_event
    assert Change("+I", (1, 10, "x", None, None, None)) in want[5]     # the local runtime's answer, by hand
    assert Change("+I", (2, 30, "y", None, None, None)) in want[7]
    job = SparkJoinJob([scenario], bounds=[4, 6], buckets=1)
    assert set(job.batch_columns(0)["key"]) - {"tick|"} == {"0|0"}     # one group holds both keys
    (got,) = run_in_memory(job, shuffle_seed=shuffle_seed, fresh_workers=True)
    assert got.per_event == want


def test_a_checkpoint_grouped_differently_is_refused_before_spark_starts(tmp_path: Path) -> None:
    scenario = two_keys_padded_by_timers_only()
    first = SparkJoinJob([scenario], work_dir=tmp_path, buckets=4)
    check_layout(first.checkpoint_dir, first.buckets)                 # what run() records on a new checkpoint
    assert json.loads((first.checkpoint_dir / LAYOUT_FILE).read_text())["buckets"] == 4
    check_layout(first.checkpoint_dir, 4)                             # the same layout continues
    other = SparkJoinJob([scenario], work_dir=tmp_path, buckets=8)
    other.write_batches()
    with pytest.raises(ApiMisuseError, match="buckets=4"):
        other.run()                                                   # raises before any SparkSession is asked for
    (first.checkpoint_dir / LAYOUT_FILE).unlink()
    (first.checkpoint_dir / "offsets").mkdir()                        # a checkpoint of the per-key layout
    with pytest.raises(ApiMisuseError, match="older Spark runtime"):
        check_layout(first.checkpoint_dir, 4)


@pytest.mark.parametrize("buckets", [0, -3, True, 2.0, "16"])
def test_a_bucket_count_that_is_not_a_positive_whole_number_is_refused(buckets) -> None:
    with pytest.raises(ApiMisuseError, match="buckets"):
        SparkJoinJob([two_keys_padded_by_timers_only()], buckets=buckets)


KEYS = [(1,), (2,), (-7,), ("a",), ("é",), (None,), (True, "x"), (12345678901234, "k", None)]


def test_a_keys_bucket_is_the_same_in_every_process() -> None:
    """Workers and restarts run in other processes: the bucket may not depend on Python's salted hash."""
    code = ("import json, sys; from converge.engine.runtime.spark.processor import bucket_of; "
            f"print(json.dumps([bucket_of(k, 1000) for k in {KEYS!r}]))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(seen) == 1
    assert json.loads(seen.pop()) == [bucket_of(k, 1000) for k in KEYS]


def test_keys_spread_over_the_buckets() -> None:
    counts = [0] * 16
    for k in range(4000):
        counts[bucket_of((k,), 16)] += 1
    assert min(counts) > 4000 / 16 / 2, counts                         # no bucket starved, none hoarding
