"""Rendering the join chain and its input data as DuckDB SQL.

Data is inlined in the query (no CREATE TABLE / register per example). Each
input becomes ``(SELECT unnest('[..]'::T[]) AS c1, unnest('[..]'::T[]) AS c2, ..)``:
one string constant per column, cast to a typed list and unnested (the
unnests zip row by row). Why not ``VALUES``: DuckDB binds and constant-folds
every literal of a VALUES list separately (tens of microseconds each), which
made the history query of a 25-event scenario several times slower; a typed
list cast is parsed at once. The casts also give an empty input typed columns
(``'[]'::BIGINT[]`` unnests to zero BIGINT rows).

Value encodings round-trip exactly: integers as decimal text, doubles as
Python's shortest repr (DuckDB parses the string with a correctly rounded
parser; ``nan``/``inf``/``-inf`` included), booleans as ``True``/``False``,
strings double-quoted with backslash escapes for ``\\`` and ``"`` (DuckDB's
list-literal syntax; a bare NULL is NULL, a quoted "NULL" is the string).
A string column holding a NUL character is written element by element with
``chr(0)`` instead, since DuckDB 1.x's parser ends a string constant at NUL.
tests/oracle/test_oracle.py round-trips arbitrary text through it, so a DuckDB
release that changes the list-literal rules fails there, not silently.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

from converge.engine.model.errors import BadInputError, OracleError, UnsupportedError
from converge.engine.model.scenario import InputSpec, Scenario
from converge.oracle.guard import check_name, safe_conditions
from converge.oracle.materialize import check_value

__all__ = [
    "JOIN_KEYWORDS",
    "check_supported",
    "quote_ident",
    "quote_str",
    "render_list",
    "render_snapshot_source",
    "render_source",
    "render_join_sql",
    "seq_column_name",
]

JOIN_KEYWORDS: dict[str, str] = {
    "inner": "INNER JOIN",
    "left": "LEFT JOIN",
    "right": "RIGHT JOIN",
    "full": "FULL JOIN",
    # DuckDB's SEMI/ANTI JOIN have EXISTS / NOT EXISTS semantics: an ANTI
    # left row whose key is NULL is emitted, and a NULL on the right never
    # blocks a left row (checked in tests/oracle/test_oracle.py).
    "semi": "SEMI JOIN",
    "anti": "ANTI JOIN",
}

_NO_OUTPUT = ("semi", "anti")


def quote_ident(name: str) -> str:
    """A DuckDB identifier naming exactly ``name`` (quotes doubled; NUL, lone surrogates, "" rejected)."""
    if type(name) is str:
        return _quoted(name)
    return '"' + check_name(name).replace('"', '""') + '"'


@functools.lru_cache(maxsize=4096)
def _quoted(name: str) -> str:
    return '"' + check_name(name).replace('"', '""') + '"'


def quote_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _varchar_item(v: object, column: str) -> str:
    """A string inside DuckDB's list-literal syntax: double-quoted, backslash escapes; NULL bare."""
    if v is None:
        return "NULL"
    text = check_value(v, "VARCHAR", column)
    assert isinstance(text, str)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_LIST_TYPES = {"BIGINT", "INTEGER", "DOUBLE", "BOOLEAN"}


def _items(values: Iterable[object], ctype: str, column: str) -> list[str]:
    """Each value as an element of a list literal of ``ctype``.

    Numbers and booleans are written with ``repr`` (``1``, ``0.1``, ``nan``,
    ``-inf``, ``True``), which DuckDB's list cast reads back exactly. Every
    value is checked against its type first (materialize.check_value), so ``repr``
    only ever sees an int, float or bool.
    """
    if ctype == "VARCHAR":
        return [_varchar_item(v, column) for v in values]
    if ctype not in _LIST_TYPES:
        raise BadInputError(f"column {column!r}: type {ctype!r} is not supported by the oracle")
    return ["NULL" if v is None else repr(check_value(v, ctype, column)) for v in values]


def _typed_list(items: Iterable[str], ctype: str, repeats: Sequence[int] | None = None) -> str:
    """The list constant; with ``repeats``, item i appears repeats[i] times (formatted once)."""
    if repeats is not None:
        items = [", ".join([t] * m) if m != 1 else t for t, m in zip(items, repeats, strict=False) if m > 0]
    return quote_str("[" + ", ".join(items) + "]") + f"::{ctype}[]"


def _list_expr(values: Sequence[object], ctype: str, repeats: Sequence[int] | None = None,
               column: str = "?") -> str:
    """The typed list holding ``values`` exactly; strings with NUL characters included.

    DuckDB 1.x's parser ends a string constant at a NUL character, so a NUL
    cannot appear in the query text. A column with one is written element by
    element instead, each NUL as ``chr(0)``: slower to bind, and rare.
    """
    if ctype != "VARCHAR" or not any(isinstance(v, str) and "\0" in v for v in values):
        return _typed_list(_items(values, ctype, column), ctype, repeats)
    texts = [check_value(v, ctype, column) for v in values]
    elements = ["NULL" if v is None else " || chr(0) || ".join(quote_str(part) for part in str(v).split("\0"))
                for v in texts]
    if repeats is not None:
        elements = [e for e, m in zip(elements, repeats, strict=False) for _ in range(m)]
    return f"CAST(list_value({', '.join(elements)}) AS VARCHAR[])"


def render_list(values: Sequence[object], ctype: str) -> str:
    """A typed DuckDB list expression holding ``values`` exactly (NULLs as None)."""
    return _list_expr(values, ctype)


def _select(spec: InputSpec, rows: Sequence[tuple], repeats: Sequence[int] | None,
            seq_list: str | None, seq_column: str | None) -> str:
    items = []
    if seq_list is not None:
        assert seq_column is not None
        items.append(f"unnest({seq_list}) AS {quote_ident(seq_column)}")
    columns: Iterable[Sequence[object]] = zip(*rows, strict=False) if rows else [()] * len(spec.columns)
    for (name, ctype), values in zip(spec.columns, columns, strict=False):
        items.append(f"unnest({_list_expr(values, ctype, repeats, name)}) AS {quote_ident(name)}")
    return "(SELECT " + ", ".join(items) + ")"


def render_source(spec: InputSpec, rows: Sequence[tuple], counts: Sequence[int] | None = None) -> str:
    """An input's table as a parenthesized subquery with typed, named columns.

    ``counts[i]`` (default 1) is how many instances of ``rows[i]`` the bag holds.
    """
    return _select(spec, rows, counts, None, None)


def render_snapshot_source(spec: InputSpec, intervals: Sequence[tuple[int, int, tuple]], seq_column: str) -> str:
    """An input's snapshots: each (start, end, row) instance once per position start..end-1.

    The first column, ``seq_column``, holds the position.
    """
    seqs = ", ".join(", ".join(map(str, range(start, end))) for start, end, _ in intervals if end > start)
    return _select(spec, [row for _, _, row in intervals], [end - start for start, end, _ in intervals],
                   quote_str("[" + seqs + "]") + "::BIGINT[]", seq_column)


def seq_column_name(scenario: Scenario) -> str:
    """A column name for the event position that no chained input already uses."""
    taken = {c.lower() for spec in scenario.chain for c in spec.column_names}
    name = "__seq"
    while name.lower() in taken:
        name += "_"
    return name


def check_supported(scenario: Scenario) -> None:
    """Fail early on joins these queries do not answer (OracleError) and on bad input (BadInputError).

    Names, column types and every condition are checked here (oracle/guard.py),
    before any SQL is built, so the errors name their key path.
    """
    if scenario.has_views():
        raise UnsupportedError("this oracle query takes the join only: a projection, filter, SELECT list or WHERE "
                               "is rendered by DuckDBOracle (oracle/views.py)")
    if scenario.join.interval is not None:
        raise OracleError("an interval join's answer at every event is not a batch query: the interval "
                          "properties decide it with their step model (its final answer: oracle.interval)")
    for jtype in scenario.join.types:
        if jtype not in JOIN_KEYWORDS:
            raise OracleError(f"join type {jtype!r} is not supported by the oracle")
    safe_conditions(scenario)


def render_join_sql(scenario: Scenario, tables: Mapping[str, str] | None = None, *,
                    seq: str | None = None, select: Sequence[str] | None = None, where: str | None = None) -> str:
    """The join chain as ONE left-deep DuckDB query over the chained inputs.

    ``tables`` maps an input name to a FROM item (a table name or a
    parenthesized subquery); an input missing from it is read from a table
    of its own name. Every input is aliased by its name, so the conditions,
    written qualified by input name, work verbatim. Output columns are the
    chained inputs' columns in chain order, minus those of inputs joined by
    SEMI/ANTI; padded sides are NULL.

    With ``seq`` (the name of a position column every source carries), the
    query joins snapshots: each ON clause also equates the positions, and the
    output starts with the row's position. The position of the left side is
    that of its first input, except after RIGHT (the right input's) and FULL
    (``coalesce`` of both) joins, where the left side may be padded.

    ``select`` (checked SQL expressions over the output columns) replaces the
    output columns, and ``where`` (a checked condition) filters the joined
    rows: the query's SELECT list and WHERE (oracle/views.py checks them).
    """
    check_supported(scenario)
    conditions = safe_conditions(scenario)
    tables = tables or {}
    chain = scenario.chain

    def from_item(spec: InputSpec) -> str:
        alias = quote_ident(spec.name)
        return f"{tables.get(spec.name, alias)} AS {alias}"

    def columns_of(spec: InputSpec) -> list[str]:
        alias = quote_ident(spec.name)
        return [f"{alias}.{quote_ident(c)}" for c in spec.column_names]

    first = chain[0]
    qseq = quote_ident(seq) if seq is not None else ""
    seq_expr = f"{quote_ident(first.name)}.{qseq}"
    output = columns_of(first)
    lines = [f"FROM {from_item(first)}"]
    for spec, jtype, cond in zip(chain[1:], scenario.join.types, conditions, strict=False):
        on = f"(\n{cond}\n)"  # DuckDB's regeneration of the checked condition (guard.py), never the raw text
        if seq is not None:
            right_seq = f"{quote_ident(spec.name)}.{qseq}"
            on = f"{seq_expr} = {right_seq} AND {on}"
            if jtype == "right":
                seq_expr = right_seq
            elif jtype == "full":
                seq_expr = f"coalesce({seq_expr}, {right_seq})"
        lines.append(f"{JOIN_KEYWORDS[jtype]} {from_item(spec)} ON {on}")
        if jtype not in _NO_OUTPUT:
            output.extend(columns_of(spec))
    if select is not None:
        output = [f"(\n{expr}\n)" for expr in select]
    if where is not None:
        lines.append(f"WHERE (\n{where}\n)")
    items = ([seq_expr] if seq is not None else []) + output
    return "SELECT " + ", ".join(items) + "\n" + "\n".join(lines)
