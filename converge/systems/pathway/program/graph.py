"""One run request as one Pathway dataflow: every case's inputs in one table per input, the case number
in every key, the join chain as Pathway joins, and the final table read at the end of the input.

The chain so far is a table with a `case` column and one column `r<i>` per input that contributes
output columns (the input's row as JSON text; None on a padded side). Each step:

* pairs: Pathway's `join` (or `interval_join`) on the key texts of keys.py, then `filter` by the
  residual (expression.py, through pw.apply): the pairs that satisfy the whole condition;
* outer padding: the rows of a preserved side that have no surviving pair are
  `difference(pairs grouped by that side's row id)`, padded with None; SEMI keeps
  `intersect(...)`, ANTI keeps `difference(...)`. All of it is incremental, so a retraction that
  removes the last pair brings the padded row back.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pathway as pw
from expression import bind_columns, compile_tree
from feed import Feed
from keys import key_text


class InputSchema(pw.Schema):
    rid: int = pw.column_definition(primary_key=True)
    case: int
    row: str


def _input_table(rows: list[tuple]) -> pw.Table:
    if not rows:
        return pw.Table.empty(rid=int, case=int, row=str)
    return pw.debug.table_from_rows(InputSchema, rows, is_stream=True)


class Layout:
    """Which chain inputs the table so far carries, and the column names and types of each input."""

    def __init__(self, scenario: dict) -> None:
        self.columns = {s["name"]: [c[0] for c in s["columns"]] for s in scenario["inputs"]}
        self.types = {s["name"]: [c[1] for c in s["columns"]] for s in scenario["inputs"]}
        self.carried: list[str] = []  # inputs with a column r<i> in the table so far, in chain order
        self.slot: dict[str, str] = {}

    def add(self, name: str) -> str:
        self.slot[name] = f"r{len(self.slot)}"
        self.carried.append(name)
        return self.slot[name]

    def type_of(self, ref: dict) -> str:
        return self.types[ref["input"]][self.columns[ref["input"]].index(ref["column"])]

    def decoder(self, names: list[str]) -> Callable[..., dict[str, list]]:
        """From the JSON texts of `names` (None: a padded side) to {input: values}."""
        widths = {n: len(self.columns[n]) for n in names}

        def decode(*texts: str | None) -> dict[str, list]:
            return {n: (json.loads(t) if t is not None else [None] * widths[n]) for n, t in zip(names, texts)}
        return decode


def _side_key(layout: Layout, refs: list[dict], step_keys: list[dict], names: list[str]) -> Callable:
    """The function from (case, JSON texts of `names`) to the key text of refs (one per key of the step)."""
    decode = layout.decoder(names)
    null_safe = [k["null_safe"] for k in step_keys]
    doubles = ["DOUBLE" in (layout.type_of(k["left"]), layout.type_of(k["right"])) for k in step_keys]
    picks = [(r["input"], layout.columns[r["input"]].index(r["column"])) for r in refs]

    def key(case: int, *texts: str | None) -> str | None:
        rows = decode(*texts)
        return key_text(case, [rows[n][i] for n, i in picks], null_safe, doubles)
    return key


def _time(layout: Layout, ref: dict, names: list[str]) -> Callable:
    decode = layout.decoder(names)
    index = layout.columns[ref["input"]].index(ref["column"])
    return lambda *texts: decode(*texts)[ref["input"]][index]


def build(scenario: dict, plan: dict, feed: Feed) -> tuple[pw.Table, Layout]:
    """The request's output table: columns case and r<i> for every carried input."""
    layout = Layout(scenario)
    tables = {name: _input_table(rows) for name, rows in feed.rows.items()}
    first = plan["first"]
    slot = layout.add(first)
    so_far = tables[first].select(case=pw.this.case, **{slot: pw.this.row})
    for step in plan["steps"]:
        so_far = _step(layout, so_far, tables[step["input"]], step, plan.get("interval"))
    return so_far, layout


def _step(layout: Layout, left: pw.Table, right: pw.Table, step: dict, interval: dict | None) -> pw.Table:
    name, how = step["input"], step["type"]
    left_names = list(layout.carried)
    left_cols = [left[layout.slot[n]] for n in left_names]
    keys = step["keys"]
    lkey = _side_key(layout, [k["left"] for k in keys], keys, left_names)
    rkey = _side_key(layout, [k["right"] for k in keys], keys, [name])
    lk = left.with_columns(_key=pw.apply_with_type(lkey, str | None, left.case, *left_cols))
    rk = right.with_columns(_key=pw.apply_with_type(rkey, str | None, right.case, right.row))
    lk, rk = lk.filter(lk._key.is_not_none()), rk.filter(rk._key.is_not_none())
    carried = {layout.slot[n]: lk[layout.slot[n]] for n in left_names}
    if interval is None:
        joined = lk.join(rk, lk._key == rk._key)
    else:
        ltime = _time(layout, interval["left_time"], left_names)
        rtime = _time(layout, interval["right_time"], [name])
        lk = lk.with_columns(_t=pw.apply_with_type(ltime, int | None, *[lk[layout.slot[n]] for n in left_names]))
        rk = rk.with_columns(_t=pw.apply_with_type(rtime, int | None, rk.row))
        lk = lk.filter(lk._t.is_not_none()).with_columns(_t=pw.unwrap(pw.this._t))
        rk = rk.filter(rk._t.is_not_none()).with_columns(_t=pw.unwrap(pw.this._t))
        carried = {layout.slot[n]: lk[layout.slot[n]] for n in left_names}
        # Pathway pairs (l, r) when l.t + lower <= r.t <= l.t + upper (measured: docs/pathway.md); converge's
        # r.t + L <= l.t <= r.t + U is r.t in [l.t - U, l.t - L]
        joined = lk.interval_join(rk, lk._t, rk._t, pw.temporal.interval(-interval["upper_ms"], -interval["lower_ms"]),
                                  lk._key == rk._key)
    pairs = joined.select(case=lk.case, _lid=lk.id, _rid=rk.id, _right=rk.row, **carried)
    if step["residual"] is not None:
        tree = compile_tree(bind_columns(step["residual"], layout.columns))
        decode = layout.decoder(left_names + [name])

        def holds(*texts: str | None) -> bool:
            return tree(decode(*texts)) is True
        pairs = pairs.filter(pw.apply_with_type(holds, bool, *[pairs[layout.slot[n]] for n in left_names],
                                                pairs._right))
    if how in ("semi", "anti"):
        matched = pairs.groupby(id=pairs._lid).reduce()
        return left.intersect(matched) if how == "semi" else left.difference(matched)
    slot = layout.add(name)
    parts = [pairs.select(case=pairs.case, **{layout.slot[n]: pairs[layout.slot[n]] for n in left_names},
                          **{slot: pairs._right})]
    if how in ("left", "full"):
        lone = left.difference(pairs.groupby(id=pairs._lid).reduce())
        parts.append(lone.select(case=lone.case, **{layout.slot[n]: lone[layout.slot[n]] for n in left_names},
                                 **{slot: None}))
    if how in ("right", "full"):
        lone = right.difference(pairs.groupby(id=pairs._rid).reduce())
        parts.append(lone.select(case=lone.case, **{layout.slot[n]: None for n in left_names},
                                 **{slot: lone.row}))
    return pw.Table.concat_reindex(*parts) if len(parts) > 1 else parts[0]


def final_rows(table: pw.Table, layout: Layout, cases: int) -> list[list[list]]:
    """Run the dataflow to the end of its input; each case's final multiset, one row per copy."""
    _, columns = pw.debug.table_to_dicts(table)
    out: list[list[list]] = [[] for _ in range(cases)]
    names = layout.carried
    decode = layout.decoder(names)
    for rid, case in columns["case"].items():
        rows = decode(*[columns[layout.slot[n]][rid] for n in names])
        out[case].append([v for n in names for v in rows[n]])
    return out
