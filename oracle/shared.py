"""The DuckDB oracle the properties share: one per process (one DuckDB connection), so one per xdist worker.

Opening a connection costs more than most of the queries a property sends, so every property, replay and
campaign in a process asks this one.
"""

from __future__ import annotations

from converge.oracle.duckdb_oracle import DuckDBOracle

_ORACLE: DuckDBOracle | None = None


def shared_oracle() -> DuckDBOracle:
    """One DuckDB oracle (one connection) per process, that is per xdist worker."""
    global _ORACLE
    if _ORACLE is None:
        _ORACLE = DuckDBOracle()
    return _ORACLE
