"""Every hand-written scenario file replays to exactly its expected emits (or, with none, passes the oracle)."""

from __future__ import annotations

from pathlib import Path

import pytest

from converge.properties.replay import replay_path
from tests.support.paths import SCENARIOS

FILES = sorted(SCENARIOS.rglob("*.json"))


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SCENARIOS)) for p in FILES])
def test_scenario_replays(path: Path) -> None:
    (outcome,) = replay_path(path)
    assert outcome.ok, "\n".join(outcome.problems)
    assert outcome.checked, "nothing was checked"
