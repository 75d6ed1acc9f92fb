"""Damaged captures in every format: `converge verify` gives the same outcome with its DuckDB fast path on and
off (the fast path only ever confirms agreement; every refusal and divergence is the strict path's).

The short run is part of the default suite; `--run-slow` runs the long one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.errors import ConvergeError
from converge.properties import verify_capture as strict_module
from converge.properties import verify_fast
from tests.conftest import examples
from tests.fuzz.hostile_captures import QUERY, SUFFIX, CaptureOp, damaged_captures, judge_capture
from tests.fuzz.outcomes import no_hang

FUZZ_SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}
_taken: list[int] = []


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fast-captures") / "captures"


def _outcome(paths: dict[str, Path], fast: bool) -> object:
    keep = strict_module.fast_verify
    if not fast:
        strict_module.fast_verify = lambda *args: None  # type: ignore[assignment]
    try:
        result = strict_module.verify_capture(QUERY, {"orders": paths["orders"], "payments": paths["payments"]},
                                              paths["output"])
    except ConvergeError as exc:
        return type(exc).__name__, str(exc)
    finally:
        strict_module.fast_verify = keep
    result.seconds = 0.0
    return result


def _same_outcome(case: tuple, folder: Path) -> None:
    with no_hang():
        judge_capture(case, folder)  # writes the damaged set under `folder`
        paths = {}
        for name in ("orders", "payments", "output"):
            path = folder / f"{name}{SUFFIX[case[0][name]]}"
            paths[name] = path if path.exists() or path.is_fifo() else Path(os.devnull)
        before = verify_fast.taken
        fast = _outcome(paths, fast=True)
        _taken.append(verify_fast.taken - before)
        assert fast == _outcome(paths, fast=False)


@settings(max_examples=examples(12), **FUZZ_SETTINGS)  # the 400-example run below: --run-slow
@given(damaged_captures())
def test_the_fast_path_never_changes_an_outcome(folder: Path, case: tuple) -> None:
    _same_outcome(case, folder)


@pytest.mark.slow
@settings(max_examples=examples(400), **FUZZ_SETTINGS)
@given(damaged_captures())
def test_the_fast_path_never_changes_an_outcome_long_run(folder: Path, case: tuple) -> None:
    _same_outcome(case, folder)


def test_the_undamaged_positioned_set_takes_the_fast_path(folder: Path) -> None:
    """The fuzz above compares something: its undamaged seed is confirmed by the fast path itself."""
    _taken.clear()
    _same_outcome(({"orders": "jsonl", "payments": "jsonl", "output": "jsonl"}, 0,
                   [CaptureOp("blank_lines", 0, 0)]), folder)
    assert _taken == [1]
