"""Join conditions in converge's DuckDB-SQL subset, rewritten as Flink SQL over the adapter's column names.

Standard library only: the Flink adapter runs this in the Flink environment, which has no
converge, DuckDB or sqlglot. The subset is engine/condition.py's: column references, literals,
+ - * / // %, ||, abs, length, lower, upper, COALESCE, CAST, comparisons, AND/OR/NOT,
BETWEEN, IN, IS [NOT] NULL, IS [NOT] DISTINCT FROM. The output is fully parenthesized, so
Flink's operator precedence never matters. Where Flink's meaning differs from DuckDB's and
the difference can show in a join result, the condition is refused with `Untranslatable`:
DOUBLE `%`, casts that round or format differently (DOUBLE to an integer, DOUBLE or BOOLEAN
to text, text to BOOLEAN), narrowing integer casts and TRY_CAST.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

INTEGERS = ("INTEGER", "BIGINT")
FLINK_TYPES = {"BIGINT": "BIGINT", "INTEGER": "INT", "DOUBLE": "DOUBLE", "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN"}
_TYPE_NAMES = {
    **dict.fromkeys(("INTEGER", "INT", "INT4", "INT32", "SIGNED"), "INTEGER"),
    **dict.fromkeys(("BIGINT", "INT8", "INT64", "LONG"), "BIGINT"),
    **dict.fromkeys(("DOUBLE", "FLOAT8"), "DOUBLE"),
    **dict.fromkeys(("VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR"), "VARCHAR"),
    **dict.fromkeys(("BOOLEAN", "BOOL", "LOGICAL"), "BOOLEAN"),
}
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<str>'(?:[^']|'')*')
  | (?P<qid>"(?:[^"]|"")+")
  | (?P<id>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<op>::|//|\|\||<=|>=|<>|!=|==|[-+*/%=<>(),.])
""", re.VERBOSE)
_CMP = {"=": "=", "==": "=", "<>": "<>", "!=": "<>", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_FUNCTIONS = {"abs": "ABS", "length": "CHAR_LENGTH", "lower": "LOWER", "upper": "UPPER"}


class Untranslatable(Exception):
    """The condition is outside what this translator can give Flink with DuckDB's meaning."""


@dataclass(frozen=True)
class Column:
    """One visible input column: the name converge uses and the name the Flink query uses."""

    input: str
    name: str
    flink_name: str
    type: str


@dataclass(frozen=True)
class Expr:
    sql: str
    type: str  # a converge column type, or "NULL" for an untyped NULL


def tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise Untranslatable(f"cannot read {text[pos:pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind == "ws":
            continue
        value = m.group()
        if kind == "id":
            out.append(("id", value))
        elif kind == "qid":
            out.append(("qid", value[1:-1].replace('""', '"')))
        else:
            out.append((kind, value))
    out.append(("end", ""))
    return out


class _Parser:
    """Recursive descent with PostgreSQL's (and so DuckDB's) precedence, typing as it goes."""

    def __init__(self, text: str, columns: Sequence[Column]) -> None:
        self.toks = tokens(text)
        self.i = 0
        self.columns = columns

    # ---- token helpers
    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def keyword(self, *words: str) -> bool:
        kind, value = self.peek()
        return kind == "id" and value.upper() in words

    def take_keyword(self, word: str) -> bool:
        if self.keyword(word):
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        kind, got = self.peek()
        if got.upper() != value or kind in ("str", "qid"):
            raise Untranslatable(f"expected {value!r}, found {got!r}")
        self.i += 1

    def op(self, *ops: str) -> str | None:
        kind, value = self.peek()
        if kind == "op" and value in ops:
            self.i += 1
            return value
        return None

    # ---- grammar, lowest precedence first
    def parse(self) -> Expr:
        e = self.disjunction()
        if self.peek()[0] != "end":
            raise Untranslatable(f"unexpected {self.peek()[1]!r}")
        return self.boolean(e)

    def boolean(self, e: Expr) -> Expr:
        if e.type == "NULL":
            return Expr("CAST(NULL AS BOOLEAN)", "BOOLEAN")
        if e.type != "BOOLEAN":
            raise Untranslatable(f"{e.sql} is {e.type}, not BOOLEAN")
        return e

    def disjunction(self) -> Expr:
        e = self.conjunction()
        while self.take_keyword("OR"):
            e = Expr(f"({self.boolean(e).sql} OR {self.boolean(self.conjunction()).sql})", "BOOLEAN")
        return e

    def conjunction(self) -> Expr:
        e = self.negation()
        while self.take_keyword("AND"):
            e = Expr(f"({self.boolean(e).sql} AND {self.boolean(self.negation()).sql})", "BOOLEAN")
        return e

    def negation(self) -> Expr:
        if self.take_keyword("NOT"):
            return Expr(f"(NOT {self.boolean(self.negation()).sql})", "BOOLEAN")
        return self.is_test()

    def is_test(self) -> Expr:
        e = self.comparison()
        while self.take_keyword("IS"):
            negated = self.take_keyword("NOT")
            if self.take_keyword("NULL"):
                e = Expr(f"({self.typed(e).sql} IS {'NOT ' if negated else ''}NULL)", "BOOLEAN")
            elif self.take_keyword("DISTINCT"):
                self.expect("FROM")
                left, right = self.unify(e, self.comparison(), "IS DISTINCT FROM")
                e = Expr(f"({left.sql} IS {'NOT ' if negated else ''}DISTINCT FROM {right.sql})", "BOOLEAN")
            else:
                raise Untranslatable(f"IS {self.peek()[1]!r} is not supported")
        return e

    def comparison(self) -> Expr:
        e = self.between_in()
        op = self.op(*_CMP)
        if op is None:
            return e
        left, right = self.unify(e, self.between_in(), op)
        return Expr(f"({left.sql} {_CMP[op]} {right.sql})", "BOOLEAN")

    def between_in(self) -> Expr:
        e = self.concat()
        negated = self.keyword("NOT") and self.peek(1)[0] == "id" and self.peek(1)[1].upper() in ("BETWEEN", "IN")
        if negated:
            self.i += 1
        if self.take_keyword("BETWEEN"):
            lo = self.concat()
            self.expect("AND")
            hi = self.concat()
            x1, lo = self.unify(e, lo, "BETWEEN")
            x2, hi = self.unify(e, hi, "BETWEEN")
            test = f"({x1.sql} >= {lo.sql} AND {x2.sql} <= {hi.sql})"
        elif self.take_keyword("IN"):
            self.expect("(")
            items = [self.disjunction()]
            while self.op(","):
                items.append(self.disjunction())
            self.expect(")")
            parts = []
            for item in items:
                x, y = self.unify(e, item, "IN")
                parts.append(f"{x.sql} = {y.sql}")
            test = "(" + " OR ".join(parts) + ")"
        else:
            return e
        return Expr(f"(NOT {test})" if negated else test, "BOOLEAN")

    def concat(self) -> Expr:
        e = self.additive()
        while self.op("||"):
            right = self.additive()
            if {e.type, right.type} - {"VARCHAR", "NULL"}:
                raise Untranslatable(f"|| needs text, got {e.type} and {right.type}")
            e = Expr(f"({self.typed(e, 'VARCHAR').sql} || {self.typed(right, 'VARCHAR').sql})", "VARCHAR")
        return e

    def additive(self) -> Expr:
        e = self.multiplicative()
        while (op := self.op("+", "-")) is not None:
            e = self.arithmetic(op, e, self.multiplicative())
        return e

    def multiplicative(self) -> Expr:
        e = self.unary()
        while (op := self.op("*", "/", "//", "%")) is not None:
            e = self.arithmetic(op, e, self.unary())
        return e

    def unary(self) -> Expr:
        if (op := self.op("-", "+")) is not None:
            e = self.unary()
            self.numeric(e, op)
            return e if op == "+" else Expr(f"(- {self.typed(e, 'INTEGER').sql})", e.type)
        return self.postfix()

    def postfix(self) -> Expr:
        e = self.primary()
        while self.op("::"):
            e = self.cast(e, self.type_name())
        return e

    def primary(self) -> Expr:
        kind, value = self.peek()
        if kind == "num":
            self.i += 1
            if re.fullmatch(r"\d+", value):
                n = int(value)
                if n >= 2**63:
                    raise Untranslatable(f"integer literal {value} is out of BIGINT's range")
                return Expr(value, "INTEGER" if n < 2**31 else "BIGINT")
            if "e" in value.lower():
                return Expr(f"CAST({value} AS DOUBLE)", "DOUBLE")
            return Expr(value, "DOUBLE")  # a DECIMAL literal in both DuckDB and Flink
        if kind == "str":
            self.i += 1
            return Expr(value, "VARCHAR")
        if kind == "op" and value == "(":
            self.i += 1
            e = self.disjunction()
            self.expect(")")
            return e
        if kind == "id" and value.upper() in ("TRUE", "FALSE"):
            self.i += 1
            return Expr(value.upper(), "BOOLEAN")
        if kind == "id" and value.upper() == "NULL":
            self.i += 1
            return Expr("NULL", "NULL")
        if kind == "id" and value.upper() in ("CAST", "TRY_CAST") and self.peek(1) == ("op", "("):
            if value.upper() == "TRY_CAST":
                raise Untranslatable("TRY_CAST has no Flink equivalent with DuckDB's meaning")
            self.i += 2
            e = self.disjunction()
            self.expect("AS")
            target = self.type_name()
            self.expect(")")
            return self.cast(e, target)
        if kind == "id" and self.peek(1) == ("op", "("):
            return self.function(value.lower())
        if kind in ("id", "qid"):
            return self.column()
        raise Untranslatable(f"unexpected {value!r}")

    def column(self) -> Expr:
        parts = [self.peek()[1]]
        self.i += 1
        while self.peek() == ("op", ".") and self.peek(1)[0] in ("id", "qid"):
            parts.append(self.peek(1)[1])
            self.i += 2
        if len(parts) > 2:
            raise Untranslatable(f"column reference {'.'.join(parts)!r} has too many parts")
        folded = [p.casefold() for p in parts]
        hits = [c for c in self.columns if c.name.casefold() == folded[-1]
                and (len(parts) == 1 or c.input.casefold() == folded[0])]
        if len(hits) != 1:
            raise Untranslatable(f"{'ambiguous' if hits else 'unknown'} column {'.'.join(parts)!r}")
        return Expr(hits[0].flink_name, hits[0].type)

    def function(self, name: str) -> Expr:
        self.i += 2
        args = [self.disjunction()]
        while self.op(","):
            args.append(self.disjunction())
        self.expect(")")
        if name == "coalesce":
            typed = self.common(args, "COALESCE")
            return Expr("COALESCE(" + ", ".join(a.sql for a in typed) + ")", typed[0].type)
        if name not in _FUNCTIONS or len(args) != 1:
            raise Untranslatable(f"function {name}({len(args)} arguments) is not supported")
        arg = args[0]
        if name == "abs":
            self.numeric(arg, name)
            return Expr(f"ABS({self.typed(arg, 'INTEGER').sql})", "INTEGER" if arg.type == "NULL" else arg.type)
        if arg.type not in ("VARCHAR", "NULL"):
            raise Untranslatable(f"{name} needs text, got {arg.type}")
        return Expr(f"{_FUNCTIONS[name]}({self.typed(arg, 'VARCHAR').sql})",
                    "BIGINT" if name == "length" else "VARCHAR")

    def type_name(self) -> str:
        kind, value = self.peek()
        if kind != "id" or value.upper() not in _TYPE_NAMES:
            raise Untranslatable(f"type {value!r} is not supported")
        self.i += 1
        return _TYPE_NAMES[value.upper()]

    # ---- typing
    def typed(self, e: Expr, default: str = "INTEGER") -> Expr:
        """An untyped NULL gets a type (Flink refuses a bare NULL in most places)."""
        return Expr(f"CAST(NULL AS {FLINK_TYPES[default]})", default) if e.type == "NULL" else e

    def numeric(self, e: Expr, what: str) -> None:
        if e.type not in ("INTEGER", "BIGINT", "DOUBLE", "NULL"):
            raise Untranslatable(f"{what} needs numbers, got {e.type}")

    def unify(self, a: Expr, b: Expr, what: str) -> tuple[Expr, Expr]:
        typed = self.common([a, b], what)
        return typed[0], typed[1]

    def common(self, values: Sequence[Expr], what: str) -> list[Expr]:
        types = {v.type for v in values} - {"NULL"}
        numbers = {"INTEGER", "BIGINT", "DOUBLE"}
        if len(types) > 1 and not types <= numbers:
            raise Untranslatable(f"{what} mixes {' and '.join(sorted(types))}")
        target = "DOUBLE" if "DOUBLE" in types else "BIGINT" if "BIGINT" in types else (
            next(iter(types)) if types else "INTEGER")
        return [self.typed(v, target) for v in values]

    def arithmetic(self, op: str, a: Expr, b: Expr) -> Expr:
        self.numeric(a, op)
        self.numeric(b, op)
        types = {a.type, b.type}
        a, b = self.typed(a), self.typed(b)
        if op == "/" or (op == "//" and "DOUBLE" in types):  # DuckDB's / always divides as DOUBLE
            return Expr(f"(CAST({a.sql} AS DOUBLE) / CAST({b.sql} AS DOUBLE))", "DOUBLE")
        rtype = "DOUBLE" if "DOUBLE" in types else "BIGINT" if "BIGINT" in types else "INTEGER"
        if op == "//":  # both integers: Java's division truncates, as DuckDB's // does
            return Expr(f"({a.sql} / {b.sql})", rtype)
        if op == "%":
            if rtype == "DOUBLE":
                raise Untranslatable("DOUBLE % has no Flink equivalent")
            return Expr(f"MOD({a.sql}, {b.sql})", rtype)
        return Expr(f"({a.sql} {op} {b.sql})", rtype)

    def cast(self, e: Expr, target: str) -> Expr:
        source = e.type
        allowed = (source in ("NULL", target)
                   or (source == "INTEGER" and target in ("BIGINT", "DOUBLE", "VARCHAR"))
                   or (source == "BIGINT" and target in ("DOUBLE", "VARCHAR"))
                   or (source == "VARCHAR" and target in ("INTEGER", "BIGINT", "DOUBLE")))
        if not allowed:
            raise Untranslatable(f"CAST({source} AS {target}) differs between DuckDB and Flink")
        return Expr(f"CAST({e.sql} AS {FLINK_TYPES[target]})", target)


def translate(condition: str, columns: Sequence[Column]) -> str:
    """`condition` as a Flink SQL boolean expression over the columns' Flink names; Untranslatable if it cannot be."""
    return _Parser(condition, columns).parse().sql
