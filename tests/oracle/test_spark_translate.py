"""The Spark SQL oracle's translation and its refusals, without a JVM (sqlglot and DuckDB only)."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

from converge.engine.model.duckdb_ast import min_mod_minus_one_overflows
from converge.engine.model.errors import OracleError, UsageError, exit_code
from converge.engine.model.scenario import Config, InputSpec, JoinSpec, Scenario
from converge.oracle.guard import safe_condition
from converge.oracle.spark_translate import spark_string, translate_condition, translate_query
from converge.oracle.sql import render_join_sql

A = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT"), ("i", "INTEGER"), ("d", "DOUBLE"), ("s", "VARCHAR"),
                    ("f", "BOOLEAN")), None, "retract")
B = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT"), ("s", "VARCHAR")), None, "retract")
TYPES = {(spec.name, c): t for spec in (A, B) for c, t in spec.columns}


def spark_of(condition: str) -> str:
    return translate_condition(safe_condition(condition, (A, B), "c"), TYPES)


def test_null_safe_equality_becomes_the_spaceship_operator() -> None:
    assert spark_of("a.k IS NOT DISTINCT FROM b.k") == "((`a`.`k` <=> `b`.`k`))"
    assert spark_of("a.k IS DISTINCT FROM b.k") == "((NOT (`a`.`k` <=> `b`.`k`)))"


def test_division_keeps_duckdbs_ieee_result_for_a_zero_divisor() -> None:
    text = spark_of("a.x / b.y > 1")
    assert "CAST('Infinity' AS DOUBLE)" in text and "atan2(" in text     # the sign of a -0.0 divisor counts
    assert "CAST(`a`.`x` AS DOUBLE) / CAST(`b`.`y` AS DOUBLE)" in text


def test_integer_division_and_modulo_are_null_for_zero_and_raise_on_overflow() -> None:
    text = spark_of("a.x // b.y = 1")
    assert "= 0 THEN NULL" in text and "raise_error(" in text and "(-9223372036854775807 - 1)" in text
    text = spark_of("a.x % b.y = 1")
    if min_mod_minus_one_overflows():  # DuckDB 1.x: MIN % -1 is an overflow error
        assert "= 0 THEN NULL" in text and "raise_error(" in text and "(-9223372036854775807 - 1)" in text
    else:  # DuckDB 2.0.1 answers 0
        assert "= 0 THEN NULL" in text and "= -1 THEN CAST(0 AS BIGINT)" in text and "raise_error(" not in text
    assert " DIV " in spark_of("a.x // b.y = 1")


def test_a_double_cast_to_an_integer_rounds_half_to_even_as_duckdb_does() -> None:
    assert spark_of("CAST(a.d AS BIGINT) = b.k") == "((CAST(rint(`a`.`d`) AS BIGINT) = `b`.`k`))"


def test_duckdbs_regenerated_double_and_boolean_constants() -> None:
    # DuckDB 1.x regenerates a DOUBLE literal without its exponent, so the guard writes it as a cast; 2.x keeps 1e3
    # (a DOUBLE in Spark SQL too).
    double = "CAST('1000.0' AS DOUBLE)" if duckdb.__version__.startswith("1.") else "1e3"
    assert spark_of("a.d = 1e3") == f"((`a`.`d` = {double}))"
    assert spark_of("TRUE") == "TRUE"


def test_lower_and_upper_stop_on_non_ascii_text() -> None:
    text = spark_of("lower(a.s) = b.s")
    assert "RLIKE '[^\\\\x00-\\\\x7F]'" in text and "raise_error(" in text


def test_string_literals_are_escaped_for_sparks_backslash_rules() -> None:
    assert spark_string("it's a \\ path") == "'it\\'s a \\\\ path'"
    assert spark_of("a.s = 'x''\\y'") == "((`a`.`s` = 'x\\'\\\\y'))"


@pytest.mark.parametrize("condition, what", [
    ("a.s = 1", "across types"),
    ("a.x = b.s", "across types"),
    ("a.x IN (1, 'a')", "IN across types"),
    ("a.x * 1.5 > 2", "DECIMAL literal"),
    ("CAST(a.s AS BIGINT) = 1", "text to BIGINT"),
    ("CAST(a.d AS VARCHAR) = b.s", "DOUBLE to VARCHAR"),
    ("a.x || b.s = 'x'", "||"),
    ("a.k = 99999999999999999999", "outside BIGINT"),
    ("length(a.x) = 1", "length of BIGINT"),
    ("NOT a.x", "NOT of BIGINT"),
])
def test_what_has_no_faithful_translation_is_refused_by_name(condition: str, what: str) -> None:
    with pytest.raises(OracleError, match="refuses") as caught:
        spark_of(condition)
    assert what in str(caught.value)


def test_the_query_skeleton_in_sparks_dialect() -> None:
    for jtype, keyword in [("semi", "LEFT SEMI JOIN"), ("anti", "LEFT ANTI JOIN"), ("full", "FULL OUTER JOIN"),
                           ("right", "RIGHT OUTER JOIN"), ("left", "LEFT OUTER JOIN"), ("inner", "INNER JOIN")]:
        s = Scenario("q", (A, B), JoinSpec(("a", "b"), (jtype,), ("a.k = b.k",)), Config(), ())
        sql = translate_query(render_join_sql(s, {"a": "va", "b": "vb"}), TYPES)
        assert f"{keyword} `vb` AS `b` ON" in sql
        assert ("`b`.`y`" in sql.splitlines()[0]) == (jtype not in ("semi", "anti"))


def test_the_default_oracle_does_not_import_pyspark_or_the_spark_oracle() -> None:
    code = ("import sys; from converge.oracle import DuckDBOracle, final_oracle; final_oracle('duckdb'); "
            "print('pyspark' in sys.modules, 'converge.oracle.spark_sql' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("argv", [
    ["run", "--oracle", "spark"],                                      # the local runtime's properties
    ["run", "--oracle", "spark", "--runtime", "spark", "--system", "x"],
    ["replay", "--oracle", "spark", "nowhere.json"],
])
def test_oracle_spark_without_the_spark_runtime_is_a_usage_error(argv: list[str], capsys) -> None:
    from converge.cli.main import main

    assert main(argv + ["--no-reports"] if argv[0] == "run" else argv) == exit_code(UsageError("x"))
    assert "--oracle spark applies with --runtime spark" in capsys.readouterr().err


def test_final_check_needs_the_spark_runtime(capsys) -> None:
    from converge.cli.main import main

    assert main(["bench", "--final-check", "--events", "10"]) == exit_code(UsageError("x"))
    assert "--final-check runs on Spark" in capsys.readouterr().err


def test_is_true_and_is_not_false_keep_three_valued_logic_in_spark_sql() -> None:
    # DuckDB regenerates `x IS TRUE` as a null-safe comparison with TRUE: never NULL, as in Flink (issue 40)
    assert spark_of("(a.x > b.y) IS TRUE") == "((CAST(((`a`.`x` > `b`.`y`)) AS BOOLEAN) <=> TRUE))"
    assert spark_of("(a.x > b.y) IS NOT FALSE") == "((NOT (CAST(((`a`.`x` > `b`.`y`)) AS BOOLEAN) <=> FALSE)))"
