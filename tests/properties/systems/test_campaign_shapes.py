"""A system campaign sends many shapes (issue 39): at the default batch size a property's 200 cases are 20 batches
of 20 different shapes (a batch is one shape), and a small campaign is not Hypothesis's simplest shape alone."""

from __future__ import annotations

import pytest

from converge.engine.reference_system import ReferenceSystem
from converge.properties.systems.quota import REPEATS_AFTER, CaseQuota, FreshShapes
from converge.properties.systems.sent import Sent
from converge.properties.systems.specs import SYSTEM_PROPERTIES
from converge.reports.options import RunOptions
from converge.reports.run_reports import RunReports
from converge.systems.campaign import run_one
from tests.support.small_scenarios import TLP


def shapes_sent(key: str, examples: int, seed: int) -> int:
    prop = next(p for p in SYSTEM_PROPERTIES if p.key == key)
    run = run_one(prop, ReferenceSystem(), "test", RunOptions(examples=examples, seed=seed), [],
                  RunReports.open(None))
    assert run.sent is not None and run.result is not None and run.result.ok
    return len(run.sent.shapes)


@pytest.mark.parametrize("key", ["regular/final_equals_oracle", "multiway/final_equals_oracle"])
def test_two_hundred_cases_send_twenty_shapes(key: str) -> None:
    assert shapes_sent(key, 200, seed=1) >= 20  # before: 9 and 10 (10 batches of 20, shapes repeated)


def test_a_first_campaign_of_twenty_cases_sends_two_shapes() -> None:
    assert shapes_sent("regular/final_equals_oracle", 20, seed=2) == 2  # before: one batch, the simplest shape


def test_a_shape_sent_already_is_refused_until_a_batch_fails_or_nothing_new_comes() -> None:
    sent, quota = Sent(), CaseQuota(40, 10)
    fresh = FreshShapes(quota, sent)
    sent.add([TLP])
    assert fresh.admit("another shape") and not fresh.admit(repr((TLP.chain, TLP.join, TLP.config)))
    for _ in range(REPEATS_AFTER - 1):
        fresh.admit(repr((TLP.chain, TLP.join, TLP.config)))
    assert fresh.admit(repr((TLP.chain, TLP.join, TLP.config)))  # a small shape space still sends its cases
    quota.checked(10, ok=False)  # a failing batch: its replay must be taken whatever its shape
    assert fresh.admit(repr((TLP.chain, TLP.join, TLP.config)))
