"""A system's fault stops its property at once: run_property neither shrinks nor replays a failed example on a
system that is gone, so the fault comes back as itself, never as Hypothesis's "Inconsistent results"."""

from __future__ import annotations

from hypothesis import strategies as st

from converge.engine.model.errors import SystemUnderTestError, label
from converge.properties.campaign import run_property
from converge.properties.spec import PropertySpec


def test_a_system_error_stops_the_property_at_the_first_fault_and_is_its_outcome() -> None:
    calls: list[int] = []

    def check(n: int) -> None:
        calls.append(n)
        if len(calls) == 3:
            raise SystemUnderTestError(f"adapter fake, run request {len(calls)}: it wrote a line that is not JSON")
        if len(calls) > 3:  # a replay on the dead system: what used to turn the fault into a flaky test
            raise SystemUnderTestError("adapter fake: it stopped reading its input")

    spec = PropertySpec("systems", "faulty", lambda: st.integers(0, 10**6).map(lambda n: (n,)), check, 50, "")
    result = run_property(spec, max_examples=50, seed=1)
    assert len(calls) == 3 and result.examples == 3
    assert isinstance(result.error, SystemUnderTestError) and label(result.error) == "system error"
    assert "run request 3: it wrote a line that is not JSON" in str(result.error)
    assert result.failure_args == (calls[2],) and result.failures == 1


def test_another_error_is_still_shrunk() -> None:
    def check(n: int) -> None:
        if n >= 1000:
            raise ValueError(f"{n} is too big")

    spec = PropertySpec("systems", "shrunk", lambda: st.integers(0, 10**6).map(lambda n: (n,)), check, 200, "")
    result = run_property(spec, max_examples=200, seed=1)
    assert isinstance(result.error, ValueError) and result.failure_args == (1000,)
