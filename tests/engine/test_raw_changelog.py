"""Raw changelogs (a retraction of a row the join state does not hold): semantics=correct refuses them, naming the
row and where; semantics=flink joins them as Flink's operators do (tests/scenarios/raw_retractions/ holds the
hand-derived outputs); the mid-stream generator and its properties (properties/raw_changelog.py) can fail."""

from __future__ import annotations

from dataclasses import replace

import pytest

from converge.engine.model.errors import ApiMisuseError, BadInputError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.planner import base as planner_base
from converge.engine.runtime.local import run_scenario
from converge.engine.state import MapState
from converge.generators.mid_stream import mid_stream, raw_retractions, sent_before
from converge.properties.divergence import PropertyFailure
from converge.properties.raw_changelog import correct_refuses_first_raw_retraction, lost_state_equals_never_sent
from tests.support.paths import SCENARIOS

RAW = SCENARIOS / "raw_retractions"

# Each file's first raw retraction, as written by hand: (event index, what the refusal under correct must say).
FIRST_RAW = {
    "inner_no_unique_key.json": (1, "event 1: -D on input 'a' retracts row [1, 10]"),
    "inner_join_key_contains_unique_key.json": (2, "event 2: -D on input 'a' retracts row [1, 99]"),
    "inner_input_side_has_unique_key.json": (2, "event 2: -U on input 'a' retracts row [1, 7, 99]"),
    "left_outer_side.json": (1, "event 1: -D on input 'a' retracts row [1, 10]"),
    "left_outer_join_key_contains_unique_key.json": (1, "event 1: -D on input 'a' retracts row [1, 99]"),
    "left_outer_input_side_has_unique_key.json": (1, "event 1: -U on input 'a' retracts row [1, 7, 99]"),
    "left_inner_side.json": (1, "event 1: -D on input 'b' retracts row [1, 20]"),
    "full_both_outer.json": (1, "event 1: -D on input 'a' retracts row [1, 10]"),
    "semi.json": (1, "event 1: -D on input 'a' retracts row [1, 10]"),
    "anti.json": (1, "event 1: -D on input 'b' retracts row [1, 20]"),
    "minibatch_inner_bundle_starts_with_update_before.json": (2, "event 2: -U on input 'a' retracts row [1, 10]"),
    "minibatch_left_bundle_starts_with_update_before.json": (2, "event 2: -U on input 'a' retracts row [1, 10]"),
    "multiway_left_padding_by_count.json": (2, "event 2: -D on input 'b' retracts row [1, 21]"),
    "minibatch_no_unique_key_raw_delete_cancels_insert.json": (0, "event 0: -D on input 'a' retracts row [1, 10]"),
}


def test_every_raw_retraction_scenario_is_listed() -> None:
    assert sorted(p.name for p in RAW.glob("*.json")) == sorted(FIRST_RAW)


@pytest.mark.parametrize("name", sorted(FIRST_RAW))
def test_correct_refuses_the_first_raw_retraction_of_each_scenario(name: str) -> None:
    flink = load_scenario(RAW / name)
    assert flink.config.semantics == "flink"
    correct = replace(flink, config=replace(flink.config, semantics="correct"))
    index, says = FIRST_RAW[name]
    with pytest.raises(BadInputError) as caught:
        run_scenario(correct)
    assert caught.value.event_index == index
    assert str(caught.value).startswith(says)
    assert "not in the join state" in str(caught.value)
    assert raw_retractions(flink)[0] == index  # the generator's own model of held rows agrees


def _ab(events: list[tuple], *, join_type: str = "left", semantics: str = "flink", uk_b: tuple | None = None) -> Scenario:
    cols = (("k", "BIGINT"), ("x", "BIGINT"))
    return Scenario("raw", (InputSpec("a", cols), InputSpec("b", cols, uk_b)),
                    JoinSpec(("a", "b"), (join_type,), ("a.k = b.k",)), Config(semantics=semantics),  # type: ignore
                    tuple(ChangeEvent(i, k, r) for i, k, r in events))


def test_raw_retractions_follow_held_rows_per_input() -> None:
    s = _ab([("a", "+I", (1, 1)), ("a", "-D", (1, 2)), ("b", "-U", (1, 1)), ("a", "-D", (1, 1)), ("a", "-D", (1, 1)),
             ("b", "+I", (2, 5)), ("b", "-D", (2, 6)), ("b", "-D", (2, 5))], uk_b=("k",))
    # event 1: a never sent (1, 2); 2: b never sent anything; 4: (1, 1) already retracted;
    # 6: b's key 2 holds (2, 5), not (2, 6)
    assert raw_retractions(s) == [1, 2, 4, 6]


def test_mid_stream_cuts_at_start() -> None:
    s = _ab([("a", "+I", (1, 1)), ("b", "+I", (1, 2)), ("a", "-D", (1, 1))])
    assert [e.row for e in mid_stream(s, 2).events] == [(1, 1)]
    assert [e.row for e in sent_before(s, 2).events] == [(1, 1), (1, 2)]
    assert mid_stream(s, 0) == s
    assert raw_retractions(mid_stream(s, 1)) == [1]
    with pytest.raises(ApiMisuseError, match="start 4 is outside"):
        mid_stream(s, 4)


def test_flink_joins_a_raw_retraction_and_correct_refuses_it() -> None:
    events = [("b", "+I", (1, 7)), ("a", "-D", (1, 1))]
    out = run_scenario(_ab(events, join_type="inner")).per_event
    assert [[(c.kind, c.row) for c in items] for items in out] == [[], [("-D", (1, 1, 1, 7))]]
    with pytest.raises(BadInputError, match=r"event 1: -D on input 'a' retracts row \[1, 1\]"):
        run_scenario(_ab(events, join_type="inner", semantics="correct"))


def test_correct_refusal_property_fails_when_the_engine_accepts_raw_retractions(monkeypatch) -> None:
    started = _ab([("b", "+I", (1, 7)), ("a", "-D", (1, 1))], semantics="correct")
    correct_refuses_first_raw_retraction(started)
    monkeypatch.setattr(planner_base, "source_side_validates", lambda spec, scenario: False)
    with pytest.raises(PropertyFailure, match="retracts a row its input has not sent, and the run accepted it"):
        correct_refuses_first_raw_retraction(started)


def test_correct_refusal_property_fails_on_a_refusal_without_cause(monkeypatch) -> None:
    valid = _ab([("a", "+I", (1, 1)), ("a", "-D", (1, 1))], join_type="inner", semantics="correct")
    correct_refuses_first_raw_retraction(valid)
    monkeypatch.setattr(planner_base, "source_side_validates", lambda spec, scenario: True)
    monkeypatch.setattr("converge.engine.views.InputSideHasNoUniqueKeyStateView.contains", lambda self, row: False)
    with pytest.raises(PropertyFailure, match="no event retracts a row its input has not sent"):
        correct_refuses_first_raw_retraction(valid)


def _cut() -> tuple[Scenario, Scenario]:
    whole = _ab([("a", "+I", (1, 1)), ("b", "+I", (1, 5)), ("a", "-D", (1, 1)), ("b", "+I", (1, 6))])
    return mid_stream(whole, 2), sent_before(whole, 2)


def test_lost_state_property_holds_on_a_cut() -> None:
    started, before = _cut()
    assert raw_retractions(started) == [0]
    lost_state_equals_never_sent(started, before)


def test_lost_state_property_fails_when_flink_refuses_raw_retractions(monkeypatch) -> None:
    monkeypatch.setattr(planner_base, "source_side_validates", lambda spec, scenario: True)
    with pytest.raises(BadInputError, match="event 0: -D on input 'a' retracts row"):
        lost_state_equals_never_sent(*_cut())


def test_lost_state_property_fails_when_expired_rows_are_still_read(monkeypatch) -> None:
    original = MapState.items

    def items_with_expired(self):  # the bug: iteration returns entries TTL has made invisible
        bucket = self._table.get(self._backend.current_key)
        if bucket is None:
            return original(self)
        return [(k, e[0]) for k, e in bucket.entries.items()]

    monkeypatch.setattr(MapState, "items", items_with_expired)
    with pytest.raises(PropertyFailure, match="after the unsent events' state expired"):
        lost_state_equals_never_sent(*_cut())


def test_without_mini_batch_the_raw_delete_does_not_cancel_the_insert() -> None:
    """The contrast the mini-batch file's description states: record by record, the raw -D changes nothing, the +I
    is stored, and b's row joins it."""
    s = load_scenario(RAW / "minibatch_no_unique_key_raw_delete_cancels_insert.json")
    plain = replace(s, config=replace(s.config, mini_batch_size=None))
    out = run_scenario(plain).per_event
    assert [[(c.kind, c.row) for c in items] for items in out] == [[], [], [("+I", (1, 10, 1, 20))], []]
