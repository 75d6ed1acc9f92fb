"""`converge bench --only spark_native_cases`: the six native-join properties on Spark, cases per second, the
previous way (one query per case, several queries at once) and by batches (one query per batch of cases, each
case judged under its query's watermark), in one session and one run, on the same drawn cases.

Budget (issue 39): at least 2 cases/s for a campaign of the six properties (goal 10). The batches are drawn with
the campaign's strategy (`native_join_batches`); their cases run one query each the previous way. Each way's
figure includes checking the six properties on every case; the session start is printed beside them, not in
them. Skipped, with the reason, when pyspark is not installed.
"""

from __future__ import annotations

import os
import time

from converge.cli.bench_machine import load_average
from converge.reports.options import BenchConfig

BUDGET_CASES_PER_S = 2.0
GOAL_CASES_PER_S = 10.0
MAX_CASES = 40       # the previous way costs seconds a case: BenchConfig.examples (300) would take most of an hour
PER_QUERY = 20       # cases a query by batches (the campaign's default --batch)
SEED = 29


def _judge(cases: list, runs: list) -> tuple[int, list[tuple]]:
    """The six properties on each run of a case alone: how many checks exercised something, and each verdict."""
    from converge.properties.divergence import PropertyFailure  # lazy: duckdb
    from converge.properties.native_join.checks import NATIVE_PROPERTIES, check_run  # lazy: as above

    exercised, verdicts = 0, []   # type: int, list[tuple]
    for case, run in zip(cases, runs, strict=True):
        for prop in NATIVE_PROPERTIES:
            try:
                ok = bool(check_run(prop, case, run))
                exercised += ok
                verdicts.append((prop.name, ok))
            except PropertyFailure:
                verdicts.append((prop.name, "failed"))
    return exercised, verdicts


def _judge_batches(batches: list, runs: list) -> tuple[int, list[tuple]]:
    """The six properties on every case of every batch, under its query's watermark."""
    from converge.properties.native_join.batches import check_batch  # lazy: duckdb
    from converge.properties.native_join.checks import NATIVE_PROPERTIES  # lazy: as above

    exercised, verdicts = 0, []   # type: int, list[tuple]
    for batch, run in zip(batches, runs, strict=True):
        per_case: list[list[tuple]] = [[] for _ in batch.cases]
        for prop in NATIVE_PROPERTIES:
            for v in check_batch(prop, batch, run):
                exercised += v.exercised
                per_case[v.index].append((prop.name, "failed" if v.failure is not None else v.exercised))
        verdicts += [x for case in per_case for x in case]
    return exercised, verdicts


def bench_native_join_cases(config: BenchConfig) -> dict:
    try:
        import pyspark  # noqa: F401  # lazy: pyspark is optional; only to know it is there

        from converge.systems.spark.batch_specs import batch_plan, drawn_batches  # lazy: pyspark is optional
        from converge.systems.spark.system import DEFAULT_CONCURRENCY, NativeJoinSystem  # lazy: as above
    except ImportError as exc:
        return {"skipped": f"pyspark is not installed ({exc})"}
    batches = drawn_batches(*batch_plan(min(config.examples, MAX_CASES), PER_QUERY), SEED)
    cases = [case for batch in batches for case in batch.cases]
    started = time.perf_counter()
    system = NativeJoinSystem()
    startup = time.perf_counter() - started
    loads = {"load_average_before": load_average()}
    try:
        system.run_many(cases[:1], concurrency=1)  # the first query pays for class loading: not measured
        started = time.perf_counter()
        runs = system.run_many(cases, concurrency=DEFAULT_CONCURRENCY)
        before_checks, before_verdicts = _judge(cases, runs)
        before_s = time.perf_counter() - started
        loads["load_average_between"] = load_average()
        started = time.perf_counter()
        runs = system.run_many([b.merged for b in batches], concurrency=DEFAULT_CONCURRENCY)
        after_checks, after_verdicts = _judge_batches(batches, runs)
        after_s = time.perf_counter() - started
    finally:
        system.close()
    same = sum(a == b for a, b in zip(before_verdicts, after_verdicts, strict=True))
    return {"cases_per_s": round(len(cases) / after_s, 3), "budget_cases_per_s": BUDGET_CASES_PER_S,
            "goal_cases_per_s": GOAL_CASES_PER_S,
            "one_query_per_case_cases_per_s": round(len(cases) / before_s, 3),
            "ratio_vs_one_query_per_case": round(before_s / after_s, 2),
            "cases": len(cases), "queries_by_batches": len(batches), "cases_per_query": PER_QUERY,
            "concurrency": DEFAULT_CONCURRENCY, "one_query_per_case_s": round(before_s, 1),
            "by_batches_s": round(after_s, 1), "checks_exercised": f"{after_checks} by batches, "
            f"{before_checks} one query per case",
            "verdicts_equal": f"{same}/{len(before_verdicts)} (a case's watermark is its query's by batches)",
            "session_start_s": round(startup, 1), "cpus": os.cpu_count(), **loads,
            "load_average_after": load_average()}


BENCHES = {"spark_native_cases": bench_native_join_cases}
