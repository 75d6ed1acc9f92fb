"""The batch oracles: input materialization, SQL rendering, DuckDB's oracle and (on request) Spark SQL's."""

from typing import Any, Literal, get_args

from converge.engine.model.errors import BadInputError
from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.oracle.interval import batch_interval_join
from converge.oracle.materialize import Interval, materialize_inputs, presence_intervals
from converge.oracle.query import connection, run_query
from converge.oracle.sql import render_join_sql

OracleName = Literal["duckdb", "spark"]
"""Which engine computes batch answers: DuckDB (embedded, the default) or Spark SQL (oracle/spark_sql.py)."""
ORACLES: tuple[OracleName, ...] = get_args(OracleName)


def final_oracle(name: OracleName, spark: Any = None) -> Any:
    """An oracle with ``final(scenario)``; the Spark one is imported only when named (it needs pyarrow, pyspark)."""
    if name == "duckdb":
        return DuckDBOracle()
    if name == "spark":
        from converge.oracle.spark_sql import SparkSQLOracle  # lazy: pyarrow and pyspark only when Spark is chosen
        return SparkSQLOracle(spark)
    raise BadInputError(f"unknown oracle {name!r} (expected {' or '.join(ORACLES)})")


__all__ = [
    "ORACLES",
    "OracleName",
    "final_oracle",
    "DuckDBOracle",
    "Interval",
    "batch_interval_join",
    "connection",
    "materialize_inputs",
    "presence_intervals",
    "render_join_sql",
    "run_query",
]
