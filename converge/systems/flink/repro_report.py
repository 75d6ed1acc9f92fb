"""The bug report beside a Flink repro: Markdown in the style of an Apache Flink JIRA issue.

One-line title, the versions (the known-divergence entry's range when the case is one's minimal case, and the
version this run measured), the inputs table by table, the SQL and the job options, the expected answer with its
SQL-semantics reason and the oracle's query, Flink's actual changelog as the program printed it, and the command.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.properties.systems.known import KnownDivergence, builtin_known
from converge.systems.flink import environment
from converge.systems.flink.repro import FlinkRepro

RUN_TIMEOUT_S = 600
_OUTCOMES = {0: "agrees with the expected answer", 1: "diverges",
             2: "fails: Flink cannot plan the query or fails the job"}


@dataclass(frozen=True)
class Measured:
    """One run of the generated program on an installed Flink."""

    version: str
    exit_code: int | None    # None: not run (--no-run), timed out, or the release is not installed
    output: str
    installed: bool = True

    @property
    def outcome(self) -> str:
        """The version matrix's word for this run (converge/systems/flink/matrix.py)."""
        if not self.installed:
            return "not installed"
        if self.exit_code is None:
            return "no outcome"
        return {0: "agrees", 1: "diverges", 2: "fails"}.get(self.exit_code, f"exit {self.exit_code}")


def run_program(interpreter: Path, program: Path, version: str) -> Measured:
    """The program's exit code and stdout on the Flink environment's Python (its stderr is the JVM's log)."""
    try:
        done = subprocess.run([str(interpreter), program.name], cwd=program.parent, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return Measured(version, None, f"(the program ran past {RUN_TIMEOUT_S} s and was stopped)")
    output = done.stdout.strip() or done.stderr.strip()[-3000:]
    return Measured(version, done.returncode, output)


def write_program(out: str | Path, slug: str, text: str) -> Path:
    """Write `repro_<slug>.py` into the output folder (created if missing) and say so; every system's repro."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / f"repro_{slug}.py"
    program.write_text(text, encoding="utf-8")
    print(f"wrote {program}")
    return program


def run_and_print(interpreter: Path, program: Path, version: str, system: str) -> Measured:
    """Run the program on one release of a system (run_program) and print what it printed and its exit code."""
    print(f"running it on {system} {version} ({interpreter}) ...", flush=True)
    measured = run_program(interpreter, program.resolve(), version)
    print(measured.output)
    print(f"exit code {measured.exit_code}")
    return measured


def known_entry(source: Path) -> KnownDivergence | None:
    """The built-in known divergence whose minimal case is this file (by file name), if any."""
    for entry in builtin_known():
        if entry.system == environment.SYSTEM.name and entry.case is not None and entry.case.name == source.name:
            return entry
    return None


def _table(scenario: Scenario, name: str, repro: FlinkRepro) -> str:
    spec = next(s for s in scenario.inputs if s.name == name)
    key = f", PRIMARY KEY ({', '.join(spec.unique_key)}) NOT ENFORCED" if spec.unique_key else ""
    columns = ", ".join(f"{c} {t}" for c, t in spec.columns)
    if repro.rowtimes and name in repro.rowtimes:
        column, delay, _ = repro.rowtimes[name]
        columns += (f", {name}_rowtime AS TO_TIMESTAMP_LTZ({column}, 3), WATERMARK FOR {name}_rowtime AS "
                    f"TO_TIMESTAMP_LTZ({column} - {delay}, 3)")
    lines = [f"`{name}` ({columns}{key}), changelog mode {spec.changelog_mode}:", "",
             "| # | kind | " + " | ".join(c for c, _ in spec.columns) + " |",
             "|---|---|" + "---|" * len(spec.columns)]
    for n, event in enumerate(scenario.events, start=1):
        if isinstance(event, ChangeEvent) and event.input == name:
            values = " | ".join("NULL" if v is None else repr(v) for v in event.row)
            lines.append(f"| {n} | {event.kind} | {values} |")
    return "\n".join(lines)


def _sql_row(row: tuple) -> str:
    return "(" + ", ".join("NULL" if v is None else repr(v) for v in row) + ")"


def is_intermittent(entry: KnownDivergence | None) -> bool:
    """Whether the known divergence says its finding does not show on every run (then the program runs it again)."""
    return entry is not None and "intermittent" in entry.reason.lower()


def _versions(entry: KnownDivergence | None, measured: Sequence[Measured]) -> str:
    lines = []
    for m in measured:
        if not m.installed:
            lines.append(f"- Flink {m.version}: not measured (not installed here).")
        elif m.exit_code is None:
            lines.append(f"- Flink {m.version}: no outcome ({m.output}).")
        else:
            outcome = _OUTCOMES.get(m.exit_code, f"exits {m.exit_code}")
            lines.append(f"- Flink {m.version}: {outcome} (measured: the program below exits {m.exit_code}).")
    if entry is not None and entry.versions:
        lines.append(f"- From the record: diverges on Flink {', '.join(entry.versions)} (converge's known divergence "
                     f"`{entry.id}`, replayed on each release in that range).")
    if not lines:
        lines.append("- Not measured here (`converge repro --no-run`); run the program below.")
    return "\n".join(lines)


def _actual(measured: Sequence[Measured]) -> str:
    ran = [m for m in measured if m.installed]
    if not ran:
        return "```\n(not run: `converge repro --no-run`)\n```"
    if len(ran) == 1:
        return f"```\n{ran[0].output}\n```"
    return "\n\n".join(f"Flink {m.version} (exit {m.exit_code}):\n\n```\n{m.output}\n```" for m in ran)


def _title(repro: FlinkRepro, entry: KnownDivergence | None) -> str:
    """The scenario's name, or (a file name such as flink_upsert_rowtime_plan_fails) the known divergence's first
    clause."""
    if " " in repro.title.strip() or entry is None:
        return repro.title
    return entry.reason.split(":", 1)[0].split(". ", 1)[0].strip()


def render(scenario: Scenario, repro: FlinkRepro, source: Path, measured: Sequence[Measured]) -> str:
    """The Markdown report; `measured`: the program's runs, one per release (none with --no-run)."""
    entry = known_entry(source)
    program = f"repro_{repro.slug}.py"
    expected = "\n".join(_sql_row(row) for row in repro.expected) or "(no rows)"
    options = "\n".join(f"SET '{k}' = '{v}';" for k, v in repro.options.items())
    tables = "\n\n".join(_table(scenario, name, repro) for name in scenario.join.inputs)
    sink = (f"\n\nThe query's result goes to an upsert sink with PRIMARY KEY ({', '.join(repro.sink_key)}) NOT "
            "ENFORCED (`toChangelogStream(table, schema, ChangelogMode.upsert())`); the answer is the table that "
            "sink keeps (+I/+U write the row of its key, -D deletes it).") if repro.upsert_sink else ""
    order = ", ".join(f"{n}. {e.input} {e.kind}" for n, e in enumerate(scenario.events, start=1)
                      if isinstance(e, ChangeEvent))
    reason = scenario.description or "(the scenario file gives no reason; see the oracle's query below)"
    link = f"\n\nRelated: {entry.link}" if entry is not None and entry.link else ""
    answer = "the table Flink's upsert sink keeps" if repro.upsert_sink else "Flink's final answer"
    again = (f" The finding is intermittent: the program runs the job up to {repro.runs} times and stops at the "
             "first run that diverges.") if repro.runs > 1 else ""
    return f"""# [Flink SQL] {_title(repro, entry)}

## Versions

{_versions(entry, measured)}

## Input

Each input is a changelog stream (`fromChangelogStream`) with the row kinds below. The changes arrive in this
order (the numbers are the arrival order across all inputs): {order}.

{tables}

## Query and job options

```sql
{options}

{repro.query};
```{sink}

## Expected

```
{expected}
```

Why: {reason}

The expected answer is the batch answer of the same join over the inputs' final contents (DuckDB):

```sql
{repro.oracle_sql}
```

## Actual

{_actual(measured)}

## How to reproduce

`python {program}` with PyFlink (`pip install apache-flink=={repro.version}`,
Java 11+): it exits 1 when {answer} differs from the expected one, 2 when Flink cannot plan the query
or fails the job, 0 when they agree.{again}{link}
"""
