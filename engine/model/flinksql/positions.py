"""Where a clause sits in the query file: every unsupported clause is reported as file:line:column."""

from __future__ import annotations

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError


class SourceText:
    """The query file's text, to turn sqlglot's character offsets into line:column."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path

    def where(self, node: exp.Expr | None) -> str:
        """`file:line:col` of the first token of `node` (the file alone when sqlglot kept no position)."""
        offsets = [n.meta["start"] for n in (node.walk() if node is not None else ()) if "start" in n.meta]
        if not offsets:
            return self.path
        at = min(offsets)
        line = self.text.count("\n", 0, at) + 1
        col = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return f"{self.path}:{line}:{col}"

    def located(self, node: exp.Expr | None, message: str) -> str:
        """`message` after the clause's position and its SQL, shortened."""
        clause = ""
        if node is not None:
            sql = " ".join(node.sql().split())
            clause = f" `{sql[:80]}{'...' if len(sql) > 80 else ''}`"
        return f"{self.where(node)}:{clause} {message}"

    def error(self, node: exp.Expr | None, message: str) -> BadInputError:
        """A BadInputError naming the clause (its SQL, shortened) and its position."""
        return BadInputError(self.located(node, message))

    def unsupported(self, node: exp.Expr | None, message: str) -> UnsupportedError:
        """Valid Flink SQL that converge does not map yet, named like `error` names bad input."""
        return UnsupportedError(self.located(node, message))
