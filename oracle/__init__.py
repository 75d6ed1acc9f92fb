"""The DuckDB batch oracle: input materialization, SQL rendering and the oracle itself."""

from oracle.duckdb_oracle import DuckDBOracle, connection
from oracle.materialize import Interval, materialize_inputs, presence_intervals
from oracle.sql import render_join_sql

__all__ = [
    "DuckDBOracle",
    "Interval",
    "connection",
    "materialize_inputs",
    "presence_intervals",
    "render_join_sql",
]
