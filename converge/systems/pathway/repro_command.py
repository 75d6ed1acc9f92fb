"""`converge repro FILE --system pathway[:VERSION]`: a scenario as a standalone Pathway script and a bug report in
the style of Pathway's GitHub issues (docs/repro.md). converge/cli/commands/repro.py dispatches here."""

from __future__ import annotations

import argparse
from pathlib import Path

from converge.engine.model.errors import UsageError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.properties.replay import load_scenario_file
from converge.systems.flink.repro_report import Measured, run_and_print, write_program
from converge.systems.pathway import environment
from converge.systems.pathway.repro import PathwayRepro, build


def _table(scenario: Scenario, name: str) -> str:
    spec = next(s for s in scenario.inputs if s.name == name)
    key = f", unique key ({', '.join(spec.unique_key)})" if spec.unique_key else ""
    lines = [f"`{name}` ({', '.join(f'{c} {t}' for c, t in spec.columns)}{key}), changelog mode "
             f"{spec.changelog_mode}:", "", "| # | kind | " + " | ".join(c for c, _ in spec.columns) + " |",
             "|---|---|" + "---|" * len(spec.columns)]
    for n, event in enumerate(scenario.events, start=1):
        if isinstance(event, ChangeEvent) and event.input == name:
            lines.append(f"| {n} | {event.kind} | " + " | ".join("NULL" if v is None else repr(v) for v in event.row)
                         + " |")
    return "\n".join(lines)


def render(scenario: Scenario, repro: PathwayRepro, measured: Measured | None) -> str:
    """The Markdown report: the sections of Pathway's bug-report template."""
    program = f"repro_{repro.slug}.py"
    expected = "\n".join("(" + ", ".join("NULL" if v is None else repr(v) for v in row) + ")"
                         for row in repro.expected) or "(no rows)"
    if measured is None or measured.exit_code is None:
        version = "Not measured here (`converge repro --no-run`); run the script below."
    else:
        outcome = {0: "agrees with the expected answer", 1: "diverges", 2: "fails"}.get(
            measured.exit_code, f"exits {measured.exit_code}")
        version = f"Pathway {measured.version}: the script below {outcome}."
    actual = measured.output if measured is not None else "(not run: `converge repro --no-run`)"
    tables = "\n\n".join(_table(scenario, n) for n in scenario.join.inputs)
    reason = scenario.description or "(the scenario file gives no reason; see the oracle's query below)"
    return f"""# {repro.title}

## Describe the bug

The final result of a chain of joins over changing input tables, run as a Pathway dataflow to the end of its
input, compared with the batch answer of the same SQL over the inputs' final contents.

## To Reproduce

`python {program}` with Pathway (`pip install pathway=={repro.version}`); it exits 1 when Pathway's final answer
differs from the expected one, 0 when they agree, 2 when Pathway fails. The inputs, one change per Pathway time
(2, 4, 6, ... in the order of the `#` column):

{tables}

The join: `{repro.query}`

## Expected behavior

```
{expected}
```

Why: {reason}

The batch answer of the same join over the final inputs (DuckDB):

```sql
{repro.oracle_sql}
```

## Actual behavior

```
{actual}
```

## Version

{version}
"""


def cmd_repro_pathway(args: argparse.Namespace, path: Path) -> int:
    """Write repro_<slug>.py and REPORT.md into --out; run the script on the installed Pathway unless --no-run."""
    _, _, version = args.system.partition(":")
    scenario = load_scenario_file(path)
    try:
        installed = environment.find(version or None)
    except UsageError:
        if not args.no_run:
            raise
        installed = None
    target = installed.version if installed is not None else version or environment.DEFAULT_VERSION
    repro = build(scenario, path.name, target)
    program = write_program(args.out, repro.slug, repro.program)
    out = program.parent
    measured: Measured | None = None
    if installed is not None and not args.no_run:
        measured = run_and_print(installed.interpreter, program, installed.version, "Pathway")
    report = out / "REPORT.md"
    report.write_text(render(scenario, repro, measured), encoding="utf-8")
    print(f"wrote {report}")
    return 0
