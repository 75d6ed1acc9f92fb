"""The DuckDB batch oracle: input materialization, SQL rendering and the oracle itself."""

from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.oracle.interval import batch_interval_join
from converge.oracle.materialize import Interval, materialize_inputs, presence_intervals
from converge.oracle.query import connection, run_query
from converge.oracle.sql import render_join_sql

__all__ = [
    "DuckDBOracle",
    "Interval",
    "batch_interval_join",
    "connection",
    "materialize_inputs",
    "presence_intervals",
    "render_join_sql",
    "run_query",
]
