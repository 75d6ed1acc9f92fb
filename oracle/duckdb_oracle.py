"""The DuckDB batch oracle: what the join should hold after the stream, and after every event.

The streaming engine is checked against a batch answer computed by an
independent SQL engine. Both forms are one query each, with the data
inlined, on one connection per process: property runs issue one history()
query per Hypothesis example, so per-query overhead is the budget that
matters (see ``connection()`` for the settings chosen for it, and
docs/generators.md for why the project pins DuckDB 1.5: DuckDB 2.0's parser
alone took longer than the rest of such a query).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from typing import Literal

import duckdb

from engine.errors import OracleError
from engine.scenario import Scenario
from oracle.materialize import materialize_inputs, presence_intervals
from oracle.sql import check_supported, render_join_sql, render_snapshot_source, render_source, seq_column_name

__all__ = ["DuckDBOracle", "connection"]

Form = Literal["final", "history"]

_lock = threading.Lock()
_shared: tuple[int, duckdb.DuckDBPyConnection] | None = None


def _new_connection() -> duckdb.DuckDBPyConnection:
    """A private in-memory database tuned for many tiny queries.

    * ``threads = 1``: inputs have a few dozen rows, so parallel pipelines
      only add scheduling; property runs already use one process per core.
    * ``PRAGMA disable_optimizer``: for tiny inlined inputs, DuckDB spent
      more time optimizing than executing (about a third of the query).
      Every ON clause of the history query has an equality on the position,
      so joins stay hash joins without the optimizer, and results do not
      depend on it (tests/test_oracle.py compares against an optimized
      connection).
    """
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    con.execute("PRAGMA disable_optimizer")
    return con


def connection() -> duckdb.DuckDBPyConnection:
    """The process-wide oracle connection, created on first use (again after a fork)."""
    global _shared
    pid = os.getpid()
    if _shared is None or _shared[0] != pid:
        _shared = (pid, _new_connection())
    return _shared[1]


class DuckDBOracle:
    """Batch answers for a scenario's join chain.

    By default every instance shares the process-wide connection; pass
    ``con`` to use another (e.g. one with DuckDB's optimizer enabled).
    Interval joins are not supported yet (OracleError).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection | None = None) -> None:
        self._con = con

    # ------------------------------------------------------------ SQL

    def sql_for(self, scenario: Scenario, form: Form) -> str:
        """The exact SQL that ``final`` / ``history`` run for this scenario (for reports)."""
        if form == "final":
            return self._final_sql(scenario)
        if form == "history":
            return self._history_sql(scenario)
        raise ValueError(f"form must be 'final' or 'history', got {form!r}")

    def _final_sql(self, scenario: Scenario) -> str:
        if scenario.join.interval is not None:
            from oracle.interval import interval_final_sql
            return interval_final_sql(scenario)
        check_supported(scenario)
        tables = materialize_inputs(scenario)
        sources = {}
        for spec in scenario.chain:
            bag = tables[spec.name]
            sources[spec.name] = render_source(spec, list(bag), list(bag.values()))
        return render_join_sql(scenario, sources)

    def _history_sql(self, scenario: Scenario) -> str:
        """Snapshots joined on position: each row instance is repeated at every position it is present."""
        check_supported(scenario)
        seq = seq_column_name(scenario)
        intervals = presence_intervals(scenario)
        sources = {spec.name: render_snapshot_source(spec, intervals[spec.name], seq) for spec in scenario.chain}
        return render_join_sql(scenario, sources, seq=seq)

    # ------------------------------------------------------------ running

    def _run(self, sql: str) -> list[tuple]:
        with _lock:
            con = self._con if self._con is not None else connection()
            try:
                return con.execute(sql).fetchall()
            except duckdb.Error as exc:
                raise OracleError(f"DuckDB failed: {type(exc).__name__}: {exc}\n-- SQL:\n{sql}") from exc

    def final(self, scenario: Scenario) -> Counter[tuple]:
        """The join of the inputs materialized after all events, as a bag of output rows."""
        return Counter(self._run(self._final_sql(scenario)))

    def history(self, scenario: Scenario) -> list[Counter[tuple]]:
        """The join after every event: element i is the answer after events[0..i] (one query)."""
        n = len(scenario.events)
        answers: list[Counter[tuple]] = [Counter() for _ in range(n)]
        if n == 0:
            check_supported(scenario)
            presence_intervals(scenario)
            return answers
        for row in self._run(self._history_sql(scenario)):
            answers[row[0]][row[1:]] += 1
        return answers
