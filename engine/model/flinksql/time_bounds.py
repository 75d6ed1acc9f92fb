"""The time bounds of a binary join, found as Flink's IntervalJoinUtil finds them: the window of an interval join.

A time predicate (IntervalJoinUtil.identifyTimePredicate) compares the two
inputs' time attributes, each optionally plus or minus an INTERVAL; a BETWEEN
is Calcite's pair of comparisons. extractWindowBoundsFromPredicate makes an
interval join of a binary join whose ON holds exactly one lower and one
upper bound on `left.t - right.t`, or one equality of the two attributes (a
window of one point, [d, d]); any other mix of time predicates leaves a
regular join over time attributes, which converge does not map.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql.expressions import Scope, interval_ms
from converge.engine.model.flinksql.positions import SourceText
from converge.engine.model.scenario import TimeMode

Bound = tuple[str, int]  # ("lower" | "upper" | "eq", ms) on left.t - right.t

_OPS: dict[type[exp.Expr], tuple[int, str]] = {exp.GTE: (0, "lower"), exp.GT: (1, "lower"), exp.LTE: (0, "upper"),
                                               exp.LT: (-1, "upper"), exp.EQ: (0, "eq")}


@dataclass(frozen=True)
class TimeAttributes:
    """The inputs in scope and each one's time attribute (`time_of(alias)`, None where it has none)."""

    scope: Scope
    time_of: Callable[[str], str | None]
    text: SourceText

    def ref(self, node: exp.Expr) -> tuple[str, int] | None:
        """(alias, offset ms) of `x.t`, `x.t + INTERVAL ...`, `x.t - INTERVAL ...` with t x's time attribute
        (its rowtime, or its processing-time attribute: `kind` tells which)."""
        offset = 0
        if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
            ms = interval_ms(node.expression, self.text)
            offset = ms if isinstance(node, exp.Add) else -ms
            node = node.this
        while isinstance(node, exp.Paren):
            node = node.this
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return None
        proc = self.scope.proctime_of(node)
        if proc is not None:
            return proc, offset
        try:
            alias, column, _ = self.scope.resolve(node)
        except (BadInputError, UnsupportedError):
            return None
        if self.time_of(alias) != column:
            return None
        return alias, offset

    def kind(self, node: exp.Expr) -> TimeMode:
        """Whether a time reference (`ref` found one) names a processing-time attribute or a rowtime."""
        while isinstance(node, (exp.Add, exp.Sub, exp.Paren)):
            node = node.this
        return "processing" if isinstance(node, exp.Column) and self.scope.proctime_of(node) is not None else "event"

    def bounds(self, c: exp.Expr, left: str, right: str) -> list[Bound] | None:
        """The bounds conjunct `c` puts on left.t - right.t, or None when it is no time predicate."""
        if isinstance(c, exp.Between):  # Calcite expands it into its two comparisons
            x, lo, hi = self.ref(c.this), self.ref(c.args["low"]), self.ref(c.args["high"])
            if x is None or lo is None or hi is None or x[1] != 0 or lo[0] != hi[0] or lo[0] == x[0]:
                return None
            if x[0] == left:
                return [("lower", lo[1]), ("upper", hi[1])]
            return [("lower", -hi[1]), ("upper", -lo[1])]
        if type(c) not in _OPS:
            return None
        a, b = self.ref(c.this), self.ref(c.expression)
        if a is None or b is None or a[0] == b[0]:
            return None
        strict, kind = _OPS[type(c)]
        # a.t + oa OP b.t + ob  ->  (a.t - b.t) OP ob - oa
        bound = b[1] - a[1]
        if a[0] != left:  # right.t + oa OP left.t + ob  ->  (left.t - right.t) flipped OP oa - ob
            bound = -bound
            kind = {"upper": "lower", "lower": "upper", "eq": "eq"}[kind]
            strict = -strict
        return [(kind, bound + strict)]

    def is_bound(self, c: exp.Expr) -> bool:
        """A comparison (or BETWEEN) of two inputs' time attributes."""
        if isinstance(c, exp.Between):
            return self.ref(c.this) is not None and self.ref(c.args["low"]) is not None
        if type(c) in _OPS:
            a, b = self.ref(c.this), self.ref(c.expression)
            return a is not None and b is not None and a[0] != b[0]
        return False

    def window(self, parts: list[exp.Expr], left: str, right: str,
               on: exp.Expr) -> tuple[tuple[tuple[int, int], TimeMode] | None, list[exp.Expr]]:
        """(((lower, upper), event or processing time) or None, the other conjuncts) of a binary join's ON: the
        time-bound conjuncts taken out where they make a window (IntervalJoinUtil.extractWindowBoundsFromPredicate);
        unsupported where they are time predicates that make none."""
        found: list[Bound] = []
        times: set[TimeMode] = set()
        rest = []
        for c in parts:
            bounds = self.bounds(c, left, right)
            if bounds is None:
                rest.append(c)
            else:
                found += bounds
                times |= {self.kind(n) for n in c.iter_expressions()}
        if not found:
            return None, parts
        if len(times) != 1:
            raise self.text.unsupported(on, "these time conditions compare a processing-time attribute with a rowtime: "
                                            "Flink's interval join takes two attributes of one kind (IntervalJoinUtil)")
        [time] = times
        kinds = sorted(k for k, _ in found)
        if kinds == ["eq"]:
            return ((found[0][1], found[0][1]), time), rest
        if kinds == ["lower", "upper"]:
            lower, upper = (dict(found)[k] for k in ("lower", "upper"))
            return ((lower, upper), time), rest
        raise self.text.unsupported(on, "these time conditions are not one equality of the two time attributes nor "
                                        "one lower and one upper bound: Flink plans a regular join over time "
                                        "attributes then (IntervalJoinUtil), which converge does not map; give both "
                                        "bounds once (BETWEEN ... AND ...) or one equality")


__all__ = ["Bound", "TimeAttributes"]
