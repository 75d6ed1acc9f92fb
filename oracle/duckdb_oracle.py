"""The DuckDB batch oracle: what the join should hold after the stream, and after every event.

The streaming engine is checked against a batch answer computed by an
independent SQL engine. Both forms are one query each, with the data
inlined, on one connection per process: property runs issue one history()
query per Hypothesis example, so per-query overhead is the budget that
matters (see ``converge.oracle.query.connection()`` for the settings chosen for it, and
docs/generators.md for why the project pins DuckDB 1.5: DuckDB 2.0's parser
alone took longer than the rest of such a query).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

import duckdb

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import Scenario, require_scenario
from converge.oracle.batch import finals, histories, snapshot_sql
from converge.oracle.interval import interval_final_sql
from converge.oracle.materialize import materialize_inputs, presence_intervals
from converge.oracle.query import run_query
from converge.oracle.sql import check_supported, render_join_sql, render_source
from converge.oracle.views import input_path, output_calc, view_source, without_views

__all__ = ["DuckDBOracle"]

Form = Literal["final", "history"]


class DuckDBOracle:
    """Batch answers for a scenario's join chain.

    By default every instance shares the process-wide connection; pass
    ``con`` to use another (e.g. one with DuckDB's optimizer enabled).
    Interval joins have a final answer (the batch interval join of their
    records); their history is decided by the interval properties' step model.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection | None = None) -> None:
        self._con = con

    # ------------------------------------------------------------ SQL

    def sql_for(self, scenario: Scenario, form: Form) -> str:
        """The exact SQL that ``final`` / ``history`` run for this scenario (for reports)."""
        require_scenario(scenario, "DuckDBOracle.sql_for")
        if form == "final":
            return self._final_sql(scenario)
        if form == "history":
            return self._history_sql(scenario)
        raise ApiMisuseError(f"DuckDBOracle.sql_for(form={form!r}): expected 'final' or 'history'")

    def _final_sql(self, scenario: Scenario) -> str:
        if scenario.join.interval is not None:
            return interval_final_sql(scenario)
        core = without_views(scenario) if scenario.has_views() else scenario
        check_supported(core)
        tables = materialize_inputs(scenario)
        sources = {}
        for spec in scenario.chain:
            bag = tables[spec.name]
            sources[spec.name] = view_source(spec, render_source(spec, list(bag), list(bag.values())),
                                             input_path(scenario, spec.name))
        select, where = output_calc(scenario, core)
        return render_join_sql(core, sources, select=select, where=where)

    def _history_sql(self, scenario: Scenario) -> str:
        """Snapshots joined on position: each row instance is repeated at every position it is present."""
        check_supported(without_views(scenario) if scenario.has_views() else scenario)  # names its path first
        return snapshot_sql(scenario, presence_intervals(scenario))

    # ------------------------------------------------------------ running

    def _run(self, sql: str) -> list[tuple]:
        return run_query(sql, self._con)

    def final(self, scenario: Scenario) -> Counter[tuple]:
        """The join of the inputs materialized after all events, as a bag of output rows."""
        require_scenario(scenario, "DuckDBOracle.final")
        return Counter(self._run(self._final_sql(scenario)))

    def history(self, scenario: Scenario) -> list[Counter[tuple]]:
        """The join after every event: element i is the answer after events[0..i] (one query)."""
        require_scenario(scenario, "DuckDBOracle.history")
        n = len(scenario.events)
        answers: list[Counter[tuple]] = [Counter() for _ in range(n)]
        if n == 0:
            check_supported(without_views(scenario) if scenario.has_views() else scenario)
            presence_intervals(scenario)
            return answers
        for row in self._run(self._history_sql(scenario)):
            answers[row[0]][row[1:]] += 1
        return answers

    def histories(self, scenarios: Sequence[Scenario]) -> list[list[Counter[tuple]]]:
        """`history` of each scenario, in one query per shape (oracle/batch.py): equal answers, less overhead."""
        return histories(scenarios, self._con)

    def finals(self, scenarios: Sequence[Scenario]) -> list[Counter[tuple]]:
        """`final` of each scenario (none an interval join), in one query per shape (oracle/batch.py)."""
        return finals(scenarios, self._con)
