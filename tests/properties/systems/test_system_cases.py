"""What a system campaign sends: interval streams an engine without the interleaving sees with no late row,
and no option that only steers converge's own engine model (docs/flink.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Scenario, WatermarkEvent
from converge.engine.model.scenario_json import dump_scenario
from converge.engine.model.system import Capabilities
from converge.engine.model.system_cases import ENGINE_MODEL_OPTIONS, case_to_json, engine_model_settings
from converge.engine.reference_system import ReferenceSystem
from converge.generators.interval import interval_join_scenarios
from converge.properties.systems.replay import replay_on_system
from converge.properties.systems.specs import SYSTEM_PROPERTIES, batches, bind
from converge.systems.flink.environment import program_module

FLINK_LIKE = Capabilities(("regular", "interval", "multiway"), ("inner", "left", "right", "full", "semi", "anti"),
                          ("insert_only", "retract", "upsert"), ("BIGINT", "VARCHAR"), ("event_time",), False,
                          "final", False, 500)
INTERVAL = next(p for p in SYSTEM_PROPERTIES if p.family == "interval")


def _rows_at_or_behind_a_watermark(scenario: Scenario) -> list[tuple]:
    """(row time, highest watermark sent before it on any input) for every row not above that watermark."""
    highest = None
    behind = []
    for event in scenario.events:
        if isinstance(event, WatermarkEvent):
            highest = event.watermark if highest is None else max(highest, event.watermark)
        elif isinstance(event, ChangeEvent) and highest is not None and event.row[1] <= highest:
            behind.append((event.row[1], highest))
    return behind


@settings(max_examples=80, deadline=None, database=None)
@given(interval_join_scenarios(above_every_watermark=True, strategies=("bounded", "creep", "jumps", "idle")))
def test_above_every_watermark_puts_each_row_above_every_earlier_watermark(scenario: Scenario) -> None:
    assert _rows_at_or_behind_a_watermark(scenario) == []


def test_without_the_option_rows_do_fall_behind_another_inputs_watermark() -> None:
    """The operator's (MIN) watermark is the generator's usual floor: the option is what makes the difference."""
    found = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(interval_join_scenarios(strategies=("jumps",), min_steps=8))
    def probe(scenario: Scenario) -> None:
        found.extend(_rows_at_or_behind_a_watermark(scenario))

    probe()
    assert found


def test_the_flink_adapter_runs_every_interval_case_a_system_campaign_draws() -> None:
    """The adapter refuses a row at or behind any watermark sent before it; the campaign draws none."""
    factory, reason = INTERVAL.draws(FLINK_LIKE, "flink")
    assert reason is None
    refused = []

    @settings(max_examples=40, deadline=None, database=None)
    @given(batches(factory(), 8))
    def probe(drawn: tuple) -> None:
        for scenario in drawn[0]:
            case = case_to_json("c", scenario)
            try:
                program_module("case_plan").plan(case)
            except program_module("case_plan").Untranslatable as exc:
                refused.append(str(exc))

    probe()
    assert refused == []


def test_no_system_property_draws_an_engine_model_option() -> None:
    caps = Capabilities.everything()
    drawn_settings = []
    for prop in SYSTEM_PROPERTIES:
        @settings(max_examples=25, deadline=None, database=None)
        @given(batches(prop.draws(caps, "reference")[0](), 4))
        def probe(drawn: tuple) -> None:
            drawn_settings.extend(engine_model_settings(s) for s in drawn[0])

        probe()
    assert drawn_settings and all(s == {} for s in drawn_settings)


def _left_join() -> Scenario:
    return _first_drawn(next(p for p in SYSTEM_PROPERTIES if p.key == "regular/final_equals_oracle"))


def _first_drawn(prop) -> Scenario:
    found: list[Scenario] = []

    @settings(max_examples=1, deadline=None, database=None)
    @given(prop.draws(Capabilities.everything(), "reference")[0]())
    def take(scenario: Scenario) -> None:
        found.append(scenario)

    take()
    return found[0]


@pytest.mark.parametrize("setting", [{"semantics": "flink"}, {"map_state_order": "hashmap"},
                                     {"per_key_order": "disordered"}, {"min_cleanup_interval_ms": 4}])
def test_a_campaign_check_refuses_a_case_that_sets_an_engine_model_option(setting: dict) -> None:
    (key,) = setting
    assert key in ENGINE_MODEL_OPTIONS
    prop = next(p for p in SYSTEM_PROPERTIES if p.key == "reference/system_equals_reference")
    scenario = _left_join()
    spec = bind(prop, ReferenceSystem())
    spec.check([scenario])  # the drawn case itself is fine
    changed = replace(scenario, config=replace(scenario.config, **setting))
    with pytest.raises(BadInputError, match=f"{key}=.* steers converge's own engine model"):
        spec.check([changed])


def test_replay_on_a_system_skips_the_reference_comparison_of_a_file_that_models_an_anomaly(tmp_path: Path
                                                                                          ) -> None:
    scenario = _left_join()
    path = tmp_path / "case.json"
    dump_scenario(replace(scenario, config=replace(scenario.config, semantics="flink")), path)
    with ReferenceSystem() as system:
        outcome = replay_on_system(path, system, "reference")
    # nothing decides the file on a system (no oracle for semantics=flink, no reference comparison): not checked
    assert outcome.problems == [f"NotCheckedError: {system.title} compared nothing: no check applies to this file "
                                f"on a system"] and outcome.divergences == []
    assert outcome.label == "not checked" and outcome.exit_code == 2
    assert any(c.startswith("system_equals_reference (not checked: semantics='flink'") for c in outcome.checked)
    assert "system_equals_reference" not in outcome.checked
