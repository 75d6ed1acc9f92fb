"""The oracle's per-query cost under this interpreter's DuckDB and, side by side, under another interpreter's.

`oracle_query_cost` draws the prefix-consistency property's scenarios (the
regular generator, streams of 16-30 operations, the same seed every time) and
times the snapshot-history query the property sends for each (streams that
short are all compared in the snapshot form, properties/history_check.py):

* ``first_pass_cpu_ms``: the first query of each scenario, the guard's checks
  of its join conditions included (what a campaign pays for a new join);
* ``cpu_ms_per_query``: the same queries again (the guard's answers cached),
  the median of ``--rounds`` passes: Python's rendering plus DuckDB's work;
* ``sql_only_cpu_ms_per_query``: the rendered SQL text alone through DuckDB
  (parse, plan, run, fetch), the median of the passes.

Each is CPU time per query (the oracle's connection runs one thread, so other
jobs on the cores do not inflate it), with the wall time beside it.

When ``CONVERGE_BENCH_OTHER_PYTHON`` names another interpreter that has
converge installed (typically a venv with a different DuckDB), the same
measurement runs there in a child process, and the result gives both and the
ratios other/this. Unset, the result says that only this interpreter was
measured.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
from hypothesis import HealthCheck, Phase, given, seed, settings

from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import Scenario
from converge.generators.scenarios import regular_join_scenarios
from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.oracle.query import run_query
from converge.reports.options import BenchConfig

OTHER_PYTHON = "CONVERGE_BENCH_OTHER_PYTHON"
SEED = 1234


def property_scenarios(examples: int) -> list[Scenario]:
    """The scenarios prefix consistency would check: drawn with a fixed seed, TTL-free and semantics=correct."""
    drawn: list[Scenario] = []

    @seed(SEED)
    @settings(max_examples=examples, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(regular_join_scenarios(min_ops=16, max_ops=30))
    def collect(scenario: Scenario) -> None:
        ttl = scenario.config.state_ttl_ms
        if (ttl is None or (isinstance(ttl, dict) and not ttl)) and scenario.config.semantics == "correct":
            drawn.append(scenario)

    collect()
    return drawn


def _per_query_ms(run: Callable[[object], object], items: list) -> tuple[float, float]:
    """(wall, CPU) milliseconds per item; the oracle's connection runs one thread, so CPU time is its work
    undisturbed by other jobs on the cores."""
    start, cpu_start = time.perf_counter(), time.process_time()
    for item in items:
        run(item)
    n = max(len(items), 1)
    return (time.perf_counter() - start) * 1000 / n, (time.process_time() - cpu_start) * 1000 / n


def measure_in_this_process(examples: int, rounds: int) -> dict:
    """The three costs in this interpreter (what the child process runs for the other one)."""
    scenarios = property_scenarios(examples)
    if not scenarios:
        raise InternalError("the regular generator gave no scenario that prefix consistency checks")
    oracle = DuckDBOracle()
    oracle.history(scenarios[0])  # the connection and the guard's reference trees are set up once per process
    first = _per_query_ms(oracle.history, scenarios[1:] or scenarios)
    sqls = [oracle.sql_for(s, "history") for s in scenarios]
    warm = [_per_query_ms(oracle.history, scenarios) for _ in range(max(1, rounds))]
    sql_only = [_per_query_ms(run_query, sqls) for _ in range(max(1, rounds))]
    return {"duckdb": duckdb.__version__, "python": platform.python_version(), "executable": sys.executable,
            "queries": len(scenarios),
            "mean_events_per_query": round(sum(len(s.events) for s in scenarios) / len(scenarios), 1),
            "cpu_ms_per_query": _median(warm, 1), "ms_per_query": _median(warm, 0),
            "sql_only_cpu_ms_per_query": _median(sql_only, 1), "sql_only_ms_per_query": _median(sql_only, 0),
            "first_pass_cpu_ms": round(first[1], 3), "first_pass_ms": round(first[0], 3),
            "rounds_cpu_ms_per_query": [round(x[1], 3) for x in warm]}


def _median(rounds: list[tuple[float, float]], which: int) -> float:
    return round(statistics.median(r[which] for r in rounds), 3)


def measure_in(python: str, examples: int, rounds: int) -> dict:
    """The same measurement in another interpreter, which must have converge installed."""
    if not Path(python).is_file():
        raise BadInputError(f"{OTHER_PYTHON}={python!r} is not a file")
    code = ("import json; from converge.cli.benches.oracle_versions import measure_in_this_process; "
            f"print(json.dumps(measure_in_this_process({int(examples)}, {int(rounds)})))")
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=Path.home())
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-3:])
        raise BadInputError(f"{OTHER_PYTHON}={python!r} could not run the measurement (exit {proc.returncode}; "
                            f"it needs converge installed):\n{tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ratio(other: dict, this: dict, key: str) -> float | None:
    return round(other[key] / this[key], 2) if this[key] > 0 else None


def _bench(config: BenchConfig) -> dict:
    this = measure_in_this_process(config.examples, config.rounds)
    other_python = os.environ.get(OTHER_PYTHON, "")
    if not other_python:
        return {"duckdb": this["duckdb"], "cpu_ms_per_query": this["cpu_ms_per_query"],
                "other": f"not measured: set {OTHER_PYTHON} to an interpreter with another DuckDB", "this": this}
    other = measure_in(other_python, config.examples, config.rounds)
    out = {"duckdb": f"{this['duckdb']} vs {other['duckdb']}",
           "cpu_ms_per_query": f"{this['cpu_ms_per_query']} vs {other['cpu_ms_per_query']}",
           **{f"{key}_ratio_other_to_this": _ratio(other, this, key)
              for key in ("cpu_ms_per_query", "sql_only_cpu_ms_per_query", "first_pass_cpu_ms", "ms_per_query")},
           "this": this, "other": other}
    if other["duckdb"] == this["duckdb"]:
        out["note"] = f"both interpreters have DuckDB {this['duckdb']}"
    if other["queries"] != this["queries"]:
        out["note"] = (f"the interpreters drew {this['queries']} and {other['queries']} scenarios "
                       "(different Hypothesis versions draw differently from one seed)")
    return out


BENCHES: dict[str, Callable[[BenchConfig], dict]] = {"oracle_query_cost": _bench}
