"""Where a clause sits in the query file: every refusal is reported as file:line:column."""

from __future__ import annotations

import re
from typing import TypeVar

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError

E = TypeVar("E", BadInputError, UnsupportedError)
LONG_WORD = 80  # a run of text without spaces longer than this is cut when a message echoes it
_LONG = re.compile(rf"\S{{{LONG_WORD + 1},}}")


def clip(text: str, limit: int = LONG_WORD) -> str:
    """`text` cut to `limit` characters with an ellipsis (a 5,000-character identifier is not echoed whole)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip_words(message: str) -> str:
    """Every run of non-space text longer than LONG_WORD in `message` cut with an ellipsis, and every character
    that is not printable (a line break, a vertical tab, U+2028 inside a quoted name) escaped: one line."""
    return one_line(_LONG.sub(lambda m: clip(m.group(0)), message))


def one_line(text: str) -> str:
    """`text` with each non-printable character written as its escape (`\\x0b`), so it prints as one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of character `offset` of `text` (an offset past the end is the end)."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def byte_line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column in characters) of byte `offset` of UTF-8 `data` whose bytes before it decode."""
    before = data[:offset].decode("utf-8-sig", errors="replace")
    return line_col(before, len(before))


def sql_name(node: exp.Expr) -> str:
    """A node's SQL name without the file's text: a function's name, else the node's keyword, upper case."""
    if isinstance(node, exp.Func):
        return node.sql_name().upper()
    return node.key.upper().replace("_", " ")


class SourceText:
    """The query file's text, to turn sqlglot's character offsets into line:column."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path

    def at(self, offset: int) -> str:
        """`file:line:col` of character `offset`."""
        line, col = line_col(self.text, offset)
        return f"{self.path}:{line}:{col}"

    def end(self) -> str:
        """`file:line:col` just after the last non-blank character (where a missing clause would go)."""
        return self.at(len(self.text.rstrip()))

    def where(self, node: exp.Expr | None) -> str:
        """`file:line:col` of the first token of `node` (the start of the file when sqlglot kept no position)."""
        while node is not None:  # a node converge built (no token of its own) is placed by its parent's
            offsets = [n.meta["start"] for n in node.walk() if "start" in n.meta]
            if offsets:
                return self.at(min(offsets))
            node = node.parent
        return self.at(0)

    def written(self, node: exp.Expr) -> str | None:
        """The file's own text of `node`: from its first token to its last, closing the parentheses it opens
        (sqlglot keeps no position of a closing one); None where no token of it has a position."""
        starts = [n.meta["start"] for n in node.walk() if "start" in n.meta]
        ends = [n.meta["end"] for n in node.walk() if "end" in n.meta]
        if not starts or not ends:
            return None
        end = max(ends) + 1
        depth = self.text.count("(", min(starts), end) - self.text.count(")", min(starts), end)
        while depth > 0 and end < len(self.text):
            depth += {"(": 1, ")": -1}.get(self.text[end], 0)
            end += 1
        return " ".join(self.text[min(starts):end].split()) if depth == 0 else None

    def clause(self, node: exp.Expr) -> str:
        """A clause as the message echoes it: as written for a table reference (`FOR SYSTEM_TIME AS OF` stays
        the user's, never sqlglot's `FOR TIMESTAMP AS OF`) and a function call; else sqlglot's SQL of it."""
        if isinstance(node, exp.Table) or (isinstance(node, exp.Func) and "start" in node.meta):
            written = self.written(node)  # a function whose name token is its first (not CASE ... END)
            if written is not None:
                return written
        return " ".join(node.sql().split())

    def name(self, node: exp.Expr) -> str:
        """What a refusal calls a node: a function by its name as written (`UPPER`, not sqlglot's `Upper`),
        anything else by its SQL keyword (CASE, LIKE, ...)."""
        if isinstance(node, exp.Func) and "start" in node.meta and "end" in node.meta:
            return self.text[node.meta["start"]:node.meta["end"] + 1]
        return sql_name(node)

    def located(self, node: exp.Expr | None, message: str) -> str:
        """`message` after the clause's position and its SQL, shortened."""
        clause = ""
        if node is not None:
            clause = f" `{clip(self.clause(node))}`"
        return f"{self.where(node)}:{clause} {clip_words(message)}"

    def error(self, node: exp.Expr | None, message: str) -> BadInputError:
        """A BadInputError naming the clause (its SQL, shortened) and its position."""
        return self._parts(BadInputError(self.located(node, message)), node, message)

    def error_at(self, offset: int, message: str) -> BadInputError:
        """A BadInputError naming character `offset` of the file."""
        return BadInputError(f"{self.at(offset)}: {clip_words(message)}")

    def unsupported(self, node: exp.Expr | None, message: str) -> UnsupportedError:
        """Valid Flink SQL that converge does not map yet, named like `error` names bad input."""
        return self._parts(UnsupportedError(self.located(node, message)), node, message)

    def _parts(self, exc: E, node: exp.Expr | None, message: str) -> E:
        """`exc` with the clause and the reason kept apart (`check --format json` lists them as fields)."""
        exc.clause = clip(self.clause(node)) if node is not None else None  # type: ignore[attr-defined]
        exc.reason = clip_words(message)  # type: ignore[attr-defined]
        return exc
