"""The campaign runs its cases at once before the properties ask for them (converge/systems/spark/campaign.py):
that only saves time if `drawn_cases` draws what each property's run draws. Checked without Spark: a stand-in
system records what the properties ask for."""

from __future__ import annotations

from converge.engine.model.native_join_case import NativeRun


class _Recorder:
    def __init__(self) -> None:
        self.asked: list = []

    def run_native(self, case):
        self.asked.append(case)
        return NativeRun("unsupported", message="stand-in")


def test_every_property_draws_the_cases_drawn_beforehand() -> None:
    from converge.properties.campaign import run_property
    from converge.properties.native_join.checks import NATIVE_PROPERTIES
    from converge.systems.spark.campaign import NativeTally, drawn_cases, native_spec
    from converge.systems.spark.runs import RunCache, case_key

    before = drawn_cases(8, 3)
    assert len(before) == 8
    for prop in NATIVE_PROPERTIES[:2]:   # each property is its own Hypothesis run with the same seed
        system = _Recorder()
        run_property(native_spec(prop, RunCache(system), NativeTally(), 8), max_examples=8, seed=3, shrink=False)
        assert [case_key(c) for c in system.asked] == list(dict.fromkeys(case_key(c) for c in before))


def test_every_property_by_batches_draws_the_batches_drawn_beforehand() -> None:
    """By batches the cache key is the merged case: each property's run must ask for exactly those."""
    from converge.properties.campaign import run_property
    from converge.properties.native_join.checks import NATIVE_PROPERTIES
    from converge.systems.spark.batch_specs import BatchTally, batch_plan, batch_spec, drawn_batches
    from converge.systems.spark.runs import RunCache, case_key

    batches, per_query = batch_plan(12, 5)
    assert (batches, per_query) == (3, 5) and batch_plan(3, 20) == (1, 3)
    before = drawn_batches(batches, per_query, 3)
    assert [len(b) for b in before] == [5, 5, 5]
    for prop in NATIVE_PROPERTIES[:2]:
        system = _Recorder()
        tally = BatchTally()
        run_property(batch_spec(prop, RunCache(system), tally, batches, per_query), max_examples=batches, seed=3,
                     shrink=False)
        assert [case_key(c) for c in system.asked] == list(dict.fromkeys(case_key(b.merged) for b in before))
        assert tally.examples == 15 and tally.unsupported == 15 and tally.spark_runs == 3
