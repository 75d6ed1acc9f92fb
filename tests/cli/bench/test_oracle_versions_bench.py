"""`converge bench --only oracle_query_cost`: the measurement runs in this interpreter and in another one.

Only what the benchmark measured and reported is checked, never how fast.
"""

from __future__ import annotations

import sys

import duckdb
import pytest

from converge.cli.bench import run_benchmarks
from converge.cli.benches import oracle_versions
from converge.engine.model.errors import BadInputError
from converge.reports.options import BenchConfig


def test_the_drawn_scenarios_are_the_property_s() -> None:
    scenarios = oracle_versions.property_scenarios(8)
    assert scenarios, "the fixed seed drew no scenario"
    assert all(s.config.semantics == "correct" for s in scenarios)
    again = oracle_versions.property_scenarios(8)
    assert [s.events for s in again] == [s.events for s in scenarios]  # one seed, one draw


def test_another_interpreter_is_measured_beside_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(oracle_versions.OTHER_PYTHON, sys.executable)
    doc = run_benchmarks(BenchConfig(examples=3, rounds=1, only=("oracle_query_cost",), out=None))
    result = doc["results"]["oracle_query_cost"]
    assert result["this"]["duckdb"] == result["other"]["duckdb"] == duckdb.__version__
    assert result["this"]["queries"] == result["other"]["queries"] > 0
    assert result["note"] == f"both interpreters have DuckDB {duckdb.__version__}"
    assert set(result) >= {"cpu_ms_per_query_ratio_other_to_this", "sql_only_cpu_ms_per_query_ratio_other_to_this"}


def test_without_another_interpreter_the_result_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(oracle_versions.OTHER_PYTHON, raising=False)
    result = oracle_versions.BENCHES["oracle_query_cost"](BenchConfig(examples=2, rounds=1, out=None))
    assert result["other"].startswith("not measured: set CONVERGE_BENCH_OTHER_PYTHON")
    assert result["this"]["queries"] > 0


def test_an_interpreter_that_is_not_there_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(oracle_versions.OTHER_PYTHON, "/nonexistent/python")
    with pytest.raises(BadInputError, match="CONVERGE_BENCH_OTHER_PYTHON='/nonexistent/python' is not a file"):
        run_benchmarks(BenchConfig(examples=2, rounds=1, only=("oracle_query_cost",), out=None))
