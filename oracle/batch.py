"""Many scenarios' histories in one DuckDB query.

A DuckDB query of two tiny tables costs most of a millisecond before it reads
a row (parse, bind, plan), which is more than the engine spends on a whole
generated scenario (issue 29's measurement: drawing 2.6 ms, the engine 0.6,
the oracle's query 3.0 a scenario). Scenarios whose queries have the same
text but for their data share one query, so they share that cost.

The snapshot form (`DuckDBOracle.history`) joins inputs on the event
position: every row instance is repeated at each position where it is live,
and each ON clause equates the positions. Scenarios of one shape are put in
one query by giving each its own range of positions: scenario i's positions
are shifted by the number of events of the scenarios before it. Rows of
two scenarios never share a position, so they never meet in any join, and
an outer join's padding of a row depends only on the rows at its own
position: each scenario's answer is exactly what its own query gives
(tests/oracle/test_oracle_batch.py holds the two equal on every stored
scenario file and on generated batches). The answers are split back by
position range.

The shape is what the query's text depends on besides the data: the join
(inputs, types, conditions) and each chained input's name and typed columns.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence

import duckdb

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import Scenario, require_scenario
from converge.oracle.materialize import Interval, presence_intervals
from converge.oracle.query import run_query
from converge.oracle.sql import check_supported, render_join_sql, render_snapshot_source, seq_column_name
from converge.oracle.views import input_path, output_calc, view_seq_name, view_source, without_views

__all__ = ["batch_history_sql", "finals", "histories", "oracle_shape", "snapshot_sql"]

History = list[Counter[tuple]]


def oracle_shape(scenario: Scenario) -> Hashable:
    """What the history query's text depends on besides the data: scenarios with equal shapes share a query."""
    return scenario.join, tuple((spec.name, spec.columns, spec.time_column, spec.project, spec.where, spec.source)
                                for spec in scenario.chain)


def snapshot_sql(scenario: Scenario, intervals: Mapping[str, Sequence[Interval]]) -> str:
    """The snapshot-form query of `scenario`'s join over the row instances `intervals` (per input), a view's
    projection and filter in front of its input and the query's SELECT list and WHERE after the join."""
    core = without_views(scenario) if scenario.has_views() else scenario
    seq = view_seq_name(scenario) if scenario.has_views() else seq_column_name(scenario)
    sources = {spec.name: view_source(spec, render_snapshot_source(spec, intervals[spec.name], seq),
                                      input_path(scenario, spec.name), seq)
               for spec in scenario.chain}
    select, where = output_calc(scenario, core)
    return render_join_sql(core, sources, seq=seq, select=select, where=where)


def batch_history_sql(scenarios: Sequence[Scenario], *, final: bool = False) -> tuple[str, list[int]]:
    """The one snapshot query of `scenarios` (all of one shape), and each scenario's first position in it.

    `final`: only the answer after the last event, each scenario one position (its index): the instances live
    at the end, which are the inputs as `DuckDBOracle.final` materializes them."""
    if not scenarios:
        raise ApiMisuseError("batch_history_sql: expected at least one scenario")
    first = scenarios[0]
    shape = oracle_shape(first)
    for i, scenario in enumerate(scenarios):
        require_scenario(scenario, f"batch_history_sql(scenarios[{i}])")
        if oracle_shape(scenario) != shape:
            raise ApiMisuseError(f"batch_history_sql: scenarios[{i}] has another join or other inputs than "
                                 "scenarios[0]; group them with oracle_shape() first")
    return _one_query(scenarios, final)


def _one_query(scenarios: Sequence[Scenario], final: bool) -> tuple[str, list[int]]:
    """`batch_history_sql` of scenarios already checked to be of one shape (`_by_shape` groups them)."""
    for scenario in scenarios:  # names and types first: a bad one is refused with its key path
        check_supported(without_views(scenario) if scenario.has_views() else scenario)
    first = scenarios[0]
    merged: dict[str, list[Interval]] = {spec.name: [] for spec in first.chain}
    offsets: list[int] = []
    offset = 0
    for scenario in scenarios:
        offsets.append(offset)
        n = len(scenario.events)
        for name, instances in presence_intervals(scenario).items():  # validates the whole stream
            if name not in merged:
                continue
            if final:
                merged[name].extend((offset, offset + 1, row) for _, end, row in instances if end == n and n)
            else:
                merged[name].extend((start + offset, end + offset, row) for start, end, row in instances)
        offset += 1 if final else n
    return snapshot_sql(first, merged), offsets


def histories(scenarios: Sequence[Scenario], con: duckdb.DuckDBPyConnection | None = None) -> list[History]:
    """The answer after every event of each scenario, one query per shape (`oracle_shape`), in input order."""
    answers: list[History] = [[Counter() for _ in s.events] for s in scenarios]
    for members in _by_shape(scenarios, "histories"):
        sql, offsets = _one_query([scenarios[i] for i in members], final=False)
        for row in run_query(sql, con):
            k = bisect.bisect_right(offsets, row[0]) - 1  # the last scenario starting at or before the position
            answers[members[k]][row[0] - offsets[k]][row[1:]] += 1
    return answers


def finals(scenarios: Sequence[Scenario], con: duckdb.DuckDBPyConnection | None = None) -> list[Counter[tuple]]:
    """The answer after the last event of each scenario (`DuckDBOracle.final`), one query per shape."""
    answers: list[Counter[tuple]] = [Counter() for _ in scenarios]
    for members in _by_shape(scenarios, "finals"):
        sql, _ = _one_query([scenarios[i] for i in members], final=True)
        for row in run_query(sql, con):
            answers[members[row[0]]][row[1:]] += 1
    return answers


def _by_shape(scenarios: Sequence[Scenario], caller: str) -> list[list[int]]:
    """The positions of `scenarios` grouped by shape, each group in input order."""
    groups: dict[Hashable, list[int]] = {}
    for i, scenario in enumerate(scenarios):
        require_scenario(scenario, f"{caller}(scenarios[{i}])")
        groups.setdefault(oracle_shape(scenario), []).append(i)
    return list(groups.values())
