"""`converge run --system spark` and `converge replay --system spark`: Spark's native joins against their
documented semantics (docs/spark.md, "Spark's native joins as a system").

One SparkSession for the whole campaign, and campaigns by batches
(docs/spark.md, "A batch: one query, many cases"): an example of a property
is one query shape with `--batch` cases (generators/native_join.py,
`native_join_batches`), all run in ONE streaming query, each case judged
under the query's watermark (properties/native_join/batches.py). Every
property is its own Hypothesis run with the same seed and strategy, so they
draw the same batches; they are drawn first and run several queries at once
into a cache keyed by the merged case, where every property finds them. A
failing case is reduced on Spark, one query a round, down to a one-case query
where it still diverges (properties/native_join/reduce.py); the report
writes that case (or the reduced batch's merged case) as a replayable file
and says under which watermark it diverged. `run_native_join_campaign(...,
by_batches=False)` is the one-query-per-case path (each example one case,
Hypothesis shrinking on Spark), kept as the reference.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converge import renamed
from converge.engine.model.errors import UsageError, exit_code, label
from converge.engine.model.files import write_text_whole
from converge.engine.model.native_join_case import NativeJoinCase, dump_case
from converge.generators.native_join import native_join_cases
from converge.oracle.native_join_model import model_case
from converge.properties import exercise
from converge.properties.budget import budget_or_default
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.native_join.checks import NATIVE_PROPERTIES, NativeProperty, check_run
from converge.properties.native_join.known import NativeRecogniser, native_known
from converge.properties.native_join.reduce import NativeReduction
from converge.properties.spec import PropertySpec
from converge.properties.systems.known import KnownDivergence
from converge.properties.systems.specs import CASES_PER_SHAPE
from converge.reports.options import RunOptions
from converge.reports.progress import CampaignProgress
from converge.reports.run_reports import RunReports
from converge.reports.terminal import failure_excerpt, format_table, print_replay_outcomes, shrink_note
from converge.systems.spark.batch_specs import BatchTally, batch_plan, batch_spec, drawn_batches, reduce_failure
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
    tally: NativeTally | BatchTally
    reports: list[str] = field(default_factory=list)
    reduction: NativeReduction | None = None   # by batches: what reducing the failure on Spark did

    @property
    def only_known(self) -> bool:
        """Cases matched known divergences and nothing else failed (as converge/systems/campaign.py's)."""
        res, known = self.result, getattr(self.tally, "known", None)
        return bool(known) and (res.ok or (res.not_checked and res.exercised.compared == 0))

    @property
    def outcome(self) -> str:  # run_property made a run that exercised no case NotCheckedError
        return "known" if self.only_known else label(self.result.failure or self.result.error)

    @property
    def exit_code(self) -> int:
        return 0 if self.only_known else exit_code(self.result.failure or self.result.error)


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
    reduction = run.reduction
    case: NativeJoinCase = reduction.case if reduction is not None else failure.divergence.scenario  # type: ignore
    meta: dict[str, Any] = {"property": f"{FAMILY}/{run.prop.name}", "seed": run.result.seed, "system": system.title,
            "message": failure.divergence.describe()}
    if reduction is not None:
        meta["reduction"] = reduction.describe()
        meta["watermarks"] = reduction.watermarks
    stopped = run.result.shrink_stopped
    if stopped is not None:  # the smallest case found within the shrink budget, maybe not a minimal one
        meta["shrink_stopped_after_s"] = stopped
    shrunk = replace(case, name=f"{run.prop.name}-shrunk", meta={**case.meta, **meta})
    path = folder / f"{FAMILY}-{run.prop.name}.json"
    how = "" if reduction is None else f"\n\n{reduction.describe()}."
    what = ("The shrunk case" if reduction is None or reduction.alone else
            "The reduced batch, as one case (its cases joined on the case column)")
    try:
        dump_case(shrunk, path)
        md = write_text_whole(path.with_suffix(".md"),
                              f"# {FAMILY}/{run.prop.name} fails on {system.title}\n\n{run.prop.description}\n\n"
                              f"Seed {run.result.seed}. Replay: `converge replay --system spark {path.name}`{how}\n\n"
                              f"```\n{failure.divergence.describe()}\n```\n\n{what}"
                              f"{shrink_note(stopped)}:\n\n```json\n"
                              f"{json.dumps(shrunk.to_json(), indent=1)}\n```\n")
        run.reports += [str(path), str(md)]
    except OSError as exc:
        path.unlink(missing_ok=True)  # a case without its report is no report (as in reports/failure.py)
        reports.problems.append(f"the report of {run.prop.name} was not written: {exc.filename}: "
                                f"{exc.strerror or exc}")


def _by_batches(props: list[NativeProperty], options: RunOptions, cache: RunCache, seed: int, examples: int,
                concurrency: int, watch: CampaignProgress, phases: dict[str, float]) -> list[NativeRunOutcome]:
    """Every property by batches (one query per batch, prefetched `concurrency` at once), failures reduced; a
    case whose failure a known divergence matches is counted as known, never reduced (native_join/known.py)."""
    known = tuple(native_known(options.known, builtin=options.builtin_known))
    before = time.perf_counter()
    batches, per_query = batch_plan(examples, options.batch or CASES_PER_SHAPE)
    drawn = drawn_batches(batches, per_query, seed)
    watch.note(f"running {sum(len(b) for b in drawn)} drawn cases in {len(drawn)} Spark queries "
               f"({per_query} cases a query, {concurrency} queries at once)...")
    stopped = cache.prefetch([b.merged for b in drawn], concurrency)
    if stopped is not None:
        watch.note(f"running them at once stopped ({stopped}); the rest run one by one")
    phases["drawn cases on Spark"] = time.perf_counter() - before
    runs = []
    for i, prop in enumerate(props):
        watch.begin(i, len(props))
        tally = BatchTally()
        recognise = NativeRecogniser(known, cache.system.version, prop.name) if known else None
        result = run_property(batch_spec(prop, cache, tally, batches, per_query, recognise), max_examples=batches,
                              seed=seed, shrink=False, progress=watch)
        run = NativeRunOutcome(prop, result, tally)
        if result.failure is not None:
            watch.note(f"{prop.name} failed: reducing it on Spark...")
            before = time.perf_counter()
            run.reduction = reduce_failure(prop, cache, tally, budget_or_default(options.shrink_budget))
            phases["reducing failures on Spark"] = phases.get("reducing failures on Spark", 0.0) + (
                time.perf_counter() - before)
            if run.reduction is not None:
                result.failure = run.reduction.failure
        runs.append(run)
    return runs


def _one_per_case(props: list[NativeProperty], options: RunOptions, cache: RunCache, seed: int, examples: int,
                  concurrency: int, watch: CampaignProgress, phases: dict[str, float]) -> list[NativeRunOutcome]:
    """Every property one query per case (the reference path), cases prefetched `concurrency` queries at once."""
    before = time.perf_counter()
    if concurrency > 1:
        cases = drawn_cases(examples, seed)
        watch.note(f"running the {len(cases)} drawn cases, {concurrency} Spark queries at once...")
        stopped = cache.prefetch(cases, concurrency)
        if stopped is not None:
            watch.note(f"running them at once stopped ({stopped}); the rest run one by one")
    phases["drawn cases on Spark"] = time.perf_counter() - before
    runs = []
    for i, prop in enumerate(props):
        watch.begin(i, len(props))
        tally = NativeTally()
        result = run_property(native_spec(prop, cache, tally, examples), max_examples=examples, seed=seed,
                              shrink_budget=options.shrink_budget, progress=watch)
        runs.append(NativeRunOutcome(prop, result, tally))
    return runs


def run_native_join_campaign(options: RunOptions, *, concurrency: int = DEFAULT_CONCURRENCY,
                             by_batches: bool = True) -> int:
    """Start one session, run every selected native-join property, print the table and what it cost.

    By batches (the default): `--examples` cases per property, `--batch` cases a query. `by_batches=False` is
    the one-query-per-case path: with `concurrency` > 1 the cases the properties will draw are drawn first (no
    Spark) and run that many queries at once into the cache; 1 runs each case when a property first asks.
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
    phases = {"session start": startup}
    try:
        runs = (_by_batches if by_batches else _one_per_case)(props, options, cache, seed, examples, concurrency,
                                                               watch, phases)
        for run in runs:
            if not run.result.ok and not run.result.not_checked:
                _write_failure(reports, run, system)
    finally:
        watch.finish()
        system.close()
    phases["properties (Hypothesis runs, cache hits and checks)"] = sum(r.result.seconds for r in runs)
    _print_table(runs, system, cache, seed, startup, time.perf_counter() - started, by_batches, concurrency)
    print("phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
    for r in runs:
        if r.result.ok and not getattr(r.tally, "known", None):
            continue
        print(f"\n{r.outcome.upper()} {FAMILY}/{r.prop.name} on {system.title} (seed {seed})")
        _print_known(r, native_known(options.known, builtin=options.builtin_known))
        if r.only_known or r.result.ok:
            continue
        if r.reduction is not None:
            print(r.reduction.describe())
        print(failure_excerpt(str(r.result.failure or f"{type(r.result.error).__name__}: {r.result.error}"),
                              r.reports))
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    print("\n" + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: kv[0] != "passed")))
    return reports.settle(max((r.exit_code for r in runs), default=0))


def _print_known(run: NativeRunOutcome, known: list[KnownDivergence]) -> None:
    """Each known divergence the property's cases matched: its count, reason, link (its repro) and minimal case."""
    counts = getattr(run.tally, "known", None) or {}
    for entry in known:
        n = counts.get(entry.id, 0)
        if n:
            print(f"  known {entry.id} ({n} case{'' if n == 1 else 's'}, not reduced again): {entry.reason}")
            print(f"    repro: {entry.link}")
            if entry.case is not None:
                print(f"    minimal case: {entry.case} (converge replay --system spark FILE reruns it)")


def _print_table(runs: list[NativeRunOutcome], system: NativeJoinSystem, cache: RunCache, seed: int,
                 startup: float, wall: float, by_batches: bool, concurrency: int) -> None:
    """The per-property table and the campaign's cost: cases per second of wall time, session start included."""
    headers = ("system", "family", "property", "outcome", "cases", "exercised", "with late rows", "rejected",
               "known", "spark runs", "seconds")
    print(format_table(headers, [(system.title, FAMILY, r.prop.name, r.outcome + shrink_note(r.result.shrink_stopped),
                                  r.tally.examples, r.tally.exercised,
                                  r.tally.with_late, r.tally.unsupported,
                                  sum((getattr(r.tally, "known", None) or {}).values()), r.tally.spark_runs,
                                  f"{r.result.seconds:.1f}") for r in runs]))
    per_run = cache.spark_seconds / cache.spark_runs if cache.spark_runs else 0.0
    cases = max((r.tally.examples for r in runs), default=0)
    how = "by batches (one query, many cases)" if by_batches else "one query per case"
    print(f"\nsystem: {system.title} (session started in {startup:.1f} s); seed {seed}; {how}; {cache.spark_runs} "
          f"Spark queries in {cache.spark_seconds:.1f} s ({per_run:.2f} s per query), {cache.hits} cache hits; "
          f"{concurrency} at once; {cases} cases a property in {wall:.1f} s in all, session start included: "
          f"{cases / wall if wall > 0 else 0.0:.2f} cases/s")


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
