"""The query file's text as sqlglot statements, with every way of failing turned into a refusal at file:line:col.

sqlglot's parser is recursive: a condition nested ~50 parentheses deep, or a
long run of `NOT NOT ...`, exhausts Python's stack, and a chain of thousands
of `AND`s parses into a tree that converge's own (recursive) mapping cannot
walk. So the tokens are checked first (parentheses deeper than MAX_PARENS are
refused where the first too-deep one opens), a RecursionError left in the
parser is refused at the token it was reading, and the statements' trees are
measured (iteratively) before anything recurses over them. A token the
tokenizer cannot read (an unterminated string, identifier or comment) is
refused where it starts, and a comment after the last `;` is not a statement.
"""

from __future__ import annotations

import logging
import re

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from converge.engine.model.errors import BadInputError
from converge.engine.model.flinksql.dialect import Flink
from converge.engine.model.flinksql.positions import SourceText, clip

MAX_PARENS = 32       # sqlglot's parser uses about 20 stack frames per parenthesis
MAX_TREE_DEPTH = 120  # converge's mapping recurses once or twice per level of a condition
MAX_IDENTIFIER = 1000  # the oracle quotes names of at most 1,000 characters (oracle/guard.py)


def read_statements(source: SourceText) -> list[exp.Expr]:
    """The statements of the file, comment-only ones dropped; BadInputError at file:line:col otherwise."""
    tokens = _row_types(_tokens(source))
    _check_parentheses(tokens, source)
    parser = Flink().parser()
    quiet = logging.getLogger("sqlglot")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # sqlglot warns on stderr where it falls back to a Command: refused below instead
    try:
        parsed = parser.parse(tokens, source.text)
    except ParseError as exc:
        first = (getattr(exc, "errors", None) or [{}])[0]
        where = _token_where(parser, source)  # the start of the token sqlglot stopped at
        reason = _plain_tokens(" ".join(str(first.get("description") or str(exc)).split()))
        highlight = " ".join(str(first.get("highlight") or "").split())
        near = f" near `{clip(highlight)}`" if highlight else ""
        raise BadInputError(f"{where}: cannot parse: {clip(reason, 200)}{near}") from None
    except RecursionError:
        raise BadInputError(f"{_token_where(parser, source)}: the expression here is nested too deeply to read "
                            f"(a long run of NOT, unary minus or nested calls); simplify it") from None
    finally:
        quiet.setLevel(level)
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    for stmt in statements:
        if isinstance(stmt, exp.Command):
            if _FLINK_STATEMENT.match(" ".join(stmt.sql().split())):  # valid Flink SQL converge does not read
                raise source.unsupported(stmt, "converge reads SET, CREATE TABLE and one SELECT (or INSERT INTO ... "
                                               "SELECT); this statement is not read")
            raise source.error(stmt, "cannot parse this statement (expected CREATE TABLE ... or SELECT ...)")
        _check_depth(stmt, source)
    return statements


def _tokens(source: SourceText) -> list[Token]:
    tokenizer = Flink().tokenizer()
    try:
        return tokenizer.tokenize(source.text)
    except TokenError as exc:
        core = getattr(tokenizer, "_core", None)
        start = getattr(core, "_start", None)
        if not isinstance(start, int):
            start = getattr(exc, "start", 0) or 0
        opened = source.text[start:start + 2]
        cause = str(exc.__cause__ or "")
        if opened.startswith("/*"):
            why = "this comment is never closed (*/ is missing)"
        elif cause.startswith("Missing ") and opened[:1]:
            why = f"the {opened[:1]} opened here is never closed"
        else:
            why = f"cannot read the text here as SQL ({clip(cause or str(exc), 120)})"
        raise source.error_at(start, why) from None


def _row_types(tokens: list[Token]) -> list[Token]:
    """Flink's structured types `ROW<name type, ...>` / `ROW(name type, ...)` and `MULTISET<type>` as the type
    tokens sqlglot parses (STRUCT, ARRAY), so that a table declaring one is refused as an unsupported column type
    at the column, not as a parse error (sqlglot reads `ROW(...)` only as the row constructor). A `ROW(` is a type
    when a field name and a type follow it (`ROW(a INT`), never a constructor's `ROW(a, b)`. Only the token's
    type changes: its text and position stay the file's."""
    for i, token in enumerate(tokens[:-2]):
        word = token.text.upper()
        if token.token_type not in (TokenType.VAR, TokenType.ROW) or word not in ("ROW", "MULTISET"):
            continue
        after = tokens[i + 1].token_type
        typed = after == TokenType.LT or (word == "ROW" and after == TokenType.L_PAREN and i + 3 < len(tokens)
                                          and tokens[i + 2].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
                                          and tokens[i + 3].token_type in Flink.Parser.TYPE_TOKENS)
        if typed:
            token.token_type = TokenType.STRUCT if word == "ROW" else TokenType.ARRAY
    return tokens


def _check_parentheses(tokens: list[Token], source: SourceText) -> None:
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            if depth > MAX_PARENS:
                raise source.error_at(token.start, f"parentheses nested more than {MAX_PARENS} deep; converge "
                                                   f"refuses deeper nesting (simplify the expression)")
        elif token.token_type == TokenType.R_PAREN:
            depth = max(0, depth - 1)


def _token_where(parser: object, source: SourceText) -> str:
    """Where the parser stopped: its current token, else just after its previous one, else the end of the file."""
    token = getattr(parser, "_curr", None)
    if isinstance(token, Token) and token.token_type != TokenType.SENTINEL:
        return source.at(token.start)
    token = getattr(parser, "_prev", None)
    if isinstance(token, Token) and token.token_type != TokenType.SENTINEL:
        return source.at(token.end + 1)
    return source.end()


def _plain_tokens(text: str) -> str:
    """sqlglot's `<Token token_type: ..., text: x, ...>` in a message as `x` (the end of the file for its sentinel)."""
    return _TOKEN.sub(lambda m: "the end of the statement" if m.group(1) == "SENTINEL" else f"`{clip(m.group(2))}`",
                      text)


# Flink SQL statements sqlglot keeps as an unparsed command: a function, catalog or module, a JAR
_FLINK_STATEMENT = re.compile(r"^(CREATE\s+(TEMPORARY\s+)?(SYSTEM\s+)?FUNCTION|CREATE\s+(CATALOG|DATABASE)|USE\s|"
                              r"LOAD\s+MODULE|UNLOAD\s+MODULE|ADD\s+JAR)\b", re.IGNORECASE)
_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+.*?>")


def _check_depth(stmt: exp.Expr, source: SourceText) -> None:
    """Refuse a statement whose tree is deeper than MAX_TREE_DEPTH, or with an identifier longer than MAX_IDENTIFIER,
    at the first such node (no recursion)."""
    stack: list[tuple[exp.Expr, int]] = [(stmt, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, exp.Identifier) and len(node.name) > MAX_IDENTIFIER:
            raise BadInputError(f"{source.where(node)}: an identifier of {len(node.name):,} characters "
                                f"`{clip(node.name)}`; converge reads identifiers of at most {MAX_IDENTIFIER:,}")
        if depth > MAX_TREE_DEPTH:
            raise BadInputError(f"{source.where(node)}: the expression here is nested more than {MAX_TREE_DEPTH} "
                                f"levels deep (a chain of thousands of AND, OR, + or -); converge refuses it")
        stack.extend((child, depth + 1) for child in node.iter_expressions())
