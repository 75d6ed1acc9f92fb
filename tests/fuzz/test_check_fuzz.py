"""Damaged and hostile SQL files: `converge check` answers every one with a typed outcome, in bounded time.

The short run is part of the default suite; `--run-slow` runs the long one
(CONVERGE_EXAMPLES scales both). `python -m tests.fuzz.campaign --surface check`
runs the same judge over thousands of files and counts the outcomes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import examples
from tests.fuzz.hostile_sql import SEED_SQL, SqlOp, apply_sql, classify_sql, hostile_sql

FUZZ_SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


@pytest.fixture(scope="module")
def query_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile-sql") / "query.sql"


@settings(max_examples=examples(12), **FUZZ_SETTINGS)  # the 3000-example run below: --run-slow
@given(hostile_sql())
def test_a_hostile_query_gets_a_typed_outcome(query_file: Path, case: tuple[bytes, list]) -> None:
    classify_sql(case[0], query_file)


@pytest.mark.slow
@settings(max_examples=examples(3000), **FUZZ_SETTINGS)
@given(hostile_sql())
def test_a_hostile_query_gets_a_typed_outcome_long_run(query_file: Path, case: tuple[bytes, list]) -> None:
    classify_sql(case[0], query_file)


@pytest.mark.parametrize("index", range(len(SEED_SQL)))
def test_every_undamaged_seed_is_read_and_runs(query_file: Path, index: int) -> None:
    """The seeds are valid: damage is what makes a file fail, never the seed."""
    assert classify_sql(SEED_SQL[index], query_file) == "read and run"


@pytest.mark.parametrize("op", [SqlOp("nest", 0, 60), SqlOp("not_chain", 0, 299), SqlOp("and_chain", 0, 599),
                                SqlOp("literal", 0, 0), SqlOp("literal", 0, 2),
                                SqlOp("bad_bytes", 300, 0), SqlOp("duplicate", 2, 0)], ids=repr)
def test_the_damage_the_probes_found_is_refused_not_crashed(query_file: Path, op: SqlOp) -> None:
    """Each damage that crashed or misplaced a refusal on main, on every seed: a refusal at file:line:col."""
    for seed in SEED_SQL:
        assert classify_sql(apply_sql(op, seed), query_file).startswith("refused")
