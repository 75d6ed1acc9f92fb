"""properties.history_check: the change form reaches the snapshot form's verdict, first divergence included.

The snapshot form (one bag per event, bag by bag) is the reference: on
generated scenarios, with the engine's output left alone or tampered with at
one event, both forms must pass together or fail at the same event with the
same two bags.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.changelog import Change
from converge.engine.runtime.local import run_scenario
from converge.generators.multiway import ALL_TYPES, multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.properties import history_check
from converge.properties.divergence import PropertyFailure
from converge.properties.history_check import check_history, first_divergence
from tests.conftest import examples


def _verdict(scenario, outputs, limit: int, monkeypatch):
    monkeypatch.setattr(history_check, "SNAPSHOT_MAX_EVENTS", limit)
    try:
        check_history("p", scenario, lambda: iter(outputs), "differs")
    except PropertyFailure as exc:
        d = exc.divergence
        return d.event_index, d.engine, d.expected
    return None


def _tamper(outputs: list[list], at: int, how: int, row: tuple) -> list[list]:
    out = [list(items) for items in outputs]
    if how == 0 and any(isinstance(c, Change) for c in out[at]):
        out[at] = [c for c in out[at] if isinstance(c, Change)][1:]   # lose the event's first change
    elif how == 1:
        out[at].append(Change("+I", row))                             # an extra row
    else:
        out[at].append(Change("-D", row))                             # retract a row never emitted
    return out


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.one_of(regular_join_scenarios(), regular_join_scenarios(modes=("upsert",)),
                 multiway_scenarios(num_inputs=(3,), join_types=ALL_TYPES)),
       st.booleans(), st.integers(0, 10**6), st.integers(0, 2))
def test_change_form_finds_the_snapshot_forms_first_divergence(monkeypatch, scenario, tamper, where, how) -> None:
    outputs = run_scenario(scenario).per_event
    if tamper and outputs:
        outputs = _tamper(outputs, where % len(outputs), how, (None,) * scenario.output_width())
    snapshots = _verdict(scenario, outputs, 10**9, monkeypatch)
    changes = _verdict(scenario, outputs, -1, monkeypatch)
    assert changes == snapshots
    if not tamper:
        assert snapshots is None


def test_first_divergence_by_hand() -> None:
    want = iter([(0, 1, ("x",)), (2, -1, ("x",)), (2, 1, ("y",))])
    agree = [[Change("+I", ("x",))], [], [Change("-U", ("x",)), Change("+U", ("y",))]]
    assert first_divergence(want, agree) is None
    want = iter([(0, 1, ("x",)), (2, -1, ("x",)), (2, 1, ("y",))])
    late = [[Change("+I", ("x",))], [Change("-D", ("x",)), Change("+I", ("x",))], [Change("-D", ("x",))]]
    assert first_divergence(want, late) == 2   # a change that cancels within event 1 is no change
    assert first_divergence(iter([(1, 1, ("z",))]), [[], []]) == 1
