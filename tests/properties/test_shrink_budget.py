"""Shrinking stops at its time budget with the best failing case found by then (properties/budget.py).

The checks here are slow only on a fake clock: each call advances it, so a
budget is spent after a known number of checks and no test sleeps.
"""

from __future__ import annotations

import contextlib
import io
import time

import hypothesis.internal.conjecture.engine as hypothesis_engine
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.properties.campaign import run_property
from converge.properties.spec import PropertySpec

LIMIT = 1000
HYPOTHESIS_GIVES_UP = "PLEASE REPORT THIS"


class SlowCheck:
    """A check that costs `cost` seconds of a fake clock and fails when a list's sum passes LIMIT."""

    def __init__(self, cost: float, *, wide: bool = False) -> None:
        self.now, self.cost, self.calls, self.wide = 0.0, cost, 0, wide

    def clock(self) -> float:
        return self.now

    def __call__(self, xs: list[int]) -> None:
        self.calls += 1
        self.now += self.cost
        if self.fails(xs):
            raise AssertionError(f"sum {sum(xs)} over {len(xs)} numbers")

    def fails(self, xs: list[int]) -> bool:
        return sum(xs) > LIMIT and (not self.wide or len(xs) >= 5)


def spec_of(check: SlowCheck, max_size: int | None = None) -> PropertySpec:
    numbers = st.lists(st.integers(0, 10**6), min_size=1, max_size=max_size)
    return PropertySpec("fake", "slow_sum", lambda: st.tuples(numbers), check, examples=50)


def quietly(fn):
    """fn() with stdout and stderr captured: (its value, everything printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        value = fn()
    return value, out.getvalue()


def test_a_budget_not_spent_shrinks_to_the_minimal_case_and_records_no_stop() -> None:
    check = SlowCheck(cost=1.0)
    result, printed = quietly(lambda: run_property(spec_of(check), seed=3, shrink_budget=200, clock=check.clock))
    assert isinstance(result.error, AssertionError)
    assert result.failure_args == ([LIMIT + 1],)  # the smallest list failing: one number just over the limit
    assert result.shrink_stopped is None
    assert HYPOTHESIS_GIVES_UP not in printed


def test_the_default_budget_keeps_the_shrink_of_a_fast_property_unchanged() -> None:
    check = SlowCheck(cost=0.001)
    result, _ = quietly(lambda: run_property(spec_of(check), seed=3, clock=check.clock))
    assert result.failure_args == ([LIMIT + 1],) and result.shrink_stopped is None


def test_a_spent_budget_stops_shrinking_with_a_failing_case_and_says_so() -> None:
    unbounded = SlowCheck(cost=1.0)
    quietly(lambda: run_property(spec_of(unbounded), seed=3, shrink_budget=200, clock=unbounded.clock))
    check = SlowCheck(cost=1.0)
    result, printed = quietly(lambda: run_property(spec_of(check), seed=3, shrink_budget=5, clock=check.clock))
    assert result.shrink_stopped == 5.0
    (numbers,) = result.failure_args
    assert check.fails(numbers)  # the case reported still fails: the best found within the budget
    assert numbers != [LIMIT + 1]  # and shrinking really was cut short
    assert check.calls < unbounded.calls
    assert result.examples == check.calls
    assert HYPOTHESIS_GIVES_UP not in printed and "Flaky" not in printed


def test_a_budget_of_zero_reports_the_first_failing_case() -> None:
    check = SlowCheck(cost=1.0)
    result, _ = quietly(lambda: run_property(spec_of(check), seed=3, shrink_budget=0, clock=check.clock))
    assert result.shrink_stopped == 0.0 and check.fails(result.failure_args[0])


class FakeTime:
    """Hypothesis's engine reading the fake clock, so its own five-minute shrink limit can be reached."""

    def __init__(self, check: SlowCheck) -> None:
        self.check = check

    def __getattr__(self, name: str):
        return getattr(time, name)

    def perf_counter(self) -> float:
        return self.check.now

    def monotonic(self) -> float:
        return self.check.now


def test_hypothesis_gives_up_on_this_slow_shrink_by_itself(monkeypatch) -> None:
    """The control for the test below: without converge's budget, Hypothesis prints its own warning."""
    check = SlowCheck(cost=10.0, wide=True)
    monkeypatch.setattr(hypothesis_engine, "time", FakeTime(check))

    @settings(database=None, max_examples=100, deadline=None)
    @given(st.lists(st.integers(0, 10**6), max_size=30))
    def bare(xs: list[int]) -> None:
        check(xs)

    _, printed = quietly(lambda: pytest.raises(AssertionError, bare))
    assert HYPOTHESIS_GIVES_UP in printed


def test_the_budget_stops_before_hypothesis_gives_up_by_itself(monkeypatch) -> None:
    check = SlowCheck(cost=10.0, wide=True)
    monkeypatch.setattr(hypothesis_engine, "time", FakeTime(check))
    result, printed = quietly(lambda: run_property(spec_of(check, max_size=30), seed=1, clock=check.clock))
    assert HYPOTHESIS_GIVES_UP not in printed and "Flaky" not in printed
    assert result.shrink_stopped == 120.0  # the default budget, spent on the fake clock
    assert check.fails(result.failure_args[0])


@pytest.mark.parametrize("budget", [-1, 241, float("nan"), True, "60"])
def test_a_budget_converge_cannot_keep_is_refused(budget) -> None:
    with pytest.raises(ApiMisuseError, match="shrink_budget"):
        run_property(spec_of(SlowCheck(1.0)), shrink_budget=budget)


def test_a_budget_spent_just_as_hypothesis_replays_its_best_case_stops_nothing() -> None:
    """The final replay of the best case fails again as before (no Flaky), and shrinking had finished."""
    first = SlowCheck(cost=1.0)
    starts: list[float] = []
    failed_at: list[float] = []

    def timed(xs: list[int]) -> None:
        starts.append(first.now)
        try:
            first(xs)
        except AssertionError:
            failed_at.append(first.now)
            raise

    spec = PropertySpec("fake", "slow_sum", lambda: st.tuples(st.lists(st.integers(0, 10**6), min_size=1)), timed,
                        examples=50)
    finished, _ = quietly(lambda: run_property(spec, seed=3, shrink_budget=200, clock=first.clock))
    spent_at_replay = starts[-1] - failed_at[0]  # the last call is Hypothesis's replay of its best case
    again = SlowCheck(cost=1.0)
    result, printed = quietly(lambda: run_property(spec_of(again), seed=3, shrink_budget=spent_at_replay,
                                                   clock=again.clock))
    assert result.shrink_stopped is None and result.failure_args == finished.failure_args == ([LIMIT + 1],)
    assert again.calls == first.calls - 1  # everything but the replay ran; the replay answered as before
    assert "Flaky" not in printed

