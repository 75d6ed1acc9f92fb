"""Batched embedded properties: `--examples` counts scenarios, and a failing batch shrinks to one scenario.

A batch check gets a list of scenarios of one shape (the oracle answers them in one query). What must not
change for a user: the number asked is the number of scenarios compared, the run stops there, and a failure
is reported, replayed and shrunk as one scenario, as before batches.
"""

from __future__ import annotations

from hypothesis import strategies as st

from converge.engine.model.scenario import Scenario
from converge.generators.scenarios import BATCH_SCENARIOS, regular_join_batches
from converge.properties.batch import scenario_of_batch
from converge.properties.campaign import run_property
from converge.properties.divergence import fail
from converge.properties.registry import select
from converge.properties.spec import PropertySpec


def _batches() -> st.SearchStrategy[tuple]:
    return regular_join_batches().map(lambda b: (b,))


def test_examples_count_the_scenarios_compared_and_the_run_stops_there() -> None:
    seen: list[int] = []

    def check(batch: list[Scenario]) -> None:
        seen.append(len(batch))
        for scenario in batch:
            with scenario_of_batch(scenario):
                pass

    result = run_property(PropertySpec("regular", "counted", _batches, check, batch=BATCH_SCENARIOS),
                          max_examples=50, seed=3)
    assert result.ok
    assert sum(seen) == result.examples == result.exercised.compared
    assert result.examples == 50  # the last batch is cut to what was left
    assert max(seen) > 1 and len(seen) < 50             # batches, not one scenario an example


def _has_delete(scenario: Scenario) -> bool:
    return any(getattr(e, "kind", None) == "-D" for e in scenario.events)


def test_a_failing_batch_shrinks_to_the_failing_scenario_alone() -> None:
    """A planted bug: every scenario holding a -D fails. The shrunk call is a batch of one scenario, the
    smallest failing one (an insert and its delete), and that scenario is the divergence's."""
    def check(batch: list[Scenario]) -> None:
        for scenario in batch:
            with scenario_of_batch(scenario):
                if _has_delete(scenario):
                    fail("planted", scenario, "a -D was sent")

    result = run_property(PropertySpec("regular", "planted", _batches, check, batch=BATCH_SCENARIOS),
                          max_examples=200, seed=5)
    assert result.failure is not None
    (call_batch,) = result.failure_args
    assert call_batch == [result.failure.divergence.scenario]
    assert [e.kind for e in call_batch[0].events] == ["+I", "-D"]


def test_the_registered_oracle_properties_are_batched() -> None:
    """The properties whose time the oracle query dominated (issue 43's measurement) take batches; the rest
    take one scenario per example (docs/generators.md, "Batches of scenarios")."""
    batched = {(s.family, s.name) for s in select() if s.batch > 1}
    assert {("regular", "prefix_consistency"), ("regular", "final_convergence"),
            ("regular", "prefix_consistency_any_schema"), ("regular", "final_convergence_any_schema")} <= batched


def test_a_registered_batched_property_runs_its_examples_in_scenarios() -> None:
    (spec,) = select("regular", "prefix_consistency")
    result = run_property(spec, max_examples=30, seed=7)
    assert result.ok and result.examples == result.exercised.compared == 30


def test_a_batched_failure_report_replays_its_one_scenario(tmp_path) -> None:
    """The report of a batched property's failure records a batch of the failing scenario alone, and
    `converge replay` reruns it: failing while the (planted) bug is there, passing without it."""
    import json

    from converge.cli.mutant_catalog import applied, by_name
    from converge.properties.replay import replay_path
    from converge.reports.failure import failure_reporter

    (spec,) = select("regular", "prefix_consistency")
    (mutant,) = by_name("padding_not_retracted_on_first_match")
    with applied(mutant):
        result = run_property(spec, max_examples=400, seed=1, on_failure=failure_reporter(tmp_path))
        assert result.failure is not None
        (report,) = tmp_path.glob("*.json")
        assert json.loads(report.read_text())["meta"]["converge_failure"]["args"] == [[{"$scenario": "self"}]]
        (broken,) = replay_path(report)
    assert not broken.ok and broken.divergences[0].property == "prefix_consistency"
    (fixed,) = replay_path(report)
    assert fixed.ok, fixed.problems
