"""The MapState order property without Java: the order comparison, the generator, the dedupe SQL.

The expected orders are Flink's own: the changelogs the Flink 2.3.0 adapter emitted for the scenario files
(docs/anomalies.md, "On real Flink"). Flink's hash and HashMap rule are tested on the engine
(tests/engine/test_javahash.py)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import MapStateOrder
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.engine.model.system_cases import case_to_json
from converge.generators.map_order import map_order_scenarios, multiway_order_scenarios
from converge.properties.campaign import run_property
from converge.properties.systems import map_order
from converge.properties.systems.specs import SYSTEM_PROPERTIES, bind
from converge.systems.flink.environment import program_module
from tests.support import paths

SCENARIOS = paths.SCENARIOS / "systems"


def _c(kind: str, *row: object) -> Change:
    return Change(kind, tuple(row))


def test_an_order_mismatch_is_reported_with_the_event() -> None:
    model = [[], [_c("+I", 1, 5), _c("+I", 1, 300)], [_c("-D", 1, 5)]]
    same = map_order.compare_orders([_c("+I", 1, 5), _c("+I", 1, 300), _c("-D", 1, 5)], model)
    assert (same.ordered, same.agreed, same.mismatch, same.unsplit) == (1, 1, None, None)
    swapped = map_order.compare_orders([_c("+I", 1, 300), _c("+I", 1, 5), _c("-D", 1, 5)], model)
    assert (swapped.ordered, swapped.agreed) == (1, 0)
    assert swapped.mismatch == "event 1: emitted +I[1, 300], +I[1, 5], the model's order is +I[1, 5], +I[1, 300]"


def test_the_order_compared_is_the_visit_of_the_stored_rows_not_the_interleaving() -> None:
    # Flink 2.3.0, LEFT JOIN, b's last match retracted: per outer row a retraction then its padding, where the
    # reference engine emits every retraction first; both visit a's rows (1, 5), then (1, 7)
    model = [[_c("-D", 1, 5, 1), _c("-D", 1, 7, 1), _c("+I", 1, 5, None), _c("+I", 1, 7, None)]]
    flink = [_c("-D", 1, 5, 1), _c("+I", 1, 5, None), _c("-D", 1, 7, 1), _c("+I", 1, 7, None)]
    stored_is_left = [lambda change: change.row[:2]]
    same = map_order.compare_orders(flink, model, stored_is_left)
    assert (same.ordered, same.agreed, same.same_sequence, same.mismatch) == (1, 1, 0, None)
    swapped = flink[2:] + flink[:2]
    assert map_order.compare_orders(swapped, model, stored_is_left).agreed == 0
    assert map_order.compare_orders(flink, model).agreed == 0   # compared output by output: not the same


def test_a_changelog_that_does_not_cut_into_the_events_is_not_an_order_verdict() -> None:
    model = [[_c("+I", 1)], [_c("+I", 2), _c("+I", 3)]]
    report = map_order.compare_orders([_c("+I", 2), _c("+I", 1), _c("+I", 3)], model)
    assert report.unsplit is not None and report.ordered == 0
    extra = map_order.compare_orders([_c("+I", 1), _c("+I", 2), _c("+I", 3), _c("-D", 3)], model)
    assert extra.unsplit == "1 outputs after the last event's: -D[3]"


def _file(name: str):
    return scenario_from_dict(json.loads((SCENARIOS / name).read_text()))


def test_the_rocksdb_model_puts_the_later_payment_first_as_flink_did() -> None:
    scenario = _file("flink_later_before_earlier_rocksdb.json")
    flink_2_3 = [_c("+I", 1, "new", 1, 5), _c("+I", 1, "new", 1, 300), _c("-U", 1, "new", 1, 5),
                 _c("-U", 1, "new", 1, 300), _c("+U", 1, "paid", 1, 5), _c("+U", 1, "paid", 1, 300)]
    report = map_order.compare_orders(flink_2_3, map_order.model_per_event(scenario, 0))
    assert (report.ordered, report.agreed) == (3, 3)


def test_the_hashmap_model_predicts_flinks_hashmap_order() -> None:
    # orders JOIN items, items 2, 256, 1 arrive; the order's update re-emits them. Flink 2.3.0 on hashmap emitted
    # 256, 2, 1 (buckets 0, 1, 2 of the stored keys (case id 0, order 1, item)); on rocksdb 256, 1, 2.
    base = json.loads((paths.SCENARIOS / "anomalies" / "mapstate_order_rocksdb.json").read_text())
    base["config"] = {"state_backend": "hashmap"}
    for event in base["events"]:
        event.pop("expect", None)
    base.pop("expect_final", None)
    scenario = scenario_from_dict(base)
    items = [(1, 256, 1), (1, 2, 1), (1, 1, 1)]
    flink = ([_c("+I", 1, "new", *i) for i in [(1, 2, 1), (1, 256, 1), (1, 1, 1)]]
             + [_c("-U", 1, "new", *i) for i in items] + [_c("+U", 1, "paid", *i) for i in items])
    rule = map_order.compare_orders(flink, map_order.model_per_event(scenario, 0))
    assert (rule.ordered, rule.agreed) == (2, 2)
    arrival = map_order.compare_orders(flink, map_order.model_per_event(scenario, 0, "arrival"))
    assert arrival.unsplit is None and arrival.agreed < arrival.ordered
    # the case id is part of every stored row: another case of the same job may order the same rows otherwise
    moved = [map_order.model_per_event(scenario, cid)[4] for cid in range(6)]
    assert len({tuple(m) for m in moved}) > 1


def test_case_ids_count_the_cases_the_adapter_planned() -> None:
    ok, unsupported = CaseResult.ok(final=Counter()), CaseResult.unsupported("no")
    cases = [_file("flink_later_before_earlier_hashmap.json")] * 4     # one job shape
    assert map_order.adapter_case_ids(cases, [ok, unsupported, ok, ok], 20) == [0, 1, 1, 2]


def _caps(output: str, deterministic: bool, settings_: tuple[str, ...]) -> Capabilities:
    everything = Capabilities.everything()
    return Capabilities(everything.families, everything.join_types, everything.changelog_modes,
                        everything.column_types, everything.time_domains, False, output, deterministic, 500,
                        settings_)  # type: ignore[arg-type]


def test_the_property_needs_an_ordered_changelog_and_the_backend_setting() -> None:
    prop = next(p for p in SYSTEM_PROPERTIES if p.name == "emission_order_matches_backend")
    assert "final table only" in prop.draws(_caps("final", False, ("state_backend",)), "x")[1]
    assert "not deterministic" in prop.draws(_caps("changelog", False, ("state_backend",)), "x")[1]
    assert "state_backend" in prop.draws(_caps("changelog", True, ()), "x")[1]
    assert "map_state_order" in prop.draws(Capabilities.everything(), "reference")[1]
    assert prop.draws(_caps("changelog", True, ("state_backend",)), "flink")[1] is None


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(map_order_scenarios())
def test_generated_cases_keep_one_join_key_and_a_backend(scenario) -> None:
    assert scenario.config.state_backend in ("hashmap", "rocksdb")
    keys = {e.row[scenario.input(e.input).index_of("k")] for e in scenario.events}
    assert keys == {1}


def test_generated_cases_often_meet_several_stored_rows() -> None:
    seen = Counter()

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(map_order_scenarios())
    def probe(scenario) -> None:
        seen[any(len(p) >= 2 for p in map_order.model_per_event(scenario, 0))] += 1

    probe()
    assert seen[True] >= 20, seen


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(multiway_order_scenarios())
def test_multiway_cases_are_a_three_way_chain_on_one_key_whose_witness_meets_two_stored_rows(scenario) -> None:
    """The agreement measurement's multi-way family: planned as one multi-way join, and every case has an event
    (its witness) whose output walks two stored rows, so every case has an order to compare."""
    assert scenario.config.multi_join == "on" and scenario.join.inputs == ("a", "b", "c")
    assert set(scenario.join.types) <= {"inner", "left"}
    assert {e.row[scenario.input(e.input).index_of("k")] for e in scenario.events} == {1}
    assert any(len(p) >= 2 for p in map_order.model_per_event(scenario, 0)[:4])


def _dedupe_case() -> dict:
    return case_to_json("c", _file("flink_later_before_earlier_dedupe.json"))


def test_dedupe_becomes_flinks_deduplication_query() -> None:
    case_plan = program_module("case_plan")
    planned = case_plan.plan(_dedupe_case())
    select = planned.shape.select
    assert ("ROW_NUMBER() OVER (PARTITION BY t1cid, t1c0 ORDER BY t1pt DESC) AS t1rn FROM (SELECT t1cid, t1c0, "
            "t1c1, PROCTIME() AS t1pt FROM {v1})) WHERE t1rn = 1)") in select
    assert "{v0}" in select and "PROCTIME" not in select.split("JOIN")[0]
    assert planned.shape.job.state_backend == "rocksdb"


@pytest.mark.parametrize(("option", "message"), [
    ({"nobody": None}, "'nobody' is not an input"),
    ({"payments": ["amount_x"]}, "needs key columns it has"),
    (["payments"], "needs key columns it has"),   # payments has no unique key to default to
])
def test_a_bad_dedupe_option_is_a_case_error(option, message) -> None:
    case_plan = program_module("case_plan")
    case = _dedupe_case()
    case["scenario"]["config"]["dedupe_before_join"] = option
    with pytest.raises(case_plan.CaseError, match=message):
        case_plan.plan(case)


class _Answering(System):
    """A system that answers every case with a model's changelog (the case id as the Flink adapter gives it)."""

    name, version = "flink", "test"
    capabilities = replace(Capabilities.everything(), settings=("state_backend",))

    def __init__(self, order: MapStateOrder | None) -> None:
        self.order = order

    def run_cases(self, cases):
        return [CaseResult.ok(changelog=[c for piece in map_order.model_per_event(s, i, self.order) for c in piece])
                for i, s in enumerate(cases)]


@pytest.mark.parametrize(("order", "holds"), [(None, True), ("arrival", False)])
def test_the_property_holds_for_the_backends_model_and_fails_for_arrival_order(order: MapStateOrder | None,
                                                                              holds: bool) -> None:
    prop = next(p for p in SYSTEM_PROPERTIES if p.name == "emission_order_matches_backend")
    result = run_property(bind(prop, _Answering(order), batch=4), max_examples=40, seed=1, shrink=False)
    assert result.ok is holds
    assert result.exercised.compared >= (10 if holds else 1)   # a failure ends the run at its example
    if not holds:
        assert "hashmap state backend" in str(result.failure)
