"""`converge run -k EXPR`: choose properties (embedded or system ones) by their `family/property` names, as
pytest's `-k` chooses tests.

EXPR is made of words, `and`, `or`, `not` and parentheses; a word selects every
name it is a substring of (case-insensitive), so `-k "regular and not ttl"`
runs the regular family's properties whose names lack "ttl". The grammar is a
dozen lines written here: Python's own parser (`ast`) would read `a-b` or
`regular/final` as arithmetic and a bare `5` as a number, and no stdlib module
parses boolean keyword expressions over free-form words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from converge.engine.model.errors import UsageError

__all__ = ["Matcher", "compile_keyword", "select_names"]

Matcher = Callable[[str], bool]
_TOKEN = re.compile(r"\s*(?:(\()|(\))|([^\s()]+))")
_OPERATORS = ("and", "or", "not")


def _tokens(expr: str) -> list[tuple[str, int]]:
    """(token, position from 1) pairs; a word is anything but blanks and parentheses."""
    out, at = [], 0
    while at < len(expr):
        m = _TOKEN.match(expr, at)
        if m is None:  # only blanks are left
            break
        token = m.group(1) or m.group(2) or m.group(3)
        out.append((token, m.start(m.lastindex or 0) + 1))
        at = m.end()
    return out


def compile_keyword(expr: str) -> Matcher:
    """The -k expression as a test on one `family/property` name; a malformed one is a UsageError naming the
    position (from 1) where it goes wrong."""
    tokens = _tokens(expr)
    pos = [0]

    def fail(what: str) -> UsageError:
        where = tokens[pos[0]][1] if pos[0] < len(tokens) else len(expr) + 1
        return UsageError(f"-k {expr!r}: {what} at position {where}")

    def peek() -> str | None:
        return tokens[pos[0]][0] if pos[0] < len(tokens) else None

    def disjunction() -> Matcher:
        left = conjunction()
        while peek() == "or":
            pos[0] += 1
            right = conjunction()
            left = (lambda a, b: lambda name: a(name) or b(name))(left, right)
        return left

    def conjunction() -> Matcher:
        left = negation()
        while peek() == "and":
            pos[0] += 1
            right = negation()
            left = (lambda a, b: lambda name: a(name) and b(name))(left, right)
        return left

    def negation() -> Matcher:
        if peek() == "not":
            pos[0] += 1
            inner = negation()
            return lambda name: not inner(name)
        return atom()

    def atom() -> Matcher:
        token = peek()
        if token is None:
            raise fail("expected a name, 'not' or '(' but the expression ended")
        if token == "(":
            pos[0] += 1
            inner = disjunction()
            if peek() != ")":
                raise fail("expected ')'")
            pos[0] += 1
            return inner
        if token == ")" or token in _OPERATORS:
            raise fail(f"expected a name, 'not' or '(' but got {token!r}")
        pos[0] += 1
        word = token.lower()
        return lambda name: word in name.lower()

    if not tokens:
        raise UsageError(f"-k {expr!r}: the expression is empty")
    matcher = disjunction()
    if pos[0] < len(tokens):
        raise fail(f"expected 'and', 'or' or the end but got {tokens[pos[0]][0]!r}")
    return matcher


def select_names(expr: str, names: Sequence[str]) -> list[str]:
    """The `family/property` names EXPR selects, in their order; none selected is a UsageError (a campaign of
    nothing would pass without checking anything)."""
    matcher = compile_keyword(expr)
    chosen = [n for n in names if matcher(n)]
    if not chosen:
        raise UsageError(f"-k {expr!r} selects no property (the {len(names)} properties are named family/property, "
                         f"e.g. {', '.join(names[:3])})")
    return chosen


def narrow(names: Sequence[str], *, keyword: str | None = None, only: Sequence[str] | None = None) -> list[str]:
    """The campaign's property names after `--last-failed` (`only`) and `-k` (`keyword`), in their order; a
    choice that leaves nothing is a UsageError, never an empty campaign."""
    chosen = list(names)
    if only is not None:
        chosen = [n for n in chosen if n in set(only)]
        if not chosen:
            raise UsageError(f"--last-failed: none of the properties that failed last time ({', '.join(only)}) is "
                             f"a property of this campaign")
    if keyword is not None:
        chosen = select_names(keyword, chosen)
    return chosen
