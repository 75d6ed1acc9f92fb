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

    def located(self, node: exp.Expr | None, message: str) -> str:
        """`message` after the clause's position and its SQL, shortened."""
        clause = ""
        if node is not None:
            sql = " ".join(node.sql().split())
            clause = f" `{clip(sql)}`"
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

    @staticmethod
    def _parts(exc: E, node: exp.Expr | None, message: str) -> E:
        """`exc` with the clause and the reason kept apart (`check --format json` lists them as fields)."""
        exc.clause = clip(" ".join(node.sql().split())) if node is not None else None  # type: ignore[attr-defined]
        exc.reason = clip_words(message)  # type: ignore[attr-defined]
        return exc
