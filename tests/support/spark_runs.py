"""What the Spark runtime's tests share: the scenarios they draw (tests/systems/spark/test_stage_processor.py's
families, with mini-batch bundles; the campaign's families; two keys padded by timers only), the local runtime's
outcome each run is compared with, and the batches a query has committed to its checkpoint."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from converge.cli.spark_campaign import draw_scenarios, family_strategies
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.runtime.local import run_scenario
from converge.engine.runtime.spark.job import SparkJoinJob
from converge.generators.anomalies import dedupe_scenarios
from converge.generators.interval import interval_join_scenarios
from converge.generators.minibatch import minibatch_variants
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios

SCENARIOS = st.one_of(
    regular_join_scenarios(),
    regular_join_scenarios(ttl="short", modes=("insert_only", "retract")),
    regular_join_scenarios(ttl="long"),
    multiway_scenarios(multi_join="on"),
    multiway_scenarios(multi_join="off", join_types=("inner", "left", "right", "full", "semi", "anti")),
    dedupe_scenarios(),
    interval_join_scenarios(),
    interval_join_scenarios(late_share=(10, 40), min_steps=4),
    interval_join_scenarios(time="processing", late_share=(0, 30)),
    minibatch_variants(purpose="any"),
    minibatch_variants(semantics="flink", purpose="any"),
)


def _with_bundles(base: st.SearchStrategy[Scenario]) -> st.SearchStrategy[Scenario]:
    """Any scenario made a mini-batch one: bundle size, and a latency trigger sometimes."""
    return st.tuples(base, st.integers(1, 6), st.one_of(st.none(), st.integers(1, 4))).map(
        lambda d: replace(d[0], config=replace(d[0].config, mini_batch_size=d[1], mini_batch_latency_ms=d[2])))


# mini-batch nodes in chains (normalize -> join, join -> join) and with the latency trigger
MINIBATCH = st.one_of(
    _with_bundles(regular_join_scenarios(ttl="short")),
    _with_bundles(regular_join_scenarios(ttl="long", semantics="flink")),
    _with_bundles(multiway_scenarios(multi_join="off")),
    _with_bundles(multiway_scenarios(multi_join="on")),
)


def local_outcome(scenario: Scenario):
    try:
        return run_scenario(scenario)
    except BadInputError as exc:
        return exc


def first_difference(got, want) -> str | None:
    """None when both runtimes did the same; else where they first part ways."""
    if isinstance(want, BadInputError) or isinstance(got, BadInputError):
        return None if str(got) == str(want) else f"Spark: {got!r}\nlocal: {want!r}"
    for i, (a, b) in enumerate(zip(got.per_event, want.per_event, strict=True)):
        if a != b:
            return f"event {i}: Spark emitted {a}\n         local emitted {b}"
    return None


def two_keys_padded_by_timers_only():
    """A full outer interval join: keys 1 and 2 each get one row in the first micro-batch and nothing
    after; watermarks in the second and third micro-batch make their cleanup timers pad them."""
    cols = [["k", "BIGINT"], ["t", "BIGINT"], ["s", "VARCHAR"]]

    def row(k, t, s):
        return {"input": "a", "kind": "+I", "row": [k, t, s]}

    def both(w):
        return [{"input": "a", "watermark": w}, {"input": "b", "watermark": w}]

    return scenario_from_dict({
        "name": "two keys' timers in one bucket",
        "inputs": [{"name": n, "columns": cols, "changelog_mode": "insert_only", "time_column": "t"} for n in "ab"],
        "join": {"inputs": ["a", "b"], "types": ["full"], "conditions": ["a.k = b.k"],
                 "interval": {"left_time": "a.t", "right_time": "b.t", "lower_ms": -5, "upper_ms": 5,
                              "time": "event"}},
        "config": {"semantics": "correct", "min_cleanup_interval_ms": 0},
        "events": [row(1, 10, "x"), row(2, 30, "y"), *both(0), *both(20), *both(50)],
    })


def generated(n: int, seed: int | None = None, families: tuple[str, ...] | None = None) -> list[Scenario]:
    """n scenarios from each named family of the Spark campaign (default: all of them)."""
    strategies = family_strategies()
    return [s for name in families or sorted(strategies) for s in draw_scenarios(strategies[name](), n, seed)]


def committed(job: SparkJoinJob) -> list[int]:
    """The batch ids Spark has committed in the job's checkpoint."""
    return sorted(int(p.name) for p in (job.checkpoint_dir / "commits").iterdir() if p.name.isdigit())
