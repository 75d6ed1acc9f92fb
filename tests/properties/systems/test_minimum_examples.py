"""The fewest --examples at which each system property compares a case (docs/systems.md states them; issue 41
row 2: `converge run --system flink --examples 20` ended "not checked" because no case of
emission_order_matches_backend visited two or more stored rows)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from converge.engine.model.system import Capabilities, CaseResult, System
from converge.engine.reference_system import ReferenceSystem
from converge.properties.systems.case_id import adapter_case_ids
from converge.properties.systems.order_model import model_per_event
from converge.properties.systems.specs import SYSTEM_PROPERTIES, SystemProperty
from converge.reports.options import RunOptions
from converge.reports.run_reports import RunReports
from converge.systems.campaign import run_one
from tests.support.paths import ROOT

SEEDS = (1, 2, 3)


class VisitingInFlinksOrder(System):
    """A system that answers with the changelog Flink's MapState visiting order gives (the model's), with the
    case ids the Flink adapter gives: the emission-order property compares on it."""

    name, version = "flink", "test"
    capabilities = replace(Capabilities.everything(), settings=("state_backend",))

    def run_cases(self, cases):
        ids = adapter_case_ids(cases, [CaseResult.ok(changelog=[]) for _ in cases], self.capabilities.max_batch)
        return [CaseResult.ok(changelog=[c for piece in model_per_event(s, i) for c in piece])
                for s, i in zip(cases, ids, strict=True)]


def stated() -> dict[str, int]:
    """docs/systems.md's table: property -> the fewest --examples that compare a case."""
    text = (ROOT / "docs" / "systems.md").read_text(encoding="utf-8")
    section = text.split("**The fewest examples that compare something.**", 1)[1].split("**Progress.**", 1)[0]
    return {key: int(n) for key, n in re.findall(r"^\| ([a-z_]+/[a-z_]+) \| (\d+) \|$", section, re.MULTILINE)}


def system_for(prop: SystemProperty) -> System:
    return VisitingInFlinksOrder() if prop.name == "emission_order_matches_backend" else ReferenceSystem()


def compared(prop: SystemProperty, examples: int, seed: int, batch: int = 20) -> int:
    run = run_one(prop, system_for(prop), "test", RunOptions(examples=examples, seed=seed, batch=batch), [],
                  RunReports.open(None))
    assert run.result is not None and run.reason is None, run.reason
    return run.result.exercised.compared


def test_the_table_names_every_system_property() -> None:
    assert list(stated()) == [p.key for p in SYSTEM_PROPERTIES]


@pytest.mark.parametrize("prop", SYSTEM_PROPERTIES, ids=lambda p: p.key)
def test_each_property_compares_a_case_at_its_stated_minimum(prop: SystemProperty) -> None:
    n = stated()[prop.key]
    assert all(compared(prop, n, seed) >= 1 for seed in SEEDS)
    if n > 1:  # and it is the fewest: one fewer compares nothing on some seed
        assert any(compared(prop, n - 1, seed) == 0 for seed in SEEDS)


def test_every_batch_of_the_emission_order_property_compares_an_order() -> None:
    prop = next(p for p in SYSTEM_PROPERTIES if p.name == "emission_order_matches_backend")
    for seed in SEEDS:  # 20 cases in batches of 4: five batches, each led by a witness
        assert compared(prop, 20, seed, batch=4) >= 5
