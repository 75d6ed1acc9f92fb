"""Scenarios whose join sits between Calcs: a per-input projection and filter, a SELECT list and a WHERE.

The forms are those users write in Flink SQL (a view or a derived table over a
source, computed columns, the query's own SELECT list and WHERE): CASE and IF,
casts, arithmetic, COALESCE, filters on a value column and on a key column. A
projection keeps the column names the join conditions use (in another order
in one form, so a plan that pairs columns by position breaks), and may change
a key column's values (`k % 2`), which changes what joins. The regular-join
generator draws the join and its changelogs; one extra draw picks each Calc.
Upsert and raw `all` inputs get no Calc (engine/model/scenario.py refuses one:
Flink puts it after ChangelogNormalize, which converge does not model there).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.generators.readable import readable
from converge.generators.scenarios import regular_join_scenarios

__all__ = ["INPUT_CALCS", "OUTPUT_CALCS", "one_source", "self_join_scenarios", "view_join_scenarios", "with_views"]

Named = tuple[tuple[str, str], ...]


def _project(value: str, x: str = "{v}", s: str = "s", k: str = "k", reorder: bool = False) -> Named:
    cols = [("k", k), ("id", "id"), (value, x.format(v=value)), ("s", s)]
    return tuple(reversed(cols) if reorder else cols)


# (projection template, filter) of one input; `{v}` is the input's value column (x or y). The first is none.
INPUT_CALCS: tuple[tuple[str | None, str | None], ...] = (
    (None, None),
    (None, "{v} IS NULL OR {v} > 0"),
    ("if", None),
    ("case", "k IS NOT NULL"),
    ("cast", None),
    ("key", None),
    ("reorder", "NOT (s = 'b')"),
)

# (SELECT list, WHERE) after the join, over a.* and (unless SEMI/ANTI) b.*. The first is none.
OUTPUT_CALCS: tuple[tuple[Named | None, str | None], ...] = (
    (None, None),
    (None, "a.x IS NOT NULL"),
    ((("k", "a.k"), ("x2", "coalesce(a.x, -1) * 2"), ("tag", "IF(a.s IS NULL, 'none', a.s || '!')")), None),
    ((("k", "a.k"), ("total", "a.x + b.y"), ("side", "CASE WHEN b.k IS NULL THEN 'left only' "
                                                      "WHEN a.k IS NULL THEN 'right only' ELSE 'both' END")),
     "a.k IS NULL OR a.k <> 1"),
    ((("s", "b.s"), ("k", "b.k"), ("x", "a.x")), "b.y IS NULL OR b.y < 3"),
)
_NEEDS_B = (3, 4)  # OUTPUT_CALCS that name b (not for SEMI/ANTI, whose output has no b columns)


def _input_calc(spec: InputSpec, choice: int) -> InputSpec:
    form, where = INPUT_CALCS[choice % len(INPUT_CALCS)]
    if spec.changelog_mode in ("upsert", "all") or (form is None and where is None):
        return spec
    value = next(c for c in spec.column_names if c not in ("k", "id", "s"))
    project = None if form is None else {
        "if": _project(value, "IF({v} > 1, {v} - 1, NULL)"),
        "case": _project(value, "CASE WHEN {v} IS NULL THEN 0 WHEN {v} >= 2 THEN {v} * 10 ELSE {v} END",
                         s="upper(s)"),
        "cast": _project(value, "CAST({v} AS DOUBLE) / 2", s="coalesce(s, CAST(id AS VARCHAR))"),
        "key": _project(value, k="k % 2"),
        "reorder": _project(value, reorder=True),
    }[form]
    return replace(spec, project=project, where=None if where is None else where.format(v=value))


def with_views(scenario: Scenario, input_choices: tuple[int, int], output_choice: int) -> Scenario:
    """`scenario` (a regular join of a and b) with the Calcs the choices pick (0: none)."""
    picks = dict(zip(scenario.join.inputs, input_choices, strict=True))
    inputs = tuple(_input_calc(spec, picks[spec.name]) if spec.name in picks else spec for spec in scenario.inputs)
    join = scenario.join
    pick = output_choice % len(OUTPUT_CALCS)
    if join.types[0] in ("semi", "anti") and pick in _NEEDS_B:
        pick = 0
    select, where = OUTPUT_CALCS[pick]
    new_join = JoinSpec(join.inputs, join.types, join.conditions, join.interval, select, where)
    return replace(scenario, inputs=inputs, join=new_join, name=scenario.name + " with views")


def one_source(scenario: Scenario) -> Scenario:
    """The join of `a` with itself: a stream `t` with a's columns and changes, read by both `a` and `b` (a
    self-join, `FROM t AS a JOIN t AS b`); b's changes are dropped and its value column `y` is a's `x`."""
    a = scenario.inputs[0]
    stream = InputSpec("t", a.columns, a.unique_key, a.changelog_mode)
    readers = tuple(InputSpec(name, a.columns, a.unique_key, a.changelog_mode, source="t") for name in ("a", "b"))
    events = tuple(replace(e, input="t") if isinstance(e, ChangeEvent) and e.input == "a" else e
                   for e in scenario.events if getattr(e, "input", None) != "b")
    join = scenario.join
    new_join = JoinSpec(join.inputs, join.types, tuple(_b_x(c) for c in join.conditions), join.interval)
    return replace(scenario, inputs=(stream, *readers), join=new_join, events=events,
                   name=scenario.name + " of one source")


def _b_x(sql: str) -> str:
    return re.sub(r"\bb\.y\b", "b.x", sql)


def self_join_scenarios(**kwargs: Any) -> st.SearchStrategy[Scenario]:
    """regular_join_scenarios(**kwargs) as a self-join (`one_source`), with views drawn as view_join_scenarios."""
    calcs = st.tuples(st.integers(0, len(INPUT_CALCS) - 1), st.integers(0, len(INPUT_CALCS) - 1),
                      st.integers(0, len(OUTPUT_CALCS) - 1))

    def build(drawn: tuple[Scenario, tuple[int, int, int]]) -> Scenario:
        viewed = with_views(one_source(drawn[0]), drawn[1][:2], drawn[1][2])
        join = viewed.join
        select = None if join.select is None else tuple((n, _b_x(e)) for n, e in join.select)
        return replace(viewed, join=replace(join, select=select, where=None if join.where is None
                                            else _b_x(join.where)))

    return readable(st.tuples(regular_join_scenarios(**kwargs), calcs).map(build))


def view_join_scenarios(**kwargs: Any) -> st.SearchStrategy[Scenario]:
    """regular_join_scenarios(**kwargs) with a Calc drawn in front of each input and after the join."""
    calcs = st.tuples(st.integers(0, len(INPUT_CALCS) - 1), st.integers(0, len(INPUT_CALCS) - 1),
                      st.integers(0, len(OUTPUT_CALCS) - 1))
    return readable(st.tuples(regular_join_scenarios(**kwargs), calcs).map(
        lambda drawn: with_views(drawn[0], drawn[1][:2], drawn[1][2])))
