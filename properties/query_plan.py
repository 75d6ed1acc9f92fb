"""What `converge check` reads and plans for a query, without Hypothesis, the oracle or any property.

`converge check --plan-only` (an editor's or a pre-commit hook's quick look)
needs only this: the command line's options, the plan converge's engine
would run and the state view of each input. Keeping it apart from
properties/query_check.py (which draws streams with Hypothesis) keeps that
path's imports to sqlglot, the planner and DuckDB's parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from converge.engine.condition import split_condition
from converge.engine.model.flinksql import MappedQuery
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

    def config(self, *, ttl: bool = True, semantics: Semantics | None = None) -> Config:
        return Config(state_ttl_ms=self.ttl_ms if ttl else None, map_state_order=self.map_state_order,
                      multi_join=self.multi_join, semantics=semantics or self.semantics)


def state_views(query: MappedQuery) -> list[str]:
    """Per binary step: the state view each side gets (what Flink's StreamingJoinOperator would choose)."""
    if query.join.interval is not None and query.join.interval.lower_ms > query.join.interval.upper_ms:
        return ["empty interval window: no state (Flink's filter and padding maps keep nothing)"]
    if query.join.interval is not None:
        return ["interval join: each side's rows are cached by time until the other side's watermark passes them"]
    lines = []
    specs = {s.name: s for s in query.inputs}
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
    return plan(query.scenario(config=options.config())).explain().splitlines()


__all__ = ["CheckOptions", "plan_lines", "state_views"]
