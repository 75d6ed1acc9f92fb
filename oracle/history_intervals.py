"""The join's answer after every event as validity intervals: time and memory linear in the stream.

The snapshot form of ``DuckDBOracle.history`` repeats every input row at
every position it is live, so it grows with events x live rows. This form
keeps one tuple per row instance and its interval of positions
[start, end), and computes, in one DuckDB query, the intervals of every
output row (docs/oracle-history.md):

* joined rows (any join type): the pairs that meet the condition and whose
  intervals overlap, valid on the intersection;
* padded rows (LEFT/RIGHT/FULL): the parts of a row's interval that the
  union of its matches' intervals does not cover;
* SEMI/ANTI: the parts covered / not covered by that union.

Coverage is a sweep in SQL: per row, +1 at every match's start, -1 at its
end, and a running sum over the sorted boundary points. Each step's result
is again a set of (start, end, row) tuples, so chains compose left-deep.

Columns: each input's columns travel as one STRUCT column named after the
input, so the join conditions, written qualified by input name (``a.k``),
bind verbatim to struct fields and the rest of the row rides along. Padded
sides are NULL structs, whose fields are NULL.

Nothing here steps through the stream: the intervals of the inputs come
from ``presence_intervals`` (the same materialization the snapshot form
uses), the rest is one declarative query.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Literal

import duckdb

from converge.engine.model.collector import cyclic_collector_paused
from converge.engine.model.errors import ApiMisuseError, OracleError
from converge.engine.model.scenario import InputSpec, Scenario
from converge.oracle.materialize import presence_intervals
from converge.oracle.query import connection, run_query
from converge.oracle.sql import check_supported, quote_ident, quote_str, render_join_sql, render_source

__all__ = ["IntervalForm", "IntervalOracle", "bulk_connection"]

IntervalForm = Literal["intervals", "changes"]

_FETCH = 50_000


class _Names:
    """Helper column and alias names that no chained input is called (conditions name inputs)."""

    def __init__(self, scenario: Scenario) -> None:
        taken = {spec.name.lower() for spec in scenario.chain} | {
            c.lower() for spec in scenario.chain for c in spec.column_names}

        def fresh(base: str) -> str:
            name = base
            while name.lower() in taken:
                name += "_"
            taken.add(name.lower())
            self.raw[base] = name
            return quote_ident(name)

        self.raw: dict[str, str] = {}  # each helper name's base -> the name it got
        self.start, self.end, self.id = fresh("__s"), fresh("__e"), fresh("__id")
        self.left, self.right, self.seg = fresh("__l"), fresh("__x"), fresh("__g")
        self.pos, self.delta = fresh("__p"), fresh("__d")


def _input_source(spec: InputSpec, intervals: list[tuple[int, int, tuple]], names: _Names) -> str:
    """One row per instance: its id, interval, and its columns as one STRUCT named after the input."""
    extra = tuple((names.raw[c], "BIGINT") for c in ("__id", "__s", "__e"))
    rows = [(i, start, end) + row for i, (start, end, row) in enumerate(intervals)]
    src = render_source(replace(spec, columns=extra + spec.columns), rows)
    fields = ", ".join(f"{quote_str(c)}: {quote_ident(c)}" for c in spec.column_names)
    return f"SELECT {names.id}, {names.start}, {names.end}, {{{fields}}} AS {quote_ident(spec.name)} FROM {src}"


def _on_clause(cond: str) -> str:
    return f"({cond}\n)" if "--" in cond else f"({cond})"  # a trailing comment must not swallow the ')'


def _coverage(n: _Names, base: str, pairs: str, pair_id: str, structs: list[str], covered: bool) -> str:
    """The parts of each `base` tuple's interval covered (or not) by its `pairs`, as (start, end, structs).

    A sweep per base tuple: boundary points of the tuple (+0) and of its
    matches (+1 at start, -1 at end); between consecutive points the running
    sum is the number of live matches.
    """
    s, e, i, g = n.start, n.end, n.id, n.seg
    test = "> 0" if covered else "= 0"
    cols = ", ".join(f"__b.{c}" for c in structs)
    return (
        f"SELECT {g}.__from AS {s}, {g}.__to AS {e}, {cols} FROM (\n"
        f"  SELECT __id, __p AS __from, lead(__p) OVER __w AS __to, sum(__d) OVER __w AS __live FROM (\n"
        f"    SELECT __id, __p, sum(__d) AS __d FROM (\n"
        f"      SELECT {i} AS __id, {s} AS __p, 0 AS __d FROM {base} UNION ALL\n"
        f"      SELECT {i}, {e}, 0 FROM {base} UNION ALL\n"
        f"      SELECT {pair_id}, {s}, 1 FROM {pairs} UNION ALL\n"
        f"      SELECT {pair_id}, {e}, -1 FROM {pairs}) GROUP BY __id, __p)\n"
        f"  WINDOW __w AS (PARTITION BY __id ORDER BY __p)) AS {g}\n"
        f"JOIN {base} AS __b ON __b.{i} = {g}.__id\n"
        f"WHERE {g}.__to IS NOT NULL AND {g}.__live {test}")


def _output_columns(scenario: Scenario) -> list[str]:
    """The output row's columns as struct fields of the last relation, in the snapshot form's order."""
    kept = [scenario.chain[0]] + [spec for spec, jtype in zip(scenario.chain[1:], scenario.join.types, strict=False)
                                  if jtype not in ("semi", "anti")]
    return [f"struct_extract({quote_ident(spec.name)}, {quote_str(c)})" for spec in kept for c in spec.column_names]


def intervals_sql(scenario: Scenario, form: IntervalForm = "intervals", at: int | None = None, *,
                  prefix: str = "", suffix: str = "", ordered: bool = True) -> str:
    """The query: ``intervals`` gives (start, end, *row) per output tuple (only those covering
    position ``at`` when given); ``changes`` the net change of every row's count at every position
    where it changes, as (position, delta, *row), by position (in no order when not ``ordered``).

    ``prefix`` and ``suffix`` (e.g. ``CREATE TEMP TABLE t AS SELECT .. FROM (`` and ``) AS q``) wrap
    the text as it is written: a long stream's query is large, and wrapping it afterwards copies it."""
    check_supported(scenario)
    render_join_sql(scenario)  # the conditions go through the same rendering (and its checks) as every form
    n = _Names(scenario)
    s, e, i = n.start, n.end, n.id
    chain = scenario.chain
    with cyclic_collector_paused():   # the rendering's many tuples and strings form no cycle
        presence = presence_intervals(scenario)
        inputs = [_input_source(spec, presence[spec.name], n) for spec in chain]
    del presence
    ctes = [f"__in0 AS MATERIALIZED ({inputs[0]})"]
    structs = [quote_ident(chain[0].name)]
    current = "__in0"
    for step, (spec, jtype, cond) in enumerate(zip(chain[1:], scenario.join.types, scenario.join.conditions, strict=False), 1):
        x = f"__in{step}"
        ctes.append(f"{x} AS MATERIALIZED ({inputs[step]})")
        xs = quote_ident(spec.name)
        left = current
        if not current.startswith("__in"):  # a join's result: number its tuples (materialized: once)
            left = f"__l{step}"
            ctes.append(f"{left} AS MATERIALIZED (SELECT row_number() OVER () AS {i}, * FROM {current})")
        lcols = ", ".join(f"{n.left}.{c}" for c in structs)
        pairs = f"__j{step}"
        ctes.append(
            f"{pairs} AS MATERIALIZED (SELECT greatest({n.left}.{s}, {n.right}.{s}) AS {s}, "
            f"least({n.left}.{e}, {n.right}.{e}) AS {e}, {n.left}.{i} AS __lid, {n.right}.{i} AS __rid, "
            f"{lcols}, {n.right}.{xs}\n"
            f"  FROM {left} AS {n.left} JOIN {x} AS {n.right}\n"
            f"  ON {n.left}.{s} < {n.right}.{e} AND {n.right}.{s} < {n.left}.{e} AND {_on_clause(cond)})")
        joined = f"SELECT {s}, {e}, {', '.join(structs)}, {xs} FROM {pairs}"
        if jtype in ("semi", "anti"):
            parts = [_coverage(n, left, pairs, "__lid", structs, covered=jtype == "semi")]
        else:
            parts = [joined]
            if jtype in ("left", "full"):
                parts.append(_coverage(n, left, pairs, "__lid", structs, covered=False))
            if jtype in ("right", "full"):
                parts.append(_coverage(n, x, pairs, "__rid", [xs], covered=False))
            structs = structs + [xs]
        current = f"__r{step}"
        ctes.append(f"{current} AS ({' UNION ALL BY NAME '.join(f'({p})' for p in parts)})")
    cols = _output_columns(scenario)
    aliased = ", ".join(f"{c} AS __c{k}" for k, c in enumerate(cols))
    ctes.append(f"__out AS (SELECT {s}, {e}, {aliased} FROM {current})")
    plain = ", ".join(f"__c{k}" for k in range(len(cols)))
    head = prefix + "WITH " + ",\n".join(ctes) + "\n"
    if form == "intervals":
        where = "" if at is None else f" WHERE {s} <= {int(at)} AND {int(at)} < {e}"
        return head + f"SELECT {s}, {e}, {plain} FROM __out{where}" + suffix
    if form == "changes":
        last = len(scenario.events)
        return head + (
            f"SELECT {n.pos}, sum({n.delta}) AS {n.delta}, {plain} FROM (\n"
            f"  SELECT {s} AS {n.pos}, 1 AS {n.delta}, {plain} FROM __out UNION ALL\n"
            f"  SELECT {e}, -1, {plain} FROM __out WHERE {e} < {last})\n"
            f"GROUP BY {n.pos}, {plain} HAVING sum({n.delta}) <> 0" + (f" ORDER BY {n.pos}" if ordered else "")
            + suffix)
    raise ApiMisuseError(f"form must be 'intervals' or 'changes', got {form!r}")


# ---------------------------------------------------------------- connection for long streams

_lock = threading.Lock()
_bulk: tuple[int, duckdb.DuckDBPyConnection] | None = None


def bulk_connection() -> duckdb.DuckDBPyConnection:
    """A connection for long streams: DuckDB's optimizer on, spilling to the temp dir, not the checkout.

    The shared connection (oracle.query) turns the optimizer off because
    tiny queries spent most of their time there; on millions of rows the
    optimizer's join ordering and filter pushdown pay for themselves.
    """
    global _bulk
    pid = os.getpid()
    with _lock:
        if _bulk is None or _bulk[0] != pid:
            con = duckdb.connect(":memory:")
            con.execute("SET threads = 2")
            con.execute("SET preserve_insertion_order = false")
            spill = os.path.join(tempfile.gettempdir(), f"converge-duckdb-{pid}")
            con.execute(f"SET temp_directory = {quote_str(spill)}")
            _bulk = (pid, con)
        return _bulk[1]


class IntervalOracle:
    """The join after every event, as output intervals and per-position changes (linear in the stream).

    Small scenarios use the shared oracle connection; pass ``con`` (e.g.
    ``bulk_connection()``) for long streams.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection | None = None) -> None:
        self._con = con

    def sql_for(self, scenario: Scenario, form: IntervalForm) -> str:
        """The exact SQL that ``intervals`` / ``changes`` run (for reports)."""
        return intervals_sql(scenario, form)

    def intervals(self, scenario: Scenario) -> list[tuple[int, int, tuple]]:
        """(start, end, row) tuples: the row is in the answer after events start..end-1, once per tuple."""
        if not scenario.events:
            check_supported(scenario)
            presence_intervals(scenario)
            return []
        return [(r[0], r[1], r[2:]) for r in run_query(intervals_sql(scenario, "intervals"), self._con)]

    def changes(self, scenario: Scenario) -> Iterator[tuple[int, int, tuple]]:
        """(position, delta, row) by position: the answer's count of `row` moves by `delta` at `position`.

        Streamed in batches, so a long stream's changes are never all in memory.
        """
        if not scenario.events:
            check_supported(scenario)
            presence_intervals(scenario)
            return iter(())
        return self._stream(intervals_sql(scenario, "changes"))

    def _stream(self, sql: str) -> Iterator[tuple[int, int, tuple]]:
        con = (self._con or connection()).cursor()
        try:
            try:
                con.execute(sql)
                while batch := con.fetchmany(_FETCH):
                    for r in batch:
                        yield r[0], r[1], r[2:]
            except duckdb.Error as exc:
                raise OracleError(f"DuckDB failed: {type(exc).__name__}: {exc}\n-- SQL:\n{sql}") from exc
        finally:
            con.close()

    def answer_at(self, scenario: Scenario, position: int) -> Counter[tuple]:
        """The answer after events[0..position] (one bag), from the intervals covering that position."""
        return Counter(r[2:] for r in run_query(intervals_sql(scenario, "intervals", position), self._con))

    def history(self, scenario: Scenario) -> list[Counter[tuple]]:
        """The snapshot form rebuilt from the intervals (for comparing the two forms on small scenarios)."""
        answers: list[Counter[tuple]] = [Counter() for _ in scenario.events]
        for start, end, row in self.intervals(scenario):
            for p in range(start, end):
                answers[p][row] += 1
        return answers
