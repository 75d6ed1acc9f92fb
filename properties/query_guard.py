"""A user's query put through the oracle's guard before anything runs, each refusal placed at file:line:col.

`converge check` and `converge verify` read a query file onto the model; the
oracle then parses every join condition with DuckDB's own parser and refuses
what it does not allow (oracle/guard.py: a condition nested deeper than it
reads, longer than 10,000 characters, a literal DuckDB would read as another
type, ...). Those refusals name a key path of the scenario
(`join.conditions[1]`), which means nothing in a SQL file: `guard_query` runs
the guard once, up front, and names the ON clause, subquery or table
reference that the key path stands for (`MappedQuery.positions`).
"""

from __future__ import annotations

from converge.engine.model.errors import BadInputError
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.flinksql.positions import clip
from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.oracle.guard import check_inputs, safe_conditions

MESSAGE_CHARS = 300  # the guard quotes the rendered condition; a refusal stays one readable line


def placed(query: MappedQuery, exc: BadInputError) -> BadInputError:
    """`exc` naming the clause of the query file its key path stands for (the file's start when none does)."""
    path = exc.path or ""
    for key, where in sorted(query.positions, key=lambda kw: -len(kw[0])):
        if path == key or path.startswith((key + ".", key + "[")):
            return BadInputError(f"{where}: {clip(' '.join(exc.detail.split()), MESSAGE_CHARS)}")
    return BadInputError(f"{query.path}:1:1: {clip(' '.join(str(exc).split()), MESSAGE_CHARS)}")


def guard_query(query: MappedQuery) -> None:
    """Refuse, at file:line:col, a query whose inputs or join conditions the oracle would refuse later."""
    try:
        scenario = query.scenario()
        check_inputs(scenario)
        if scenario.has_views():  # the views' expressions and the conditions over the columns they make
            DuckDBOracle().sql_for(scenario, "final")
        else:
            safe_conditions(scenario)
    except BadInputError as exc:
        raise placed(query, exc) from None


__all__ = ["guard_query", "placed"]
