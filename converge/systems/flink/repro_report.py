"""The bug report beside a Flink repro: Markdown in the style of an Apache Flink JIRA issue.

One-line title, the versions (the known-divergence entry's range when the case is one's minimal case, and the
version this run measured), the inputs table by table, the SQL and the job options, the expected answer with its
SQL-semantics reason and the oracle's query, Flink's actual changelog as the program printed it, and the command.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.properties.systems.known import KnownDivergence, builtin_known
from converge.systems.flink.repro import FlinkRepro
from converge.systems.flink.system_type import FlinkSystemType

RUN_TIMEOUT_S = 600


@dataclass(frozen=True)
class Measured:
    """One run of the generated program on an installed Flink."""

    version: str
    exit_code: int | None    # None: not run (--no-run) or timed out
    output: str


def run_program(interpreter: Path, program: Path, version: str) -> Measured:
    """The program's exit code and stdout on the Flink environment's Python (its stderr is the JVM's log)."""
    try:
        done = subprocess.run([str(interpreter), program.name], cwd=program.parent, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return Measured(version, None, f"(the program ran past {RUN_TIMEOUT_S} s and was stopped)")
    output = done.stdout.strip() or done.stderr.strip()[-3000:]
    return Measured(version, done.returncode, output)


def known_entry(source: Path) -> KnownDivergence | None:
    """The built-in known divergence whose minimal case is this file (by file name), if any."""
    for entry in builtin_known():
        if entry.system in FlinkSystemType.schemes and entry.case is not None and entry.case.name == source.name:
            return entry
    return None


def _table(scenario: Scenario, name: str) -> str:
    spec = next(s for s in scenario.inputs if s.name == name)
    key = f", PRIMARY KEY ({', '.join(spec.unique_key)}) NOT ENFORCED" if spec.unique_key else ""
    columns = ", ".join(f"{c} {t}" for c, t in spec.columns)
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


def _versions(entry: KnownDivergence | None, measured: Measured | None) -> str:
    lines = []
    if entry is not None and entry.versions:
        lines.append(f"- Diverges on: Flink {', '.join(entry.versions)} (converge's known divergence `{entry.id}`, "
                     "replayed on each release in that range).")
    if measured is not None and measured.exit_code is not None:
        outcome = {0: "agrees with the expected answer", 1: "diverges", 2: "fails the job"}.get(
            measured.exit_code, f"exits {measured.exit_code}")
        lines.append(f"- Measured with the program below on Flink {measured.version}: it {outcome}.")
    if not lines:
        lines.append("- Not measured here (`converge repro --no-run`); run the program below.")
    return "\n".join(lines)


def render(scenario: Scenario, repro: FlinkRepro, source: Path, measured: Measured | None) -> str:
    """The Markdown report."""
    entry = known_entry(source)
    program = f"repro_{repro.slug}.py"
    expected = "\n".join(_sql_row(row) for row in repro.expected) or "(no rows)"
    options = "\n".join(f"SET '{k}' = '{v}';" for k, v in repro.options.items())
    tables = "\n\n".join(_table(scenario, name) for name in scenario.join.inputs)
    order = ", ".join(f"{n}. {e.input} {e.kind}" for n, e in enumerate(scenario.events, start=1)
                      if isinstance(e, ChangeEvent))
    reason = scenario.description or "(the scenario file gives no reason; see the oracle's query below)"
    actual = measured.output if measured is not None else "(not run: `converge repro --no-run`)"
    link = f"\n\nRelated: {entry.link}" if entry is not None and entry.link else ""
    return f"""# [Flink SQL] {repro.title}

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
```

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

```
{actual}
```

## How to reproduce

`python {program}` with PyFlink (`pip install apache-flink=={repro.version}`,
Java 11+): it exits 1 when Flink's final answer differs from the expected one, 0 when they agree.{link}
"""
