"""Running the oracle's SQL: one DuckDB connection per process; DuckDB's errors become OracleError here.

Property runs issue one query per Hypothesis example, so per-query overhead
is the budget that matters; the connection's settings are chosen for it.
The connection is also locked down (no file or network access, no extension
loading, configuration locked): the oracle's SQL is built from scenario data,
and even a query that got past oracle/guard.py could then change nothing
outside the query itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import duckdb

from converge.engine.model.duckdb_params import inlined
from converge.engine.model.errors import OracleError

__all__ = ["LOCKDOWN", "connection", "run_query"]

_lock = threading.Lock()
_shared: tuple[int, duckdb.DuckDBPyConnection] | None = None

LOCKDOWN: tuple[str, ...] = (
    # no file system or network access: COPY TO, read_csv, ATTACH, INSTALL, secrets on disk
    "SET enable_external_access = false",
    # no extension can be fetched or loaded behind the oracle's back (json is built in)
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
    "SET allow_community_extensions = false",
    "SET allow_unsigned_extensions = false",
    # and none of the above can be switched back on
    "SET lock_configuration = true",
)
"""The statements that lock the oracle's own connection down, in order (DuckDB 1.5 accepts each at runtime)."""


def _new_connection() -> duckdb.DuckDBPyConnection:
    """A private in-memory database tuned for many tiny queries.

    * ``threads = 1``: inputs have a few dozen rows, so parallel pipelines
      only add scheduling; property runs already use one process per core.
    * ``PRAGMA disable_optimizer``: for tiny inlined inputs, DuckDB spent
      more time optimizing than executing (about a third of the query).
      Every ON clause of the history query has an equality on the position,
      so joins stay hash joins without the optimizer, and results do not
      depend on it (tests/oracle/test_oracle.py compares against an optimized
      connection).
    * ``error_on_division_by_zero = false`` where DuckDB has it (2.x): a
      zero divisor of ``//`` and ``%`` gives NULL on every version, as on
      1.x (the Spark oracle's translation follows that answer).
    * ``max_expression_depth = 10000``: on DuckDB 2.0.1 a condition in 2,000
      redundant parentheses would otherwise not parse, where 1.x reads it.
    * ``LOCKDOWN``, last: once ``lock_configuration`` is on, no statement on
      this connection can change a setting again (``SET`` and ``RESET`` fail).
    """
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    con.execute("PRAGMA disable_optimizer")
    # DuckDB 2.0.1's parser counts redundant parentheses toward this limit (1.x does not): 10,000 is the longest
    # condition the guard parses, and a tree deeper than Python's json reader goes is still refused there.
    con.execute("SET max_expression_depth = 10000")
    try:  # DuckDB 2.0.1 fails an integer (or DOUBLE //) division by zero; 1.x answers NULL and has no such setting
        con.execute("SET error_on_division_by_zero = false")
    except duckdb.CatalogException:
        pass
    for statement in LOCKDOWN:
        con.execute(statement)
    return con


def connection() -> duckdb.DuckDBPyConnection:
    """The process-wide oracle connection, created on first use (again after a fork)."""
    global _shared
    pid = os.getpid()
    if _shared is None or _shared[0] != pid:
        _shared = (pid, _new_connection())
    return _shared[1]


def run_query(sql: str, con: duckdb.DuckDBPyConnection | None = None, *,
              params: Sequence[Any] | None = None) -> list[tuple]:
    """Every row of `sql` on `con` (default: the process-wide connection); a DuckDB error is an OracleError."""
    with _lock:
        target = con if con is not None else connection()
        try:
            text, bound = inlined(sql, params)  # no bound parameter: binding one imports pandas
            return target.execute(text, bound or None).fetchall()
        except duckdb.Error as exc:
            raise OracleError(f"DuckDB failed: {type(exc).__name__}: {exc}\n-- SQL:\n{sql}") from exc
