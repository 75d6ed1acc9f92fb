"""A table read in several places (a self-join, EXISTS / IN subqueries over one table) read as one stream input
whose readers name it as their `source`.

Each expected reading is written by hand: the stream input carries the table's columns and is declared before its
first reader; every reader declares the same columns, key and changelog mode and names the stream.
"""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import InputSpec, IntervalSpec, JoinSpec

TABLES = """
CREATE TABLE emp (id BIGINT, boss BIGINT, name STRING) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
CREATE TABLE dept (id BIGINT, head BIGINT) WITH ('connector' = 'kafka');
"""
EMP = (("id", "BIGINT"), ("boss", "BIGINT"), ("name", "VARCHAR"))
DEPT = InputSpec("d", (("id", "BIGINT"), ("head", "BIGINT")), None, "insert_only")


def read(query: str):
    return parse_query(TABLES + query, "q.sql")


def test_a_self_join_is_one_stream_read_by_both_inputs() -> None:
    q = read("SELECT e.name, m.name AS boss_name FROM emp AS e LEFT JOIN emp AS m ON e.boss = m.id;")
    assert q.inputs == (InputSpec("emp", EMP, None, "retract"),
                        InputSpec("e", EMP, None, "retract", source="emp"),
                        InputSpec("m", EMP, None, "retract", source="emp"))
    assert q.join == JoinSpec(("e", "m"), ("left",), ("(e.boss = m.id)",))
    assert [(o.name, o.alias, o.column) for o in q.output] == [("name", "e", "name"), ("boss_name", "m", "name")]
    assert (q.stream_of("e"), q.stream_of("m"), q.streams()) == ("emp", "emp", ("emp",))
    assert q.source_of("emp").name == "emp"
    scenario = q.scenario()  # the model accepts the reading as a scenario
    assert [s.name for s in scenario.chain] == ["e", "m"]


def test_two_subqueries_over_one_table_and_a_stream_named_past_an_alias() -> None:
    q = read("SELECT d.id FROM dept AS d WHERE EXISTS (SELECT 1 FROM emp WHERE emp.boss = d.head) "
             "AND NOT EXISTS (SELECT 1 FROM emp AS x WHERE x.id = d.head AND x.boss IS NULL);")
    # the alias `emp` has the table's name: its stream is emp_1
    assert q.inputs == (DEPT,
                        InputSpec("emp_1", EMP, None, "retract"),
                        InputSpec("emp", EMP, None, "retract", source="emp_1"),
                        InputSpec("x", EMP, None, "retract", source="emp_1"))
    assert q.join == JoinSpec(("d", "emp", "x"), ("semi", "anti"),
                              ("(emp.boss = d.head)", "(x.id = d.head) AND (x.boss IS NULL)"))


def test_an_in_subquery_over_the_joined_table_itself() -> None:
    q = read("SELECT e.id FROM emp AS e WHERE e.boss IN (SELECT m.id FROM emp AS m WHERE m.boss IS NULL);")
    assert q.inputs == (InputSpec("emp", EMP, None, "retract"),
                        InputSpec("e", EMP, None, "retract", source="emp"),
                        InputSpec("m", EMP, None, "retract", source="emp"))
    assert q.join == JoinSpec(("e", "m"), ("semi",), ("(e.boss = m.id) AND (m.boss IS NULL)",))


def test_a_subquery_table_that_shadows_an_outer_name_gets_a_fresh_alias() -> None:
    # SQL resolves `emp` inside the subquery to the subquery's own table, so `emp.id` there is the inner row's
    q = read("SELECT * FROM emp JOIN dept AS d ON emp.id = d.head "
             "WHERE EXISTS (SELECT 1 FROM emp WHERE emp.boss = d.id);")
    assert [(s.name, s.source) for s in q.inputs] == [("emp_2", None), ("emp", "emp_2"), ("d", None),
                                                      ("emp_1", "emp_2")]
    assert q.join.inputs == ("emp", "d", "emp_1")
    assert q.join.conditions == ("(emp.id = d.head)", "(emp_1.boss = d.id)")


def test_a_view_over_a_table_joined_with_the_table() -> None:
    q = read("CREATE VIEW bosses AS SELECT id, name AS boss_name FROM emp WHERE boss IS NULL;\n"
             "SELECT e.name, b.boss_name FROM emp AS e JOIN bosses AS b ON e.boss = b.id;")
    assert q.inputs == (InputSpec("emp", EMP, None, "retract"),
                        InputSpec("e", EMP, None, "retract", source="emp"),
                        InputSpec("b", EMP, None, "retract", source="emp",
                                  project=(("id", "b.id"), ("boss_name", "b.name")), where="(b.boss IS NULL)"))
    assert q.join.conditions == ("(e.boss = b.id)",)


@pytest.mark.parametrize("query, error, message", [
    ("SELECT * FROM emp JOIN emp ON emp.id = emp.boss;", BadInputError, "alias 'emp' is used twice"),
    ("SELECT * FROM emp e JOIN emp E ON e.id = E.boss;", BadInputError, "is used twice"),
])
def test_a_table_twice_under_one_name_is_still_refused(query: str, error: type, message: str) -> None:
    """Flink (Calcite) refuses a FROM clause that names one relation twice; so does converge."""
    with pytest.raises(error) as info:
        read(query)
    assert message in str(info.value)


def test_an_interval_self_join_is_one_stream_read_by_both_inputs_of_the_interval_join() -> None:
    """Flink's reused scan feeds both inputs of its TimeIntervalJoin: the stream carries the rowtime, both readers
    name it, and the window is a.ts - b.ts in [-1 s, 0]."""
    tables = ("CREATE TABLE ev (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
              "WITH ('connector' = 'kafka');\n")
    q = parse_query(tables + "SELECT * FROM ev AS a\nJOIN ev AS b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '1' "
                             "SECOND AND b.ts;", "q.sql")
    columns = (("k", "BIGINT"), ("ts", "BIGINT"))
    assert q.inputs == (InputSpec("ev", columns, None, "insert_only", "ts"),
                        InputSpec("a", columns, None, "insert_only", "ts", source="ev"),
                        InputSpec("b", columns, None, "insert_only", "ts", source="ev"))
    assert q.join == JoinSpec(("a", "b"), ("inner",), ("(a.k = b.k)",), IntervalSpec("a.ts", "b.ts", -1000, 0))
    assert q.streams() == ("ev",) and q.table_of("a").watermark_delay_ms == 2000
    q.scenario()  # the model takes it
