"""A system campaign sends many shapes (issue 39): a property's 200 cases are at least 20 shapes whatever the batch
size (a batch holds shapes of at most 10 cases), and a small campaign is not Hypothesis's simplest shape alone."""

from __future__ import annotations

import pytest

from converge.engine.reference_system import ReferenceSystem
from converge.properties.systems.quota import REPEATS_AFTER, CaseQuota, FreshShapes
from converge.properties.systems.sent import Sent
from converge.properties.systems.specs import SYSTEM_PROPERTIES, shape_sizes
from converge.reports.options import RunOptions
from converge.reports.run_reports import RunReports
from converge.systems.campaign import run_one
from tests.support.small_scenarios import TLP


def shapes_sent(key: str, examples: int, seed: int, batch: int | None = None) -> int:
    prop = next(p for p in SYSTEM_PROPERTIES if p.key == key)
    run = run_one(prop, ReferenceSystem(), "test", RunOptions(examples=examples, seed=seed, batch=batch), [],
                  RunReports.open(None))
    assert run.sent is not None and run.result is not None and run.result.ok
    assert run.quota is not None and run.quota.sent == examples
    return len(run.sent.shapes)


@pytest.mark.parametrize("key", ["regular/final_equals_oracle", "multiway/final_equals_oracle"])
def test_two_hundred_cases_send_twenty_shapes(key: str) -> None:
    assert shapes_sent(key, 200, seed=1) >= 20  # before: 9 and 10 (10 batches of 20, shapes repeated)


def test_batches_of_forty_send_four_shapes_each() -> None:
    """Flink's default batch (40 cases a run request): 200 cases in 5 batches are still 20 shapes."""
    assert shapes_sent("regular/final_equals_oracle", 200, seed=1, batch=40) >= 20


@pytest.mark.parametrize(("size", "sizes"), [(1, [1]), (10, [10]), (11, [6, 5]), (25, [9, 8, 8]), (40, [10] * 4)])
def test_a_batch_is_cut_into_as_few_shapes_as_ten_cases_a_shape_allow(size: int, sizes: list[int]) -> None:
    assert shape_sizes(size) == sizes


def test_a_first_campaign_of_twenty_cases_sends_two_shapes() -> None:
    assert shapes_sent("regular/final_equals_oracle", 20, seed=2) == 2  # before: one batch, the simplest shape


def test_a_shape_sent_already_is_refused_until_a_batch_fails_or_nothing_new_comes() -> None:
    sent, quota = Sent(), CaseQuota(40, 10)
    fresh = FreshShapes(quota, sent)
    sent.add([TLP])
    old = repr((TLP.chain, TLP.join, TLP.config))
    assert fresh.admit(["another shape"]) and fresh.admit(["one", "two"])
    assert not fresh.admit([old]) and not fresh.admit(["new", old])
    assert not fresh.admit(["new", "new"])  # one shape twice in a batch
    for _ in range(REPEATS_AFTER - 3):
        fresh.admit([old])
    assert fresh.admit([old])  # a small shape space still sends its cases
    quota.checked(10, ok=False)  # a failing batch: its replay must be taken whatever its shape
    assert fresh.admit([old])


def test_without_batch_a_campaign_takes_its_system_types_default(capsys) -> None:
    """`--batch` unset: the system type's default_batch (80 on Flink: FlinkSystemType); 85 cases are a batch of 80
    (eight shapes) and one of 5."""
    from converge.systems.campaign import run_system_campaign
    from converge.systems.flink.system_type import FlinkSystemType
    from converge.systems.reference import ReferenceSystemType

    class LikeFlink(ReferenceSystemType):
        default_batch = FlinkSystemType.default_batch

    options = RunOptions(examples=85, seed=3, family="regular", property="final_equals_oracle", reports=None)
    assert run_system_campaign(options, LikeFlink("reference")) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if "final_equals_oracle" in line and "passed" in line)
    assert row.split()[5:8] == ["85", "2", "85"], row  # examples, batches, cases
