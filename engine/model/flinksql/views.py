"""Views and derived tables over one source, read as that input's projection and filter in front of the join.

`CREATE [TEMPORARY] VIEW v AS SELECT ... FROM t [WHERE ...]` and a derived
table `(SELECT ... FROM t [WHERE ...]) AS x` in FROM or JOIN put a Calc
between the source `t` and the join (Flink's planner merges the view into the
query; StreamExecCalc runs it). converge reads each as the input's `project`
and `where` (docs/scenario-format.md "Views"): the input keeps the source's
columns (its events are the table's rows), and the join, its conditions and
the SELECT list see the view's columns. A view is first put in place of every
use of its name as the derived table it stands for (`inline_views`), so both
forms are read by one path, and the query as written (oracle/query_sql.py)
runs the same inlined text.

Read: a SELECT list of columns, `*`, renamed columns and computed columns
(`x + 1 AS y`, in the SQL subset engine/model/flinksql/expressions.py renders)
and a WHERE, over ONE declared table. Anything else inside (a join, GROUP BY, a
view over another view) is unsupported, with its position.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeGuard

from sqlglot import exp

from converge.engine.model.flinksql.calc_expressions import CalcRenderer
from converge.engine.model.flinksql.ddl import SourceTable
from converge.engine.model.flinksql.expressions import Renderer, Scope, column_sql
from converge.engine.model.flinksql.positions import SourceText
from converge.engine.model.flinksql.text_times import computed_time, computed_time_sql
from converge.engine.model.flinksql.types import FlinkType

__all__ = ["DerivedInput", "computed_input", "derived_input", "inline_views", "is_view", "name_derived", "read_view"]

MAX_VIEW_DEPTH = 16
_COMPUTED = {"int": FlinkType("INT", "int", "INTEGER"), "bigint": FlinkType("BIGINT", "bigint", "BIGINT"),
             "double": FlinkType("DOUBLE", "double", "DOUBLE"), "boolean": FlinkType("BOOLEAN", "boolean", "BOOLEAN")}
_CLAUSES = ("joins", "group", "having", "order", "limit", "distinct", "with_", "qualify", "windows")


@dataclass(frozen=True)
class DerivedInput:
    """One input read through a view or derived table: the columns the join sees and the Calc that makes them."""

    alias: str
    table: str                                          # the declared table it reads
    columns: tuple[tuple[str, FlinkType], ...]          # as the join sees them
    project: tuple[tuple[str, str], ...] | None         # model SQL over the source's columns (None: all, as they are)
    where: str | None                                   # model SQL over the source's columns
    via: str = "a view"                                 # what makes the Calc, as --plan-only names it
    # the source's processing-time attribute (PROCTIME()) as the view names it, where the view forwards it
    # unchanged: Flink's Calc keeps a forwarded time indicator (a computed one is materialized to a plain value)
    proctime: str | None = None

    def view_table(self, source: SourceTable) -> SourceTable:
        """The source as the join sees it (its columns the view's; key and rowtime where kept as bare columns)."""
        kept = {expr.rpartition(".")[2]: name for name, expr in self.project or ()
                if expr.rpartition(".")[0] == self.alias and expr.rpartition(".")[2] in dict(source.columns)}
        if self.project is None:
            kept = {c: c for c, _ in source.columns}
        key = source.primary_key
        time = kept.get(source.time_column) if source.time_column else None
        if source.time_column in dict(self.columns) and source.time_column not in dict(source.columns):
            time = source.time_column  # a rowtime the table computes (flinksql/text_times.py), under its name
        return SourceTable(self.alias, self.columns,
                           tuple(kept[c] for c in key) if key and all(c in kept for c in key) else None,
                           source.changelog_mode, source.connector, time, source.watermark_delay_ms,
                           proctime=self.proctime)


def is_view(stmt: exp.Expr) -> TypeGuard[exp.Create]:
    return isinstance(stmt, exp.Create) and str(stmt.args.get("kind") or "").upper() == "VIEW"


def read_view(stmt: exp.Create, text: SourceText) -> tuple[str, exp.Select]:
    """(name, its SELECT) of a CREATE [TEMPORARY] VIEW."""
    name = stmt.this.name if isinstance(stmt.this, exp.Table) else ""
    body = stmt.args.get("expression")
    if not name or not isinstance(body, exp.Select):
        raise text.unsupported(stmt, "a view is read when it is CREATE [TEMPORARY] VIEW name AS SELECT ...")
    if isinstance(stmt.this, exp.Table) and stmt.this.args.get("db"):
        raise text.unsupported(stmt, "a view named with a catalog or database is not supported")
    return name, body


def inline_views(select: exp.Select, views: dict[str, exp.Select], text: SourceText) -> exp.Select:
    """`select` with every use of a view's name replaced by the derived table the view stands for."""
    for _ in range(MAX_VIEW_DEPTH):
        uses = [t for t in select.find_all(exp.Table)
                if not t.args.get("db") and t.name.casefold() in views and not isinstance(t.this, exp.Func)]
        if not uses:
            return select
        for table in uses:
            alias = table.alias_or_name
            body = views[table.name.casefold()].copy()
            table.replace(exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias))))
    raise text.unsupported(select, f"views nested more than {MAX_VIEW_DEPTH} deep (or a view that reads itself)")


def computed_input(alias: str, source: SourceTable, tables: dict[str, SourceTable],
                   text: SourceText) -> DerivedInput:
    """A table with computed columns (`c AS a + 1`) as the input's projection: Flink computes them in the scan's
    projection, a Calc in front of the join, so the table reads as `SELECT <every column, computed ones as their
    expressions, in declared order> FROM t`; its events are the physical columns."""
    computed = dict(source.computed)
    physical = dict(source.columns)
    # a rowtime parsed from text (flinksql/text_times.py) is read as its text column here, then given its time
    texts = {c: found for c, e in computed.items() if c == source.time_column and (found := computed_time(e, physical))}
    items = [exp.alias_(exp.column(exp.to_identifier(texts[c][0])) if c in texts else computed[c].copy(),
                        exp.to_identifier(c)) if c in computed
             else exp.column(exp.to_identifier(c)) for c in source.declared]
    body = exp.select(*items).from_(exp.Table(this=exp.to_identifier(source.name)))
    sub = exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias)))
    derived = derived_input(sub, tables, text, computed=True)
    if texts:
        columns = tuple((c, texts[c][2]) if c in texts else (c, t) for c, t in derived.columns)
        project = tuple((c, computed_time_sql(texts[c][1], column_sql(alias, texts[c][0]))) if c in texts else (c, e)
                        for c, e in derived.project or ())
        derived = replace(derived, columns=columns, project=project)
    return replace(derived, via="computed columns", proctime=source.proctime)


def name_derived(select: exp.Select) -> None:
    """Give each derived table of the FROM list that has no alias one (Calcite accepts `FROM (SELECT ...), b` and
    names it EXPR$n, which only its columns, unqualified, can refer to): the name of the table it reads, or
    `name_1`, `name_2`, ... where that name is taken in the FROM list."""
    from_ = select.args.get("from_")
    items = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or ()]
    taken = {i.alias_or_name.casefold() for i in items if i.alias_or_name}
    for item in items:
        body = item.this if isinstance(item, exp.Subquery) else None
        inner = body.args.get("from_") if isinstance(body, exp.Select) else None
        if item.alias_or_name or inner is None or not isinstance(inner.this, exp.Table):
            continue
        name, n = inner.this.name, 0
        while name.casefold() in taken:
            n += 1
            name = f"{inner.this.name}_{n}"
        taken.add(name.casefold())
        item.set("alias", exp.TableAlias(this=exp.to_identifier(name)))


def derived_input(sub: exp.Subquery, tables: dict[str, SourceTable], text: SourceText, *,
                  computed: bool = False) -> DerivedInput:
    """The input a derived table (or an inlined view) makes; unsupported unless it reads one declared table."""
    body = sub.this
    if not isinstance(body, exp.Select) or any(body.args.get(k) for k in _CLAUSES) \
            or body.args.get("from_") is None or not isinstance(body.args["from_"].this, exp.Table):
        raise text.unsupported(sub, "a derived table or view is read when it is SELECT ... FROM one declared "
                                    "table [WHERE ...] (no join, GROUP BY or nested subquery inside)")
    alias = sub.alias_or_name
    if not alias or not alias.isidentifier():  # valid Flink (Calcite names an unnamed one EXPR$n): name_derived
        raise text.unsupported(sub, f"a derived table named {alias!r}: converge names inputs with identifiers only "
                                    f"(letters, digits, _); write (...) AS x")
    inner = body.args["from_"].this
    table = next((t for t in tables if t.casefold() == inner.name.casefold()), None)
    if table is None or inner.args.get("db"):
        raise text.error(inner, f"table {inner.name!r} is not declared (declared: {', '.join(tables)})")
    source = tables[table]
    if (source.computed or source.renamed) and not computed:
        raise text.unsupported(sub, f"a view or derived table over {table!r}, which has computed columns, is not "
                                    f"supported yet (join the table itself)")
    body = body.copy()
    inner_alias = body.args["from_"].this.alias_or_name
    for col in body.find_all(exp.Column):  # the inner alias names the input, as the outer alias does
        if col.table and col.table.casefold() == inner_alias.casefold():
            col.set("table", exp.to_identifier(alias))
    renderer = CalcRenderer(Scope({alias: source.columns}, text, {alias: source.proctime} if source.proctime else None))
    columns: list[tuple[str, FlinkType]] = []
    project: list[tuple[str, str]] = []
    proctime: str | None = None
    for item in body.expressions:
        forwarded = _forwarded_proctime(item, renderer)
        if forwarded is not None:
            if proctime is not None or forwarded.casefold() in {c.casefold() for c, _ in columns}:
                raise text.unsupported(item, f"the derived table {alias!r} names the processing-time attribute "
                                             f"twice: converge reads one a table")
            proctime = forwarded
            continue
        _no_computed_proctime(item, renderer, text)
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star) or (isinstance(target, exp.Column) and isinstance(target.this, exp.Star)):
            proctime = proctime or source.proctime  # `*` forwards the attribute too
        for name, sql, ftype in _items(item, alias, source, renderer, text):
            if name.casefold() in {c.casefold() for c, _ in columns} | {(proctime or "").casefold()}:
                raise text.error(item, f"the derived table {alias!r} names column {name!r} twice")
            columns.append((name, ftype))
            project.append((name, sql))
    where = body.args.get("where")
    if where is not None:
        _no_computed_proctime(where.this, renderer, text)
    where_sql = renderer.boolean(where.this) if where is not None else None
    identity = [(c, column_sql(alias, c)) for c, _ in source.columns]
    return DerivedInput(alias, table, tuple(columns), None if project == identity else tuple(project), where_sql,
                        proctime=proctime)


def _no_computed_proctime(node: exp.Expr, renderer: Renderer, text: SourceText) -> None:
    """Unsupported where a view's expression or WHERE computes on the processing-time attribute: Flink
    materializes the attribute there into a plain TIMESTAMP_LTZ(3) value, the wall clock
    (RexTimeIndicatorMaterializer's PROCTIME_MATERIALIZE), which converge does not hold."""
    if _forwarded_proctime(node, renderer) is not None:
        return
    for col in node.find_all(exp.Column):
        if not isinstance(col.this, exp.Star) and renderer.scope.proctime_of(col) is not None:
            raise text.unsupported(col, f"the view computes on the processing-time attribute {col.name!r}: Flink "
                                        f"materializes it there into a plain TIMESTAMP_LTZ(3), the wall clock "
                                        f"(RexTimeIndicatorMaterializer), which converge does not hold; a view "
                                        f"may pass the attribute on unchanged (`{col.name}` or `{col.name} AS p`)")


def _forwarded_proctime(item: exp.Expr, renderer: Renderer) -> str | None:
    """The name a SELECT item gives the source's processing-time attribute where it forwards it unchanged
    (`proctime`, `t.proctime AS pt`): Flink's Calc passes a time indicator that is only referenced through as one
    (RelTimeIndicatorConverter materializes it only where an expression computes on it), so the interval join
    after the view still runs on processing time. None: the item is no bare reference to the attribute."""
    target = item.this if isinstance(item, exp.Alias) else item
    while isinstance(target, exp.Paren):
        target = target.this
    if not isinstance(target, exp.Column) or isinstance(target.this, exp.Star) \
            or renderer.scope.proctime_of(target) is None:
        return None
    return item.alias_or_name


def _items(item: exp.Expr, alias: str, source: SourceTable, renderer: Renderer,
           text: SourceText) -> list[tuple[str, str, FlinkType]]:
    """(name, model SQL, type) of one item of the view's SELECT list."""
    target = item.this if isinstance(item, exp.Alias) else item
    if isinstance(target, exp.Star) or (isinstance(target, exp.Column) and isinstance(target.this, exp.Star)):
        return [(c, column_sql(alias, c), t) for c, t in source.columns]
    if isinstance(target, exp.Column):
        _, column, ftype = renderer.scope.resolve(target)
        return [(item.alias_or_name, column_sql(alias, column), ftype)]
    if not isinstance(item, exp.Alias):
        raise text.error(item, "a computed column of a view needs a name: write <expression> AS name")
    typed = renderer.render(target)
    kind = _COMPUTED.get(typed.kind)
    if kind is None:
        raise text.unsupported(item, f"a computed {typed.kind} column is not supported in a view (computed INT, "
                                     f"BIGINT, DOUBLE and BOOLEAN columns are)")
    return [(item.alias, typed.sql, kind)]
