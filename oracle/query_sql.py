"""The user's query as written, run in DuckDB: the second path from a Flink SQL file to its batch answer.

`converge check` reads a query onto converge's model (engine/model/flinksql/
query.py); the engine and the DuckDB oracle then both consume that one
reading, so a misreading would be invisible to them. This module takes no
part of that reading: it parses the file itself (sqlglot, with the Flink
dialect's tokenizer and parser only), takes every column's declared type from
the file's own CREATE TABLE statements, transpiles the SELECT as written to
DuckDB's dialect (sqlglot; Flink's INT / INT is typed, so it truncates) and
runs it over real DuckDB tables of those types, on a connection locked down
like the oracle's own (oracle/query.py: no file or network access, no
extension loading, configuration locked).

The inputs arrive as converge holds them (docs/check-your-query.md §2): a
DECIMAL(p, s) as its unscaled integer, a TIMESTAMP(p) as epoch milliseconds,
a DATE as its day number. `QueryAsWritten.real` turns them back into real
values with the declared types, so DuckDB computes on DECIMAL(p, s),
TIMESTAMP and DATE columns, never on converge's encoding. Answers come back in
`common` form (numbers as exact Decimals), so a DOUBLE and a DECIMAL holding
one value compare equal.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.annotate_types import annotate_types

from converge.engine.model.errors import BadInputError, OracleError, UnsupportedError
from converge.engine.model.flinksql.dialect import Flink
from converge.oracle.query import LOCKDOWN

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
_T = exp.DataType.Type
_INTEGERS = {_T.TINYINT: "TINYINT", _T.SMALLINT: "SMALLINT", _T.INT: "INTEGER", _T.BIGINT: "BIGINT"}
_PLAIN = {**_INTEGERS, _T.DOUBLE: "DOUBLE", _T.BOOLEAN: "BOOLEAN", _T.TEXT: "VARCHAR", _T.VARCHAR: "VARCHAR"}


class _FlinkTyped(Flink):
    """Flink's division is typed (INT / INT is an INT, truncated): sqlglot renders it so for DuckDB."""

    TYPED_DIVISION = True


@dataclass(frozen=True)
class DeclaredColumn:
    """One column as its CREATE TABLE declares it: the DuckDB type and how a held value becomes a real one."""

    name: str
    declared: str                      # the type as written, for messages
    duckdb_type: str
    real: Callable[[Any], Any]


def _declared(name: str, node: exp.DataType) -> DeclaredColumn:
    params = [p.this.name if isinstance(p, exp.DataTypeParam) else p.name for p in node.expressions]
    written = node.sql(dialect=Flink)
    if node.this in _PLAIN:
        return DeclaredColumn(name, written, _PLAIN[node.this], lambda v: v)
    if node.this == _T.DECIMAL:
        precision = int(params[0]) if params else 10   # Flink's DECIMAL is DECIMAL(10, 0)
        scale = int(params[1]) if len(params) > 1 else 0
        return DeclaredColumn(name, written, f"DECIMAL({precision}, {scale})",
                              lambda v: decimal.Decimal(v).scaleb(-scale))
    if node.this in (_T.TIMESTAMP, _T.TIMESTAMPLTZ, _T.DATETIME):
        return DeclaredColumn(name, written, "TIMESTAMP", lambda v: _EPOCH + dt.timedelta(milliseconds=v))
    if node.this == _T.DATE:
        return DeclaredColumn(name, written, "DATE", lambda v: _EPOCH_DAY + dt.timedelta(days=v))
    raise UnsupportedError(f"column {name} {written}: the query-as-written path holds no such type")


def _duckdb_functions(expr: exp.Expr) -> exp.Expr:
    """Flink's functions of a computed column that DuckDB spells otherwise: `TO_TIMESTAMP_LTZ(n, 3)` (n epoch
    milliseconds) is DuckDB's `epoch_ms(n)`, `TO_TIMESTAMP_LTZ(n, 0)` its `epoch_ms(n * 1000)`,
    `TO_TIMESTAMP(s [, format])` its `strptime`; any other is left as written (DuckDB then refuses it, and the query cannot be run as written)."""
    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Anonymous) and str(node.this).upper() == "TO_TIMESTAMP_LTZ" \
                and len(node.expressions) == 2 and isinstance(node.expressions[1], exp.Literal) \
                and not node.expressions[1].is_string and node.expressions[1].name == "3":
            return exp.Anonymous(this="epoch_ms", expressions=[node.expressions[0]])
        if isinstance(node, exp.Anonymous) and str(node.this).upper() == "TO_TIMESTAMP_LTZ" \
                and len(node.expressions) == 2 and isinstance(node.expressions[1], exp.Literal) \
                and not node.expressions[1].is_string and node.expressions[1].name == "0":  # epoch seconds
            seconds = exp.Mul(this=exp.cast(node.expressions[0], "BIGINT"), expression=exp.Literal.number(1000))
            return exp.Anonymous(this="epoch_ms", expressions=[seconds])
        if isinstance(node, exp.Anonymous) and str(node.this).upper() == "TO_TIMESTAMP" and node.expressions:
            # a rowtime parsed from text: DuckDB's strptime, on the canonical text converge draws
            formats = exp.Array(expressions=[exp.Literal.string(f) for f in _TEXT_FORMATS])
            return exp.Anonymous(this="strptime", expressions=[node.expressions[0], formats])
        return node

    return expr.transform(swap)


_TEXT_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%g")


def _is_arrival(column: exp.ColumnDef) -> bool:
    """`p AS PROCTIME()`: Flink's processing-time attribute, the wall clock when the row arrives."""
    kind = [c.args.get("kind") for c in column.args.get("constraints") or ()]
    expr = kind[0].this if len(kind) == 1 and isinstance(kind[0], exp.ComputedColumnConstraint) else None
    return isinstance(expr, exp.Anonymous) and str(expr.this).upper() == "PROCTIME" and not expr.expressions


def _arrival(name: str) -> DeclaredColumn:
    """A PROCTIME() attribute held as a column: the row's arrival time, epoch milliseconds, as a TIMESTAMP."""
    return DeclaredColumn(name, "PROCTIME()", "TIMESTAMP", lambda v: _EPOCH + dt.timedelta(milliseconds=v))


def common(value: Any) -> Any:
    """One form for both answers: numbers as exact Decimals (a DOUBLE's binary value, a DECIMAL's digits)."""
    if value is None or isinstance(value, (bool, str, dt.datetime, dt.date)):
        return value
    if isinstance(value, (int, decimal.Decimal)):
        return decimal.Decimal(value)
    if isinstance(value, float):
        return decimal.Decimal(value) if math.isfinite(value) else value
    return value


def show(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, (str, dt.date)):
        return repr(str(value))
    return str(value)


class QueryAsWritten:
    """The file's tables and its SELECT transpiled to DuckDB, with one DuckDB connection holding the tables."""

    def __init__(self, text: str, path: str = "<query>") -> None:
        self.path = path
        try:
            statements = [s for s in sqlglot.parse(text, read=_FlinkTyped) if s is not None]
        except (ParseError, TokenError) as exc:
            raise BadInputError(f"{path}: cannot parse: {str(exc).splitlines()[0]}") from None
        self.tables: dict[str, tuple[DeclaredColumn, ...]] = {}
        # table -> where its `p AS PROCTIME()` sits among its stored columns: a TIMESTAMP the caller fills with
        # each row's arrival time (the wall clock Flink reads when the row arrives)
        self.arrival: dict[str, int] = {}
        selects = []
        views: list[exp.Create] = []
        computed: dict[str, list[exp.ColumnDef]] = {}  # tables with computed columns: every column, as declared
        for stmt in statements:
            if isinstance(stmt, exp.Create) and str(stmt.args.get("kind") or "").upper() == "VIEW":
                views.append(stmt)  # created in DuckDB as written, after the tables
            elif isinstance(stmt, exp.Create) and isinstance(stmt.this, exp.Schema):
                table = stmt.this.this.name
                defs = [c for c in stmt.this.expressions if isinstance(c, exp.ColumnDef)]
                self.tables[table] = tuple(_declared(c.name, c.args["kind"]) if c.args.get("kind") else
                                           _arrival(c.name) for c in defs if c.args.get("kind") or _is_arrival(c))
                arrival = [i for i, c in enumerate(self.tables[table]) if c.declared == "PROCTIME()"]
                if arrival:
                    self.arrival[table] = arrival[0]
                if any(not c.args.get("kind") and not _is_arrival(c) for c in defs):
                    computed[table] = defs
            elif isinstance(stmt, exp.Select):
                selects.append(stmt)
            elif isinstance(stmt, exp.Insert) and isinstance(stmt.expression, exp.Select):
                selects.append(stmt.expression)  # the sink takes the SELECT's rows (its key: a job option)
        if len(selects) != 1:
            raise BadInputError(f"{path}: expected exactly one SELECT, found {len(selects)}")
        select = selects[0]
        schema: dict[str, object] = {t: {c.name: c.duckdb_type for c in cols} for t, cols in self.tables.items()}
        _qualify_one_table_selects(select, schema)
        annotate_types(select, schema=schema, dialect=_FlinkTyped)  # typed division needs the operand types
        self.sql = select.sql(dialect="duckdb")
        self._con = duckdb.connect()
        self._con.execute("SET threads = 1")
        for statement in LOCKDOWN:  # the user's query runs here: no file, network or extension, settings locked
            self._con.execute(statement)
        # a table with computed columns holds its physical columns under another name, and the table's name is a
        # view computing every column in declared order, as Flink's scan does
        self._stored = {t: _physical_name(t, self.tables) if t in computed else t for t in self.tables}
        for table, cols in self.tables.items():
            body = ", ".join(f"{_quoted(c.name)} {c.duckdb_type}" for c in cols)
            try:
                self._con.execute(f"CREATE TABLE {_quoted(self._stored[table])} ({body})")
            except duckdb.Error as exc:  # e.g. two columns whose names differ only in case: one name in DuckDB
                raise UnsupportedError(f"{path}: table {table}: DuckDB cannot hold it as declared, so the query "
                                       f"cannot be run as written: {exc}") from exc
        for table, defs in computed.items():
            self._computed_view(table, defs, {c.name: c.duckdb_type for c in self.tables[table]})
        for view in views:
            body = view.args["expression"]
            _qualify_one_table_selects(body, schema)
            annotate_types(body, schema=schema, dialect=_FlinkTyped)
            text_of_view = exp.Create(this=view.this.copy(), kind="VIEW", expression=body).sql(dialect="duckdb")
            try:
                self._con.execute(text_of_view)
            except duckdb.Error as exc:
                raise UnsupportedError(f"{path}: DuckDB cannot create the view as written ({text_of_view}): "
                                       f"{exc}") from exc

    def _computed_view(self, table: str, defs: list[exp.ColumnDef], physical: dict[str, object]) -> None:
        stored = exp.to_identifier(self._stored[table])
        items: list[exp.Expr] = []
        for c in defs:
            if c.args.get("kind") or _is_arrival(c):
                items.append(exp.column(exp.to_identifier(c.name), table=stored.copy()))
                continue
            expr = _duckdb_functions(c.args["constraints"][0].args["kind"].this.copy())
            for col in expr.find_all(exp.Column):
                col.set("table", stored.copy())  # qualified, so the types (and typed division) resolve
            items.append(exp.alias_(expr, exp.to_identifier(c.name)))
        body = exp.select(*items).from_(exp.Table(this=stored))
        annotate_types(body, schema={self._stored[table]: physical}, dialect=_FlinkTyped)
        sql = f"CREATE VIEW {_quoted(table)} AS {body.sql(dialect='duckdb')}"
        try:
            self._con.execute(sql)
        except duckdb.Error as exc:
            raise UnsupportedError(f"{self.path}: DuckDB cannot compute table {table}'s columns as written ({sql}): "
                                   f"{exc}") from exc

    def real(self, table: str, row: tuple) -> tuple:
        """A row of `table` as converge holds it, as the real values of its declared types."""
        return tuple(None if v is None else c.real(v) for c, v in zip(self.tables[table], row, strict=False))

    def answer(self, held: Mapping[str, Iterable[tuple]]) -> Counter:
        """The SELECT's result (a bag of rows in `common` form) over the tables whose rows converge holds."""
        try:
            for table, cols in self.tables.items():
                self._con.execute(f"DELETE FROM {_quoted(self._stored[table])}")
                rows = [self.real(table, r) for r in held.get(table, ())]
                if rows:  # one statement per table: DuckDB's executemany is a statement per row
                    marks = "(" + ", ".join("?" for _ in cols) + ")"
                    self._con.execute(f"INSERT INTO {_quoted(self._stored[table])} VALUES " + ", ".join(marks for _ in rows),
                                      [v for row in rows for v in row])
            result = self._con.execute(self.sql).fetchall()
        except duckdb.Error as exc:
            raise OracleError(f"{self.path}: DuckDB could not run the query as written ({self.sql}): {exc}") from exc
        return Counter(tuple(common(v) for v in row) for row in result)

    def close(self) -> None:
        self._con.close()


def _qualify_one_table_selects(tree: exp.Expr, schema: Mapping[str, object]) -> None:
    """Name the table of each bare column of a SELECT over one table (a view, a derived table, a subquery) that
    is a column of that table: annotate_types types only qualified columns, and Flink's typed division (INT / INT
    truncates) needs the operands' types."""
    for select in list(tree.find_all(exp.Select)):
        source = select.args.get("from_")
        table = source.this if source is not None else None
        if select.args.get("joins") or not isinstance(table, exp.Table):
            continue
        columns = schema.get(table.name)
        names = {str(c).casefold() for c in columns} if isinstance(columns, Mapping) else set()
        for col in select.find_all(exp.Column):
            if not col.table and col.name.casefold() in names and col.find_ancestor(exp.Select) is select:
                col.set("table", exp.to_identifier(table.alias_or_name))


def _physical_name(table: str, tables: Mapping[str, object]) -> str:
    """A name for the physical columns of a table with computed columns that no declared table has."""
    name = f"{table}_physical"
    while name.casefold() in {t.casefold() for t in tables}:
        name += "_"
    return name


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


__all__ = ["DeclaredColumn", "QueryAsWritten", "common", "show"]
