"""SEMI/ANTI joins in `changelog_rowkinds` (properties/systems/changelogs.py): which ones Flink runs on its
semi-join operator (the rest are refused with the plan's reason), and the rows and kinds that operator emits,
worked out by hand from Flink's StreamingSemiAntiJoinOperator and DeduplicateFunctionHelper (docs/flink.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.properties.systems import changelogs


def C(kind: str, *row) -> Change:
    return Change(kind, tuple(row))


def _scenario(condition: str = "a.k = b.k", *, jtype: str = "semi", b_uk: tuple | None = None,
              b_mode: str = "retract", events: tuple = (), **config) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), ("k",), "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), b_uk, b_mode)
    return Scenario("t", (a, b), JoinSpec(("a", "b"), (jtype,), (condition,)), Config(**config), events)


# What Flink 2.3.0 planned for `SELECT * FROM a WHERE [NOT] EXISTS (SELECT 1 FROM b WHERE a.cid = b.cid AND c)`
# (TableEnvironment.explain_sql, 2026-11-29; the same for EXISTS and NOT EXISTS): True where the optimized plan is
# an INNER join over a GroupAggregate, False where it is a LeftSemiJoin / LeftAntiJoin. All 99 conditions the
# generator draws (generators/scenarios.py) were measured; these are a sample of each form.
PLANNED_WITH_AN_AGGREGATE = [
    ("a.k = b.k", False),
    ("a.k = b.k AND a.id = b.id AND (a.x > b.y)", False),
    ("a.k = b.k AND (a.x + b.y <= 3)", False),
    ("a.k = b.k AND (NOT (a.x < b.y OR a.s > b.s))", False),   # NOT over an OR: a conjunction
    ("a.k = b.k AND (a.x BETWEEN b.y AND b.y + 1)", False),
    ("a.k = b.k AND (a.x IS NULL OR b.y > 1)", True),
    ("a.k IS NOT DISTINCT FROM b.k", True),                     # a = b OR (a IS NULL AND b IS NULL)
    ("a.k IS NOT DISTINCT FROM b.k AND (a.x > b.y)", True),
    ("(a.k = b.k OR a.k = b.id)", True),
    ("((a.k = b.k AND a.x > b.y) OR (a.k = b.k AND a.s = b.s))", True),  # the factor a.k = b.k is not pulled out
]


@pytest.mark.parametrize(("condition", "aggregate"), PLANNED_WITH_AN_AGGREGATE)
def test_a_condition_is_refused_exactly_where_flink_plans_an_aggregate(condition: str, aggregate: bool) -> None:
    assert changelogs.disjunctive(condition) is aggregate


def test_a_semi_join_with_an_or_is_refused_with_the_plan_and_one_without_is_compared() -> None:
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 5)))
    refused = changelogs.model_events(_scenario("a.k = b.k AND (a.x IS NULL OR b.y > 1)", events=events))
    assert isinstance(refused, str) and "GroupAggregate" in refused and "SEMI join" in refused
    assert changelogs.model_events(_scenario(events=events)) == [[], [C("+I", 1, 5)]]


def test_a_semi_join_forwards_each_left_change_and_each_right_change_with_its_own_row_kind() -> None:
    """StreamingSemiAntiJoinOperator.processElement1 collects the left record as it came (a -U stays -U, a +U
    stays +U); processElement2 sets the left record's kind to the right record's (inputRowKind) when the count of
    its matches goes 0 -> 1 or 1 -> 0. Before this, the property compared no SEMI join."""
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 5)), ChangeEvent("a", "-U", (1, 5)),
              ChangeEvent("a", "+U", (1, 6)), ChangeEvent("b", "-U", (1, 10)), ChangeEvent("b", "+U", (1, 11)),
              ChangeEvent("b", "-D", (1, 11)))
    assert changelogs.model_events(_scenario(events=events)) == [
        [], [C("+I", 1, 5)], [C("-U", 1, 5)], [C("+U", 1, 6)], [C("-U", 1, 6)], [C("+U", 1, 6)], [C("-D", 1, 6)]]


def test_an_anti_join_writes_minus_d_and_plus_i_for_right_changes_whatever_their_kind() -> None:
    """processElement2 of an ANTI join: 0 -> 1 matches collects the left record as DELETE, 1 -> 0 as INSERT."""
    events = (ChangeEvent("a", "+I", (2, 1)), ChangeEvent("b", "+I", (2, 3)), ChangeEvent("b", "-U", (2, 3)),
              ChangeEvent("b", "+U", (2, 4)), ChangeEvent("a", "-D", (2, 1)))
    assert changelogs.model_events(_scenario(jtype="anti", events=events)) == [
        [C("+I", 2, 1)], [C("-D", 2, 1)], [C("+I", 2, 1)], [C("-D", 2, 1)], []]


def test_an_upsert_update_of_columns_the_condition_does_not_read_never_reaches_the_anti_join() -> None:
    """Measured on Flink 2.3.0 (docs/flink.md): b's update changes y only; Flink's planner keeps b's k (the condition
    and unique key) before ChangelogNormalize, whose DeduplicateFunctionHelper drops a row of the same content, so
    the ANTI join sees nothing and emits nothing. Seeing the whole row, it would emit +I then -D of a's row."""
    events = (ChangeEvent("b", "+I", (2, None)), ChangeEvent("a", "+I", (2, 0)), ChangeEvent("b", "+U", (2, 1)))
    s = _scenario(jtype="anti", b_uk=("k",), b_mode="upsert", events=events)
    assert changelogs.model_events(s) == [[], [], []]
    assert changelogs.model_events(s, "correct") == [[], [], [C("+I", 2, 0), C("-D", 2, 0)]]
    reads_y = _scenario("a.k = b.k AND a.x < b.y", jtype="anti", b_uk=("k",), b_mode="upsert", events=events)
    assert changelogs.model_events(reads_y) == [[], [C("+I", 2, 0)], [C("-D", 2, 0)]]  # 0 < NULL, then 0 < 1


def test_before_flink_2_2_an_upsert_plus_u_of_the_same_content_goes_on_as_an_update() -> None:
    """Measured on Flink 1.20.1 (seed 1, docs/flink.md): b's +U repeats its row, and Flink's ANTI join emitted +I
    then -D of a's row: ChangelogNormalize's RecordEqualiser compares the +U with the stored INSERT row, kinds
    included, before 2.2 (DeduplicateFunctionHelper without areRowsWithSameContent). 2.2 and later drop it."""
    events = (ChangeEvent("b", "+I", (1, 1)), ChangeEvent("a", "+I", (1, 2)), ChangeEvent("b", "+U", (1, 1)))
    s = _scenario("a.k = b.k AND NOT (a.x < b.y)", jtype="anti", b_uk=("k",), b_mode="upsert", events=events)
    assert changelogs.model_events(s, release="1.20") == [[], [], [C("+I", 1, 2), C("-D", 1, 2)]]
    assert changelogs.model_events(s, release="2.1") == [[], [], [C("+I", 1, 2), C("-D", 1, 2)]]
    assert changelogs.model_events(s, release="2.2") == [[], [], []]
    repeated_insert = (*events[:2], ChangeEvent("b", "+I", (1, 1)))   # an +I of the same content: dropped by both
    assert changelogs.model_events(replace(s, events=repeated_insert), release="1.20") == [[], [], []]


def test_the_release_modelled_is_the_systems_major_and_minor() -> None:
    class Release:
        def __init__(self, version: str) -> None:
            self.version = version

    assert changelogs.modelled_release(Release("1.20.1")) == "1.20"
    assert changelogs.modelled_release(Release("2.3.0")) == "2.3"
    assert changelogs.modelled_release(Release("9.9")) is None
