"""`converge bench --only spark_native_cases`: the six native-join properties on Spark, cases per second, the
previous way (one query at a time, generated code) and the current one (several queries at once, interpreted),
in one session and one run (so the ratio is measured side by side).

Budget (issue 29): at least 2 cases/s for a campaign of the six properties. Both ways run the same drawn cases;
the result says whether each case's run (outputs per epoch, watermarks, state rows) came out the same.
Skipped, with the reason, when pyspark is not installed.
"""

from __future__ import annotations

import os
import time

from converge.cli.bench_machine import load_average
from converge.reports.options import BenchConfig

BUDGET_CASES_PER_S = 2.0
MAX_CASES = 24       # Spark costs seconds a case: BenchConfig.examples (300) would take most of an hour
SEED = 29


def _judge(cases: list, runs: list) -> int:
    """Check the six properties on each run; returns how many (case, property) checks exercised something."""
    from converge.properties.native_join.checks import NATIVE_PROPERTIES, check_run  # lazy: duckdb

    return sum(bool(check_run(prop, case, run)) for case, run in zip(cases, runs, strict=False) for prop in NATIVE_PROPERTIES)


def comparable(run) -> tuple:
    """What the properties read of a run, with each epoch's output as a sorted list (Spark's row order is not
    part of the semantics)."""
    return (run.status, tuple((e.batch_id, tuple(sorted(e.output, key=repr)), e.watermark_ms, e.state_rows,
                               e.input_rows) for e in run.epochs))


def bench_native_join_cases(config: BenchConfig) -> dict:
    try:
        import pyspark  # noqa: F401  # lazy: pyspark is optional; only to know it is there

        from converge.systems.spark.campaign import drawn_cases  # lazy: pyspark is optional
        from converge.systems.spark.system import DEFAULT_CONCURRENCY, NativeJoinSystem  # lazy: as above
    except ImportError as exc:
        return {"skipped": f"pyspark is not installed ({exc})"}
    cases = drawn_cases(min(config.examples, MAX_CASES), SEED)
    started = time.perf_counter()
    system = NativeJoinSystem()
    startup = time.perf_counter() - started
    before = NativeJoinSystem(codegen=True)   # the same session (get_spark returns the active one)
    try:
        system.run_many(cases[:1], concurrency=1)  # the first query pays for class loading: not measured
        result: dict = {}
        compared = {}
        for label, runner, concurrency in (("one_at_a_time", before, 1), ("at_once", system, DEFAULT_CONCURRENCY)):
            started = time.perf_counter()
            runs = runner.run_many(cases, concurrency=concurrency)
            checks = _judge(cases, runs)
            seconds = time.perf_counter() - started
            result[f"{label}_cases_per_s"] = round(len(cases) / seconds, 3)
            result[f"{label}_s"] = round(seconds, 1)
            result[f"{label}_checks_exercised"] = checks
            compared[label] = [comparable(r) for r in runs]
    finally:
        system.close()
        before.close()
    same = sum(a == b for a, b in zip(compared["one_at_a_time"], compared["at_once"], strict=False))
    return {"cases_per_s": result["at_once_cases_per_s"], "budget_cases_per_s": BUDGET_CASES_PER_S,
            "ratio_vs_one_at_a_time": round(result["at_once_cases_per_s"] / result["one_at_a_time_cases_per_s"], 2),
            "cases": len(cases), "concurrency": DEFAULT_CONCURRENCY, **result,
            "runs_identical": f"{same}/{len(cases)}", "session_start_s": round(startup, 1),
            "cpus": os.cpu_count(), "load_average_after": load_average()}


BENCHES = {"spark_native_cases": bench_native_join_cases}
