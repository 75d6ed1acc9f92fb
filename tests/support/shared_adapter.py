"""What the test sessions of the shipped systems (Flink, Pathway) share: one adapter process per session,
borrowed by every campaign, and the rule for an environment that is missing.

A missing environment skips its tests with the reason, unless its CONVERGE_REQUIRE_<SYSTEM>=1 is set (CI),
which makes it a failure: CI must never pass a system's tests by skipping them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import pytest

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import CaseResult, System
from converge.systems.adapter.client import AdapterSystem


def unavailable(system: str, reason: str, hint: str = "") -> None:
    """Skip (or, under CONVERGE_REQUIRE_<SYSTEM>=1, fail) the tests that need `system`'s environment."""
    flag = f"CONVERGE_REQUIRE_{system.upper()}"
    if os.environ.get(flag) == "1":
        pytest.fail(f"{flag}=1 but the {system} environment is unavailable: {reason}")
    pytest.skip(f"{system} environment unavailable: {reason}" + (f"; install it with `{hint}`" if hint else ""))


def session_adapter(command: list[str], label: str) -> Iterator[AdapterSystem]:
    """The started adapter as converge's client holds it; shut down, and its exit status checked, at the end."""
    system = AdapterSystem(command, label=label)
    try:
        yield system
        code = system.process.shutdown(30.0)
        assert code == 0, f"the adapter exited with {code} after shutdown; stderr: {system.process.stderr_tail()}"
    finally:
        system.process.kill()


class Borrowed(System):
    """The session's system for one campaign: everything passes through but close()."""

    def __init__(self, system: AdapterSystem) -> None:
        self.system = system
        self.name, self.version, self.capabilities = system.name, system.version, system.capabilities

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return self.system.run_cases(cases)
