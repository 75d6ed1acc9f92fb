"""Many scenarios in one oracle query (oracle/batch.py) give each scenario the answer of its own query.

The reference is the one-scenario query (`DuckDBOracle.history` / `final`), as issue 43 asks: on every stored
scenario file the oracle answers, batched with the files of its shape and with generated scenarios of the
same shape, and on generated batches. One hand-worked case pins what a wrong split would look like: rows of
two scenarios at the same positions of their own streams must never meet.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError, BadInputError, OracleError, UnsupportedError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.generators.scenarios import regular_join_batches
from converge.generators.schema import any_schema_join_batches
from converge.oracle import DuckDBOracle
from converge.oracle.batch import batch_history_sql, finals, histories, oracle_shape
from tests.support.paths import SCENARIOS

ORACLE = DuckDBOracle()


def _answered_files() -> list[Scenario]:
    """Every stored scenario file whose history the one-scenario oracle answers."""
    out = []
    for path in sorted(SCENARIOS.rglob("*.json")):
        try:
            scenario = load_scenario(path)
            ORACLE.history(scenario)
        except (BadInputError, OracleError, UnsupportedError, ValueError):
            continue
        out.append(scenario)
    return out


FILES = _answered_files()


def test_the_stored_files_are_many_and_of_shared_shapes() -> None:
    shapes = Counter(oracle_shape(s) for s in FILES)
    assert len(FILES) >= 40, len(FILES)
    assert max(shapes.values()) >= 3  # some shapes hold several files: those batches hold several scenarios


def test_stored_files_batched_by_shape_answer_as_alone() -> None:
    alone = [ORACLE.history(s) for s in FILES]
    assert histories(FILES) == alone            # grouped by shape, several queries
    assert [ORACLE.final(s) for s in FILES] == finals(FILES)


def test_stored_files_in_reverse_order_and_repeated() -> None:
    batch = list(reversed(FILES)) + FILES[:5]
    assert histories(batch) == [ORACLE.history(s) for s in batch]


@settings(max_examples=30, deadline=None, database=None)
@given(st.one_of(regular_join_batches(), any_schema_join_batches()))
def test_generated_batches_answer_as_alone(batch: list[Scenario]) -> None:
    assert len({oracle_shape(s) for s in batch}) == 1
    sql, offsets = batch_history_sql(batch)
    assert offsets == [sum(len(s.events) for s in batch[:i]) for i in range(len(batch))]
    assert histories(batch) == [ORACLE.history(s) for s in batch]
    assert finals(batch) == [ORACLE.final(s) for s in batch]


def _left_join(name: str, events: tuple[ChangeEvent, ...]) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")))
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")))
    return Scenario(name, (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)), Config(), events)


def test_rows_of_two_scenarios_never_meet() -> None:
    """Scenario one holds only a left row, scenario two only a right row of the same key, each at its own
    position 0. Worked by hand: one's answer is the padded left row, two's is empty (a LEFT join's right row
    alone is nothing), and a third, empty scenario between them answers nothing."""
    one = _left_join("one", (ChangeEvent("a", "+I", (1, 10)),))
    empty = _left_join("empty", ())
    two = _left_join("two", (ChangeEvent("b", "+I", (1, 20)), ChangeEvent("a", "+I", (2, 30))))
    assert histories([one, empty, two]) == [
        [Counter({(1, 10, None, None): 1})],
        [],
        [Counter(), Counter({(2, 30, None, None): 1})],
    ]
    assert finals([one, empty, two]) == [Counter({(1, 10, None, None): 1}), Counter(), Counter({(2, 30, None, None): 1})]


def test_one_query_for_scenarios_of_one_shape_refuses_another_shape() -> None:
    one = _left_join("one", (ChangeEvent("a", "+I", (1, 10)),))
    inner = Scenario("inner", one.inputs, JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)), Config(), one.events)
    with pytest.raises(ApiMisuseError, match=r"scenarios\[1\] has another join"):
        batch_history_sql([one, inner])
    with pytest.raises(ApiMisuseError, match="at least one scenario"):
        batch_history_sql([])
    assert histories([one, inner]) == [ORACLE.history(one), ORACLE.history(inner)]  # two shapes: two queries


def test_a_bad_stream_in_a_batch_is_bad_input() -> None:
    good = _left_join("good", (ChangeEvent("a", "+I", (1, 10)),))
    bad = _left_join("bad", (ChangeEvent("a", "-D", (1, 10)),))  # retracts a row that was never inserted
    with pytest.raises(BadInputError):
        histories([good, bad])
