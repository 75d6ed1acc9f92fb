"""A failed property becomes a scenario file that replays it, a Markdown report that explains it, and a picture.

The scenario file is the shrunk counterexample in the public format, with
two optional additions: ``expect_final`` (the oracle's answer, when one
exists for the scenario) and a ``converge_failure`` meta key naming the
property, the arguments it was called with and where it diverged. `converge
replay FILE` reruns exactly that property with those arguments, without
Hypothesis, and checks the expectations.

Everything here comes from the property's evidence (`Divergence`): the
oracle's query and final answer, the engine's output. The writer runs
neither the engine nor an oracle; what the evidence lacks, the report says
it lacks.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import hypothesis

from converge.engine.model.files import write_text_whole
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.scenario_json import dump_scenario, event_to_json, scenario_to_dict
from converge.properties.divergence import Divergence, PropertyFailure, bag_diff
from converge.properties.registry import select
from converge.reports.timeline import INSTALL_HINT, draw_timeline, pictures_available

SELF = "self"  # an argument that is the file's own scenario
NO_ORACLE_QUERY = "-- the property gave no oracle query"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


# ---------------------------------------------------------------- arguments


def encode_args(args: Sequence[Any] | None, scenario: Scenario) -> list | None:
    """The property's call arguments as JSON; the counterexample itself is written as "self"."""
    if args is None:
        return None
    out: list = []

    def one(a: Scenario) -> dict:
        return {"$scenario": SELF} if _same_run(a, scenario) else {"$scenario": scenario_to_dict(a)}

    for a in args:
        if isinstance(a, Scenario):
            out.append(one(a))
        elif isinstance(a, list) and a and all(isinstance(x, Scenario) for x in a):  # a batch (properties/batch.py)
            out.append([one(x) for x in a])
        elif a is None or isinstance(a, (bool, int, float, str)):
            out.append(a)
        elif isinstance(a, (list, tuple)) and all(x is None or isinstance(x, (bool, int, float, str)) for x in a):
            out.append(list(a))
        else:
            return None  # cannot be written down; replay falls back to what the scenario alone allows
    return out


def _same_run(a: Scenario, b: Scenario) -> bool:
    return (a.inputs, a.join, a.config, a.events) == (b.inputs, b.join, b.config, b.events)


# ---------------------------------------------------------------- expectations


def _with_failure_meta(d: Divergence, args: Sequence[Any] | None, info: dict[str, Any],
                       notes: Mapping[str, Any]) -> Scenario:
    meta = dict(d.scenario.meta)
    failure = {"property": d.property, "message": d.message, "event_index": d.event_index,
               "hypothesis_version": hypothesis.__version__, **info}
    failure.update({k: v for k, v in notes.items() if k not in failure})  # e.g. the seeded bug that was applied
    encoded = encode_args(args, d.scenario)
    if encoded is not None:
        failure["args"] = encoded
    failure.update({k: v for k, v in d.extra_json().items() if k not in failure})
    meta["converge_failure"] = failure
    scenario = replace(d.scenario, meta=meta)
    final = d.expected_final  # the property's (an oracle's or a model's), never the engine's
    if final is not None:
        scenario = replace(scenario, expect_final=tuple(sorted(final.elements(), key=repr)))
    return scenario


# ---------------------------------------------------------------- Markdown


def _cell(v: object) -> str:
    return "NULL" if v is None else str(v).replace("|", "\\|")


def _input_tables(s: Scenario, event_index: int | None) -> list[str]:
    lines: list[str] = []
    for spec in s.inputs:
        if spec.source is not None:  # its events are its stream's, listed there
            lines += ["", f"### {spec.name}: reads the stream of {spec.source}"]
            continue
        uk = f", unique key ({', '.join(spec.unique_key)})" if spec.unique_key else ""
        lines += ["", f"### {spec.name} ({spec.changelog_mode}{uk})", "",
                  "| # | kind | " + " | ".join(spec.column_names) + " |",
                  "|---:|---|" + "---|" * len(spec.columns)]
        for i, e in enumerate(s.events):
            if isinstance(e, ChangeEvent) and e.input == spec.name:
                mark = " ◀" if i == event_index else ""
                lines.append(f"| {i}{mark} | {e.kind} | " + " | ".join(_cell(v) for v in e.row) + " |")
    clocks = [(i, event_to_json(e)) for i, e in enumerate(s.events) if not isinstance(e, ChangeEvent)]
    if clocks:
        lines += ["", "### clocks", "", "| # | event |", "|---:|---|"]
        for i, j in clocks:
            what = (f"processing time → {j['processing_time']}" if "processing_time" in j else
                    f"watermark {j['input']} → {j['watermark']}" if "watermark" in j else f"{j['input']} idle")
            lines.append(f"| {i} | {what} |")
    return lines


def _diff_block(engine: Counter, expected: Counter, limit: int = 60, side: str = "engine") -> list[str]:
    """The rows only one side has; `side` names whose output `engine` is (a system's title, or the engine)."""
    diff = bag_diff(engine, expected)
    same = sum((engine & expected).values())
    lines = ["```diff"]
    for sign, row, n in diff[:limit]:
        lines.append(f"{sign} {list(row)}" + (f"  ×{n}" if n > 1 else ""))
    if len(diff) > limit:
        lines.append(f"… {len(diff) - limit} more")
    lines += ["```", f"`+` only in {'the engine' if side == 'engine' else side}'s output, `-` only in the expected "
                     f"answer; {same} row(s) agree."]
    return lines


def _answers_block(answers: Mapping[str, Any], agreement: str, limit: int = 60) -> list[str]:
    """Every answer known for the case (oracle, system, reference engine), one column each, and which agree."""
    bags = {name: a for name, a in answers.items() if isinstance(a, Counter)}
    rows = sorted(set().union(*bags.values()) if bags else set(), key=repr)
    names = list(answers)
    lines = ["", "## Answers side by side", "", f"Agreement: **{agreement}**", "",
             "| row | " + " | ".join(_cell(n) for n in names) + " |", "|---|" + "---:|" * len(names)]
    for row in rows[:limit]:
        cells = [str(answers[n].get(row, 0)) if n in bags else "" for n in names]
        lines.append(f"| `{list(row)}` | " + " | ".join(cells) + " |")
    if len(rows) > limit:
        lines.append(f"| … {len(rows) - limit} more rows | " + " | ".join("" for _ in names) + " |")
    lines += [f"\n{_cell(n)} gave no table: {answers[n]}" for n in names if n not in bags]
    return lines


def _join_line(s: Scenario) -> str:
    """The join as the scenario states it (the SQL below, when there is one, is the oracle's own)."""
    j = s.join
    text = f"`{j.inputs[0]}`" + "".join(f" **{kind}** `{name}` on `{cond}`"
                                         for kind, name, cond in zip(j.types, j.inputs[1:], j.conditions, strict=False))
    iv = j.interval
    if iv is not None:
        times = "processing time" if iv.time == "processing" else f"`{iv.left_time}` - `{iv.right_time}`"
        text += f", {times} in [{iv.lower_ms}, {iv.upper_ms}] ms"
    return text


def _system_option(d: Divergence) -> str:
    """`--system SPEC ` when the failure is a system's (a campaign of `converge run --system`)."""
    spec = d.extra.get("system_spec")
    return f"--system {shlex.quote(spec)} " if isinstance(spec, str) else ""


def _markdown(d: Divergence, scenario_path: Path, png: Path | None, info: dict[str, Any],
              per_event: list | None, args: list | None, description: str, dropped: str | None = None) -> str:
    s = d.scenario
    cfg = s.config
    where = f"event {d.event_index}" if d.event_index is not None else "the final answer"
    test = info.get("test")  # a pytest test's node id (reports/pytest_failures.py)
    own_check = bool(test) and str(test).endswith(f"::{d.property}")  # the test's own failure, not a property's
    if own_check and d.event_index is None:
        where = "the test's own check (no event named)"
    title = (f"{test} failed" + ("" if own_check else f" (`{info.get('spec') or d.property}`)") if test else
             f"{info.get('family') or '?'}/{info.get('spec') or d.property} failed")
    replay = f"`converge replay {_system_option(d)}{scenario_path}`"
    if test and _spec_description(info.get("family"), info.get("spec") or d.property, default=None) is None:
        replay += " checks the file's expectations only: the test's own check is not a property replay can rerun"
    lines = [f"# {title}", "", description and f"*{description}*", "",
             "```", d.message, "```", "",
             "| | |", "|---|---|",
             f"| replay | {replay} |"]
    if test:
        lines += [f"| pytest test | `{_cell(test)}` |",
                  f"| reproduce | `{_cell(info.get('reproduce'))}` (from pytest's rootdir) |"]
    lines += [f"| diverges at | {where} of {len(s.events)} |" if not own_check or d.event_index is not None
              else f"| diverges at | {where}; the scenario has {len(s.events)} events |",
              f"| Hypothesis | {hypothesis.__version__}, {_seed_text(info)} |",
              f"| runtime | {info.get('runtime', 'local')} |"]
    if info.get("shrink_stopped_after_s") is not None:
        lines.append(f"| shrinking | stopped after {info['shrink_stopped_after_s']:.0f} s (the shrink budget): the "
                     "smallest failing case found by then, maybe not a minimal one |")
    if png is not None:
        lines += ["", f"![timeline]({png.name})"]
    elif not pictures_available():
        lines += ["", f"(No timeline picture: matplotlib is not installed; `{INSTALL_HINT}` adds it.)"]
    elif dropped is not None:
        lines += ["", f"(No timeline picture: it could not be written: {dropped}.)"]
    lines += ["", "## Join", "", _join_line(s), "", "```sql", d.oracle_sql or NO_ORACLE_QUERY, "```", "",
              "## Config", "", "| state TTL | MapState order | semantics | changelog normalize | multi-way join |"
              " runtime |", "|---|---|---|---|---|---|",
              f"| {cfg.state_ttl_ms if cfg.state_ttl_ms is not None else 'none'} | {cfg.map_state_order} | "
              f"{cfg.semantics} | {cfg.changelog_normalize} | {cfg.multi_join} | {info.get('runtime', 'local')} |",
              "", "## Input changelog"]
    lines += _input_tables(s, d.event_index)
    if isinstance(d.extra.get("answers"), Mapping):
        lines += _answers_block(d.extra["answers"], str(d.extra.get("agreement", "")))
    if d.engine is not None and d.expected is not None:
        lines += ["", f"## Output after {where}: {d.side()} vs expected", ""] + _diff_block(d.engine, d.expected,
                                                                                          side=d.side())
    if per_event is not None and d.event_index is not None and d.event_index < len(per_event):
        emitted = per_event[d.event_index]
        lines += ["", f"The engine emitted at event {d.event_index}: "
                  + (", ".join(f"`{c.kind} {list(c.row)}`" if hasattr(c, "kind") else f"`WM {c.watermark}`"
                               for c in emitted) or "nothing")]
    elif per_event is None and d.event_index is not None:
        lines += ["", "The property gave no engine output (what the engine emitted is not in the evidence)."]
    lines += _stderr_block(d.extra.get("adapter_stderr"))
    if args:
        shown = [a if not (isinstance(a, dict) and "$scenario" in a) else
                 ("the counterexample" if a["$scenario"] == SELF else "a second scenario (in the file)")
                 for a in args]
        lines += ["", "## Property arguments", "", ", ".join(f"`{a}`" for a in shown)]
    return "\n".join(line for line in lines if line is not None) + "\n"


def _stderr_block(stderr: object) -> list[str]:
    """What the adapter wrote to stderr during the run request that answered the case (converge/systems/
    campaign.py puts it in the divergence's extra as {"request": n, "lines": [...]})."""
    if not isinstance(stderr, Mapping):
        return []
    head = ["", f"## stderr of the adapter during this request (run request {stderr.get('request')})", ""]
    lines = [str(line) for line in stderr.get("lines") or ()]
    if not lines:
        return head + ["The adapter wrote nothing to stderr during this request."]
    return head + ["```text", *(line.replace("```", "` ` `") for line in lines), "```"]


# ---------------------------------------------------------------- writing


def _spec_description(family: str | None, prop: str, default: str | None = "") -> str | None:
    """The registered property's description; `default` when `prop` is not a registered property."""
    try:
        found = select(family, prop)
        return found[0].description if found else default
    except Exception:  # noqa: BLE001
        return default


def _seed_text(info: Mapping[str, Any]) -> str:
    seed = info.get("seed")
    if seed is not None:
        return f"seed {seed}" + (" (fixed by @seed)" if info.get("seed_source") == "@seed" else "")
    if info.get("seed_source") == "derandomize":
        return "derandomized (no seed: every derandomized run of the same test draws the same examples)"
    return "seed unknown"


def _claim(folder: Path, base: str) -> Path:
    """A fresh <base>-<n> stem; the .json is created exclusively, so parallel workers never share one."""
    n = 1
    while True:
        stem = folder / f"{base}-{n}"
        try:
            with open(stem.with_suffix(".json"), "x"):
                return stem
        except FileExistsError:
            n += 1


def warn_on_stderr(message: str) -> None:
    """The default `warn` of the report writers: one line on stderr."""
    print(f"converge: warning: {message}", file=sys.stderr)


def _picture(d: Divergence, path: Path, warn: Callable[[str], None]) -> tuple[Path | None, str | None]:
    """Draw the timeline to `path`: (the path, None), or (None, why not) after warning that it was dropped."""
    if not pictures_available():
        warn(f"failure reports have no timeline picture: matplotlib is not installed ({INSTALL_HINT} adds it)")
        return None, None  # the Markdown says so in its own words
    try:
        diff = bag_diff(d.engine, d.expected) if d.engine is not None and d.expected is not None else []
        return draw_timeline(d.scenario, path, event_index=d.event_index, output_per_event=d.emitted,
                             diverging_row=diff[0] if diff else None), None
    except Exception as exc:  # noqa: BLE001 - a picture is a bonus; the replayable file is what matters
        why = f"{exc.strerror or exc}" if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
        warn(f"timeline picture {path} not written: {why}")
        return None, why


def write_failure_report(d: Divergence, folder: Path, *, runtime: str = "local", seed: int | None = None,
                         family: str | None = None, args: Sequence[Any] | None = None, spec: str | None = None,
                         timeline: bool = True, notes: Mapping[str, Any] | None = None,
                         warn: Callable[[str], None] = warn_on_stderr,
                         shrink_stopped: float | None = None,
                         test: Mapping[str, Any] | None = None) -> tuple[Path, ...]:
    """Write <name>.json (replayable), <name>.md and <name>.png into `folder`; return their paths.

    `spec` is the registry name of the property that ran, when it differs from the check's own name
    (several registered properties share one check with different generators). `notes` are JSON
    values recorded in the file's `converge_failure` meta (`converge mutants` records the bug applied).
    `shrink_stopped`: shrinking stopped at this budget (seconds), so the case is the smallest found by then;
    the file records it as `shrink_stopped_after_s` and the Markdown says so. `test`: the pytest test that
    failed (`test`: its node id, `reproduce`: the command that reruns it, `seed_source`), recorded in the file's
    meta and named in the Markdown's title.

    Each file is written whole or not at all (engine/model/files.py). The scenario file and the Markdown
    are the report: when either cannot be written, neither is left and the OSError names the file and
    the reason. A picture that cannot be drawn (no matplotlib, a full disk) is left out, and `warn` is
    told so in one line."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = _claim(folder, f"{_slug(spec or d.property)}-{_slug(d.scenario.name)}")
    info: dict[str, Any] = {"family": family, "seed": seed, "runtime": runtime}
    if spec is not None and spec != d.property:
        info["spec"] = spec
    if shrink_stopped is not None:
        info["shrink_stopped_after_s"] = shrink_stopped
    info.update({k: v for k, v in (test or {}).items() if k in ("test", "reproduce", "seed_source")})
    png: Path | None = None
    try:
        scenario = _with_failure_meta(d, args, info, notes or {})
        scenario_path = dump_scenario(scenario, stem.with_suffix(".json"))
        dropped = None
        if timeline:
            png, dropped = _picture(d, stem.with_suffix(".png"), warn)
        args_json = scenario.meta["converge_failure"].get("args")
        md_path = write_text_whole(stem.with_suffix(".md"), _markdown(
            d, scenario_path, png, info, d.emitted, args_json, _spec_description(family, spec or d.property),
            dropped))
    except BaseException:
        for path in (stem.with_suffix(".json"), png):  # the claimed name, and a picture without its report
            if path is not None:
                path.unlink(missing_ok=True)
        raise
    return (scenario_path, md_path) + ((png,) if png is not None else ())


def crash_divergence(prop: str, exc: BaseException, args: Sequence[Any] | None) -> Divergence | None:
    """A crash (not a divergence) still gets a report when the failing call's scenario is known."""
    scenario = next((a for a in args or () if isinstance(a, Scenario)), None)
    if scenario is None:
        return None
    return Divergence(prop, scenario, f"the check crashed: {type(exc).__name__}: {exc}")


def failure_reporter(folder: Path, *, runtime: str = "local", notes: Mapping[str, Any] | None = None,
                     warn: Callable[[str], None] = warn_on_stderr) -> Callable:
    """A callback for run_property: writes the report of a failed property into `folder` (`warn`: as
    write_failure_report's)."""
    def report(result) -> None:
        if result.failure is not None:
            d: Divergence | None = result.failure.divergence
        elif result.error is not None:
            d = crash_divergence(result.name, result.error, result.failure_args)
        else:
            return
        if d is None:
            return
        paths = write_failure_report(d, Path(folder), runtime=runtime, seed=result.seed, family=result.family,
                                     args=result.failure_args, spec=result.name, notes=notes, warn=warn,
                                     shrink_stopped=getattr(result, "shrink_stopped", None))
        result.reports.extend(str(p) for p in paths)

    return report


def property_failures(exc: BaseException) -> list[PropertyFailure]:
    """Every PropertyFailure inside `exc` (itself, or the leaves of an exception group)."""
    found: list[PropertyFailure] = []

    def walk(e: BaseException) -> None:
        if isinstance(e, PropertyFailure):
            found.append(e)
        elif isinstance(e, BaseExceptionGroup):
            for sub in e.exceptions:
                walk(sub)

    walk(exc)
    return found
