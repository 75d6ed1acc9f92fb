"""A sqlglot dialect for the part of Flink SQL converge reads, extended through sqlglot's own hooks.

sqlglot has no Flink dialect. Flink's SQL is Calcite's: back-quoted
identifiers, `STRING`, `INTERVAL '5' SECOND`, `PRIMARY KEY (...) NOT ENFORCED`
(sqlglot's base parser already reads NOT ENFORCED as a key option) and
`WITH ('connector' = ...)` table options (read as properties). What it lacks is
the `WATERMARK FOR col AS expr` table constraint; it is added here as one
entry of the parser's constraint table, producing sqlglot's own
`WatermarkColumnConstraint` node. So is a metadata column's `METADATA [FROM
'key'] [VIRTUAL]`, as a column constraint the reader refuses as unsupported.
Nothing else is hand-parsed.
"""

from __future__ import annotations

from sqlglot import exp, parser, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType


class Flink(Dialect):
    """Flink SQL, as far as converge reads it (DDL with watermarks and keys, one SELECT)."""

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ["`", '"']
        QUOTES = ["'"]
        KEYWORDS = {**tokens.Tokenizer.KEYWORDS, "STRING": TokenType.TEXT}

    class Parser(parser.Parser):
        CONSTRAINT_PARSERS = {
            **parser.Parser.CONSTRAINT_PARSERS,
            # a metadata column `c T METADATA [FROM 'key'] [VIRTUAL]`: read so that it is refused at the column
            # (unsupported), never a parse error
            "METADATA": lambda self: self.expression(
                exp.Tags(expressions=[
                    (self._match(TokenType.FROM) and self._parse_string()) or exp.Null(),
                    exp.Boolean(this=bool(self._match_text_seq("VIRTUAL")))])
            ),
            "WATERMARK": lambda self: self.expression(
                exp.WatermarkColumnConstraint(
                    this=self._match(TokenType.FOR) and self._parse_column(),
                    expression=self._match(TokenType.ALIAS) and self._parse_disjunction(),
                )
            ),
        }
        SCHEMA_UNNAMED_CONSTRAINTS = {*parser.Parser.SCHEMA_UNNAMED_CONSTRAINTS, "WATERMARK"}
