"""The mini-batch join's order inside a bundle on real Flink: the HashMap walk converge replays (docs/minibatch.md).

The default-suite test's changelog is worked out by hand: the adapter sends a's rows with case id 0 in front,
(0, 1, 2) and (0, 1, 256), whose BinaryRowData hashCodes Flink 2.3.0 computed as 1141287431 and 199221631
(tests/properties/systems/test_map_order.py), so InputSideHasNoUniqueKeyBundle's Integer-keyed map holds them in
buckets 1 and 0: the +U of (1, 256) is joined before the -U of (1, 2). The slow test holds generated cases on
the RocksDB backend (whose MapState order converge models exactly) to converge's order event by event.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.runtime.local import run_scenario
from converge.generators.minibatch import minibatch_scenarios
from converge.properties.systems.case_id import adapter_case_ids, with_case_id, without_case_id
from converge.properties.systems.order_model import split_like
from converge.systems.adapter.client import AdapterSystem

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]


def _c(kind: str, *row: object) -> Change:
    return Change(kind, tuple(row))


def test_a_keyless_bundle_is_joined_in_the_order_of_its_rows_hashes(flink_system: AdapterSystem) -> None:
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), None, "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), None, "insert_only")
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 2)),     # bundle 1
              ChangeEvent("a", "-U", (1, 2)), ChangeEvent("a", "+U", (1, 256)))    # bundle 2: +U first
    s = Scenario("t", (a, b), JoinSpec(("a", "b"), ("full",), ("a.k = b.k",)), Config(mini_batch_size=2), events)
    [result] = flink_system.run_cases([s])
    assert result.status == "ok", result.message
    # bundle 2 in arrival order would retract the joined row, bring b's padding back and retract it again
    assert list(result.changelog or ()) == [
        _c("+I", None, None, 1, 10), _c("-D", None, None, 1, 10), _c("+I", 1, 2, 1, 10),
        _c("+I", 1, 256, 1, 10), _c("-D", 1, 2, 1, 10)]


def _drawn(n: int) -> list[Scenario]:
    cases: list[Scenario] = []

    @seed(1)
    @settings(max_examples=n, database=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate],
              deadline=None)
    @given(minibatch_scenarios(modes=("insert_only", "retract"), map_state_orders=("rocksdb",)))
    def draw(scenario: Scenario) -> None:
        cases.append(scenario)

    draw()
    return cases


@pytest.mark.slow
def test_generated_bundles_come_out_in_converges_order(flink_system: AdapterSystem,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every event's outputs, in order. Left out: conditions with OR, from which Flink's planner pulls an equality
    common to every branch into the join key (measured: `(a.k = b.k AND ..) OR (a.k = b.k AND ..)` is walked under
    the join key (case id, k), where converge's planner keys on the case id alone)."""
    cases = [replace(s, config=replace(s.config, state_backend="rocksdb")) for s in _drawn(40)
             if all(isinstance(e, ChangeEvent) for e in s.events) and " OR " not in s.join.conditions[0].upper()]
    monkeypatch.setattr(flink_system, "timeouts", replace(flink_system.timeouts, run_base=900.0))  # one long job
    results = flink_system.run_cases(cases)
    ids = adapter_case_ids(cases, results, flink_system.capabilities.max_batch)
    ordered = 0
    for scenario, result, case_id in zip(cases, results, ids, strict=True):
        assert result.status == "ok", result.message
        widened = with_case_id(replace(scenario, config=replace(scenario.config, semantics="flink")), case_id)
        assert widened is not None
        model = [without_case_id(scenario, [c for c in items if isinstance(c, Change)])
                 for items in run_scenario(widened).per_event]
        pieces = split_like(list(result.changelog or ()), model)
        assert not isinstance(pieces, str), (scenario.name, case_id, pieces)
        for n, (got, want) in enumerate(zip(pieces, model, strict=True)):
            assert list(got) == list(want), (scenario.name, case_id, n)
            ordered += len(want) >= 2
    assert ordered >= 10, ordered
