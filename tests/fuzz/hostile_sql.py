"""Damaged and hostile Flink SQL files for `converge check`, and the judge that accepts only typed outcomes.

A damage is a short list of operations drawn by Hypothesis and applied to one
of the example queries (docs/examples/), so a failure shrinks to the operation
that matters: cut the file, flip or insert bytes (invalid UTF-8 included),
nest the join condition in parentheses, NOT or unary minus, chain it with
thousands of ANDs, add a literal beyond every range, swap an identifier for a
5,000-character one, duplicate or swap statements, add comments and stray
tokens. The judge reads the file as `converge check` does (the reader, then
the oracle's guard) and, when both accept it, plans the query and asks the
engine and DuckDB for one event's answer: a refusal there, of a valid stream,
is a refusal of the query that came too late to name its position. The outcome is a word; a
refusal that is not one line naming `file:line:col`, an untyped exception, an
OracleError or InternalError, or a hang escapes as a failure.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from hypothesis import strategies as st

from converge.cli.main import main
from converge.engine.calc import core_scenario
from converge.engine.model.errors import BadInputError, ConvergeError, UnsupportedError
from converge.engine.model.flinksql import MappedQuery, load_query
from converge.engine.model.scenario import ChangeEvent, InputSpec
from converge.engine.model.time_text import derived_time, time_text
from converge.engine.planner import plan
from converge.engine.runtime.local import run_scenario
from converge.oracle import DuckDBOracle
from converge.properties.query_guard import guard_query
from tests.fuzz.damage import Op, byte_damage, damage_ops
from tests.fuzz.outcomes import no_hang

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SEED_SQL: tuple[bytes, ...] = tuple(p.read_bytes() for p in sorted(EXAMPLES.glob("*.sql")))
MESSAGE_LIMIT = 600  # a refusal echoes a clause, never a whole 5,000-character identifier
SIZE_LIMIT = 1 << 20  # damage stops growing a file past this (the reader refuses files over 256 KiB anyway)

LITERALS = ("1e999", "-1e999", "9" * 400, "9" * 40 + ".5", "0." + "0" * 60 + "1", "1e-999", "9223372036854775808",
            "INTERVAL '1e99' SECOND", "INTERVAL '99999999999999999999' DAY", "TIMESTAMP '99999-01-01 00:00:00'",
            "DATE 'x'", "'unterminated", "X'zz'", "1.", ".5", "0x10", "1e", "- - - 1", "NULL", "TRUE")
TOKENS = ("(", ")", "'", "`", '"', "SELECT", "CREATE TABLE", ",", "JOIN", "WHERE", "GROUP BY 1", "*", "/*", "--",
          "\x00", "𝕏", ";", "ON", "AS", "NOT ENFORCED", "WATERMARK FOR", "INTERVAL", "1e999", "\\", "$", "?")
BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80", b"\xef\xbb\xbf")
TRAILING = ("-- the end\n", "/* the end */", "/* unterminated", ";;", "; -- c\n", "\n\n", ";\n-- c", "--")
IDENTIFIERS = ("x" * 5000, "`" + "y" * 5000 + "`", "``", "`a b`", "é", "`a``b`", "select", "`\x01`", "1abc")
OPS = ("cut", "flip", "bad_bytes", "nest", "not_chain", "minus_chain", "and_chain", "literal", "identifier",
       "duplicate", "swap", "trailing", "token")


class SqlOp(Op):
    """One damage to a query file."""


sql_ops = damage_ops(SqlOp, OPS)


def _on_clause(text: str) -> tuple[int, int] | None:
    """(start, end) of the first ON condition: from after `ON ` to the end of its statement."""
    m = re.search(r"\bON\s", text)
    if m is None:
        return None
    end = text.find(";", m.end())
    return m.end(), (end if end >= 0 else len(text))


def _statements(text: str) -> list[str]:
    return [s for s in text.split(";") if s.strip()]


def apply_sql(op: SqlOp, data: bytes) -> bytes:
    """`data` with one damage applied (unchanged when the damage finds nothing to act on)."""
    text = data.decode("utf-8", errors="surrogateescape")
    n = len(data)
    damaged = byte_damage(op, data, BAD_BYTES)
    if damaged is not None:
        return damaged
    if op.kind == "trailing":
        return data + TRAILING[op.what % len(TRAILING)].encode()
    if op.kind == "token":
        i = op.where % (len(text) + 1)
        text = text[:i] + " " + TOKENS[op.what % len(TOKENS)] + " " + text[i:]
    elif op.kind in ("duplicate", "swap") and n <= SIZE_LIMIT:
        parts = _statements(text)
        if parts:
            i, j = op.where % len(parts), op.what % len(parts)
            if op.kind == "duplicate":
                parts.insert(i, parts[i])
            else:
                parts[i], parts[j] = parts[j], parts[i]
            text = ";".join(parts) + ";"
    elif op.kind == "identifier":
        names = sorted(set(re.findall(r"\b[a-z_][a-z_0-9]*\b", text)))
        if names:
            name = names[op.where % len(names)]
            new = IDENTIFIERS[op.what % len(IDENTIFIERS)]
            every = op.where % 2 and len(text) + len(new) * text.count(name) <= SIZE_LIMIT
            text = re.sub(rf"\b{name}\b", lambda _: new, text, count=0 if every else 1)
    else:
        span = _on_clause(text)
        if span is not None:
            a, b = span
            cond = text[a:b]
            depth = 1 + op.what % 300
            if op.kind == "nest":
                cond = "(" * depth + cond + ")" * depth
            elif op.kind == "not_chain":
                cond = "NOT " * depth * 3 + cond
            elif op.kind == "minus_chain":
                cond = cond + " AND 1 = " + "- " * depth * 3 + "1"
            elif op.kind == "and_chain":
                cond = " AND ".join([cond] * min(1 + op.what % 600, max(1, SIZE_LIMIT // max(1, len(cond)))))
            elif op.kind == "literal":
                cond = cond + " AND " + ("1 < " if op.where % 2 else "") + LITERALS[op.what % len(LITERALS)]
            text = text[:a] + cond + text[b:]
    return text.encode("utf-8", errors="surrogateescape")


@st.composite
def hostile_sql(draw) -> tuple[bytes, list[SqlOp]]:
    data = SEED_SQL[draw(st.integers(0, len(SEED_SQL) - 1))]
    damage = draw(st.lists(sql_ops, min_size=1, max_size=3))
    for op in damage:
        data = apply_sql(op, data)
    return data, damage


class BadRefusal(AssertionError):
    """A refusal that does not name file:line:col in one short line."""


def check_refusal(exc: ConvergeError, path: Path) -> None:
    """One line, at most MESSAGE_LIMIT characters, starting with `file:line:col: `; or, for several refusals of
    one query (reported together), a header naming the file and their count, then one such line each."""
    text = str(exc)
    where = re.escape(str(path))
    lines = text.split("\n")
    header = re.fullmatch(rf"{where}: (\d+) problems in the query \(each with its file:line:column\):", lines[0])
    if header is not None and int(header.group(1)) == len(lines) - 1 >= 2:
        items = [re.sub(r"^  \[(bad input|unsupported)\] ", "", line, count=1) for line in lines[1:]]
        if all(item != line for item, line in zip(items, lines[1:], strict=False)):
            lines = items
    if any(len(line) > MESSAGE_LIMIT or not re.match(rf"{where}:\d+:\d+: ", line) for line in lines) or (
            header is None and len(lines) > 1):
        raise BadRefusal(f"{type(exc).__name__} does not name file:line:col in one short line per refusal: "
                         f"{text[:800]!r}")


def _zero(model: str) -> object:
    return {"INTEGER": 0, "BIGINT": 0, "DOUBLE": 0.0, "BOOLEAN": False, "VARCHAR": "a"}.get(model, 0)


def _one_event_each(query: MappedQuery) -> list[ChangeEvent]:
    return [ChangeEvent(spec.name, "+I", _zeros(spec)) for spec in query.inputs
            if spec.source is None]  # a table read in several places: its one stream


def _zeros(spec: InputSpec) -> tuple:
    """A row of zeros; a rowtime's text is time 0's (an unparsable text is a NULL rowtime, which fails Flink's job)."""
    derived = derived_time(spec)
    return tuple(time_text(0) if derived == (c, "text") else _zero(t) for c, t in spec.columns)


def judge_sql(data: bytes, path: Path) -> str:
    """One outcome word for one query file (see the module docstring); `path` is where it is written."""
    path.write_bytes(data)
    try:
        query = load_query(path)
        guard_query(query)
    except (BadInputError, UnsupportedError) as exc:
        check_refusal(exc, path)
        refused: ConvergeError | None = exc
    else:
        refused = None
    if refused is not None:  # the command line says the same on stderr (one line per refusal), exit 2
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["check", str(path), "--no-reports", "--examples", "1", "--quiet"])  # no progress lines: the refusal alone
        lines = err.getvalue().strip().splitlines()
        expected = str(refused).count("\n") + 1  # several refusals of one query: a header and one line each
        if code != 2 or len(lines) != expected:
            raise BadRefusal(f"converge check exited {code} with {len(lines)} lines on stderr: "
                             f"{err.getvalue()[-1500:]}")
        return "refused: unsupported" if isinstance(refused, UnsupportedError) else "refused: bad input"
    try:
        scenario = query.scenario(_one_event_each(query))
        plan(core_scenario(scenario) if scenario.has_views() else scenario)  # a view's Calc runs around the plan
        run_scenario(scenario)
        DuckDBOracle().final(scenario)
    except UnsupportedError:
        return "read, then unsupported"
    except BadInputError as exc:  # a stream of zeros is valid: a refusal now is a refusal of the query, too late
        raise BadRefusal(f"the query was read, then its one-event stream was refused: {exc}") from exc
    return "read and run"


def classify_sql(data: bytes, path: Path) -> str:
    with no_hang():
        return judge_sql(data, path)
