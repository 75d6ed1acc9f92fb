"""changelog_mode "all": a raw changelog (-U/+U pairs, bare +U, -D) on a unique-key input."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, IntervalSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.runtime.local import run_scenario
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.oracle import materialize_inputs
from converge.properties.reference import equality_keys

COLS = (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"))
A = InputSpec("a", COLS, ("id",), "all")
B = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")))


def _scenario(*events: tuple, jtype: str = "inner") -> Scenario:
    return Scenario("all", (A, B), JoinSpec(("a", "b"), (jtype,), ("a.k = b.k",)),
                    events=tuple(ChangeEvent(n, k, r) for n, k, r in events))


def test_an_all_input_needs_a_unique_key() -> None:
    doc = {"inputs": [{"name": "a", "columns": [["k", "BIGINT"]], "changelog_mode": "all"},
                      {"name": "b", "columns": [["k", "BIGINT"]]}],
           "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]}}
    with pytest.raises(BadInputError, match="an all input needs a unique_key") as err:
        scenario_from_dict(doc)
    assert err.value.path == "inputs[0].changelog_mode"


def test_all_four_kinds_are_accepted_and_rows_replace_by_unique_key() -> None:
    s = _scenario(("b", "+I", (1, 10)), ("a", "+I", (1, 1, 5)), ("a", "-U", (1, 1, 5)), ("a", "+U", (1, 1, 6)),
                  ("a", "+U", (1, 1, 7)), ("a", "-D", (1, 1, 7)), ("a", "+I", (1, 2, 8)))
    tables = [materialize_inputs(s, i)["a"] for i in range(len(s.events))]
    assert tables[4] == Counter({(1, 1, 7): 1}) and tables[5] == Counter() and tables[6] == Counter({(1, 2, 8): 1})
    out = run_scenario(s).per_event
    assert [(c.kind, c.row) for c in out[4]] == [("-U", (1, 1, 6, 1, 10)), ("+U", (1, 1, 7, 1, 10))]


@pytest.mark.parametrize("kind", ["-U", "-D"])
def test_a_retraction_must_carry_the_image_its_key_holds(kind: str) -> None:
    s = _scenario(("a", "+I", (1, 1, 5)), ("a", kind, (1, 1, 6)))
    with pytest.raises(BadInputError) as oracle_err:
        materialize_inputs(s)
    assert oracle_err.value.event_index == 1
    with pytest.raises(BadInputError, match="not in the join state"):
        run_scenario(s)


def test_an_interval_join_refuses_an_all_input() -> None:
    a = InputSpec("a", COLS, ("id",), "all", time_column="x")
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), time_column="y")
    s = Scenario("iv", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",), IntervalSpec("a.x", "b.y", 0, 1)),
                 Config(), (ChangeEvent("a", "+I", (1, 1, 1)),))
    with pytest.raises(BadInputError, match="all \\(updating\\) input"):
        run_scenario(s)


def _bare_updates_keep_their_join_key(s) -> int:
    """Checks every bare +U of an `all` input keeps the join key of the row it replaces; returns how many."""
    names = list(s.join.inputs)
    key_cols = {}
    for i, cond in enumerate(s.join.conditions):
        for left, lc, rc, _ in equality_keys(cond, names[: i + 1], names[i + 1]):
            key_cols.setdefault(left, set()).add(lc)
            key_cols.setdefault(names[i + 1], set()).add(rc)
    held: dict = {}
    bare = 0
    previous = None
    for e in s.events:
        if not isinstance(e, ChangeEvent):
            continue
        spec = s.input(e.input)
        if spec.changelog_mode == "all":
            uk = (e.input, tuple(e.row[spec.index_of(c)] for c in spec.unique_key))
            if e.kind == "+U" and not (previous is not None and previous.kind == "-U" and previous.input == e.input):
                bare += 1
                old = held[uk]
                for c in key_cols.get(e.input, ()):
                    assert old[spec.index_of(c)] == e.row[spec.index_of(c)], f"bare +U moved join key {c}: {e}"
            if e.kind in ("+I", "+U"):
                held[uk] = e.row
            else:
                held.pop(uk, None)
        previous = e
    return bare


def test_generated_all_streams_mix_pairs_and_bare_updates_that_keep_the_join_key() -> None:
    seen = Counter()

    @settings(max_examples=300, deadline=None, database=None)
    @given(regular_join_scenarios(modes=("all",), uk_shapes=("join_key", "own")))
    def regular(s) -> None:
        seen["bare"] += _bare_updates_keep_their_join_key(s)
        seen["pairs"] += sum(e.kind == "-U" for e in s.events)

    @settings(max_examples=100, deadline=None, database=None)
    @given(multiway_scenarios(modes=("all",)))
    def multiway(s) -> None:
        seen["bare"] += _bare_updates_keep_their_join_key(s)

    regular()
    multiway()
    assert seen["bare"] > 20 and seen["pairs"] > 20
