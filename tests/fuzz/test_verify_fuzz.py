"""Damaged captures in every format: `converge verify` answers every set with a typed outcome, in bounded time.

The short run is part of the default suite; `--run-slow` runs the long one
(CONVERGE_EXAMPLES scales both). `python -m tests.fuzz.campaign --surface verify`
runs the same judge over thousands of capture sets and counts the outcomes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import examples
from tests.fuzz.hostile_captures import (
    FORMATS,
    OUTPUT_FORMATS,
    UPSERT_FORMATS,
    WRONG_TYPES,
    CaptureOp,
    classify_capture,
    damaged_captures,
)

FUZZ_SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile-captures") / "captures"


@settings(max_examples=examples(15), **FUZZ_SETTINGS)  # the 3000-example run below: --run-slow
@given(damaged_captures())
def test_a_damaged_capture_gets_a_typed_outcome(folder: Path, case: tuple) -> None:
    classify_capture(case, folder)


@pytest.mark.slow
@settings(max_examples=examples(3000), **FUZZ_SETTINGS)
@given(damaged_captures())
def test_a_damaged_capture_gets_a_typed_outcome_long_run(folder: Path, case: tuple) -> None:
    classify_capture(case, folder)


@pytest.mark.parametrize("source", FORMATS)
@pytest.mark.parametrize("output", OUTPUT_FORMATS)
def test_undamaged_captures_pass_in_every_format(folder: Path, source: str, output: str) -> None:
    """The seeds agree with the batch answer in every format pair (positions or not): damage makes them fail."""
    orders = source if source in UPSERT_FORMATS else "jsonl"
    case = ({"orders": orders, "payments": source, "output": output}, 0, [CaptureOp("blank_lines", 0, 0)])
    assert classify_capture(case, folder) == "passed"


@pytest.mark.parametrize("target, fmt", [(0, "jsonl"), (1, "debezium"), (2, "jsonl")])
def test_every_wrong_json_type_in_every_column_gets_a_typed_outcome(folder: Path, target: int, fmt: str) -> None:
    """The fuzz's wrong-type damage, tried on records of one file per JSON format: each
    column (orders: BIGINT, INT, DECIMAL; payments also STRING; the output all of them) against each value."""
    formats = {"orders": "jsonl", "payments": "jsonl", "output": "jsonl", **{("orders", "payments", "output")[target]:
                                                                            fmt}}
    outcomes = set()
    for where in range(6):  # a column index, taken modulo the record's columns
        for what in range(len(WRONG_TYPES)):
            outcomes.add(classify_capture((formats, target, [CaptureOp("wrong_type", where, what)]), folder))
    assert "refused: bad input" in outcomes, outcomes
