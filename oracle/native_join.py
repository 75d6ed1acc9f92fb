"""The batch answer of a native-join case in DuckDB, as pairs of hidden row ids.

An answer row is (left id, right id) with None for the null-padded side; a
LEFT SEMI answer is (left id, None), each matching left row once. `keep`
restricts each input to some ids: the late-row properties compare Spark's
output with the batch join of the rows Spark's rule keeps and of all rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping

import duckdb

from converge.engine.model.errors import OracleError
from converge.engine.model.native_join_case import SIDES, NativeJoinCase
from converge.oracle.sql import quote_ident

_SQL_JOIN = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}


def native_condition_sql(case: NativeJoinCase) -> str:
    """The join condition over tables l and r, as DuckDB SQL (the time range in HUGEINT: no overflow)."""
    lt, rt = quote_ident(case.left.time), quote_ident(case.right.time)
    parts = [f"l.{quote_ident(lk)} = r.{quote_ident(rk)}" for lk, rk in case.keys]
    parts.append(f"r.{rt}::HUGEINT BETWEEN l.{lt}::HUGEINT + {case.lower_ms} AND l.{lt}::HUGEINT + {case.upper_ms}")
    if case.residual is not None:
        parts.append(f"l.{quote_ident(case.residual.left)} {case.residual.op} r.{quote_ident(case.residual.right)}")
    return " AND ".join(parts)


def native_batch_sql(case: NativeJoinCase) -> str:
    cond = native_condition_sql(case)
    if case.join == "left_semi":
        return f"SELECT l._id, NULL FROM l WHERE EXISTS (SELECT 1 FROM r WHERE {cond})"
    if case.join == "left_anti":
        return f"SELECT l._id, NULL FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE {cond})"
    return f"SELECT l._id, r._id FROM l {_SQL_JOIN[case.join]} r ON {cond}"


def batch_answer(case: NativeJoinCase, keep: Mapping[str, Collection[int]] | None = None) -> Counter:
    """The batch join of the case's rows (all, or per side the ids in `keep`), as a multiset of id pairs."""
    con = duckdb.connect()
    try:
        for side, table in zip(SIDES, ("l", "r"), strict=False):
            spec = case.input(side)
            cols = ", ".join(f"{quote_ident(c)} BIGINT" for c in spec.columns)
            con.execute(f"CREATE TABLE {table} (_id BIGINT, {cols})")
            rows = [(rid, *row) for rid, _, row in case.rows(side) if keep is None or rid in keep[side]]
            if rows:
                marks = ", ".join("?" for _ in range(len(spec.columns) + 1))
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        return Counter(tuple(r) for r in con.execute(native_batch_sql(case)).fetchall())
    except duckdb.Error as exc:
        raise OracleError(f"DuckDB could not answer case {case.name!r}: {exc}") from None
    finally:
        con.close()
