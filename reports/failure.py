"""A failed property becomes a scenario file that replays it and a Markdown report that explains it."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Callable

import hypothesis

from engine.scenario import Scenario, dump_scenario, event_to_json
from properties.divergence import Divergence, format_bag_diff


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def _with_oracle_expectations(d: Divergence) -> Scenario:
    """The counterexample, annotated with the property that failed and the expected final table."""
    meta = dict(d.scenario.meta)
    meta["converge_failure"] = {"property": d.property, "message": d.message, "event_index": d.event_index,
                                "hypothesis_version": hypothesis.__version__, **d.extra_json()}
    scenario = replace(d.scenario, meta=meta)
    if d.expected is not None and d.event_index is not None and d.event_index == len(scenario.events) - 1:
        scenario = replace(scenario, expect_final=tuple(d.expected.elements()))
    return scenario


def _markdown(d: Divergence, scenario_path: Path, runtime: str) -> str:
    s = d.scenario
    cfg = s.config
    lines = [f"# {d.property} failed", "", d.message, "",
             f"Replay: `converge replay {scenario_path}`", "",
             "## Join", "", "```sql", _join_sql(s), "```", "",
             "## Config", "",
             f"state TTL: {cfg.state_ttl_ms}, MapState order: {cfg.map_state_order}, semantics: {cfg.semantics}, "
             f"normalize: {cfg.changelog_normalize}, runtime: {runtime}, hypothesis {hypothesis.__version__}", "",
             "## Input changelog", "", "| # | input | event |", "|---:|---|---|"]
    for i, e in enumerate(s.events):
        j = event_to_json(e)
        marker = " **<- diverges here**" if i == d.event_index else ""
        desc = (f"{j['kind']} {j['row']}" if "kind" in j else
                f"processing time {j['processing_time']}" if "processing_time" in j else
                f"watermark {j.get('watermark')}" if "watermark" in j else "idle")
        lines.append(f"| {i} | {j.get('input', '')} | {desc}{marker} |")
    if d.engine is not None and d.expected is not None:
        lines += ["", f"## Engine vs expected after event {d.event_index}", "", "(+ engine only, - expected only)",
                  "", "```", format_bag_diff(d.engine, d.expected, limit=50), "```"]
    return "\n".join(lines) + "\n"


def _join_sql(s: Scenario) -> str:
    try:
        from oracle import render_join_sql
        return render_join_sql(s)
    except Exception as exc:  # the report must still be written when the SQL cannot be rendered
        return f"-- could not render: {exc}"


def write_failure_report(d: Divergence, folder: Path, *, runtime: str = "local") -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    base = f"{_slug(d.property)}-{_slug(d.scenario.name)}"
    n = 1
    while (folder / f"{base}-{n}.json").exists():
        n += 1
    scenario_path = dump_scenario(_with_oracle_expectations(d), folder / f"{base}-{n}.json")
    md_path = folder / f"{base}-{n}.md"
    md_path.write_text(_markdown(d, scenario_path, runtime))
    return scenario_path, md_path


def failure_reporter(folder: Path) -> Callable:
    """A callback for run_property: writes the report of a failed property into `folder`."""

    def report(result) -> None:
        if result.failure is None:
            return
        paths = write_failure_report(result.failure.divergence, folder)
        result.reports.extend(str(p) for p in paths)

    return report
