"""The Spark runtime against the local runtime and DuckDB, restarts from checkpoints, Spark's MapState order.

Every test here starts real streaming queries on the shared SparkSession
(conftest.py). The default run keeps six query starts (two for the
differential test, three runs of the restart test, one probe); the rest is
`slow`. Scenarios are batched into one query per test: Spark's cost is per
query and per micro-batch, not per scenario.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from converge.cli.spark_campaign import check_on_spark, check_results
from converge.engine.keycodec import order_key_fn
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.planner import plan
from converge.engine.runtime.local import run_scenario
from converge.engine.runtime.spark.job import SparkJoinJob, UnsupportedOnSpark, check_supported, run_scenarios_on_spark
from converge.engine.runtime.spark.source import batch_bounds
from converge.properties.expectations import check_expectations
from tests.conftest import examples
from tests.support.paths import SCENARIOS
from tests.support.spark_runs import committed, generated

SCENARIO_DIR = SCENARIOS

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def runnable_on_spark(scenario: Scenario) -> bool:
    try:
        check_supported(scenario, plan(scenario).nodes())
    except UnsupportedOnSpark:
        return False
    return True


def hand_written() -> list[Scenario]:
    """Every hand-written scenario file whose plan the Spark runtime runs (not: `semantics=flink`
    interval joins)."""
    loaded = [load_scenario(p) for p in sorted(SCENARIO_DIR.rglob("*.json"))]
    return [s for s in loaded if runnable_on_spark(s)]


def assert_checks_pass(checks) -> None:
    for check in checks:
        assert check.checked > 0
        assert not check.failures, f"{check.name}: {len(check.failures)} failures; smallest:\n{check.failures[0]}"


def test_hand_written_and_generated_scenarios_match_local_and_oracle(spark, tmp_path: Path) -> None:
    """Two queries (interval joins run in EventTime mode in the second), three micro-batches: every
    event's output equals the local runtime's, the final answer DuckDB's where DuckDB decides, and the
    hand-written files' own expectations hold on Spark's output."""
    files = hand_written()
    assert len(files) >= 26
    scenarios = files + generated(examples(8))
    results = run_scenarios_on_spark(scenarios, batches=3, spark=spark, work_dir=tmp_path)
    n = len(files)
    assert_checks_pass(check_results(scenarios[n:], results[n:]))
    assert_checks_pass(check_results(files, results[:n], properties=["spark_equals_local"]))
    for scenario, got in zip(files, results, strict=False):      # a file's own expectations decide it, not DuckDB
        assert scenario.has_expectations() or all(not c.failures for c in check_results([scenario], [got]))
        assert check_expectations(scenario, got) == [], scenario.name


@pytest.mark.parametrize("families", [
    ("anomalies", "minibatch", "multiway", "regular"),
    pytest.param(("interval",), marks=pytest.mark.slow),   # Spark timers must survive the restart too
])
def test_stop_between_batches_and_a_failed_batch_restart_from_the_checkpoint(spark, tmp_path: Path,
                                                                             families: tuple[str, ...]) -> None:
    """Run 1 processes two of four micro-batches and stops. Run 2 gets the rest, and a processor
    fails inside a later batch (an injected exception): the query dies. Run 3 restarts from the
    checkpoint. The output equals the uninterrupted local run event by event: nothing lost, nothing
    duplicated. With the minibatch family, one scenario's bundle is partly filled at the first stop."""
    scenarios = generated(examples(4), seed=7, families=families)
    if "minibatch" in families:
        scenarios.append(partly_filled_bundle_at_the_stop())
    marker = tmp_path / "fail-now"
    victim, fail_seq = next((i, seq) for i, s in enumerate(scenarios) if len(s.events) >= 4
                            for seq in range(batch_bounds(len(s.events), batches=4)[2][0], len(s.events))
                            if isinstance(s.events[seq], ChangeEvent))   # a change in the third batch or later
    job = SparkJoinJob(scenarios, spark=spark, work_dir=tmp_path / "job", batches=4, fail_marker=str(marker),
                       fail_event=(victim, fail_seq))
    job.write_batches(2)
    first_files = job.files_written
    job.run()                                                   # stops after batch 1: between micro-batches
    assert committed(job)[:first_files] == list(range(first_files))
    job.write_batches()
    marker.write_text("fail")
    with pytest.raises(Exception, match="injected failure"):
        job.run()
    assert len(committed(job)) < job.files_written
    marker.unlink()
    job.run()                                                   # restart from the checkpoint
    assert committed(job)[:job.files_written] == list(range(job.files_written))
    assert len(list(job.sink_dir.glob("batch_id=*"))) == len(committed(job))
    for scenario, got in zip(scenarios, job.results(), strict=False):
        assert not isinstance(got, BadInputError), got
        assert got.per_event == run_scenario(scenario).per_event, scenario.name


def partly_filled_bundle_at_the_stop() -> Scenario:
    """Eight change events, bundle size 3, four micro-batches of two: the first stop (after event 3)
    leaves one element of the second bundle buffered, and the last bundle ends at the end of the input."""
    from converge.engine.model.scenario import Config, InputSpec, JoinSpec

    a = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), ("k",), "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("w", "BIGINT")), None, "insert_only")
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 1)), ChangeEvent("a", "+I", (2, 2)),
              ChangeEvent("a", "-U", (1, 1)), ChangeEvent("a", "+U", (1, 3)), ChangeEvent("b", "+I", (2, 20)),
              ChangeEvent("a", "-D", (2, 2)), ChangeEvent("b", "+I", (1, 11)))
    scenario = Scenario("mini-batch bundle across the stop", (a, b), JoinSpec(("a", "b"), ("full",), ("a.k = b.k",)),
                        Config(mini_batch_size=3), events)
    assert batch_bounds(len(events), batches=4)[1] == (2, 4) and 4 % 3 == 1      # one element buffered
    return scenario


def test_spark_mapstate_iterates_in_serialized_key_order(spark, tmp_path: Path) -> None:
    """Measured: Spark's RocksDB MapState (UnsafeRow keys) iterates neither in insertion nor in value
    order. Longs sort by little-endian bytes, the order converge's `rocksdb` mode models; strings sort
    by length first, unlike Flink's binary rows (docs/spark.md)."""
    from tests.systems.spark.map_order_probe import INPUT_SCHEMA, OUTPUT_SCHEMA, MapOrderProbe

    longs = [3, 1, 256, 2, -1, 1000, 65536, 0, -256]
    strings = ["b", "aa", "c", "a", "ab", "ba", "zzz", "", "B", "é"]
    rows = [("long", i, v, None) for i, v in enumerate(longs)] + [("str", i, None, v) for i, v in enumerate(strings)]
    source = spark.createDataFrame(rows, INPUT_SCHEMA)
    (tmp_path / "in").mkdir()
    source.write.parquet(str(tmp_path / "in" / "probe"))
    stream = spark.readStream.schema(INPUT_SCHEMA).parquet(str(tmp_path / "in" / "probe"))
    out = stream.groupBy("grp").transformWithState(MapOrderProbe(), OUTPUT_SCHEMA, "Append", "None")
    query = (out.writeStream.format("memory").queryName("map_order_probe").outputMode("append")
             .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    query.awaitTermination()
    got = spark.sql("SELECT grp, rank, lkey, skey FROM map_order_probe ORDER BY grp, rank").collect()
    long_order = [r.lkey for r in got if r.grp == "long"]
    string_order = [r.skey for r in got if r.grp == "str"]
    # hand-derived: 8-byte little-endian slots compared as unsigned bytes, least significant byte first
    assert long_order == [0, 65536, 256, -256, 1, 2, 3, 1000, -1]
    # hand-derived: UnsafeRow's (offset, length) word puts the length first, then the UTF-8 bytes
    assert string_order == ["", "B", "a", "b", "c", "aa", "ab", "ba", "é", "zzz"]
    model = order_key_fn("rocksdb", ["BIGINT"])
    assert long_order == sorted(longs, key=lambda v: model((v,)))     # converge's `rocksdb` model agrees


@pytest.mark.slow
def test_a_crash_after_the_sink_wrote_a_batch_does_not_duplicate_it(spark, tmp_path: Path) -> None:
    """The sink writes batch 1, then the driver fails before Spark commits it. The restart runs batch 1
    again with the same id; the sink overwrites its folder, so no change appears twice."""
    scenarios = generated(examples(3), seed=11, families=("regular", "multiway"))
    marker = tmp_path / "crash"
    marker.write_text("crash")
    job = SparkJoinJob(scenarios, spark=spark, work_dir=tmp_path / "job", batches=3, fail_marker=str(marker),
                       fail_after_batch=1)
    job.write_batches()
    with pytest.raises(Exception, match="injected crash after the sink wrote batch 1"):
        job.run()
    assert (job.sink_dir / "batch_id=000001").exists()
    assert not (job.checkpoint_dir / "commits" / "1").exists()
    marker.unlink()
    job.run()
    for scenario, got in zip(scenarios, job.results(), strict=False):
        assert got.per_event == run_scenario(scenario).per_event, scenario.name


@pytest.mark.slow
@pytest.mark.parametrize("batches", [1, 7])
def test_generated_campaign_on_spark(spark, tmp_path: Path, batches: int) -> None:
    assert_checks_pass(check_on_spark(generated(examples(40)), batches=batches, spark=spark, work_dir=tmp_path))


@pytest.mark.slow
def test_every_event_its_own_micro_batch(spark, tmp_path: Path) -> None:
    """Micro-batches of one event each: the same output as one batch, and as the local runtime."""
    scenarios = [s for s in hand_written() if len(s.events) <= 8][:6]
    longest = max(len(s.events) for s in scenarios)
    assert_checks_pass(check_on_spark(scenarios, properties=["spark_equals_local"], batches=longest, spark=spark,
                                      work_dir=tmp_path))


@pytest.mark.slow
def test_bad_input_found_by_an_operator_on_spark_names_the_event(spark, tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIO_DIR / "regular" / "ret_inner_no_match.json")
    bad = scenario.with_events(scenario.events + (ChangeEvent("a", "-D", (9, 9)),))
    with pytest.raises(BadInputError) as local:
        run_scenario(bad)
    job = SparkJoinJob([bad], spark=spark, work_dir=tmp_path, batches=2)
    job.write_batches()
    job.run()
    with pytest.raises(BadInputError) as remote:
        job.result()
    assert str(remote.value) == str(local.value)


@pytest.mark.slow
def test_cli_run_replay_and_bench_on_spark(spark, tmp_path: Path, capsys) -> None:
    from converge.cli.main import main

    # seed 2: DuckDB decides 2 of the 5 scenarios drawn (with none, spark_final_equals_oracle is "not checked")
    assert main(["run", "--runtime", "spark", "--examples", "5", "--seed", "2", "--family", "regular",
                 "--reports-dir", str(tmp_path / "reports")]) == 0
    assert "spark_equals_local" in capsys.readouterr().out
    assert main(["replay", "--runtime", "spark", str(SCENARIO_DIR / "regular" / "upsert_normalized.json")]) == 0
    out = tmp_path / "bench.json"
    assert main(["bench", "--runtime", "spark", "--events", "4000", "--keys", "400", "--out", str(out)]) == 0
    assert "ratio_ours_to_native" in out.read_text()
