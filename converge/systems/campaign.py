"""`converge run --system SPEC`: the system properties against one system under test, batched by shape.

The system is started once for the whole campaign (a Flink MiniCluster
takes seconds to start). `--examples N` is N cases per property, exactly
(properties/systems/quota.py): Hypothesis draws batches, each one shape and
`--batch` cases of it sent in one run request, the last batch cut to what is
left of N. A divergence is a finding about the system: its report is written
(oracle, system and reference answers side by side) and the campaign exits
1. A case whose divergence a known entry matches (the built-in list, unless
`--no-known`, and each `--known FILE`; properties/systems/known.py) is
counted inside the check and never shrunk: a property whose only
divergences were known is shown as "known", with each entry's reason, link
and minimal case, and exits 0.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.errors import (
    EXIT_BAD_INPUT,
    NotCheckedError,
    SystemUnderTestError,
    UsageError,
    exit_code,
    label,
)
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import System
from converge.properties.budget import budget_or_default, check_budget
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.coverage import coverage_summary
from converge.properties.progress import ProgressCallback
from converge.properties.systems.known import KnownDivergence, campaign_known
from converge.properties.systems.quota import CaseQuota
from converge.properties.systems.reduce import Reduction
from converge.properties.systems.replay import ReplayOutcome, replay_on_system
from converge.properties.systems.sent import APPEND_ONLY_FAMILIES, Sent
from converge.properties.systems.specs import (
    CASES_PER_SHAPE,
    SYSTEM_PROPERTIES,
    SystemProperty,
    bind,
    not_applicable,
)
from converge.reports.counts import Counts, system_counts
from converge.reports.junit import JUnitCase, case_of, status_of, write_junit
from converge.reports.options import RunOptions
from converge.reports.progress import CampaignProgress
from converge.reports.run_reports import RunReports
from converge.reports.terminal import Footnotes, failure_excerpt, format_table, print_replay_outcomes, shrink_note
from converge.reports.terminal import tally as outcome_counts
from converge.systems.adapter.requests import note_stderr, requests_carrying
from converge.systems.base import SystemType

NOT_APPLICABLE, KNOWN, NOT_RUN = "not applicable", "known", "not run"


@dataclass
class SystemRun:
    """One property's outcome on the system."""

    prop: SystemProperty
    reason: str | None = None                # why it is not applicable (then nothing ran)
    result: PropertyResult | None = None
    known: list[tuple[KnownDivergence, int]] = field(default_factory=list)  # the entries cases matched, how often
    quota: CaseQuota | None = None           # the cases asked (--examples) and the batches that carried them
    waited: float | None = None              # seconds spent waiting for the system's answers (None: not measured)
    not_run: str | None = None               # why it did not run (--maxfail reached; then nothing ran)
    sent: Sent | None = None                 # what its checked batches held (None: nothing ran)

    @property
    def short(self) -> str | None:
        """Why a property that held sent fewer cases than asked (None: it sent them all, or it stopped at a
        divergence or a failure, which its outcome says)."""
        quota, res = self.quota, self.result
        if quota is None or res is None or not res.ok or quota.sent >= quota.total:
            return None
        return (f"{quota.sent} of the {quota.total} cases asked were sent: Hypothesis stopped drawing batches early "
                f"(it found no new batch to draw, or too many draws overran its size limit; a smaller --batch helps "
                f"the second)")

    @property
    def counts(self) -> Counts | None:
        """Examples asked, batches and cases checked (reports/counts.py); None when not applicable (a property
        left unrun after the system failed asked for nothing: 0 examples)."""
        if self.result is None:
            return None
        return system_counts(self.result, self.quota.total if self.quota is not None else 0)

    @property
    def only_known(self) -> bool:
        """Cases matched known entries and nothing else failed (a run that compared nothing else ends as not
        checked in run_property: it is still "known", and says that nothing else was compared)."""
        res = self.result
        return res is not None and bool(self.known) and (res.ok or (res.not_checked and res.exercised.compared == 0))

    @property
    def outcome(self) -> str:
        if self.not_run is not None:
            return NOT_RUN
        if self.reason is not None:
            return NOT_APPLICABLE
        assert self.result is not None
        if self.only_known:
            return KNOWN
        return label(self.result.failure or self.result.error)

    @property
    def exit_code(self) -> int:
        if self.result is None or self.only_known:
            return 0
        return exit_code(self.result.failure or self.result.error)


def select_properties(family: str | None, name: str | None) -> list[SystemProperty]:
    chosen = [p for p in SYSTEM_PROPERTIES if (family is None or p.family == family)
              and (name is None or p.name == name)]
    if not chosen:
        families = sorted({p.family for p in SYSTEM_PROPERTIES})
        raise UsageError(f"no system property matches family={family!r} property={name!r} (families: "
                         f"{', '.join(families)})")
    return chosen


def run_one(prop: SystemProperty, system: System, system_spec: str, options: RunOptions,
            known: list[KnownDivergence], reports: RunReports, progress: ProgressCallback | None = None) -> SystemRun:
    """One property on the system. A failing batch's diverging case is reduced on the system itself, a round of
    candidates per run request (properties/systems/reduce.py), within the shrink budget; Hypothesis's one-call-
    per-candidate shrinker is not run against a live system."""
    reason = not_applicable(prop, system)
    if reason is not None:
        return SystemRun(prop, reason=reason)
    budget = budget_or_default(options.shrink_budget)

    def reducing(done: Reduction) -> None:
        note = getattr(progress, "note", None)  # a CampaignProgress draws lines of its own; a bare callback not
        if note is not None:
            note(f"{prop.key}: reducing the diverging case on {system.title}: round {done.rounds}, "
                 f"{done.events_after} of {done.events_before} events left, {done.requests} run requests")

    cases = options.examples_of(prop.key, prop.examples)
    batch = options.batch or CASES_PER_SHAPE  # run_system_campaign gives the system type's default
    quota = CaseQuota(cases, max(1, min(batch, system.capabilities.max_batch)))
    sent = Sent()
    spec = bind(prop, system, batch=batch, system_spec=system_spec, known=known, reduce_budget=budget,
                on_reduction=reducing, quota=quota, sent=sent)
    waited = waiting(system)
    result = run_property(spec, max_examples=quota.planned_batches, seed=options.seed, shrink=False,
                          progress=progress, target=False)  # fresh shapes, not variations of one (issue 39)
    if waited is not None:
        waited = waiting(system) - waited  # type: ignore[operator]
    call = result.failure.call if result.failure is not None else None  # a reduced failure says what reduced it
    run = SystemRun(prop, result=result, known=matched(known, result), quota=quota, waited=waited, sent=sent)
    if not result.ok and not result.not_checked:
        notes = {"system": system.title}
        if call is not None and call.reduction is not None:
            notes["reduced"] = call.reduction.describe()
        note_stderr(system, result.failure)
        report = reports.reporter(runtime=system.title, notes=notes)
        if report is not None:
            report(result)
    return run


def waiting(system: System) -> float | None:
    """The seconds the system has spent answering so far (an adapter system measures it; others None)."""
    value = getattr(system, "waited_seconds", None)
    return float(value) if isinstance(value, (int, float)) else None


def matched(known: list[KnownDivergence], result: PropertyResult) -> list[tuple[KnownDivergence, int]]:
    """The entries the property's cases matched, with their counts (exercise.known keeps them by id)."""
    counts = result.exercised.reasons
    return [(k, counts[f"known: {k.id}"]) for k in known if counts[f"known: {k.id}"]]


def not_run_after(prop: SystemProperty, system: System, failed: SystemRun) -> SystemRun:
    """A property left after the system failed: not applicable as ever, otherwise not checked (never passed)."""
    reason = not_applicable(prop, system)
    if reason is not None:
        return SystemRun(prop, reason=reason)
    error = NotCheckedError(f"{system.title} failed in an earlier property ({failed.prop.key}); not run")
    return SystemRun(prop, result=PropertyResult(prop.family, prop.name, error=error))


class ScenarioSystemType(SystemType):
    """A system type that runs converge scenarios: this module's campaign and replay are its own."""

    case_type: ClassVar[type] = Scenario

    def run_campaign(self, options: RunOptions) -> int:
        return run_system_campaign(options, self)

    def replay_files(self, files: Sequence[Path]) -> int:
        return replay_on_system_files(files, self)


def run_system_campaign(options: RunOptions, system_type: SystemType, *, watch: CampaignProgress | None = None) -> int:
    """Open the system, run every selected property on it, print the table and the closing note.

    While it runs, `watch` (default: stderr, reports/progress.py) shows the system starting and up, then each
    property's batches and shrinking."""
    check_budget(options.shrink_budget, "shrink_budget")
    options = replace(options, batch=options.batch or system_type.default_batch)
    known = campaign_known(options.known, builtin=options.builtin_known)
    props = select_properties(options.family, options.property)
    if options.only is not None:
        props = [p for p in props if p.key in options.only]
        if not props:
            raise UsageError(f"none of the properties asked for ({', '.join(options.only)}) is a system property")
    seeds = dict(options.seeds)
    watch = watch or CampaignProgress(unit=("batch", "batches"), quiet=options.quiet)
    hint = f" ({system_type.startup})" if system_type.startup else ""
    watch.note(f"starting {system_type.spec}{hint}...")
    started = time.perf_counter()
    with watch.waiting(f"still starting {system_type.spec}"):
        system = system_type.open()
    startup = time.perf_counter() - started
    watch.note(f"{system.title} is up (started in {startup:.1f} s); {len(props)} "
               f"{'property' if len(props) == 1 else 'properties'} to run")
    reports = RunReports.open(options.reports, "run")
    runs: list[SystemRun] = []
    failed: SystemRun | None = None  # the property during which the system failed: it is dead from then on
    try:
        for i, prop in enumerate(props):
            watch.begin(i, len(props))
            if failed is not None:
                runs.append(not_run_after(prop, system, failed))
                continue
            stop = maxfail_reached(options.maxfail, runs)
            if stop is not None:
                runs.append(SystemRun(prop, not_run=stop))
                continue
            runs.append(run_one(prop, system, system_type.spec,
                                replace(options, seed=seeds.get(prop.key, options.seed)), known, reports,
                                progress=watch))
            if options.repro and runs[-1].result is not None and runs[-1].result.reports:
                runs[-1].result.reports.extend(system_type.write_repros(runs[-1].result.reports))
            if isinstance(runs[-1].result and runs[-1].result.error, SystemUnderTestError):
                failed = runs[-1]
    finally:
        watch.finish()
        system.close()
    notes = Footnotes()
    print(notes.under(format_table(*table(system, runs, notes))))
    print_sent(runs)
    results = [r.result for r in runs if r.result is not None]
    if options.stats:  # --stats: the special cases of the batches sent (properties/coverage.py)
        print("\n" + format_table(*coverage_summary(results, unit="batches")))
    known_outcomes = {(r.prop.family, r.prop.name): KNOWN for r in runs if r.only_known}
    keyed = [((r.prop.family, r.prop.name), r) for r in runs if r.result is not None]
    summary = reports.summary(results, system=system.title, outcomes=known_outcomes,
                              counts={k: r.counts for k, r in keyed if r.counts is not None},
                              waited={k: r.waited for k, r in keyed if r.waited is not None},
                              system_spec=options.system, batch=options.batch,
                              sent={k: r.sent.to_json() for k, r in keyed if r.sent is not None})
    if summary is not None:
        print(f"summary: {summary}")
    if options.junit is not None:
        written = write_junit(options.junit, f"converge run --system {system_type.spec}", reports.problems,
                              [junit_case(system, system_type.spec, r) for r in runs])
        if written:
            print(f"junit: {options.junit}")
    closing_note(system, runs, startup)
    worst = max((r.exit_code for r in runs), default=0)
    if not any(r.result is not None and r.result.exercised.compared for r in runs):
        print(f"nothing was compared on {system.title}: the campaign checked nothing")
        worst = max(worst, EXIT_BAD_INPUT)
    return reports.settle(worst)


def maxfail_reached(maxfail: int | None, runs: Sequence[SystemRun]) -> str | None:
    """Why the next property is not run: `maxfail` properties have failed (diverged or an error); None: it runs."""
    failed = [r.prop.key for r in runs if status_of(r.outcome) in ("failure", "error")]
    if maxfail is None or len(failed) < maxfail:
        return None
    return f"--maxfail {maxfail} reached ({', '.join(failed)} failed)"


def junit_case(system: System, spec: str, r: SystemRun) -> JUnitCase:
    """A property's JUnit testcase: classname the system, name family/property."""
    res = r.result
    why = r.not_run or r.reason
    if res is None or why is not None:
        return case_of(system.title, r.prop.key, r.outcome, text=why or "", key=r.prop.key)
    text = "" if res.ok else str(res.failure or f"{type(res.error).__name__}: {res.error}")
    return case_of(system.title, r.prop.key, r.outcome, seconds=res.seconds, text=text, reports=res.reports,
                   seed=res.seed, system=spec, key=r.prop.key)


def table(system: System, runs: list[SystemRun], notes: Footnotes | None = None) -> tuple[tuple[str, ...], list[tuple]]:
    """The campaign's table: examples asked, batches and cases checked (reports/counts.py), then the cases' fates.
    An outcome cell is short: why a property was not applicable, not run or not checked is a footnote in `notes`
    (reports/terminal.py), printed under the table."""
    notes = notes if notes is not None else Footnotes()
    headers = ("system", "family", "property", "outcome", "examples", "batches", "cases", "compared", "unsupported",
               "known", "failures", "seconds", "cases/s")
    rows = []
    for r in runs:
        if r.result is None or r.counts is None:  # not applicable, or not run
            why = notes.mark(NOT_RUN, r.not_run) if r.not_run is not None else notes.mark(NOT_APPLICABLE, r.reason)
            rows.append((system.title, r.prop.family, r.prop.name, why, 0, 0, 0, 0, 0, 0, 0, "", ""))
            continue
        res, seen, counts = r.result, r.result.exercised, r.counts
        rate = f"{counts.cases / res.seconds:.0f}" if res.seconds > 0 else ""
        outcome = r.outcome
        if r.outcome == "not checked" and res.error is not None:
            outcome = notes.mark(r.outcome, str(res.error).splitlines()[0] if str(res.error) else None)
        if r.only_known and seen.compared == 0:
            outcome = f"{KNOWN} (nothing else compared)"
        outcome += shrink_note(res.shrink_stopped)
        rows.append((system.title, r.prop.family, r.prop.name, outcome, counts.examples, counts.batches_cell,
                     counts.cases, seen.compared, seen.unsupported, seen.known, res.failures, f"{res.seconds:.1f}",
                     rate))
    return headers, rows


def print_sent(runs: Sequence[SystemRun]) -> None:
    """What each property that ran sent (properties/systems/sent.py), and a note for each that sent no
    retraction: its pass says nothing about retractions."""
    ran = [r for r in runs if r.sent is not None and r.sent.cases]
    if not ran:
        return
    headers = ("family", "property", "shapes", "changelog modes (cases)", "join types (cases)", "with a retraction")
    print("\nsent:\n" + format_table(headers, [(r.prop.family, r.prop.name, *r.sent.cells()) for r in ran
                                                if r.sent is not None]))
    for r in ran:
        if r.sent is not None and r.sent.no_retraction and r.prop.family not in APPEND_ONLY_FAMILIES:
            print(f"NOTE {r.prop.key}: none of its {r.sent.cases} cases sent a retraction (-U or -D): it checked "
                  f"inserts only (more --examples draw retractions)")


def closing_note(system: System, runs: list[SystemRun], startup: float) -> None:
    ran = [r for r in runs if r.result is not None]
    cases = sum(r.result.exercised.cases for r in ran if r.result is not None)
    seconds = sum(r.result.seconds for r in ran if r.result is not None)
    print(f"\nsystem: {system.title} (started in {startup:.1f} s); {cases} cases in {seconds:.1f} s"
          + (f", {cases / seconds:.0f} cases/s" if seconds > 0 else ""))
    for r in ran:
        if r.short is not None:
            print(f"NOTE {r.prop.key}: {r.short}")
    for r in runs:
        res = r.result
        if res is None or (res.ok and not r.known):
            continue
        seed = f" (seed {res.seed})" if res.seed is not None else ""  # a property not run has none
        print(f"\n{r.outcome.upper()} {r.prop.key} on {system.title}{seed}")
        if res.shrink_stopped is not None:  # the case below is not the smallest there is: say why
            print(f"  shrinking stopped at its budget ({res.shrink_stopped:.0f} s, --shrink-budget): the case "
                  f"below is the smallest found by then")
        print_known(r)
        if r.only_known:
            continue
        whole = isinstance(res.error, SystemUnderTestError)  # its stderr tail is the end of the message
        print(failure_excerpt(str(res.failure or f"{type(res.error).__name__}: {res.error}"), res.reports,
                              lines=60 if whole else 12))
    outcomes = (r.outcome for r in runs)
    print("\n" + outcome_counts(outcomes) + f" ({cases} cases)")


def print_known(r: SystemRun) -> None:
    """What the known cases of a property were: per entry its count, reason, link and minimal case, and what
    else the property compared (a "known" outcome must not hide that nothing else was)."""
    if not r.known or r.result is None:
        return
    seen = r.result.exercised
    print(f"  {seen.known} of {seen.cases} cases matched known divergences; " + (
        f"{seen.compared} other cases compared" if seen.compared else "nothing else was compared"))
    for entry, n in r.known:
        print(f"  known {entry.id} ({n} case{'' if n == 1 else 's'}): {entry.reason} ({entry.link})")
        if entry.case is not None:
            print(f"    minimal case: {entry.case} ({entry.case.stat().st_size} bytes; "
                  f"converge replay --system {entry.system} FILE reruns it)")


def replay_on_system_files(files: Sequence[Path], system_type: SystemType) -> int:
    """`converge replay --system SPEC FILE...`: each scenario file's case on the system; the worst exit code."""
    with system_type.open() as system:
        print(f"system: {system.title}")
        outcomes = [replay_on_system(path, system, system_type.spec) for path in dict.fromkeys(files)]
        return print_replay_outcomes(outcomes, lambda o: list(o.problems) + replay_stderr(system, o))


def replay_stderr(system: System, outcome: ReplayOutcome) -> list[str]:
    """For a replayed file that diverged, what the adapter wrote to stderr during each request that carried its
    case (one per check; nothing for a system without requests, or a request during which it wrote nothing)."""
    if not outcome.divergences or outcome.scenario is None:
        return []
    sent = outcome.divergences[0].scenario  # every check sends the file's case without its expectations
    return [f"stderr of the adapter during run request {r.number} (this file's case):\n  "
            + "\n  ".join(r.stderr_block()) for r in requests_carrying(system, sent) if r.stderr or r.dropped]


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
