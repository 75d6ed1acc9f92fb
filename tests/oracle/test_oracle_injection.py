"""The oracle cannot be talked into anything: no file read or written, no connection changed, by any API.

Every hostile condition, name or value goes through every way the oracle
builds SQL (final, history, sql_for, the interval join's final SQL, a
connection the caller passes in) and must end as BadInputError with nothing
changed: no file in tmp_path, no table, view, macro, secret, variable,
attached database or setting added or changed on the connection.

The scenario model refuses most of these when it is built (tests/model/test_scenario_format.py);
here its checks are switched off, so that what is tested is the oracle standing on its own,
as it must for a model built some other way.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.condition_compiler import FUNCTIONS as ENGINE_FUNCTIONS
from converge.engine.model.errors import BadInputError, OracleError
from converge.engine.model.scenario import ChangeEvent, InputSpec, IntervalSpec, JoinSpec, Scenario
from converge.generators import interval as interval_generators
from converge.generators import multiway, scenarios
from converge.oracle import DuckDBOracle, connection
from converge.oracle.guard import FUNCTIONS, safe_condition
from converge.oracle.interval import interval_final_sql
from converge.oracle.query import LOCKDOWN
from tests.support.conditions import ROW, duckdb_values, expr
from tests.support.conditions import A as COND_A
from tests.support.conditions import B as COND_B

Con = duckdb.DuckDBPyConnection | None


@pytest.fixture(autouse=True)
def model_checks_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle's defences alone: the model's own __post_init__ checks are bypassed."""
    for cls in (InputSpec, IntervalSpec, JoinSpec, Scenario):
        monkeypatch.setattr(cls, "__post_init__", lambda self: None)
A = InputSpec("a", (("k", "BIGINT"), ("t", "BIGINT"), ("s", "VARCHAR")))
B = InputSpec("b", (("k", "BIGINT"), ("t", "BIGINT"), ("s", "VARCHAR")))
EVENTS = (ChangeEvent("a", "+I", (1, 10, "x")), ChangeEvent("b", "+I", (1, 12, "y")),
          ChangeEvent("a", "+I", (2, 20, "it's")))


def binary(condition: object, a: InputSpec = A, b: InputSpec = B, events: tuple = EVENTS,
           interval: bool = False) -> Scenario:
    iv = IntervalSpec("a.t", "b.t", -5, 5) if interval else None
    join = JoinSpec((a.name, b.name), ("inner",), (condition,), iv)  # type: ignore[arg-type]
    return Scenario("hostile", (a, b), join, events=events)


def state(con: duckdb.DuckDBPyConnection, macros: bool = True) -> dict[str, list]:
    """Everything a statement could leave behind on a connection (listing macros takes 60 ms: optional)."""
    queries = {
        "tables": "SELECT database_name, schema_name, table_name FROM duckdb_tables()",
        "views": "SELECT database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal",
        "macros": "SELECT schema_name, function_name FROM duckdb_functions() "
                  "WHERE function_type LIKE '%macro%' AND NOT internal",
        "sequences": "SELECT schema_name, sequence_name FROM duckdb_sequences()",
        "types": "SELECT schema_name, type_name FROM duckdb_types() WHERE NOT internal",
        "databases": "SELECT database_name, path FROM duckdb_databases()",
        "settings": "SELECT name, value FROM duckdb_settings()",
        "variables": "SELECT name, value::VARCHAR FROM duckdb_variables()",
        "secrets": "SELECT name FROM duckdb_secrets()",
        "extensions": "SELECT extension_name FROM duckdb_extensions() WHERE loaded",
    }
    if not macros:
        del queries["macros"]
    out: dict[str, list] = {}
    for what, sql in queries.items():
        try:
            out[what] = sorted(map(repr, con.execute(sql).fetchall()))
        except duckdb.Error:  # on the locked connection, these two may not read the secret or extension folders
            assert what in ("secrets", "extensions")
            out[what] = ["unavailable"]
    return out


def apis(con: duckdb.DuckDBPyConnection | None) -> dict[str, Callable[[Scenario], object]]:
    oracle = DuckDBOracle(con)
    return {
        "final": oracle.final,
        "history": oracle.history,
        "sql_for final": lambda s: oracle.sql_for(s, "final"),
        "sql_for history": lambda s: oracle.sql_for(s, "history"),
        "interval final": lambda s: oracle.final(replace(s, join=replace(s.join, interval=IntervalSpec(
            "a.t", "b.t", -5, 5)))),
        "interval final sql": lambda s: interval_final_sql(replace(s, join=replace(s.join, interval=IntervalSpec(
            "a.t", "b.t", -5, 5)))),
    }


@pytest.fixture(params=["oracle's connection", "caller's connection"])
def con(request: pytest.FixtureRequest) -> duckdb.DuckDBPyConnection | None:
    if request.param == "oracle's connection":
        return None
    user = duckdb.connect()  # the caller's own: optimizer on, external access on, nothing locked
    user.execute("CREATE TABLE mine AS SELECT 1 AS x")
    return user


def assert_rejected(scenario: Scenario, con: duckdb.DuckDBPyConnection | None, folder: Path,
                    path: str | None = "join.conditions[0]") -> None:
    """Every API raises BadInputError (naming `path`) and leaves files and connections as they were."""
    watched = [connection()] + ([con] if con is not None else [])
    before = [state(c, macros=False) for c in watched]
    files = sorted(folder.rglob("*"))
    for name, call in apis(con).items():
        with pytest.raises(BadInputError) as info:
            call(scenario)
        if path is not None:
            assert info.value.path == path, (name, str(info.value))
    assert [state(c, macros=False) for c in watched] == before
    assert sorted(folder.rglob("*")) == files


def hostile_conditions(folder: Path) -> list[str]:
    f = str(folder / "out.csv").replace("'", "''")
    return [
        f"a.k = b.k); COPY (SELECT 42) TO '{f}'; SELECT 1 WHERE (TRUE",  # the issue's
        "a.k = b.k); CREATE TABLE evil AS SELECT 1; SELECT 1 WHERE (TRUE",
        f"a.k = b.k)\n; COPY (SELECT 42) TO '{f}' --",
        f"a.k = b.k AND (SELECT count(*) FROM read_csv('{f}')) > 0",
        f"EXISTS (SELECT * FROM read_text('{f}'))",
        f"a.k IN (SELECT 1 FROM glob('{f}'))",
        f"a.k = b.k AND length(read_text('{f}')::VARCHAR) > 0",
        "a.k = b.k AND current_setting('threads') IS NOT NULL",
        "a.k = b.k AND getvariable('x') IS NULL",
        "a.k = b.k AND row_number() OVER () > 0",
        "a.k = b.k AND a.k = $1",
        "a.k = b.k AND a.k = ?",
        "a.k = b.k AND list_transform([1], x -> x) IS NOT NULL",
        "a.k = b.k AS alias",
        "a.k = b.k, 1",
        "a.k = b.k FROM duckdb_tables()",
        "a.k = b.k WHERE TRUE",
        "a.k = b.k UNION SELECT 1",
        "a.k = b.k /* unterminated",
        "a.k = b.k\0); COPY (SELECT 42) TO 'x.csv'; SELECT (1",
        "a.k = '\ud800'",
        "a.k = b.k AND a.s = E'\\x00'",
        "CASE WHEN a.k = b.k THEN TRUE END",
        "a.s COLLATE nocase = b.s",
        "main.abs(a.k) = b.k",
        "system.main.lower(a.s) = b.s",
        "a.s LIKE b.s",
        "a.k::INT[] IS NULL",
        "TRY_CAST(a.s AS BIGINT) = b.k",
        "a.k = b.k AND __seq = 0",  # the oracle's own position column
        "a.k = b.k AND c.k = 1",  # an input that is not in this join step
        "a.nope = b.k",
        "k = 1",  # ambiguous: both inputs have k
        "(" * 100_000 + "TRUE" + ")" * 100_000,  # DuckDB's parser runs out of stack: a parse error
        "NOT " * 2000 + "TRUE",
        "abs(" * 150 + "a.k" + ")" * 150 + " = b.k",
        "TRUE" + " AND TRUE" * 3000,
        "a.k = b.k OR " * 1200 + "TRUE",
        "a.s = '" + "x" * 20_000 + "'",
        "",
        "   ",
        "-- only a comment",
        ";",
    ]


def test_the_issues_injection_strings_are_rejected_everywhere(con: Con, unchanged: None, tmp_path: Path) -> None:
    for condition in hostile_conditions(tmp_path):
        assert_rejected(binary(condition), con, tmp_path)
    assert_rejected(binary(42), con, tmp_path)  # not a string at all


def test_redundant_parentheses_are_only_parentheses() -> None:
    assert DuckDBOracle().final(binary("(" * 2000 + "a.k = b.k" + ")" * 2000)) == \
        Counter({(1, 10, "x", 1, 12, "y"): 1})


def test_wide_decimal_and_hugeint_constants_are_accepted() -> None:
    """DuckDB 1.x serializes them as two-part integers; the checker reads them itself."""
    for condition in ("a.k = b.k AND a.t < 100.00000000000000000000001", "a.k = b.k AND a.t < 18446744073709551615"):
        assert DuckDBOracle().final(binary(condition)) == Counter({(1, 10, "x", 1, 12, "y"): 1})


def test_a_valid_query_still_runs_after_rejections(con: Con) -> None:
    oracle = DuckDBOracle(con)
    assert oracle.final(binary("a.k = b.k")) == Counter({(1, 10, "x", 1, 12, "y"): 1})
    assert oracle.final(binary("a.k = b.k", interval=True)) == Counter({(1, 10, "x", 1, 12, "y"): 1})


# ---------------------------------------------------------------- Hypothesis: hostile conditions

FRAGMENTS = [")", "(", ";", "'", '"', "--", "/*", "*/", "\0", "\n", "$1", "?", ",", " AS x", " FROM t",
             " WHERE TRUE", " UNION SELECT 1", "COPY (SELECT 1) TO 'f.csv'", "CREATE TABLE t(x INT)",
             "CREATE MACRO m() AS 1", "SET threads = 4", "ATTACH ':memory:' AS db2", "SET VARIABLE v = 1",
             "read_csv('f.csv')", "(SELECT 1)", "EXISTS (SELECT 1)", "sum(a.k) OVER ()", "getvariable('v')",
             "current_setting('threads')", "\ud800", "é", "\U0001F600", "a.k", "b.k", "1", "TRUE", "NULL"]


ALWAYS_REJECTED = {"$1", "?", " AS x", " FROM t", " WHERE TRUE", " UNION SELECT 1", "COPY (SELECT 1) TO 'f.csv'",
                   "CREATE TABLE t(x INT)", "CREATE MACRO m() AS 1", "SET threads = 4", "ATTACH ':memory:' AS db2",
                   "SET VARIABLE v = 1", "read_csv('f.csv')", "(SELECT 1)", "EXISTS (SELECT 1)", "sum(a.k) OVER ()",
                   "getvariable('v')", "current_setting('threads')", "\0", "\ud800"}
HIDING = {"'", '"', "--", "/*"}  # a quote or comment may turn the rest into a string or a comment


@st.composite
def injected(draw: st.DrawFn) -> tuple[str, bool]:
    """A valid condition with hostile fragments spliced in; and whether it must be rejected whatever else is in it."""
    base = draw(st.sampled_from(["a.k = b.k", "a.s < b.s", "a.k IS NOT DISTINCT FROM b.k AND a.t > 1"]))
    parts = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4))
    at = draw(st.integers(0, len(base)))
    must_reject = any(p in ALWAYS_REJECTED for p in parts) and not any(p in HIDING for p in parts)
    return base[:at] + " ".join(parts) + base[at:], must_reject


@pytest.fixture
def unchanged(con: Con) -> Iterator[None]:
    """The connections' whole state, macros included, is the same after the test as before it."""
    watched = [connection()] + ([con] if con is not None else [])
    before = [state(c) for c in watched]
    yield
    assert [state(c) for c in watched] == before


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.one_of(injected(), st.tuples(st.text(max_size=60), st.just(False))))
def test_no_condition_changes_anything(con: Con, unchanged: None, tmp_path: Path,
                                       case: tuple[str, bool]) -> None:
    """Any text: either a checked expression that runs, or BadInputError; never a side effect."""
    condition, must_reject = case
    watched = [connection()] + ([con] if con is not None else [])
    before = [state(c, macros=False) for c in watched]
    files = sorted(tmp_path.rglob("*"))
    for call in apis(con).values():
        try:
            call(binary(condition))
        except BadInputError as exc:
            assert exc.path == "join.conditions[0]"
        except OracleError:  # a checked expression that fails while running (a type error, an overflow)
            assert not must_reject, condition
        else:
            assert not must_reject, condition
    assert [state(c, macros=False) for c in watched] == before
    assert sorted(tmp_path.rglob("*")) == files


# ---------------------------------------------------------------- names and values

HOSTILE_NAMES = ['a"b', 'x"; COPY (SELECT 1) TO \'f.csv\'; --', "it's", "é\U0001F600", " spaced ", "SELECT",
                 '""', "a.b", "--", "/*"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_names_with_quotes_are_quoted_not_executed(con: Con, tmp_path: Path, name: str) -> None:
    """A strange input or column name is just a name: the answer is the one with plain names."""
    a = InputSpec(name, (("k", "BIGINT"), (name + "t", "BIGINT"), ("s", "VARCHAR")))
    b = InputSpec("b", (("k", "BIGINT"), ("t", "BIGINT"), (name, "VARCHAR")))
    quoted = '"' + name.replace('"', '""') + '"'
    events = tuple(ChangeEvent(name if e.input == "a" else "b", e.kind, e.row) for e in EVENTS)
    s = binary(f"{quoted}.k = b.k AND b.{quoted} IS NOT NULL", a, b, events)
    expected = DuckDBOracle().final(binary("a.k = b.k"))
    before = state(con) if con is not None else None
    assert DuckDBOracle(con).final(s) == expected
    assert DuckDBOracle(con).history(s)[-1] == expected
    assert list(tmp_path.iterdir()) == []
    if con is not None:
        assert state(con) == before


@pytest.mark.parametrize(("where", "bad", "path"), [
    ("input", "", "inputs[0].name"),
    ("input", "a\0b", "inputs[0].name"),
    ("input", "a\ud800", "inputs[0].name"),
    ("input", "x" * 1001, "inputs[0].name"),
    ("column", "k\0", "inputs[0].columns[0]"),
    ("column", "\udfff", "inputs[0].columns[0]"),
    ("column", "", "inputs[0].columns[0]"),
    ("type", "BIGINT[]); COPY (SELECT 1) TO 'f.csv'; --", "inputs[0].columns[0]"),
    ("type", "TIMESTAMP", "inputs[0].columns[0]"),
])
def test_bad_names_and_types_are_bad_input(con: Con, unchanged: None, tmp_path: Path, where: str, bad: str,
                                           path: str) -> None:
    if where == "input":
        a = replace(A, name=bad)
        events = tuple(replace(e, input=bad) if e.input == "a" else e for e in EVENTS)
        s = binary('"x".k = b.k'.replace('"x"', '"' + bad.replace('"', '""') + '"'), a, B, events)
    else:
        a = replace(A, columns=((bad, "BIGINT") if where == "column" else ("k", bad),) + A.columns[1:])
        s = binary("a.t = b.t", a)
    assert_rejected(s, con, tmp_path, path)


@pytest.mark.parametrize(("row", "match"), [
    ((10**30, 1, "x"), "out of range|not a value"),
    ((1, 1, "\ud800"), "not valid Unicode"),
    ((1, "1); COPY (SELECT 1) TO 'f.csv'; --", "x"), "expected an integer|not a value"),
    ((True, 1, "x"), "expected an integer|not a value"),
    ((1, 1, 5), "expected a string|not a value"),
    ((1, 1.5, "x"), "expected an integer|not a value"),
])
def test_bad_values_are_bad_input_naming_the_event(con: Con, unchanged: None, tmp_path: Path, row: tuple,
                                                   match: str) -> None:
    s = binary("a.k = b.k", events=EVENTS + (ChangeEvent("a", "+I", row),))
    for call in apis(con).values():
        with pytest.raises(BadInputError, match=match) as info:
            call(s)
        assert info.value.event_index == 3
    assert list(tmp_path.iterdir()) == []


STRANGE_TEXT = ["it's", 'say "hi"', "back\\slash", "a\0b", "\0", "[1, 2]", "NULL", "'); DROP TABLE x; --",
                "é\U0001F600", "\\\"'"]


@pytest.mark.parametrize("double", [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308])
def test_strange_values_round_trip(double: float) -> None:
    da = InputSpec("a", (("k", "BIGINT"), ("f", "DOUBLE"), ("s", "VARCHAR")))
    db = InputSpec("b", (("k", "BIGINT"), ("f", "DOUBLE"), ("s", "VARCHAR")))
    events = tuple(ChangeEvent("a", "+I", (2**63 - 1, double, text)) for text in STRANGE_TEXT) + \
        (ChangeEvent("b", "+I", (2**63 - 1, double, "b")),)
    got = DuckDBOracle().final(binary("a.k = b.k", da, db, events))
    assert sorted(row[2] for row in got) == sorted(STRANGE_TEXT)
    for row in got:
        assert row[0] == 2**63 - 1 and row[3] == 2**63 - 1
        assert (math.isnan(row[1]) and math.isnan(double)) or (row[1] == double and
                                                               math.copysign(1, row[1]) == math.copysign(1, double))


def test_interval_bounds_are_checked() -> None:
    s = binary("a.k = b.k", interval=True)
    for bad in ("0) OR TRUE OR (0", 2**63, 1.5, True):
        broken = replace(s, join=replace(s.join, interval=replace(s.join.interval, upper_ms=bad)))
        with pytest.raises(BadInputError) as info:
            DuckDBOracle().final(broken)
        assert info.value.path == "join.interval.upper_ms"


# ---------------------------------------------------------------- the lockdown


def test_the_oracle_connection_is_locked_down(tmp_path: Path) -> None:
    con = connection()
    target = tmp_path / "out.csv"
    with pytest.raises(duckdb.PermissionException):
        con.execute(f"COPY (SELECT 42) TO '{target}'")
    with pytest.raises(duckdb.PermissionException):
        con.execute(f"SELECT * FROM read_csv('{Path(__file__)}')")
    for statement in ("SET enable_external_access = true", "SET lock_configuration = false",
                      "RESET enable_external_access", "SET autoload_known_extensions = true",
                      "SET allow_community_extensions = true"):
        with pytest.raises(duckdb.InvalidInputException, match="locked"):
            con.execute(statement)
    settings_now = dict(con.execute("SELECT name, value FROM duckdb_settings()").fetchall())
    assert settings_now["enable_external_access"] == "false"
    assert settings_now["lock_configuration"] == "true"
    assert settings_now["autoload_known_extensions"] == "false"
    assert settings_now["autoinstall_known_extensions"] == "false"
    assert settings_now["allow_community_extensions"] == "false"
    assert not target.exists()
    assert LOCKDOWN[-1] == "SET lock_configuration = true"


def test_a_callers_connection_is_not_changed() -> None:
    """Documented choice (docs/oracle.md): the caller's connection keeps its settings; validation protects it."""
    user = duckdb.connect()
    before = state(user)
    DuckDBOracle(user).final(binary("a.k = b.k"))
    assert state(user) == before
    assert user.execute("SELECT current_setting('enable_external_access')").fetchone()[0] is True


# ---------------------------------------------------------------- the rewrite keeps the meaning

GENERATED = sorted({c for c in scenarios.RESIDUALS if c} | {c for c, _ in scenarios.KEY_CONDITIONS}
                   | {c for c in interval_generators.RESIDUALS if c}
                   | {c.format(x="a", t="b") for c in multiway.RESIDUALS})


def test_every_generator_condition_is_accepted() -> None:
    spec = InputSpec("a", (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"), ("y", "BIGINT"), ("v", "BIGINT"),
                           ("s", "VARCHAR")))
    for condition in GENERATED:
        safe_condition(condition, (spec, replace(spec, name="b")), "join.conditions[0]")


@settings(max_examples=300, deadline=None)
@given(data=st.data(), rows_a=st.lists(ROW, min_size=1, max_size=3), rows_b=st.lists(ROW, min_size=1, max_size=3))
def test_regenerated_condition_means_the_same(data: st.DataObject, rows_a: list, rows_b: list) -> None:
    """What DuckDB computes for the raw text and for the oracle's regenerated text is identical, value by value."""
    sql = data.draw(st.one_of(expr("bool"), expr("num"), expr("str")))
    regenerated = safe_condition(sql, (COND_A, COND_B), "join.conditions[0]")
    plain = _PLAIN
    try:
        want = duckdb_values(plain, sql, rows_a, rows_b)
    except duckdb.Error as exc:
        with pytest.raises(type(exc)):
            duckdb_values(plain, regenerated, rows_a, rows_b)
        return
    got = duckdb_values(plain, regenerated, rows_a, rows_b)
    assert all(identical(w, g) for w, g in zip(want, got, strict=True)), (sql, regenerated, want, got)


def identical(want: object, got: object) -> bool:
    """The same value of the same Python type (so the same SQL type); NaN is NaN."""
    if type(want) is not type(got):
        return False
    return want == got or (isinstance(want, float) and math.isnan(want) and math.isnan(got))  # type: ignore[arg-type]


_PLAIN = duckdb.connect()


def test_the_allow_list_is_what_the_engine_compiles() -> None:
    """A function the engine can compile but the oracle rejects (or the reverse) would be a silent gap."""
    assert FUNCTIONS == frozenset(ENGINE_FUNCTIONS)
