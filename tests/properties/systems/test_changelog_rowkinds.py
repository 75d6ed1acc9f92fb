"""The changelog properties (properties/systems/changelogs.py): each rule on hand-written changelogs, the key the
update rule is judged on, the event-by-event comparison, and the check against stand-in systems."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.properties import exercise
from converge.properties.divergence import PropertyFailure
from converge.properties.systems import changelogs
from converge.properties.systems.checks import changelog_rowkinds
from tests.support import paths

KEY = (0, 2)  # a(k, x) with unique key k, b(k, y) with unique key k: the output identity is (a.k, b.k)


def C(kind: str, *row) -> Change:
    return Change(kind, tuple(row))


# ---------------------------------------------------------------- the rules, on hand-written changelogs

def test_a_well_formed_changelog_breaks_no_rule() -> None:
    log = [C("+I", 1, 5, 1, 10), C("-U", 1, 5, 1, 10), C("+U", 1, 6, 1, 10), C("-D", 1, 6, 1, 10),
           C("+I", 1, 7, 1, 10), C("+I", 2, 1, 2, 2)]
    assert changelogs.violations(log, KEY) == []


def test_a_retraction_of_a_row_that_is_not_there_breaks_the_retract_rule() -> None:
    log = [C("+I", 1, 5, 1, 10), C("-D", 1, 6, 1, 10)]
    (v,) = changelogs.violations(log, None)
    assert (v.index, v.rule) == (1, "retract")
    assert "-D[1, 6, 1, 10] at output 1 retracts a row that is not there" in v.message


def test_a_retraction_once_too_often_breaks_the_retract_rule() -> None:
    log = [C("+I", 1, 5, 1, 10), C("-U", 1, 5, 1, 10), C("-D", 1, 5, 1, 10)]
    assert [(v.index, v.rule) for v in changelogs.violations(log, KEY)] == [(2, "retract")]


def test_a_plus_u_as_the_first_row_of_its_key_breaks_the_update_rule() -> None:
    """FLINK-34380's symptom: the mini-batch join's first row of a key is +U."""
    log = [C("+I", 2, 1, 2, 2), C("+U", 1, 6, 1, 10)]
    (v,) = changelogs.violations(log, KEY)
    assert (v.index, v.rule, v.change) == (1, "update", C("+U", 1, 6, 1, 10))
    assert "+U[1, 6, 1, 10] at output 1 is the first row of its key [1, 1]" in v.message


def test_a_plus_u_after_an_insert_but_no_minus_u_breaks_the_update_rule() -> None:
    log = [C("+I", 1, 5, 1, 10), C("+U", 1, 6, 1, 10)]
    (v,) = changelogs.violations(log, KEY)
    assert v.rule == "update" and "no -U of its key before it" in v.message


def test_one_minus_u_answers_one_plus_u_only() -> None:
    log = [C("+I", 1, 5, 1, 10), C("-U", 1, 5, 1, 10), C("+U", 1, 6, 1, 10), C("+U", 1, 7, 1, 10)]
    assert [(v.index, v.rule) for v in changelogs.violations(log, KEY)] == [(3, "update")]


def test_a_minus_u_of_another_key_does_not_answer_a_plus_u() -> None:
    log = [C("+I", 2, 5, 2, 10), C("-U", 2, 5, 2, 10), C("+U", 1, 6, 1, 10)]
    assert [(v.index, v.rule) for v in changelogs.violations(log, KEY)] == [(2, "update")]


def test_without_a_key_a_plus_u_is_judged_by_the_retract_rule_only() -> None:
    """Flink's INNER join measured on PyFlink (docs notes): +U(1,15,1,10) with no row of its key before, because
    the residual a.x > b.y became true on the update; without a claimed key that is no violation."""
    log = [C("+I", 2, 7, 2, 3), C("+I", 3, 1, 3, 0), C("-U", 3, 1, 3, 0), C("+U", 1, 15, 1, 10),
           C("-D", 2, 7, 2, 3), C("-D", 1, 15, 1, 10), C("+I", 1, 15, 1, 1)]
    assert changelogs.violations(log, None) == []
    assert [v.rule for v in changelogs.violations(log, KEY)] == ["update"]  # what a wrong key claim would flag


# ---------------------------------------------------------------- the key the update rule is judged on

def _scenario(condition: str = "a.k = b.k", *, a_uk: tuple | None = ("k",), a_mode: str = "retract",
              b_uk: tuple | None = None, b_mode: str = "insert_only", jtype: str = "inner",
              events: tuple = (), **config) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), a_uk, a_mode)
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), b_uk, b_mode)
    return Scenario("t", (a, b), JoinSpec(("a", "b"), (jtype,), (condition,)), Config(**config), events)


PAIRED = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 5)), ChangeEvent("a", "-U", (1, 5)),
          ChangeEvent("a", "+U", (1, 6)))


def test_an_equi_join_on_the_unique_key_claims_the_rule_on_the_rows_identity() -> None:
    assert changelogs.update_key(_scenario(events=PAIRED)) == ((0, 2, 3), None)  # a.k, then all of b (no key)
    keyed = _scenario(b_uk=("k",), b_mode="upsert", events=PAIRED)
    assert changelogs.update_key(keyed) == ((0, 2), None)


@pytest.mark.parametrize("scenario, why", [
    (_scenario("a.k = b.k AND a.x > b.y", events=PAIRED), "not column equalities alone"),
    (_scenario("a.x = b.y", events=PAIRED), "may change its join key"),
    (_scenario(a_uk=None, events=PAIRED), "has updates but no unique key"),
    (_scenario(jtype="semi", events=PAIRED), "SEMI join's key is not derived"),
    (_scenario(events=(ChangeEvent("a", "+I", (1, 5)), ChangeEvent("a", "-U", (1, 5)),
                       ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+U", (1, 6)))),
     "does not directly follow the -U"),
])
def test_the_rule_is_not_claimed_where_flink_forwards_an_unpaired_plus_u_by_design(scenario: Scenario,
                                                                                     why: str) -> None:
    key, reason = changelogs.update_key(scenario)
    assert key is None and why in reason


# ---------------------------------------------------------------- event by event

def test_the_first_event_whose_rows_differ_is_named_with_its_row_kinds() -> None:
    model = [[C("+I", 1, 5, 1, 10)], [], [C("-U", 1, 5, 1, 10), C("+U", 1, 6, 1, 10)]]
    same = [C("+I", 1, 5, 1, 10), C("+U", 1, 6, 1, 10), C("-U", 1, 5, 1, 10)]  # order inside an event is free
    assert changelogs.first_event_difference(same, model) is None
    kinds = [C("+I", 1, 5, 1, 10), C("-D", 1, 5, 1, 10), C("+I", 1, 6, 1, 10)]
    diff = changelogs.first_event_difference(kinds, model)
    assert diff is not None and diff.event == 2
    assert diff.system == Counter({("-D", 1, 5, 1, 10): 1, ("+I", 1, 6, 1, 10): 1})
    assert diff.model == Counter({("-U", 1, 5, 1, 10): 1, ("+U", 1, 6, 1, 10): 1})


def test_rows_the_model_does_not_emit_at_all_are_a_difference_of_the_last_event() -> None:
    model = [[C("+I", 1, 5, 1, 10)], []]
    diff = changelogs.first_event_difference([C("+I", 1, 5, 1, 10), C("+I", 9, 9, 9, 9)], model)
    assert diff is not None and (diff.event, diff.system, diff.model) == (1, Counter({("+I", 9, 9, 9, 9): 1}),
                                                                           Counter())


def test_the_model_is_not_compared_where_it_cannot_be_fed_what_the_system_is() -> None:
    upsert = _scenario(a_mode="upsert", events=(ChangeEvent("a", "+I", (1, 5)),), mini_batch_size=2)
    assert "ChangelogNormalize" in changelogs.model_events(upsert)
    assert "no records" in changelogs.model_events(_scenario())


def test_the_flink_model_emits_flink_34380_and_the_correct_one_does_not() -> None:
    """Bundle of 4: b's row, then a's +I/-U/+U of one key; +I and -U cancel, the +U stays +U under semantics=flink
    (FLINK-34380) and becomes +I under semantics=correct (bundle_fold.py)."""
    s = _scenario(events=PAIRED, mini_batch_size=4)
    assert changelogs.model_events(s, "flink") == [[], [], [], [C("+U", 1, 6, 1, 10)]]
    assert changelogs.model_events(s, "correct") == [[], [], [], [C("+I", 1, 6, 1, 10)]]


# ---------------------------------------------------------------- the check, on stand-in systems

class Answering(System):
    """A stand-in system named flink that answers each case with a fixed changelog."""

    def __init__(self, changelog: list[Change]) -> None:
        self.name, self.version = "flink", "9.9"
        self.capabilities = Capabilities.everything()
        self.changelog = changelog

    def run_cases(self, cases):
        return [CaseResult.ok(changelog=self.changelog) for _ in cases]


def _judge(system: System, scenario: Scenario) -> exercise.Exercised:
    with exercise.Recording() as r:
        changelog_rowkinds(system, [scenario])
    return r.exercised


def test_flink_34380_is_a_divergence_that_names_the_plus_u_row() -> None:
    s = _scenario(events=PAIRED, mini_batch_size=4)
    with pytest.raises(PropertyFailure) as failure:
        _judge(Answering([C("+U", 1, 6, 1, 10)]), s)
    d = failure.value.divergence
    assert "+U[1, 6, 1, 10] at output 0 is the first row of its key [1, 1, 10]" in d.message
    assert "row kinds compared" in d.message
    assert d.engine == Counter({("+U", 1, 6, 1, 10): 1})


def test_the_correct_changelog_of_the_same_case_differs_from_the_flink_model_by_its_row_kind() -> None:
    s = _scenario(events=PAIRED, mini_batch_size=4)
    with pytest.raises(PropertyFailure) as failure:
        _judge(Answering([C("+I", 1, 6, 1, 10)]), s)
    d = failure.value.divergence
    assert "output of event 3 differs" in d.message
    assert (d.engine, d.expected) == (Counter({("+I", 1, 6, 1, 10): 1}), Counter({("+U", 1, 6, 1, 10): 1}))


def test_a_case_with_neither_the_rule_nor_the_model_is_skipped_with_both_reasons() -> None:
    s = _scenario("a.k = b.k AND a.x > b.y", a_mode="upsert", events=PAIRED[:2], mini_batch_size=2)
    seen = _judge(Answering([]), s)
    assert (seen.compared, seen.skipped) == (0, 1)
    (reason,) = seen.reasons
    assert "not column equalities alone" in reason and "ChangelogNormalize" in reason


def test_a_well_formed_changelog_the_model_predicts_is_compared() -> None:
    s = _scenario(events=PAIRED)  # record by record: INNER forwards a's row kinds
    seen = _judge(Answering([C("+I", 1, 5, 1, 10), C("-U", 1, 5, 1, 10), C("+U", 1, 6, 1, 10)]), s)
    assert (seen.compared, seen.skipped) == (1, 0)


def test_a_semi_join_with_an_or_is_not_compared_with_the_model() -> None:
    """Flink 2.3.0 plans `EXISTS (... a.k = b.k AND (a.x IS NULL OR b.y > 1))` as an INNER join with a GroupAggregate
    of b (explain_sql, docs/flink.md), which writes -D where the semi-join operator would forward b's -U. SEMI/ANTI
    joins without an OR are compared (test_changelog_rowkinds_semi.py)."""
    s = _scenario("a.k = b.k AND (a.x IS NULL OR b.y > 1)", jtype="semi", events=PAIRED)
    assert "decorrelates the EXISTS" in changelogs.model_events(s)


def test_a_mini_batch_outer_join_is_compared_on_the_adapters_rows_and_not_without_its_case_id() -> None:
    """Measured on Flink 2.3.0 (docs/flink.md): a FULL bundle holding a -U and a +U of a keyless input that both meet
    b's one row; Flink walks them in the order of their rows' hashes (InputSideHasNoUniqueKeyBundle), so whether b's
    padding flips depends on that order. The rows as the adapter sends them, case id 0 first: (0, 1, 2) and
    (0, 1, 256), hashCodes 1141287431 and 199221631 as Flink 2.3.0 computed them (test_map_order.py), buckets 1 and 0
    of the bundle's Integer-keyed map: the +U first (b's count goes 1 -> 2, no padding), then the -U (2 -> 1)."""
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 2)), ChangeEvent("a", "-U", (1, 2)),
              ChangeEvent("a", "+U", (1, 256)))
    s = _scenario(a_uk=None, a_mode="retract", jtype="full", events=events, mini_batch_size=2)
    assert "case id is not known" in changelogs.model_events(s)
    assert changelogs.model_events(s, "flink", case_id=0) == [
        [], [C("+I", None, None, 1, 10), C("-D", None, None, 1, 10), C("+I", 1, 2, 1, 10)],
        [], [C("+I", 1, 256, 1, 10), C("-D", 1, 2, 1, 10)]]
    inner = _scenario(a_uk=None, a_mode="retract", events=PAIRED[:2], mini_batch_size=2)
    assert changelogs.model_events(inner, "flink") == [[], [C("+I", 1, 5, 1, 10)]]


# ---------------------------------------------------------------- the order of each event, per state backend

def _file(name: str) -> Scenario:
    return scenario_from_dict(json.loads((paths.SCENARIOS / "systems" / name).read_text()))


# What Flink 2.3.0 emitted for the orders/payments stream (docs/anomalies.md, "On real Flink"): payments 300, 5
# of order 1, then the order inserted and updated. RocksDB visits 5 first (05 00 .. < 2C 01 ..); the HashMap
# visits 300 first (bucket 3 before bucket 15 of the rows (case id 0, 1, amount)).
def _flink_2_3(first: int, second: int) -> list[Change]:
    return [C("+I", 1, "new", 1, first), C("+I", 1, "new", 1, second), C("-U", 1, "new", 1, first),
            C("-U", 1, "new", 1, second), C("+U", 1, "paid", 1, first), C("+U", 1, "paid", 1, second)]


@pytest.mark.parametrize(("name", "flink"), [("flink_later_before_earlier_rocksdb.json", (5, 300)),
                                             ("flink_later_before_earlier_hashmap.json", (300, 5))])
def test_each_event_is_compared_in_the_backends_order(name: str, flink: tuple[int, int]) -> None:
    s = _file(name)
    seen = _judge(Answering(_flink_2_3(*flink)), s)
    assert seen.compared == 1
    with pytest.raises(PropertyFailure) as failure:
        _judge(Answering(_flink_2_3(*reversed(flink))), s)
    d = failure.value.divergence
    backend = s.config.state_backend
    assert f"output of event 2 visits the other side's stored rows out of the {backend} state backend's" in d.message
    assert d.event_index == 2


def test_a_system_converge_has_no_model_of_is_not_held_to_an_order() -> None:
    class Other(Answering):
        def __init__(self, changelog: list[Change]) -> None:
            super().__init__(changelog)
            self.name = "other"

    s = _file("flink_later_before_earlier_rocksdb.json")
    assert _judge(Other(_flink_2_3(300, 5)), s).compared == 1


# What Flink 2.3.0 emitted for a FULL mini-batch join (bundles of 2) of a keyless retract input a with b
# (tests/systems/flink/test_flink_bundle_order.py): the second bundle walks a's +U (1, 256) before its -U (1, 2),
# in the order of their rows' hashes (InputSideHasNoUniqueKeyBundle), not in arrival order.
BUNDLED = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 2)), ChangeEvent("a", "-U", (1, 2)),
           ChangeEvent("a", "+U", (1, 256)))
FLINK_BUNDLED = [C("+I", None, None, 1, 10), C("-D", None, None, 1, 10), C("+I", 1, 2, 1, 10),
                 C("+I", 1, 256, 1, 10), C("-D", 1, 2, 1, 10)]


def test_a_mini_batch_event_is_compared_in_its_exact_sequence() -> None:
    s = _scenario(a_uk=None, a_mode="retract", jtype="full", events=BUNDLED, mini_batch_size=2)
    assert _judge(Answering(FLINK_BUNDLED), s).compared == 1
    swapped = FLINK_BUNDLED[:3] + [FLINK_BUNDLED[4], FLINK_BUNDLED[3]]      # the same rows, arrival order
    with pytest.raises(PropertyFailure) as failure:
        _judge(Answering(swapped), s)
    d = failure.value.divergence
    assert "output of event 3 comes in another sequence than the mini-batch bundle walk's" in d.message
    assert d.event_index == 3


def test_a_mini_batch_join_with_an_or_is_not_held_to_an_order() -> None:
    """Flink may key the bundle on an equality common to the OR's branches (docs/minibatch.md): rows compared, not
    their order."""
    s = _scenario("(a.k = b.k AND a.x > 0) OR (a.k = b.k AND b.y < 0)", a_uk=None, a_mode="retract", jtype="full",
                  events=BUNDLED, mini_batch_size=2)
    assert "holds an OR" in (changelogs.minibatch_order_refusal(s) or "")
    model = changelogs.model_events(s, "flink", case_id=0)
    assert not isinstance(model, str) and [len(piece) for piece in model] == [0, 3, 0, 2]
    log = [c for piece in model for c in piece]
    reordered = log[:3] + [log[4], log[3]]
    assert changelogs.order_difference(s, reordered, model) is None
    plain = _scenario(a_uk=None, a_mode="retract", jtype="full", events=BUNDLED, mini_batch_size=2)
    assert changelogs.order_difference(plain, reordered, model) is not None   # without the OR it is compared
