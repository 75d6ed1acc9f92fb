"""`converge run --runtime spark`: generated scenarios on Spark, compared with the local runtime and DuckDB.

Spark's cost is per query and per micro-batch, not per scenario, so a
family's examples are drawn first (Hypothesis, seeded) and run together in
one streaming query (time-driven ones, interval joins, in a second), cut
into a few micro-batches. Each scenario is then checked by two properties:

* `spark_equals_local`: the output of every event is exactly the local
  runtime's (changes, kinds and order). The Spark runtime reproduces it in
  full, not only at micro-batch boundaries, because every change carries its
  event's position and each key's changes run in event order.
* `spark_final_equals_oracle`: where DuckDB decides (regular and multi-way
  joins with no state TTL, `semantics=correct`, no raw upsert input), the
  materialized final answer equals DuckDB's.

A failure is not shrunk on Spark (every try would be a query); the smallest
failing scenario is reported, replayable with `converge replay --runtime spark`.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from converge.engine.materialize import clean, fold, fold_history
from converge.engine.model.errors import BadInputError, ConvergeError, NotCheckedError, UsageError, exit_code, label
from converge.engine.model.scenario import Scenario
from converge.engine.runtime.local import RunResult, run_scenario
from converge.engine.runtime.spark import job as spark_job
from converge.engine.runtime.spark.job import run_scenarios_on_spark
from converge.generators.anomalies import dedupe_scenarios, order_item_scenarios
from converge.generators.interval import interval_join_scenarios
from converge.generators.minibatch import minibatch_variants
from converge.generators.multiway import multiway_scenarios
from converge.generators.profile import PROFILE
from converge.generators.scenarios import regular_join_scenarios
from converge.oracle.shared import shared_oracle
from converge.properties.campaign import PropertyResult
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.exercise import Exercised
from converge.reports.options import RunOptions
from converge.reports.run_reports import RunReports
from converge.reports.terminal import format_table

PROPERTIES = ("spark_equals_local", "spark_final_equals_oracle")
# DuckDB decides no scenario of the anomalies (flink semantics, pipeline options) and interval families:
# a property that can decide none of a family's scenarios is not run on it (it would check nothing).
FAMILY_PROPERTIES = {"regular": PROPERTIES, "multiway": PROPERTIES, "minibatch": PROPERTIES,
                     "anomalies": ("spark_equals_local",), "interval": ("spark_equals_local",)}
DEFAULT_EXAMPLES = 60


def family_strategies() -> dict[str, Callable[[], st.SearchStrategy[Scenario]]]:
    """The families the Spark runtime runs, as scenario strategies."""
    return {
        "regular": lambda: st.one_of(regular_join_scenarios(), regular_join_scenarios(ttl="long"),
                                     regular_join_scenarios(ttl="short", modes=("insert_only", "retract"))),
        "multiway": lambda: st.one_of(multiway_scenarios(multi_join="on"), multiway_scenarios(multi_join="off")),
        "anomalies": lambda: st.one_of(order_item_scenarios(), dedupe_scenarios()),
        "minibatch": lambda: st.one_of(minibatch_variants(purpose="any"), minibatch_variants(semantics="flink",
                                                                                            purpose="any")),
        "interval": lambda: st.one_of(interval_join_scenarios(), interval_join_scenarios(late_share=(10, 40)),
                                      interval_join_scenarios(time="processing", late_share=(0, 30))),
    }


def draw_scenarios(strategy: st.SearchStrategy[Scenario], n: int, seed: int | None) -> list[Scenario]:
    """n examples of a strategy, as Hypothesis generates them (no checks run while drawing)."""
    drawn: list[Scenario] = []

    @settings(PROFILE, max_examples=n, database=None, phases=[Phase.generate])
    @given(strategy)
    def collect(scenario: Scenario) -> None:
        drawn.append(scenario)

    if seed is not None:
        collect = hypothesis_seed(seed)(collect)
    collect()
    return drawn[:n]


def oracle_decides(scenario: Scenario) -> bool:
    """DuckDB's answer is the expected one: a regular or multi-way join with no TTL, `semantics=correct`,
    no raw upsert input and no pipeline option (those answers, and interval joins', are decided by their
    own models, which the local runtime is checked against)."""
    if scenario.join.interval is not None:
        return False
    cfg = scenario.config
    ttl = cfg.state_ttl_ms
    raw_upsert = not cfg.changelog_normalize and any(i.changelog_mode == "upsert" for i in scenario.inputs)
    # a mini-batch bundle changes when changes are emitted, not the answer (docs/minibatch.md)
    options = set(cfg.optional_settings()) - {"mini_batch_size", "mini_batch_latency_ms"}
    return ((ttl is None or (isinstance(ttl, dict) and not ttl)) and cfg.semantics == "correct"
            and not raw_upsert and not options)


def spark_equals_local(scenario: Scenario, got: RunResult | ConvergeError) -> bool:
    """Spark's output equals the local runtime's at every event (or both end with the same error)."""
    try:
        want: RunResult | ConvergeError = run_scenario(scenario)
    except ConvergeError as exc:
        want = exc
    if isinstance(want, ConvergeError) or isinstance(got, ConvergeError):
        if str(got) != str(want):
            raise PropertyFailure(Divergence("spark_equals_local", scenario,
                                             f"Spark: {got!r}; local runtime: {want!r}"))
        return True
    for i, (a, b) in enumerate(zip(got.per_event, want.per_event, strict=True)):
        if a != b:
            raise PropertyFailure(Divergence(
                "spark_equals_local", scenario,
                f"event {i} emitted {[tuple(c) for c in a]} on Spark, {[tuple(c) for c in b]} locally",
                event_index=i, engine=fold_history(got.per_event)[i], expected=fold_history(want.per_event)[i]))
    return True


def spark_final_equals_oracle(scenario: Scenario, got: RunResult | BadInputError,
                              expected_of: Callable[[Scenario], Counter] | None = None, oracle: str = "DuckDB") -> bool:
    """Where DuckDB decides (see oracle_decides): the materialized final answer on Spark equals the oracle's
    (DuckDB's, or `expected_of`'s: the Spark SQL oracle's with --oracle spark).
    False when DuckDB does not decide this scenario (it was not checked)."""
    if isinstance(got, BadInputError) or not oracle_decides(scenario):
        return False

    engine = clean(fold(got.changes))
    expected: Counter = (expected_of or shared_oracle().final)(scenario)
    if engine != expected:
        raise PropertyFailure(Divergence("spark_final_equals_oracle", scenario,
                                         f"the final answer on Spark differs from {oracle}'s",
                                         event_index=len(scenario.events) - 1, engine=engine, expected=expected))
    return True


CHECKS: dict[str, Callable[[Scenario, Any], bool]] = {
    "spark_equals_local": spark_equals_local,
    "spark_final_equals_oracle": spark_final_equals_oracle,
}


@dataclass
class SparkCheck:
    """One property over a batch of scenarios: how many it decided, the failures (smallest scenario first)."""

    name: str
    checked: int
    failures: list[PropertyFailure]


def spark_oracle_answers(scenarios: Sequence[Scenario], spark: Any = None) -> Callable[[Scenario], Counter]:
    """The Spark SQL oracle's final answers for the scenarios it is asked about, in as few queries as
    their shapes allow (oracle/spark_sql.py); an error answer is raised when that scenario is checked."""
    from converge.oracle.spark_sql import SparkSQLOracle  # lazy: pyarrow and pyspark only with --oracle spark

    asked = [s for s in scenarios if oracle_decides(s)]
    answers = dict(zip(map(id, asked), SparkSQLOracle(spark).final_many(asked), strict=False))

    def expected_of(scenario: Scenario) -> Counter:
        answer = answers[id(scenario)]
        if isinstance(answer, ConvergeError):
            raise answer
        return answer
    return expected_of


def check_results(scenarios: Sequence[Scenario], results: Sequence[RunResult | BadInputError], *,
                  properties: Sequence[str] = PROPERTIES, oracle: str = "duckdb", spark: Any = None
                  ) -> list[SparkCheck]:
    """Check each scenario's Spark outcome with every named property (final answers from `oracle`)."""
    out = []
    checks = dict(CHECKS)
    if oracle == "spark" and "spark_final_equals_oracle" in properties:
        expected_of = spark_oracle_answers(scenarios, spark)
        checks["spark_final_equals_oracle"] = lambda s, got: spark_final_equals_oracle(s, got, expected_of,
                                                                                      "Spark SQL")
    for name in properties:
        failures = []
        checked = 0
        for scenario, got in zip(scenarios, results, strict=True):
            try:
                checked += checks[name](scenario, got)
            except PropertyFailure as exc:
                failures.append(exc)
                checked += 1
        failures.sort(key=lambda f: len(f.divergence.scenario.events))
        out.append(SparkCheck(name, checked, failures))
    return out


def check_on_spark(scenarios: Sequence[Scenario], *, properties: Sequence[str] = PROPERTIES,
                   batches: int = 3, spark: Any = None, work_dir: str | Path | None = None,
                   oracle: str = "duckdb") -> list[SparkCheck]:
    """Run the scenarios in one Spark query and check each with every named property."""
    results = run_scenarios_on_spark(scenarios, spark=spark, batches=batches, work_dir=work_dir)
    return check_results(scenarios, results, properties=properties, oracle=oracle, spark=spark)


def nothing_checked(family: str, name: str, drawn: int) -> NotCheckedError:
    """A property that decided none of the drawn scenarios did not pass: it checked nothing."""
    return NotCheckedError(f"none of the {drawn} scenarios drawn for {family} is one {name} decides; "
                           "draw more (--examples) or choose another family")


def outcome_of(result: PropertyResult) -> str:
    """The table's outcome: errors.label() ("not checked" for a property that decided no scenario)."""
    return label(result.failure or result.error)


def run_spark_campaign(options: RunOptions) -> int:
    """Draw each family's examples, run them on Spark in one query per family, print a table.

    Exit codes as `converge run`: 1 on a divergence; 2 when a property decided none of the
    scenarios drawn (it checked nothing, which is not a pass) or reports could not be written."""
    retries_before = spark_job.worker_connect_retries  # the count is the process's: this campaign's are the rise
    strategies = family_strategies()
    if options.family and options.family not in strategies:
        raise UsageError(f"--family {options.family!r}: the Spark campaign runs {', '.join(strategies)}")
    if options.property and options.property not in CHECKS:
        raise UsageError(f"--property {options.property!r}: on Spark the properties are {', '.join(CHECKS)}")
    families = [f for f in ([options.family] if options.family else list(strategies))
                if not options.property or options.property in FAMILY_PROPERTIES[f]]
    if not families:
        raise UsageError(f"--property {options.property} decides no scenario of the {options.family} family "
                         f"(it runs on {', '.join(f for f, p in FAMILY_PROPERTIES.items() if options.property in p)})")
    n = options.examples if options.examples is not None else DEFAULT_EXAMPLES
    seed = options.seed if options.seed is not None else random.SystemRandom().getrandbits(32)
    print(f"seed {seed} (--seed {seed} draws the same scenarios again)", flush=True)
    reports = RunReports.open(options.reports, "spark")
    results: list[PropertyResult] = []
    for family in families:
        props = [options.property] if options.property else list(FAMILY_PROPERTIES[family])
        start = time.perf_counter()
        scenarios = draw_scenarios(strategies[family](), n, seed)
        print(f"{family}: {len(scenarios)} scenarios on Spark ...", flush=True)
        checks = check_on_spark(scenarios, properties=props, oracle=options.oracle)
        seconds = time.perf_counter() - start
        for check in checks:
            r = PropertyResult(family, check.name, examples=check.checked, failures=len(check.failures),
                               seconds=seconds, seed=seed,
                               exercised=Exercised(compared=check.checked))
            r.exercised.add("skipped", len(scenarios) - check.checked,
                            f"DuckDB does not decide the scenario for {check.name}")
            if check.failures:
                r.failure = check.failures[0]
                r.reports += reports.write_failure(r.failure.divergence, runtime="spark", seed=seed, family=family)
            elif check.checked == 0:
                r.error = nothing_checked(family, check.name, len(scenarios))
            results.append(r)
    rows = [(r.family, r.name, outcome_of(r), r.examples, r.failures, f"{r.seconds:.1f}",
             f"{r.examples_per_second:.1f}") for r in results]
    print(format_table(("family", "property", "outcome", "examples", "failures", "seconds", "examples/s"), rows))
    print("(seconds: the family's Spark queries, shared by its properties)")
    summary = reports.summary(results, last_failed=False)  # --last-failed reruns the local campaign only
    if summary is not None:
        print(f"summary: {summary}")
    failed = [r for r in results if not r.ok]
    for r in failed:
        if r.failure is None:
            print(f"\n{outcome_of(r).upper()} {r.family}/{r.name}: {r.error}")
            continue
        print(f"\nDIVERGED {r.family}/{r.name} ({r.failures} of {r.examples} scenarios; the smallest:)")
        print(str(r.failure))
        for path in r.reports:
            print(f"  report: {path}")
    counts = Counter(outcome_of(r) for r in results)
    tally = ", ".join(f"{counts[k]} {k}" for k in ["passed"] + sorted(set(counts) - {"passed"}))
    print(f"\n{tally} ({n * len(families)} scenarios on Spark; examples = the scenarios a property decides)")
    retried = spark_job.worker_connect_retries - retries_before
    if retried:
        print(f"spark: a query ran again {retried} time{'' if retried == 1 else 's'} after a Python worker failed to "
              f"connect back (a loaded machine; up to three retries per query)")
    return reports.settle(max((exit_code(r.failure or r.error) for r in results), default=0))
