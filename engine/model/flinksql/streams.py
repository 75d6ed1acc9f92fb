"""One table read in several places (a self-join, EXISTS / IN subqueries over one table) as one stream.

Flink plans each use of the table as its own scan and then reuses one scan for
all of them (`table.optimizer.reuse-source-enabled`, on by default): each
record and watermark of the table reaches every input that reads it. converge
says so with `inputs[].source` (docs/scenario-format.md "One source, several
inputs"): the table is one stream input, not in the join chain, that its
readers name; the events are written on it.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from sqlglot import exp

__all__ = ["shared_streams", "unshadow"]


def shared_streams(aliases: Sequence[tuple[str, str]]) -> dict[str, str]:
    """table -> the name of its stream input, for each table the query reads in several places: the table's name,
    unless an alias (or a table's stream) already has it (SQL names compare case-insensitively)."""
    readers: dict[str, int] = {}
    for _, t in aliases:
        readers[t] = readers.get(t, 0) + 1
    taken = {a.casefold() for a, _ in aliases}
    out: dict[str, str] = {}
    for t, n in readers.items():
        if n < 2:
            continue
        base = t if t.isidentifier() else "source"
        name, i = base, 1
        while name.casefold() in taken:
            name, i = f"{base}_{i}", i + 1
        taken.add(name.casefold())
        out[t] = name
    return out


def unshadow(sub: exp.Select, taken: Set[str]) -> None:
    """A subquery's table named like an outer input (`taken`, casefolded) shadows it (SQL resolves a name in the
    innermost query first, `EXISTS (SELECT * FROM t ...)` under `FROM t`): the subquery's input gets a fresh alias
    `t_1`, and its own references to the name follow it."""
    node = sub.args["from_"].this
    if not isinstance(node, exp.Table) or node.alias_or_name.casefold() not in taken:
        return
    old, n = node.alias_or_name, 1
    while f"{old}_{n}".casefold() in taken:
        n += 1
    new = f"{old}_{n}"
    for col in sub.find_all(exp.Column):
        if col.table and col.table.casefold() == old.casefold():
            col.set("table", exp.to_identifier(new))
    node.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
