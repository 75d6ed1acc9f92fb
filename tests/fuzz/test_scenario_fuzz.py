"""Damaged scenario files: converge answers every one with a typed outcome, in bounded time.

The short run is part of the default suite; `--run-slow` runs the long one
(CONVERGE_FUZZ_EXAMPLES sets its size). tests/fuzz/campaign.py runs the same
judge over tens of thousands of files and counts the outcomes.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import examples
from tests.fuzz.damage import SEED_BYTES, SEED_FILES, damaged_files
from tests.fuzz.outcomes import classify

OUTCOMES: Counter[str] = Counter()
FUZZ_SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _check(case: tuple[str, bytes, list]) -> None:
    name, data, _ = case
    OUTCOMES[classify(data, name)] += 1


@settings(max_examples=examples(150), **FUZZ_SETTINGS)
@given(damaged_files)
def test_a_damaged_file_gets_a_typed_outcome(case: tuple[str, bytes, list]) -> None:
    _check(case)


@pytest.mark.slow
@settings(max_examples=examples(3000), **FUZZ_SETTINGS)
@given(damaged_files)
def test_a_damaged_file_gets_a_typed_outcome_long_run(case: tuple[str, bytes, list]) -> None:
    _check(case)


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_every_undamaged_seed_is_read_and_runs(path) -> None:
    """The fuzz seeds themselves are valid: damage is what makes a file fail, never the seed."""
    outcome = classify(SEED_BYTES[SEED_FILES.index(path)], path.name)
    assert outcome.startswith("ran"), outcome
    assert "expectations differ" not in outcome, outcome
