"""What `converge check` reads and plans for a query, without Hypothesis, the oracle or any property.

`converge check --plan-only` (an editor's or a pre-commit hook's quick look)
needs only this: the command line's options, the plan converge's engine
would run and the state view of each input. Keeping it apart from
properties/query_check.py (which draws streams with Hypothesis) keeps that
path's imports to sqlglot, the planner and DuckDB's parser.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from converge.engine.calc import core_scenario, joined_spec
from converge.engine.condition import split_condition
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.flinksql.job import PLANNER_KEYS
from converge.engine.model.scenario import Config, MapStateOrder, MultiJoinMode, Semantics
from converge.engine.planner import plan
from converge.engine.views import analyze_join_input


@dataclass(frozen=True)
class CheckOptions:
    """The command line's choices (docs/check-your-query.md)."""

    ttl_ms: int | None = None
    semantics: Semantics = "correct"
    map_state_order: MapStateOrder = "rocksdb"
    multi_join: MultiJoinMode = "off"
    examples: int = 50
    seed: int | None = None
    max_ops: int = 16
    mini_batch_size: int | None = None         # from the file's SET 'table.exec.mini-batch.*' (no flag)
    mini_batch_latency_ms: int | None = None
    given: frozenset[str] = frozenset()        # the options the command line gave (they win over the file's SETs)

    def config(self, *, ttl: bool = True, semantics: Semantics | None = None) -> Config:
        return Config(state_ttl_ms=self.ttl_ms if ttl else None, map_state_order=self.map_state_order,
                      multi_join=self.multi_join, semantics=semantics or self.semantics,
                      mini_batch_size=self.mini_batch_size, mini_batch_latency_ms=self.mini_batch_latency_ms)


def with_file_options(query: MappedQuery, options: CheckOptions) -> tuple[CheckOptions, list[str]]:
    """The options with the planner options the file SETs (state TTL, multi-join, mini-batch) where the command
    line gave none, and one line per option saying where its value comes from (a flag wins over the file)."""
    settings = {s.option: s for s in query.job if s.option in PLANNER_KEYS}  # the last SET of each wins
    lines: list[str] = []
    changes: dict = {}

    def take(option: str, flag: str, value: object, shown: str) -> None:
        setting = settings.get(option)
        if setting is None:
            return
        if flag in options.given:
            lines.append(f"{flag} wins over the file's {setting.written} at {setting.where}")
            return
        changes[option] = value
        lines.append(f"{shown} from the file's {setting.written} at {setting.where}")

    ttl = settings.get("ttl_ms")
    if ttl is not None:
        take("ttl_ms", "--ttl", ttl.value or None, f"state TTL {ttl.value} ms" if ttl.value else "no state TTL")
    multi = settings.get("multi_join")
    if multi is not None:
        take("multi_join", "--multi-join", "on" if multi.value else "off",
             f"multi-join {'on' if multi.value else 'off'}")
    enabled = settings.get("mini_batch_enabled")
    if enabled is not None and enabled.value:
        size, latency = settings["mini_batch_size"].value, settings["mini_batch_latency_ms"].value
        changes.update(mini_batch_size=size, mini_batch_latency_ms=latency)
        lines.append(f"mini-batch of {size} rows or {latency} ms from the file's {enabled.written} at {enabled.where}")
    elif enabled is not None:
        lines.append(f"no mini-batch: the file's {enabled.written} at {enabled.where}")
    return replace(options, **changes), lines


def state_views(query: MappedQuery) -> list[str]:
    """Per binary step: the state view each side gets (what Flink's StreamingJoinOperator would choose)."""
    if query.join.interval is not None and query.join.interval.lower_ms > query.join.interval.upper_ms:
        return ["empty interval window: no state (Flink's filter and padding maps keep nothing)"]
    if query.join.interval is not None:
        clock = "processing time" if query.join.interval.time == "processing" else "the other side's watermark"
        return [f"interval join: each side's rows are cached by time until {clock} passes them"]
    lines = []
    specs = {s.name: joined_spec(s) for s in query.inputs}  # a view's input as the join sees it
    names = query.join.inputs
    for i, (name, cond) in enumerate(zip(names[1:], query.join.conditions, strict=False), 1):
        left = [specs[n] for n in names[:i]]
        split = split_condition(cond, left, specs[name])
        right_keys = [k.right.column for k in split.equi_keys]
        right_view = analyze_join_input(specs[name], right_keys).kind
        left_view = analyze_join_input(left[0], [k.left.column for k in split.equi_keys
                                                 if k.left.input == left[0].name]).kind if i == 1 else "joined rows"
        lines.append(f"step {i} ({query.join.types[i - 1].upper()} {name}): left {left_view}, right {right_view}")
    return lines


def plan_lines(query: MappedQuery, options: CheckOptions) -> list[str]:
    """The engine's plan of the query under the options (one operator a line, as `converge explain` prints it)."""
    scenario = query.scenario(config=options.config())
    lines = plan(core_scenario(scenario) if scenario.has_views() else scenario).explain().splitlines()
    calcs = [f"Calc in front of {spec.name}: " + "; ".join(
        part for part in (f"project {', '.join(f'{e} AS {n}' for n, e in spec.project)}" if spec.project else "",
                          f"where {spec.where}" if spec.where else "") if part)
        for spec in scenario.chain if spec.has_calc]
    return calcs + lines


__all__ = ["CheckOptions", "plan_lines", "state_views", "with_file_options"]
