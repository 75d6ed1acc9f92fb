"""Comma joins (`FROM a, b WHERE a.k = b.k AND ...`) read as the inner joins Flink plans of them.

Calcite parses `FROM a, b JOIN c ON ...` as `a , (b JOIN c ON ...)`: a comma
binds looser than JOIN, so the ON of an explicit join names only the tables
since the last comma (the validator refuses anything else: bad input here).
The FROM list is a cross product filtered by WHERE; Flink's planner
(FlinkFilterJoinRule, Calcite's FilterJoinRule) pushes each WHERE conjunct
into the join below it where all the tables it names meet, so a comma join
becomes an INNER join on those conjuncts (and a time bound among them makes
it an interval join, as in an ON). The same answer as converge's left-deep
chain: an inner join's condition is a filter on the cross product of its two
sides, and a filter on the left side's columns commutes with a later INNER or
LEFT join (every left row survives those), not with a later RIGHT or FULL
join (its padded rows would be filtered): a conjunct that would have to cross
one stays a filter on the join's output. A conjunct whose last table is
joined by an explicit JOIN after the last comma stays a filter too (moving it
into that JOIN's ON would change an outer join's meaning). EXISTS / IN
conjuncts are left where they are (they are SEMI/ANTI steps).

The rewritten SELECT keeps the user's own nodes (their positions in the file),
so refusals still name the clause as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from converge.engine.model.flinksql.positions import SourceText

# words of a join that sqlglot reads as a table's name after a stray comma (`FROM a, LEFT JOIN b ...`)
_JOIN_WORDS = frozenset({"LEFT", "RIGHT", "FULL", "INNER", "OUTER", "CROSS", "NATURAL", "JOIN", "ON", "WHERE"})


def stray_keyword(node: exp.Expr) -> bool:
    """A table reference that is an unquoted join keyword: the mark of a stray comma before it."""
    ident = node.this if isinstance(node, exp.Table) else None
    return isinstance(ident, exp.Identifier) and not ident.quoted and ident.name.upper() in _JOIN_WORDS


def is_comma(join: exp.Join) -> bool:
    """A comma in the FROM list: a join with no keyword, no condition, no USING."""
    return not any(join.args.get(k) for k in ("on", "using", "side", "kind", "method"))


def _alias_of(node: exp.Expr) -> str | None:
    """The (casefolded) name a FROM item is known by: a table's alias or name, a derived table's alias."""
    return node.alias_or_name.casefold() if isinstance(node, (exp.Table, exp.Subquery)) and node.alias_or_name \
        else None


def _aliases_named(conj: exp.Expr, columns: Mapping[str, set[str]]) -> set[str] | None:
    """The (casefolded) aliases a conjunct names; None where a name does not resolve to exactly one of them
    (the condition renderer refuses it with its position later)."""
    out: set[str] = set()
    for col in conj.find_all(exp.Column):
        if isinstance(col.this, exp.Star):
            return None
        if col.table:
            if col.table.casefold() not in columns:
                return None
            out.add(col.table.casefold())
            continue
        owners = [a for a, cols in columns.items() if col.name.casefold() in cols]
        if len(owners) != 1:
            return None
        out.add(owners[0])
    return out


def _is_subquery(conj: exp.Expr) -> bool:
    return any(isinstance(n, (exp.Exists, exp.Subquery, exp.Select)) for n in conj.walk())


def conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The AND-ed parts of a condition, parentheses around them dropped (the reader's and the WHERE's)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def _and(parts: Sequence[exp.Expr]) -> exp.Expr:
    out = parts[0]
    for p in parts[1:]:
        out = exp.And(this=out, expression=p)
    return out


def comma_scope_problem(node: exp.Select) -> exp.Expr | None:
    """The first explicit join's ON that names a table before the last comma (Calcite's scope: bad input)."""
    joins = node.args.get("joins") or []
    from_ = node.args.get("from_")
    if from_ is None or not any(is_comma(j) for j in joins) or any(stray_keyword(j.this) for j in joins):
        return None  # a stray comma is refused where it is (query.py), not as a scope problem
    seen: list[str] = []
    segment: list[str] = [a for a in [_alias_of(from_.this)] if a]
    for join in joins:
        alias = _alias_of(join.this)
        if is_comma(join):
            seen += segment
            segment = [alias] if alias else []
            continue
        if alias:
            segment.append(alias)
        on = join.args.get("on")
        if on is None:
            continue
        for col in on.find_all(exp.Column):
            if col.table and col.table.casefold() in seen and col.table.casefold() not in segment:
                return col
    return None


def attach_where(node: exp.Select, columns: Mapping[str, set[str]], text: SourceText) -> tuple[exp.Select, list[str]]:
    """A copy of the SELECT with each comma join given the WHERE conjuncts Flink pushes into it as its ON, and
    the notes that say so (empty when the FROM list has no comma). `columns`: alias -> its column names, both
    casefolded."""
    joins = node.args.get("joins") or []
    if not any(is_comma(j) for j in joins):
        return node, []
    out = node.copy()
    joins = out.args["joins"]
    order = [_alias_of(out.args["from_"].this)] + [_alias_of(j.this) for j in joins]
    types = ["inner"] + ["comma" if is_comma(j) else (j.side or "inner").lower() for j in joins]
    where = out.args.get("where")
    kept: list[exp.Expr] = []
    placed: dict[int, list[exp.Expr]] = {}
    for conj in conjuncts(where.this) if where is not None else []:
        named = None if _is_subquery(conj) else _aliases_named(conj, columns)
        step = _step_for(named, order, types) if named is not None else None
        if step is None:
            kept.append(conj)
        else:
            placed.setdefault(step, []).append(conj)
    notes = []
    for i, join in enumerate(joins, 1):
        if types[i] != "comma":
            continue
        parts = placed.get(i, [])
        join.set("on", _and(parts) if parts else exp.Boolean(this=True))
        where_ = ", ".join(text.where(p).removeprefix(text.path + ":") for p in parts)
        notes.append(f"comma join of {order[i]}: an INNER JOIN "
                     + (f"whose ON is the WHERE conjunct{'s' if len(parts) > 1 else ''} at {where_} (Flink pushes "
                        f"{'them' if len(parts) > 1 else 'it'} into the join)"
                        if parts else "ON TRUE (no WHERE conjunct relates it: a cross join)"))
    if where is not None:
        if kept:
            where.set("this", _and(kept))
        else:
            out.set("where", None)
    return out, notes


_TIME_CMP = (exp.Between, exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def push_time_bounds(node: exp.Select, times: Mapping[str, str], text: SourceText) -> tuple[exp.Select, list[str]]:
    """A binary INNER JOIN with its WHERE time bounds moved into its ON, as Flink's filter push-down does before
    IntervalJoinUtil looks for the window (`a JOIN b ON a.k = b.k WHERE a.t BETWEEN b.t - ... AND b.t` is an
    interval join in Flink, not a regular join filtered afterwards). A time bound: a comparison or BETWEEN whose
    columns are all time attributes (`times`: alias -> its rowtime column, casefolded) of two inputs."""
    joins = node.args.get("joins") or []
    where = node.args.get("where")
    if len(joins) != 1 or where is None or is_comma(joins[0]) or joins[0].args.get("on") is None \
            or joins[0].side or (joins[0].kind or "INNER").upper() != "INNER":
        return node, []
    moved, kept = [], []
    for conj in conjuncts(where.this):
        cols = list(conj.find_all(exp.Column)) if isinstance(conj, _TIME_CMP) else []
        named = {c.table.casefold() for c in cols if c.table}
        if cols and len(named) == 2 and all(c.table and times.get(c.table.casefold()) == c.name.casefold()
                                            for c in cols):
            moved.append(conj)
        else:
            kept.append(conj)
    if not moved:
        return node, []
    out = node.copy()
    join = out.args["joins"][0]
    join.set("on", _and([join.args["on"], *moved]))
    if kept:
        out.args["where"].set("this", _and(kept))
    else:
        out.set("where", None)
    where_ = ", ".join(text.where(p).removeprefix(text.path + ":") for p in moved)
    return out, [f"the WHERE time bound{'s' if len(moved) > 1 else ''} at {where_}: part of the INNER JOIN's "
                 f"condition (Flink pushes {'them' if len(moved) > 1 else 'it'} into the join, which makes it an "
                 f"interval join)"]


def _step_for(named: set[str], order: Sequence[str | None], types: Sequence[str]) -> int | None:
    """The comma step a conjunct naming `named` moves into: the first comma at or after the step where its last
    table joins, with no RIGHT or FULL join after it; None: it stays a filter on the output."""
    positions = [order.index(a) for a in named if a in order]
    if len(positions) != len(named):
        return None
    last = max(positions, default=0)
    for i in range(max(last, 1), len(order)):
        if types[i] == "comma":
            if any(t in ("right", "full") for t in types[i + 1:]):
                return None
            return i
    return None


__all__ = ["attach_where", "comma_scope_problem", "is_comma", "push_time_bounds", "stray_keyword"]
