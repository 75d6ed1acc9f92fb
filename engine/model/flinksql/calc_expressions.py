"""CASE, IF and CAST in a Calc's expressions (a view's or derived table's SELECT list and WHERE, a computed column).

Flink's planner puts these into the Calc in front of the join (StreamExecCalc);
the scenario format holds them as DuckDB SQL that the engine's Calc
(engine/calc.py, engine/condition_case.py) and the oracle both run. The join's
conditions and the query's own SELECT list keep the plain subset
(expressions.py). Typing follows Flink where DuckDB would differ:

* `CASE WHEN c THEN a ... [ELSE d] END`, `CASE x WHEN v THEN a ... END` and
  `IF(c, a, b)`: the branches are one kind (NULL fits any), or INT, BIGINT and
  DOUBLE mixed, which Flink widens to the widest (its least restrictive type);
  no ELSE is ELSE NULL in both. String branches are refused: Flink types
  string literals as CHAR(n) and pads the shorter ones to the longest.
* `CAST(x AS INT | BIGINT | DOUBLE)` widening only (INT to BIGINT, INT or
  BIGINT to DOUBLE, or to its own type). A narrowing cast is refused: Flink
  truncates DOUBLE to INT (Java's conversion) where DuckDB rounds, and an
  overflowing BIGINT to INT wraps in Flink where DuckDB fails.
"""

from __future__ import annotations

from sqlglot import exp

from converge.engine.model.flinksql.expressions import Renderer, Typed

__all__ = ["CalcRenderer"]

_WIDTH = {"int": 0, "bigint": 1, "double": 2}
_CASTS = {exp.DataType.Type.INT: ("int", "INTEGER"), exp.DataType.Type.BIGINT: ("bigint", "BIGINT"),
          exp.DataType.Type.DOUBLE: ("double", "DOUBLE")}
_BRANCH_KINDS = ("int", "bigint", "double", "boolean")


class CalcRenderer(Renderer):
    """The expression subset of a Calc: the plain subset, with CASE, IF and widening CASTs."""

    def render(self, node: exp.Expr) -> Typed:
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If) and not isinstance(node.parent, exp.Case):
            cond, true, false = node.this, node.args["true"], node.args.get("false")
            branches = [self.render(true)] + ([self.render(false)] if false is not None else [])
            kind = self._common(node, branches)
            sql = f"(CASE WHEN {self.boolean(cond)} THEN {branches[0].sql} ELSE " \
                  f"{branches[1].sql if len(branches) > 1 else 'NULL'} END)"
            return Typed(sql, kind)
        if isinstance(node, exp.Cast) and not (isinstance(node.this, exp.Literal) and node.this.is_string):
            return self._cast(node)
        return super().render(node)

    def _case(self, node: exp.Case) -> Typed:
        parts, values = [], []
        for branch in node.args.get("ifs") or ():
            cond = branch.this if node.this is None else exp.EQ(this=node.this.copy(), expression=branch.this.copy())
            value = self.render(branch.args["true"])
            parts.append(f"WHEN {self.boolean(cond)} THEN {value.sql}")
            values.append(value)
        default = node.args.get("default")
        if default is not None:
            values.append(self.render(default))
        kind = self._common(node, values)
        return Typed(f"(CASE {' '.join(parts)} ELSE {values[-1].sql if default is not None else 'NULL'} END)", kind)

    def _common(self, node: exp.Expr, branches: list[Typed]) -> str:
        """The one kind of a CASE's values, as Flink types it (numeric kinds widen)."""
        kinds = {b.kind for b in branches} - {"null"}
        if not kinds:
            raise self.text.error(node, "every branch is NULL: Flink cannot type it (CAST one of them)")
        if not kinds <= set(_BRANCH_KINDS):
            raise self.text.unsupported(node, f"a CASE / IF of {', '.join(sorted(kinds)).upper()} values: converge "
                                              f"computes INT, BIGINT, DOUBLE and BOOLEAN branches (string literals "
                                              f"of different lengths are CHAR(n) in Flink, padded to the longest)")
        if len(kinds) == 1:
            return kinds.pop()
        if kinds <= set(_WIDTH):
            return max(kinds, key=_WIDTH.__getitem__)
        raise self.text.error(node, f"the branches are {' and '.join(sorted(kinds)).upper()} values, which Flink "
                                    f"does not bring to one type")

    def _cast(self, node: exp.Cast) -> Typed:
        target = _CASTS.get(node.to.this)
        value = self.render(node.this)
        if target is None or node.to.expressions:
            raise self.text.unsupported(node, f"CAST to {node.to.sql()} is not supported in a view: converge casts "
                                              f"to INT, BIGINT and DOUBLE (widening)")
        kind, sql_type = target
        if value.kind != "null" and (value.kind not in _WIDTH or _WIDTH[value.kind] > _WIDTH[kind]):
            raise self.text.unsupported(node, f"CAST of a {value.kind.upper()} value to {kind.upper()}: converge "
                                              f"models widening casts only (Flink truncates and wraps where DuckDB "
                                              f"rounds and fails)")
        return Typed(f"CAST({value.sql} AS {sql_type})", kind)
