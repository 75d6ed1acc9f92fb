"""`converge run --system spark` and `converge replay --system spark`: Spark's native joins against their
documented semantics (docs/spark.md, "Spark's native joins as a system").

One SparkSession for the whole campaign; every property is its own
Hypothesis run with the same seed and strategy, so they draw the same cases,
and a cache keyed by the case runs each distinct case on Spark once (a
query costs seconds). Those cases are drawn first and run several queries
at once into the cache (docs/spark.md, "Many cases at once"). Shrinking runs
against the live session. A failure
writes the shrunk case as a replayable case file and a short Markdown report.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from converge import renamed
from converge.engine.model.errors import UsageError, exit_code, label
from converge.engine.model.files import write_text_whole
from converge.engine.model.native_join_case import NativeJoinCase, dump_case
from converge.generators.native_join import native_join_cases
from converge.oracle.native_join_model import model_case
from converge.properties import exercise
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.native_join.checks import NATIVE_PROPERTIES, NativeProperty, check_run
from converge.properties.spec import PropertySpec
from converge.reports.options import RunOptions
from converge.reports.progress import CampaignProgress
from converge.reports.run_reports import RunReports
from converge.reports.terminal import failure_excerpt, format_table, print_replay_outcomes, shrink_note
from converge.systems.spark.replay import replay_native
from converge.systems.spark.runs import RunCache
from converge.systems.spark.system import DEFAULT_CONCURRENCY, NativeJoinSystem

FAMILY = "spark_native"
DEFAULT_EXAMPLES = 20


@dataclass
class NativeTally:
    examples: int = 0          # calls of the check (shrinking's included)
    exercised: int = 0         # ... that exercised the property
    with_late: int = 0         # ... whose case has a late row by the rule
    unsupported: int = 0       # ... whose query Spark rejected
    spark_runs: int = 0        # queries started for this property (the rest came from the cache)


@dataclass
class NativeRunOutcome:
    prop: NativeProperty
    result: PropertyResult
    tally: NativeTally
    reports: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:  # run_property made a run that exercised no case NotCheckedError
        return label(self.result.failure or self.result.error)

    @property
    def exit_code(self) -> int:
        return exit_code(self.result.failure or self.result.error)


def native_spec(prop: NativeProperty, cache: RunCache, tally: NativeTally, examples: int) -> PropertySpec:
    """The property as a PropertySpec: one drawn case per example, Spark's (cached) run of it checked."""
    def check(case: NativeJoinCase) -> None:
        tally.examples += 1
        before = cache.spark_runs
        run = cache.run(case)
        tally.spark_runs += cache.spark_runs - before
        tally.unsupported += run.status != "ok"
        tally.with_late += any(r.late for r in model_case(case).rows)
        exercised = bool(check_run(prop, case, run))
        tally.exercised += exercised
        if run.status != "ok":
            exercise.unsupported(f"Spark rejected the query ({run.status})")
        elif not exercised:
            exercise.skipped(f"the case does not exercise {prop.name}")

    return PropertySpec(FAMILY, prop.name, lambda: native_join_cases().map(lambda c: (c,)), check, examples,
                        prop.description)


def drawn_cases(examples: int, seed: int) -> list[NativeJoinCase]:
    """The cases a property's run draws with this seed before any fails: the same strategy, seed and settings
    (run_property), a check that only keeps the case. What a run draws after a failure (shrinking) is not here."""
    cases: list[NativeJoinCase] = []
    spec = PropertySpec(FAMILY, "drawn_cases", lambda: native_join_cases().map(lambda c: (c,)), cases.append,
                        examples, "the cases of a campaign, drawn without Spark")
    run_property(spec, max_examples=examples, seed=seed, shrink=False)
    return cases


def _write_failure(reports: RunReports, run: NativeRunOutcome, system: NativeJoinSystem) -> None:
    failure = run.result.failure
    folder = reports.directory() if failure is not None else None
    if failure is None or folder is None:
        return
    case: NativeJoinCase = failure.divergence.scenario  # type: ignore[assignment]
    meta = {"property": f"{FAMILY}/{run.prop.name}", "seed": run.result.seed, "system": system.title,
            "message": failure.divergence.describe()}
    stopped = run.result.shrink_stopped
    if stopped is not None:  # the smallest case found within the shrink budget, maybe not a minimal one
        meta["shrink_stopped_after_s"] = stopped
    shrunk = replace(case, name=f"{run.prop.name}-shrunk", meta=meta)
    path = folder / f"{FAMILY}-{run.prop.name}.json"
    try:
        dump_case(shrunk, path)
        md = write_text_whole(path.with_suffix(".md"),
                              f"# {FAMILY}/{run.prop.name} fails on {system.title}\n\n{run.prop.description}\n\n"
                              f"Seed {run.result.seed}. Replay: `converge replay --system spark {path.name}`\n\n"
                              f"```\n{failure.divergence.describe()}\n```\n\nThe shrunk case"
                              f"{shrink_note(stopped)}:\n\n```json\n"
                              f"{json.dumps(shrunk.to_json(), indent=1)}\n```\n")
        run.reports += [str(path), str(md)]
    except OSError as exc:
        path.unlink(missing_ok=True)  # a case without its report is no report (as in reports/failure.py)
        reports.problems.append(f"the report of {run.prop.name} was not written: {exc.filename}: "
                                f"{exc.strerror or exc}")


def run_native_join_campaign(options: RunOptions, *, concurrency: int = DEFAULT_CONCURRENCY) -> int:
    """Start one session, run every selected native-join property, print the table and what it cost.

    With `concurrency` > 1 the cases the properties will draw are drawn first (no Spark) and run that many
    queries at once into the cache; 1 runs each case when a property first asks for it (one query at a time).
    """
    props = [p for p in NATIVE_PROPERTIES if options.property is None or p.name == options.property]
    if options.family not in (None, FAMILY) or not props:
        raise UsageError(f"--system spark runs the {FAMILY} properties: "
                         f"{', '.join(p.name for p in NATIVE_PROPERTIES)}")
    seed = options.seed if options.seed is not None else random.SystemRandom().getrandbits(32)
    examples = options.examples or DEFAULT_EXAMPLES
    watch = CampaignProgress(unit=("example", "examples"))
    watch.note("starting spark (a local Spark session)...")
    started = time.perf_counter()
    system = NativeJoinSystem()
    startup = time.perf_counter() - started
    watch.note(f"{system.title} is up (started in {startup:.1f} s); {len(props)} "
               f"{'property' if len(props) == 1 else 'properties'} to run")
    cache = RunCache(system)
    reports = RunReports.open(options.reports, "run")
    runs: list[NativeRunOutcome] = []
    prefetch_s = 0.0
    try:
        if concurrency > 1:
            before = time.perf_counter()
            cases = drawn_cases(examples, seed)
            watch.note(f"running the {len(cases)} drawn cases, {concurrency} Spark queries at once...")
            stopped = cache.prefetch(cases, concurrency)
            if stopped is not None:
                watch.note(f"running them at once stopped ({stopped}); the rest run one by one")
            prefetch_s = time.perf_counter() - before
        for i, prop in enumerate(props):
            watch.begin(i, len(props))
            tally = NativeTally()
            result = run_property(native_spec(prop, cache, tally, examples), max_examples=examples, seed=seed,
                                  shrink_budget=options.shrink_budget, progress=watch)
            run = NativeRunOutcome(prop, result, tally)
            if not result.ok and not result.not_checked:
                _write_failure(reports, run, system)
            runs.append(run)
    finally:
        watch.finish()
        system.close()
    headers = ("system", "family", "property", "outcome", "examples", "exercised", "with late rows", "rejected",
               "spark runs", "seconds")
    print(format_table(headers, [(system.title, FAMILY, r.prop.name, r.outcome + shrink_note(r.result.shrink_stopped),
                                  r.tally.examples, r.tally.exercised,
                                  r.tally.with_late, r.tally.unsupported, r.tally.spark_runs,
                                  f"{r.result.seconds:.1f}") for r in runs]))
    total = prefetch_s + sum(r.result.seconds for r in runs)
    per_run = cache.spark_seconds / cache.spark_runs if cache.spark_runs else 0.0
    print(f"\nsystem: {system.title} (session started in {startup:.1f} s); seed {seed}; {cache.spark_runs} Spark "
          f"queries in {cache.spark_seconds:.1f} s ({per_run:.2f} s per case), {cache.hits} cache hits; "
          f"{concurrency} at once; {total:.1f} s in all")
    for r in runs:
        if r.result.ok:
            continue
        print(f"\n{r.outcome.upper()} {FAMILY}/{r.prop.name} on {system.title} (seed {seed})")
        print(failure_excerpt(str(r.result.failure or f"{type(r.result.error).__name__}: {r.result.error}"),
                              r.reports))
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    print("\n" + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: kv[0] != "passed")))
    return reports.settle(max((r.exit_code for r in runs), default=0))


def replay_native_files(files: list[Path]) -> int:
    """`converge replay --system spark FILE...`: each case file's properties and expectations on Spark."""
    system = NativeJoinSystem()
    cache = RunCache(system)
    try:
        print(f"system: {system.title}")
        outcomes = [replay_native(path, cache) for path in dict.fromkeys(files)]
    finally:
        system.close()
    return print_replay_outcomes(outcomes, lambda o: [text for _, text in o.problems])


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
