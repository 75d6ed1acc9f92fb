"""Random SQL expressions over two inputs a and b, and DuckDB's own value of one on rows of both.

The condition compiler (tests/engine/test_condition.py), the v2 expression trees (test_condition_tree.py), the
oracle's injection checks (tests/oracle/test_oracle_injection.py) and Pathway's translation
(tests/systems/pathway/test_expression_duckdb.py) are held to DuckDB on the same expressions.
"""

from __future__ import annotations

import duckdb
from hypothesis import strategies as st

from converge.engine.model.scenario import InputSpec

COLS = (("k", "BIGINT"), ("x", "BIGINT"), ("s", "VARCHAR"), ("f", "DOUBLE"), ("flag", "BOOLEAN"))
A, B = InputSpec("a", COLS), InputSpec("b", COLS)

INTS = st.sampled_from([None, None, -3, -1, 0, 1, 2, 3, 10])
DOUBLES = st.sampled_from([None, -1.5, -0.0, 0.0, 1.0, 2.5, 3.0, 0.1234567, 1e20, float("inf"), float("nan")])
STRINGS = st.sampled_from([None, "", "a", "B", "ab", "é", "ß", "İx", "Σ"])
BOOLS = st.sampled_from([None, True, False])
ROW = st.tuples(INTS, INTS, STRINGS, DOUBLES, BOOLS)

CMP = ["=", "<>", "!=", "<", "<=", ">", ">="]
COLUMN = {"int": ["a.k", "a.x", "b.k", "b.x"], "num": ["a.f", "b.f"], "str": ["a.s", "b.s"],
          "bool": ["a.flag", "b.flag"]}
LITERAL = {"int": ["NULL", "0", "1", "2", "(-3)", "10"], "num": ["0.5", "(-1.5)", "2.25", "1e1"],
           "str": ["NULL", "''", "'a'", "'B'", "'é'", "'it''s'"], "bool": ["TRUE", "FALSE", "NULL"]}


@st.composite
def expr(draw: st.DrawFn, kind: str, depth: int = 3) -> str:
    """A random SQL expression of kind int | num (int or double) | str | bool."""
    if kind == "num" and draw(st.booleans()):
        return draw(expr("int", depth))
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(COLUMN[kind] + LITERAL[kind]))
    sub = lambda k: expr(k, depth - 1)  # noqa: E731
    any_kind = st.sampled_from(["int", "num", "str", "bool"])
    if kind in ("int", "num"):
        choice = draw(st.sampled_from(["arith", "arith", "neg", "abs", "coalesce", "div", "mod", "cast"]
                                      + (["length"] if kind == "int" else ["slash"])))
        if choice == "arith":
            return f"({draw(sub(kind))} {draw(st.sampled_from(['+', '-', '*']))} {draw(sub(kind))})"
        if choice == "neg":
            return f"(-{draw(sub(kind))})"
        if choice in ("abs", "length"):
            return f"{choice}({draw(sub(kind if choice == 'abs' else 'str'))})"
        if choice == "coalesce":
            return f"coalesce({draw(sub(kind))}, {draw(sub(kind))})"
        if choice in ("div", "mod"):  # never by zero: DuckDB raises, which is tested separately
            op = "//" if choice == "div" else "%"
            return f"({draw(sub(kind))} {op} {draw(st.sampled_from(['2', '(-3)', '5', '2.5']))})"
        if choice == "slash":  # x / 0 is +-inf or NaN in both
            return f"({draw(sub('num'))} / {draw(sub('num'))})"
        col = draw(st.sampled_from(["a.flag", "b.flag"] + (["a.x"] if kind == "num" else [])))
        return f"CAST({col} AS {'DOUBLE' if kind == 'num' else 'BIGINT'})"
    if kind == "str":
        choice = draw(st.sampled_from(["lower", "upper", "concat", "coalesce", "cast"]))
        if choice in ("lower", "upper"):
            return f"{choice}({draw(sub('str'))})"
        if choice == "concat":
            return f"({draw(sub('str'))} || {draw(sub('str'))})"
        if choice == "coalesce":
            return f"coalesce({draw(sub('str'))}, {draw(sub('str'))})"
        return f"CAST({draw(st.sampled_from(['a.x', 'b.f', 'a.f', 'b.flag']))} AS VARCHAR)"
    choice = draw(st.sampled_from(["cmp", "cmp", "cmp", "distinct", "between", "in", "null", "and", "or",
                                   "not", "is_true", "coalesce"]))
    if choice in ("cmp", "distinct"):
        k = draw(st.sampled_from(["int", "num", "str", "bool"]))
        op = draw(st.sampled_from(CMP)) if choice == "cmp" else \
            draw(st.sampled_from(["IS DISTINCT FROM", "IS NOT DISTINCT FROM"]))
        return f"({draw(sub(k))} {op} {draw(sub(k))})"
    if choice == "between":
        k = draw(st.sampled_from(["num", "str"]))
        neg = draw(st.sampled_from(["", "NOT "]))
        return f"({draw(sub(k))} {neg}BETWEEN {draw(sub(k))} AND {draw(sub(k))})"
    if choice == "in":
        k = draw(st.sampled_from(["int", "num", "str"]))
        items = draw(st.lists(st.one_of(sub(k), st.sampled_from(LITERAL[k])), min_size=1, max_size=5))
        return f"({draw(sub(k))} {draw(st.sampled_from(['', 'NOT ']))}IN ({', '.join(items)}))"
    if choice == "null":
        return f"({draw(sub(draw(any_kind)))} IS {draw(st.sampled_from(['', 'NOT ']))}NULL)"
    if choice in ("and", "or"):
        parts = draw(st.lists(sub("bool"), min_size=2, max_size=3))
        return "(" + f" {choice.upper()} ".join(parts) + ")"
    if choice == "not":
        return f"(NOT {draw(sub('bool'))})"
    if choice == "is_true":
        return f"({draw(sub('bool'))} IS {draw(st.sampled_from(['', 'NOT ']))}{draw(st.sampled_from(['TRUE', 'FALSE']))})"
    return f"coalesce({draw(sub('bool'))}, {draw(sub('bool'))})"


def duckdb_values(con: duckdb.DuckDBPyConnection, sql: str, rows_a: list, rows_b: list) -> list:
    """Value of sql for every (row a, row b) pair, in nested-loop order, as DuckDB computes it."""
    def rel(rows: list) -> str:
        one = "(" + ", ".join(f"?::{t}" for _, t in COLS) + ", {i})"
        return "(VALUES " + ", ".join(one.format(i=i) for i in range(len(rows))) + ")"
    q = (f"SELECT {sql} FROM {rel(rows_a)} a(k, x, s, f, flag, i), {rel(rows_b)} b(k, x, s, f, flag, i) "
         "ORDER BY a.i, b.i")
    params = [v for r in rows_a for v in r] + [v for r in rows_b for v in r]
    return [r[0] for r in con.execute(q, params).fetchall()]
