"""The seeded-bug campaign: does the harness catch each known bug, how fast, and how small is the evidence?

For every mutant of `mutant_catalog`, the engine gets that one bug
and the property campaign runs against it: the mutant's hinted properties
first, then the rest of its family, until one fails (killed) or none does
(survived). A crash of the engine counts as a kill too: it is a failure the
harness shows. Recorded per mutant: the killing property, examples and time
until the first failing example, time including shrinking, and the size of
the shrunk counterexample in events. Results go to a table on the terminal,
JSON (`--out`) and a Markdown table beside it.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from converge.cli.mutant_catalog import Mutant, StaleMutantError, applied, by_name, report_notes
from converge.engine.model.errors import EXIT_DIVERGENCE, EXIT_INTERNAL, EXIT_OK, BadInputError
from converge.engine.model.files import write_text_whole
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import scenario_to_dict
from converge.properties.campaign import run_property
from converge.properties.divergence import Divergence, FailedCall, PropertyFailure
from converge.properties.progress import case_size
from converge.properties.registry import PropertySpec, select
from converge.reports.progress import CampaignProgress
from converge.reports.run_reports import RunReports
from converge.reports.terminal import format_table

Status = Literal["killed", "survived", "stale"]


@dataclass
class MutantOutcome:
    name: str
    bug: str
    family: str
    status: Status
    killed_by: str | None = None
    examples: int = 0                          # examples run until the first failing one (all properties)
    seconds_to_kill: float | None = None       # time until the first failing example
    seconds: float = 0.0                       # everything, shrinking included
    shrunk_events: int | None = None           # events in the shrunk counterexample
    shrunk_changes: int | None = None          # of which row changes
    message: str = ""
    counterexample: dict | None = None         # the shrunk scenario, in the public format
    tried: list[str] = field(default_factory=list)


@dataclass
class _Probe:
    calls: int = 0
    first_failure: int | None = None
    first_failure_at: float | None = None


def _instrumented(spec: PropertySpec, probe: _Probe) -> PropertySpec:
    """The spec with its check counted, and a crash turned into a failure Hypothesis can shrink."""
    check = spec.check

    def counted(*args):
        probe.calls += case_size(args)[1] if spec.batch > 1 else 1  # a batch's scenarios are its examples
        try:
            check(*args)
        except PropertyFailure:
            _first(probe)
            raise
        except Exception as exc:  # noqa: BLE001 - the mutated engine crashed: detected, and shrinkable
            _first(probe)
            if spec.batch > 1 and args and isinstance(args[0], list):
                _crashing_scenario(check, args[0], exc)
            scenario = next((a for a in args if isinstance(a, Scenario)), None)
            if scenario is None:
                raise
            raise _crashed(scenario, exc) from exc

    def _crashed(scenario: Scenario, exc: BaseException, call: FailedCall | None = None) -> PropertyFailure:
        return PropertyFailure(Divergence(spec.name, scenario, f"the engine crashed: {type(exc).__name__}: {exc}"),
                               call=call)

    def _crashing_scenario(check: Callable[..., None], batch: list, exc: BaseException) -> None:
        """A batch crashed: the scenario that crashes alone is the evidence (it replays as a batch of one)."""
        for scenario in batch:
            try:
                check([scenario])
            except PropertyFailure:
                continue
            except Exception as alone:  # noqa: BLE001 - the crash, on this scenario
                raise _crashed(scenario, alone, FailedCall(([scenario],))) from exc

    return replace(spec, check=counted)


def _first(probe: _Probe) -> None:
    if probe.first_failure is None:
        probe.first_failure = probe.calls
        probe.first_failure_at = time.perf_counter()


def properties_for(mutant: Mutant) -> list[PropertySpec]:
    """The mutant's hinted properties first, then the rest of its family in registry order."""
    family = select(mutant.family)
    by = {s.name: s for s in family}
    first = [by[n] for n in mutant.properties if n in by]
    return first + [s for s in family if s.name not in mutant.properties]


def run_mutant(mutant: Mutant, *, examples: int, seed: int, properties: Sequence[PropertySpec] | None = None,
               shrink: bool = True, reports: RunReports | None = None,
               watch: CampaignProgress | None = None) -> MutantOutcome:
    """Run the campaign against one mutant; stop at the first property that kills it.

    `properties` replaces the mutant's own list; `shrink=False` only asks whether it is killed.
    With `reports`, the kill is written there as a failure report that records the mutant
    (ready to be promoted to a regression case); otherwise kills, the expected outcome, are
    recorded in the campaign's results only. `watch` is told each property's progress (stderr's lines).
    """
    outcome = MutantOutcome(mutant.name, mutant.bug, mutant.family, "survived")
    specs = list(properties) if properties is not None else properties_for(mutant)
    if not specs:
        raise BadInputError(f"mutant {mutant.name}: no property to run against it (family {mutant.family!r})")
    start = time.perf_counter()
    try:
        with applied(mutant):
            reporter = reports.reporter(notes=report_notes()) if reports is not None else None
            for spec in specs:
                probe = _Probe()
                outcome.tried.append(spec.name)
                result = run_property(_instrumented(spec, probe), max_examples=examples, seed=seed,
                                      shrink=shrink, on_failure=reporter, progress=watch)
                if result.ok:
                    outcome.examples += probe.calls
                    continue
                outcome.status = "killed"
                outcome.killed_by = spec.name
                outcome.examples += probe.first_failure or probe.calls
                if probe.first_failure_at is not None:
                    outcome.seconds_to_kill = round(probe.first_failure_at - start, 3)
                _record_evidence(outcome, result)
                break
    except StaleMutantError as exc:
        outcome.status = "stale"
        outcome.message = str(exc)
    outcome.seconds = round(time.perf_counter() - start, 3)
    return outcome


def _record_evidence(outcome: MutantOutcome, result) -> None:
    if result.failure is None:
        outcome.message = f"{type(result.error).__name__}: {result.error}"
        return
    d = result.failure.divergence
    outcome.message = d.describe()
    outcome.shrunk_events = len(d.scenario.events)
    outcome.shrunk_changes = sum(1 for e in d.scenario.events if hasattr(e, "kind"))
    outcome.counterexample = scenario_to_dict(d.scenario)


def run_campaign(mutants: Sequence[Mutant], *, examples: int, seed: int, watch: CampaignProgress | None = None,
                 reports: RunReports | None = None) -> list[MutantOutcome]:
    """Each mutant in turn; `watch` gets a line as each starts and its properties' progress (a mutant that
    survives runs its whole family: a minute and more, never silent for longer than the watch's interval)."""
    outcomes = []
    for i, m in enumerate(mutants):
        if watch is not None:
            watch.note(f"mutants: [{i + 1}/{len(mutants)}] {m.name} ({m.family})")
        outcomes.append(run_mutant(m, examples=examples, seed=seed, reports=reports, watch=watch))
    if watch is not None:
        watch.finish()
    return outcomes


# ---------------------------------------------------------------- output

_HEADERS = ("mutant", "status", "killed by", "examples", "time to kill s", "with shrink s", "shrunk events")


def _row(o: MutantOutcome) -> tuple:
    def num(v: object) -> str:
        return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)

    return (o.name, o.status, o.killed_by or "-", o.examples if o.status != "stale" else "-",
            num(o.seconds_to_kill), num(o.seconds) if o.status != "stale" else "-",
            num(o.shrunk_events))


def markdown_table(outcomes: Sequence[MutantOutcome]) -> str:
    lines = ["| " + " | ".join(_HEADERS) + " |", "|---|---|---|---:|---:|---:|---:|"]
    lines += ["| " + " | ".join(str(c) for c in _row(o)) + " |" for o in outcomes]
    return "\n".join(lines)


def to_json(outcomes: Sequence[MutantOutcome], *, examples: int, seed: int) -> dict:
    killed = sum(o.status == "killed" for o in outcomes)
    return {"generated": time.strftime("%Y-%m-%dT%H:%M:%S"), "examples_per_property": examples, "seed": seed,
            "killed": killed, "survived": sum(o.status == "survived" for o in outcomes),
            "stale": sum(o.status == "stale" for o in outcomes),
            "mutants": [asdict(o) for o in outcomes]}


def write_results(outcomes: Sequence[MutantOutcome], out: Path, *, examples: int, seed: int) -> tuple[Path, Path]:
    data = to_json(outcomes, examples=examples, seed=seed)
    write_text_whole(out, json.dumps(data, indent=1) + "\n")
    md = out.with_suffix(".md")
    lines = ["# converge seeded-bug campaign", "",
             f"{data['killed']} killed, {data['survived']} survived, {data['stale']} stale; "
             f"{examples} examples per property, seed {seed}.", "",
             markdown_table(outcomes), "", "## The bugs", ""]
    lines += [f"* `{o.name}` ({o.family}): {o.bug}" + (f" — {o.message}" if o.status == "stale" else "")
              for o in outcomes]
    write_text_whole(md, "\n".join(lines) + "\n")
    return out, md


def run_mutants(*, only: str | None = None, examples: int = 300, seed: int | None = None,
                out: Path = Path("converge-mutants.json"), reports: Path | None = None) -> int:
    """`converge mutants`: exit 1 if any mutant survives (the harness missed a bug), 3 if one no longer
    applies (the catalog is out of step with the engine: a bug of converge), 2 if results or reports
    could not be written and nothing else went wrong."""
    mutants = by_name(only)
    seed = seed if seed is not None else random.SystemRandom().getrandbits(32)
    run_reports = RunReports.open(reports, "mutants")
    outcomes = run_campaign(mutants, examples=examples, seed=seed, watch=CampaignProgress(every_done=True),
                            reports=run_reports)
    print(format_table(_HEADERS, [_row(o) for o in outcomes]))
    written = None
    try:
        written = write_results(outcomes, out, examples=examples, seed=seed)
    except OSError as exc:
        run_reports.problems.append(f"results not written: {exc.filename or out}: {exc.strerror or exc}")
    for o in outcomes:
        if o.status == "stale":
            print(f"stale: {o.name}: {o.message}", file=sys.stderr)
    bad = [o for o in outcomes if o.status in ("survived", "stale")]
    killed = sum(o.status == "killed" for o in outcomes)
    print(f"\n{killed} killed, {len(bad)} survived or stale (seed {seed})")
    if written is not None:
        print(f"results: {written[0]} and {written[1]}")
    if run_reports.run_dir is not None:
        print(f"reports: {run_reports.run_dir}")
    stale = any(o.status == "stale" for o in outcomes)
    return run_reports.settle(EXIT_INTERNAL if stale else EXIT_DIVERGENCE if bad else EXIT_OK)
