"""Hand-written interval scenarios, replayed without their expectations: every applicable property decides them.

Their expectations (written by hand from Flink's algorithm) are replayed by
tests/properties/test_scenarios.py; here the same streams go through the step model, the
oracle properties and the invariants, which must agree with those hand-written
answers, Flink's quirks included.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from converge.engine.model.scenario_json import load_scenario
from converge.properties.interval import applicable
from tests.support.paths import SCENARIOS

FILES = sorted((SCENARIOS / "interval").glob("*.json"))


def _stripped(path: Path):
    s = load_scenario(path)
    return replace(s, events=tuple(replace(e, expect=None) for e in s.events), expect_final=None,
                   expect_changelog=None)


def test_there_are_interval_scenarios() -> None:
    assert len(FILES) >= 12


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_properties_decide_the_stream(path: Path) -> None:
    scenario = _stripped(path)
    props = applicable(scenario)
    names = [n for n, _ in props]
    assert "matches_step_model" in names and "output_watermarks" in names
    for _, check in props:
        check(scenario)


def test_applicable_follows_lateness_and_semantics() -> None:
    by_name = {p.name: p for p in FILES}
    quirk = [n for n, _ in applicable(_stripped(by_name["flink_quirk_nonpositive_time_clears_cache.json"]))]
    assert "late_records_bounded" not in quirk and "no_late_equals_oracle" not in quirk   # flink, late rows
    late = [n for n, _ in applicable(_stripped(by_name["late_rows_cache_rule_and_padding.json"]))]
    assert "late_records_bounded" in late and "no_late_equals_oracle" not in late
    on_time = [n for n, _ in applicable(_stripped(by_name["bounds_inclusive.json"]))]
    assert "no_late_equals_oracle" in on_time and "disorder_invariance" in on_time
    proc = [n for n, _ in applicable(_stripped(by_name["processing_time_join.json"]))]
    assert "no_late_equals_oracle" in proc and "disorder_invariance" not in proc
