"""A verdict says what it exercised: "passed" needs a compared case, a setting a system ignores makes its
property not applicable, and an input converge generated that converge rejects is converge's bug."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from hypothesis import given, reject, seed, settings
from hypothesis import strategies as st

from converge.engine.model.errors import (
    BadInputError,
    InternalError,
    NotCheckedError,
    exit_code,
    label,
)
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.engine.reference_system import ReferenceSystem
from converge.generators.scenarios import regular_join_scenarios
from converge.properties import exercise
from converge.properties.campaign import run_property
from converge.properties.replay import replay_scenario
from converge.properties.spec import PropertySpec
from converge.properties.systems.specs import SYSTEM_PROPERTIES, not_applicable
from converge.reports.options import RunOptions
from converge.reports.run_reports import RunReports
from converge.reports.terminal import Footnotes
from converge.systems.campaign import run_one, table

INTS = lambda: st.integers(0, 100).map(lambda n: (n,))  # noqa: E731


def _spec(check, strategy=INTS) -> PropertySpec:
    return PropertySpec("test", "p", strategy, check)


def test_a_check_that_records_nothing_compared_every_example() -> None:
    result = run_property(_spec(lambda n: None), max_examples=20, seed=1)
    assert result.ok and result.exercised.compared == result.examples == 20
    assert label(result.error) == "passed"


def test_a_property_whose_every_case_is_unsupported_is_not_checked_and_writes_no_report() -> None:
    reported = []
    result = run_property(_spec(lambda n: exercise.unsupported("no FULL joins", n=3)), max_examples=10, seed=1,
                          on_failure=reported.append)
    assert isinstance(result.error, NotCheckedError) and not result.ok and result.not_checked
    assert (label(result.error), exit_code(result.error)) == ("not checked", 2)
    assert result.exercised.compared == 0 and result.exercised.unsupported == 30
    assert str(result.error) == "none of 30 cases compared (30 unsupported): unsupported: no FULL joins (30)"
    assert reported == [] and result.failures == 0


def test_one_compared_case_is_enough_to_pass_and_the_rest_are_counted() -> None:
    def check(n: int) -> None:
        if n == 7:
            exercise.compared()
        else:
            exercise.skipped("not seven")

    result = run_property(_spec(check, lambda: st.sampled_from([7, 8]).map(lambda n: (n,))), max_examples=30,
                          seed=3)
    assert result.ok and result.exercised.compared >= 1 and result.exercised.skipped >= 1
    assert result.exercised.cases == result.examples


def test_when_every_case_is_rejected_the_run_is_not_checked_rather_than_unsatisfiable() -> None:
    def check(n: int) -> None:
        exercise.unsupported("outside the capabilities")
        reject()

    result = run_property(_spec(check), max_examples=10, seed=1)
    assert isinstance(result.error, NotCheckedError), result.error
    assert "outside the capabilities" in str(result.error)


def test_an_input_converge_generated_and_rejects_itself_is_an_internal_error_shrunk() -> None:
    def check(scenario: Scenario) -> None:
        if len(scenario.events) >= 2:
            raise BadInputError("retraction of a row that is not there", event_index=1)

    result = run_property(_spec(check, lambda: regular_join_scenarios().map(lambda s: (s,))), max_examples=100,
                          seed=1)
    assert isinstance(result.error, InternalError) and exit_code(result.error) == 3
    assert "converge generated an input that it rejects itself (BadInputError: event 1: retraction" in str(
        result.error)
    (shrunk,) = result.failure_args
    assert len(shrunk.events) == 2  # shrunk like any failure


# ---------------------------------------------------------------- systems: unsupported cases and ignored settings


class _Unsupporting(System):
    """A system that declares everything and answers every case "unsupported"."""

    name, version = "nothing", "0"

    def __init__(self, settings: tuple = ("multi_join", "mini_batch")) -> None:
        self.capabilities = replace(Capabilities.everything(max_batch=20), settings=settings)

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return [CaseResult.unsupported("not today") for _ in cases]


def _prop(key: str):
    return next(p for p in SYSTEM_PROPERTIES if p.key == key)


def test_a_system_that_answers_unsupported_to_everything_passes_nothing() -> None:
    system = _Unsupporting()
    run = run_one(_prop("regular/final_equals_oracle"), system, "x", RunOptions(examples=6, seed=1), [],
                  RunReports.open(None, "run"))
    assert run.outcome == "not checked" and run.exit_code == 2
    seen = run.result.exercised if run.result is not None else None
    assert seen is not None and seen.compared == 0 and seen.unsupported == seen.cases >= 1
    notes = Footnotes()
    _, rows = table(system, [run], notes)  # the outcome cell is short, the reason a footnote (issue 41 row 5)
    assert rows[0][3] == "not checked [1]"
    assert notes.notes[0].startswith("not checked: none of ") and "not today" in notes.notes[0]


def test_a_property_about_a_setting_the_system_ignores_is_not_applicable() -> None:
    plain = _Unsupporting(settings=())
    multi = not_applicable(_prop("multiway/multiway_equals_binary_chain"), plain)
    assert multi == ("nothing does not honour config.multi_join=on (a multi-way join operator), so the property "
                     "would not exercise it")
    assert "config.mini_batch_size" in not_applicable(_prop("minibatch/final_equals_oracle"), plain)
    assert not_applicable(_prop("multiway/final_equals_oracle"), plain) is None
    assert not_applicable(_prop("multiway/multiway_equals_binary_chain"), ReferenceSystem()) is None


def test_without_the_multi_way_operator_the_chains_drawn_never_claim_it() -> None:
    factory, _ = _prop("multiway/final_equals_oracle").draws(replace(Capabilities.everything(), settings=()), "x")
    seen = set()

    @seed(1)
    @settings(max_examples=25, database=None)
    @given(factory())
    def draw(scenario: Scenario) -> None:
        seen.add(scenario.config.multi_join)

    draw()
    assert seen == {"off"}


def test_replaying_a_file_that_nothing_checks_is_not_checked(tmp_path: Path) -> None:
    drawn: list[Scenario] = []

    @seed(2)
    @settings(max_examples=1, database=None)
    @given(regular_join_scenarios())
    def one(scenario: Scenario) -> None:
        drawn.append(scenario)

    one()
    # semantics=flink models a defect, so no oracle property decides it; without expectations nothing is compared
    plain = replace(drawn[0], config=replace(drawn[0].config, semantics="flink"), expect_final=None,
                    expect_changelog=None)
    assert not plain.has_expectations()
    outcome = replay_scenario(plain, tmp_path / "x.json")
    assert [label(p) for p in outcome.errors] == ["not checked"] and outcome.exit_code == 2


def test_replaying_on_a_system_that_answers_unsupported_is_not_checked(tmp_path: Path) -> None:
    from converge.engine.model.scenario_json import dump_scenario
    from converge.properties.systems.replay import replay_on_system

    drawn: list[Scenario] = []

    @seed(3)
    @settings(max_examples=1, database=None)
    @given(regular_join_scenarios(join_types=("inner",), modes=("insert_only",)))
    def one(scenario: Scenario) -> None:
        drawn.append(scenario)

    one()
    path = tmp_path / "case.json"
    dump_scenario(drawn[0], path)
    outcome = replay_on_system(path, _Unsupporting())
    assert outcome.label == "not checked" and outcome.exit_code == 2, outcome.problems
    assert outcome.problems[-1] == ("NotCheckedError: nothing 0 compared nothing: none of 3 cases compared (3 "
                                   "unsupported): unsupported: not today (3)")  # oracle, reference, changelog_rowkinds
    assert replay_on_system(path, ReferenceSystem()).label == "passed"
