"""generators/time_attributes.py: time columns added by construction to regular and multi-way scenarios."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from converge.engine.materialize import clean, fold
from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.engine.runtime.local import run_scenario
from converge.generators.shapes import same_shape
from converge.generators.time_attributes import time_attribute_scenarios, with_time_columns, without_time_columns
from converge.properties.query_reading import oracle_final


def _retractions_carry_their_rows_time(scenario: Scenario) -> None:
    timed = set(scenario.meta["time_attributes"]["inputs"])
    present: dict[str, list[tuple]] = {name: [] for name in timed}
    for e in scenario.events:
        if not isinstance(e, ChangeEvent) or e.input not in timed:
            continue
        assert isinstance(e.row[-1], int), e  # never NULL: Flink refuses a NULL rowtime
        if e.kind in ("-U", "-D"):
            spec = next(s for s in scenario.inputs if s.name == e.input)
            same = [r for r in present[e.input] if r == e.row or (
                spec.unique_key and all(r[spec.index_of(c)] == e.row[spec.index_of(c)] for c in spec.unique_key)
                and r[-1] == e.row[-1])]
            assert same, f"{e} retracts a row never inserted with that time"
            present[e.input].remove(same[0])
        else:
            present[e.input].append(e.row)


@settings(max_examples=40, deadline=None, database=None)
@given(time_attribute_scenarios(), st.data())
def test_timed_cases_and_more_of_their_shape_are_valid_and_keep_the_batch_answer(scenario, data) -> None:
    more = data.draw(same_shape(scenario))
    assert more.meta["time_attributes"] == scenario.meta["time_attributes"]
    assert [(s.columns, s.time_column) for s in more.inputs] == [(s.columns, s.time_column) for s in scenario.inputs]
    for case in (scenario, more):
        _retractions_carry_their_rows_time(case)
        assert clean(fold(run_scenario(case).changes)) == oracle_final(case)


def test_times_by_hand_and_the_round_trip() -> None:
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), ("k",), "upsert")
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), None, "retract")
    events = (ChangeEvent("a", "+I", (1, 5)), ChangeEvent("b", "+I", (1, 6)), ChangeEvent("a", "+U", (1, 7)),
              ChangeEvent("b", "-D", (1, 6)), ChangeEvent("a", "-D", (1, None)))
    base = Scenario("s", (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)), events=events)
    timed = with_time_columns(base, ["a", "b"], (1000, 10, (0, -3)), compare=True)
    # fresh times 1000, 1007, 1020 in order of entry; each retraction carries its row's time (the key's row for
    # the key-only upsert delete)
    assert [e.row for e in timed.events] == [(1, 5, 1000), (1, 6, 1007), (1, 7, 1020), (1, 6, 1007),
                                             (1, None, 1020)]
    assert timed.join.conditions == ("a.k = b.k AND (a.ts <= b.ts)",)
    assert [s.time_column for s in timed.inputs] == ["ts", "ts"]
    back = without_time_columns(timed)
    assert (back.inputs, back.join, back.events, back.meta) == (base.inputs, base.join, base.events, base.meta)
