"""Many cases at once (NativeJoinSystem.run_many) give each case the run one query at a time gives.

Each case is still its own streaming query, so what could go wrong is sharing: a sink, a session conf (the
watermark policy), a work folder or Spark's progress reaching the wrong case. The default test runs four of the
hand-worked cases (tests/systems/spark/native_cases, outputs per epoch worked out by hand) both ways; the slow one a
seeded draw of the campaign's cases. Both compare every epoch's output, watermark, state rows and input rows,
and the six properties' verdicts.
"""

from __future__ import annotations

import pytest

from converge.engine.model.native_join_case import load_case
from converge.properties.divergence import PropertyFailure
from tests.support.paths import NATIVE_CASES

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]  # as tests/systems/spark/test_spark_runtime.py
CASES = NATIVE_CASES
# different joins and policies, so a conf or a sink reaching the wrong query would show
# (and one Spark rejects when it starts, between them: its answer must stay in its place)
HAND_WORKED = ("outer_after_watermark", "max_policy", "left_anti_rejected", "semi_once")


@pytest.fixture(scope="module")
def system(spark):
    from converge.systems.spark.system import NativeJoinSystem

    with NativeJoinSystem() as system:
        yield system


def _epochs(run) -> list[tuple]:
    return [(e.batch_id, sorted(e.output, key=repr), e.watermark_ms, e.state_rows, e.input_rows) for e in run.epochs]


def _verdicts(case, run) -> dict[str, str]:
    from converge.properties.native_join.checks import NATIVE_PROPERTIES, check_run

    out = {}
    for prop in NATIVE_PROPERTIES:
        try:
            out[prop.name] = "exercised" if check_run(prop, case, run) else "not exercised"
        except PropertyFailure as exc:
            out[prop.name] = f"failed: {exc}"
    return out


def _compare_both_ways(system, cases) -> list:
    at_once = system.run_many(cases, concurrency=len(cases))
    alone = system.run_many(cases, concurrency=1)
    assert len(at_once) == len(alone) == len(cases)
    for case, a, b in zip(cases, at_once, alone, strict=False):
        assert (a.status, a.message) == (b.status, b.message), case.name
        assert _epochs(a) == _epochs(b), case.name
        assert _verdicts(case, a) == _verdicts(case, b), case.name
    return at_once


def test_hand_worked_cases_at_once_match_their_expectations_and_one_at_a_time(system) -> None:
    cases = [load_case(CASES / f"{name}.json") for name in HAND_WORKED]
    runs = _compare_both_ways(system, cases)
    for case, run in zip(cases, runs, strict=False):
        want = case.meta.get("expect_epochs")
        if want is not None:   # epochs the file names, by hand; the others must be empty
            got = {str(e.batch_id): sorted([list(p) for p in e.output], key=repr) for e in run.epochs if e.output}
            assert got == {k: sorted(v, key=repr) for k, v in want.items() if v}, case.name
        if case.meta.get("expect_output") is not None:
            assert sorted(map(list, run.output()), key=repr) == sorted(case.meta["expect_output"], key=repr), case.name
        if case.meta.get("expect_status") is not None:
            assert run.status == case.meta["expect_status"] and "LeftAnti" in run.message, case.name
    assert all(len(case.meta.keys() & {"expect_epochs", "expect_output", "expect_status"}) for case in cases)
    assert [e.watermark_ms for e in runs[0].epochs] == [0, 97000, 125000, 155000, 176000]   # as the file says
    assert [e.watermark_ms for e in runs[1].epochs][:3] == [0, 95000, 195000]               # the max policy's


def test_a_bad_concurrency_is_refused(system) -> None:
    from converge.engine.model.errors import ApiMisuseError

    with pytest.raises(ApiMisuseError, match="concurrency=0"):
        system.run_many([load_case(CASES / "semi_once.json")], concurrency=0)


@pytest.mark.slow
def test_drawn_cases_at_once_match_one_at_a_time(system) -> None:
    from converge.systems.spark.campaign import drawn_cases

    cases = drawn_cases(12, 7)
    assert len(cases) >= 8
    _compare_both_ways(system, cases)
