"""The Spark SQL oracle against DuckDB's: translated expressions, generated scenarios, both materializations."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.duckdb_ast import min_mod_minus_one_overflows
from converge.engine.model.errors import BadInputError, OracleError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.generators.interval import interval_join_scenarios
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.generators.shapes import same_shape
from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.oracle.guard import safe_condition
from converge.oracle.query import run_query
from converge.oracle.spark_inputs import table_of_rows, write_parquet
from converge.oracle.spark_sql import SparkSQLOracle
from converge.oracle.spark_translate import translate_expression
from converge.properties.divergence import PropertyFailure
from converge.properties.oracle_agreement import duckdb_final, oracles_agree

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

A = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT"), ("i", "INTEGER"), ("d", "DOUBLE"), ("s", "VARCHAR"),
                    ("f", "BOOLEAN")), None, "retract")
TYPES = {("a", c): t for c, t in A.columns}
ROWS = [(7, -7, 2147483647, 2.5, "abc", True), (0, 0, -2147483648, -0.0, "ÄÖ", False),
        (None, 3, None, float("nan"), None, None), (-9223372036854775808, -1, 5, 3.5, "", True),
        (9223372036854775807, 2, -3, float("inf"), "Zz", False)]

# Each is evaluated per row by DuckDB (the expression as written) and by Spark (its translation).
EXPRESSIONS = [
    "a.x / a.k", "a.x / 0", "a.d / a.x", "a.x // 2", "a.x // 0", "a.d // 0", "a.x % 4", "a.x % 0", "a.d % 0",
    "a.d % 2", "-a.x", "abs(a.x)", "a.x + a.i", "CAST(a.x AS VARCHAR)",
    "CAST(a.f AS INTEGER)", "a.x IS NOT DISTINCT FROM a.i", "a.x IS DISTINCT FROM NULL", "a.s < 'B'",
    "a.s || 'x'", "length(a.s)", "a.d = CAST('nan' AS DOUBLE)", "a.d > 1e308", "a.x IN (0, 3, NULL)",
    "coalesce(a.x, a.i)", "a.x BETWEEN a.i AND a.k", "NOT (a.f OR a.x > 1)", "a.d = -0.0", "a.d = 2.5",
]


# Casts of doubles to integers: DuckDB rounds half to even (NaN and inf fail in both, tested apart).
FINITE_ROWS = [(1, 1, 1, d, "a", True) for d in (2.5, 3.5, -2.5, 0.5, 2.7, -0.0, -3.5, 1e6 + 0.5)]
FINITE_EXPRESSIONS = ["CAST(a.d AS BIGINT)", "CAST(a.d AS INTEGER)", "a.d // 2", "a.d % 2"]


def _duck(expr: str, row: tuple) -> list:
    from converge.oracle.sql import render_source

    sql = f"SELECT {expr} FROM {render_source(A, [row])} AS a"
    return [r[0] for r in run_query(sql)]


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("rows, expressions", [(ROWS, EXPRESSIONS), (FINITE_ROWS, FINITE_EXPRESSIONS)],
                         ids=["mixed", "finite-doubles"])
def test_translated_expressions_give_duckdb_values_on_spark(spark, tmp_path, rows, expressions) -> None:
    path = write_parquet(table_of_rows(A, rows), tmp_path / "a.parquet")
    spark.read.parquet(str(path)).selectExpr(*[f"c{i} AS `{c}`" for i, (c, _) in enumerate(A.columns)]) \
        .createOrReplaceTempView("oracle_expr_a")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    texts = []
    for expr in expressions:
        checked = safe_condition(expr, (A,), "expr")       # as the oracle's queries hold it
        texts.append((expr, checked, translate_expression(checked, TYPES)))
    result = spark.sql(f"SELECT {', '.join(t for _, _, t in texts)} FROM oracle_expr_a AS a").collect()
    for j, (expr, checked, spark_text) in enumerate(texts):
        got = [r[j] for r in result]
        want = [_duck(checked, row)[0] for row in rows]
        assert all(_same_value(g, w) for g, w in zip(got, want, strict=False)), (expr, spark_text, got, want)


@pytest.mark.parametrize("expr", ["a.x + a.x", "-a.k", "abs(a.k)", "a.k // -1", "a.k % -1", "lower(a.s)"])
def test_what_duckdb_refuses_to_compute_fails_on_spark_too(spark, tmp_path, expr: str) -> None:
    """Overflow in DuckDB is an error, not a wrapped value; a non-ASCII lower() stops the Spark query."""
    row = (-9223372036854775808, 9223372036854775807, 0, 0.0, "Ä", True)
    b = InputSpec("b", (("k", "BIGINT"),), None, "retract")
    events = (ChangeEvent("a", "+I", row), ChangeEvent("b", "+I", (1,)))
    scenario = Scenario("overflow", (A, b), JoinSpec(("a", "b"), ("inner",), (f"({expr}) IS NOT NULL",)), Config(),
                        events)
    if expr == "a.k % -1" and not min_mod_minus_one_overflows():  # DuckDB 2.0.1 answers 0, and so must Spark
        want = DuckDBOracle().final(scenario)
        assert want and SparkSQLOracle(spark).final(scenario) == want
        return
    if expr != "lower(a.s)":
        with pytest.raises(OracleError):
            DuckDBOracle().final(scenario)
    with pytest.raises(OracleError):
        SparkSQLOracle(spark).final(scenario)


def _family(strategy: st.SearchStrategy[Scenario]) -> st.SearchStrategy[list[Scenario]]:
    """A batch: a drawn scenario and more streams of exactly its shape (one Spark query for all)."""
    return strategy.flatmap(lambda s: st.lists(same_shape(s, max_ops=16), max_size=5).map(lambda more: [s, *more]))


def _agree(spark, examples: int, seed: int):
    strategies = st.one_of(_family(regular_join_scenarios(max_ops=16)),
                           _family(multiway_scenarios()),
                           _family(interval_join_scenarios().filter(lambda s: s.join.interval.time == "event")))

    @settings(max_examples=examples, database=None, deadline=None, derandomize=seed is not None,
              suppress_health_check=list(HealthCheck))
    @given(strategies)
    def prop(batch: list[Scenario]) -> None:
        oracles_agree(batch, SparkSQLOracle(spark))

    prop()


def test_spark_sql_oracle_agrees_with_duckdb_on_generated_batches(spark) -> None:
    _agree(spark, examples=6, seed=1)


@pytest.mark.slow
def test_spark_sql_oracle_agrees_with_duckdb_on_many_batches(spark) -> None:
    _agree(spark, examples=120, seed=None)


def test_both_materializations_agree_with_duckdb(spark) -> None:
    """Python's replay (small cases) and Spark SQL's fold of the changelog give DuckDB's answer, upsert/all too."""
    drawn: list[Scenario] = []

    @settings(max_examples=30, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(regular_join_scenarios(max_ops=20, modes=("retract", "upsert", "all"), uk_shapes=("join_key", "own")))
    def collect(s: Scenario) -> None:
        drawn.append(s)

    collect()
    shape = drawn[0]
    more: list[Scenario] = []

    @settings(max_examples=20, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(same_shape(shape, max_ops=20))
    def collect_more(s: Scenario) -> None:
        more.append(s)

    collect_more()
    modes = {spec.changelog_mode for s in drawn for spec in s.inputs}
    assert {"retract", "upsert", "all"} <= modes
    batch = drawn + more
    want = [duckdb_final(s) for s in batch]
    for materialize in ("python", "spark"):
        got = SparkSQLOracle(spark, materialize=materialize).final_many(batch)
        for s, g, w in zip(batch, got, want, strict=False):
            assert (type(g) is type(w)) if isinstance(w, Exception) or isinstance(g, Exception) else g == w, \
                (materialize, s, g, w)


def _bad(mode: str, events: tuple) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), ("k",) if mode in ("upsert", "all") else None, mode)
    b = InputSpec("b", (("k", "BIGINT"),), None, "retract")
    return Scenario("bad", (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)), Config(), events)


@pytest.mark.parametrize("scenario", [
    _bad("retract", (ChangeEvent("a", "-D", (1, 1)), ChangeEvent("a", "+I", (1, 1)))),   # absent at that point
    _bad("retract", (ChangeEvent("a", "+I", (1, 1)), ChangeEvent("a", "-U", (1, 2)))),
    _bad("all", (ChangeEvent("a", "+I", (1, 1)), ChangeEvent("a", "-U", (1, 2)))),      # not the image held
    _bad("all", (ChangeEvent("a", "-D", (1, 1)),)),                                       # nothing held
], ids=["retract-before-insert", "retract-absent", "all-wrong-image", "all-nothing-held"])
def test_spark_materialization_rejects_what_python_rejects(spark, scenario: Scenario) -> None:
    with pytest.raises(BadInputError):
        DuckDBOracle().final(scenario)
    with pytest.raises(BadInputError, match="input 'a'"):
        SparkSQLOracle(spark, materialize="spark").final(scenario)


def test_the_agreement_property_catches_a_wrong_answer(spark) -> None:
    """A planted wrong DuckDB answer (a row dropped) is reported, naming the smallest differing scenario."""
    a = InputSpec("a", (("k", "BIGINT"),), None, "retract")
    b = InputSpec("b", (("k", "BIGINT"),), None, "retract")
    small = Scenario("s", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)), Config(),
                     (ChangeEvent("a", "+I", (1,)), ChangeEvent("b", "+I", (1,))))
    big = small.with_events(small.events + (ChangeEvent("a", "+I", (1,)),))
    oracle = SparkSQLOracle(spark)
    oracles_agree([big, small], oracle)                      # the true answers agree
    planted = [Counter({(1, 1): 1}), Counter()]              # big has two rows; small's row dropped
    with pytest.raises(PropertyFailure) as caught:
        oracles_agree([big, small], oracle, expected=planted)
    assert caught.value.divergence.scenario == small         # both differ: the smallest is reported
    assert caught.value.divergence.engine == Counter({(1, 1): 1})
    with pytest.raises(PropertyFailure) as caught:
        oracles_agree([big, small], oracle, expected=[Counter({(1, 1): 1}), Counter({(1, 1): 1})])
    assert caught.value.divergence.scenario == big and caught.value.divergence.engine == Counter({(1, 1): 2})


def test_a_wrong_translation_is_caught(spark, monkeypatch) -> None:
    """If IS NOT DISTINCT FROM were translated as plain equality, NULL keys would stop matching: caught."""
    from converge.oracle import spark_translate

    original = spark_translate._Translator.emit

    def naive(self, node):
        import sqlglot.expressions as exp
        if isinstance(node, exp.NullSafeEQ):
            (lt, _), (rt, _) = original(self, node.left), original(self, node.right)
            return f"({lt} = {rt})", "BOOLEAN"
        return original(self, node)

    monkeypatch.setattr(spark_translate._Translator, "emit", naive)
    a = InputSpec("a", (("k", "BIGINT"),), None, "retract")
    b = InputSpec("b", (("k", "BIGINT"),), None, "retract")
    s = Scenario("null keys", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k IS NOT DISTINCT FROM b.k",)), Config(),
                 (ChangeEvent("a", "+I", (None,)), ChangeEvent("b", "+I", (None,))))
    with pytest.raises(PropertyFailure):
        oracles_agree([s], SparkSQLOracle(spark))

