"""Every property family draws every special case the operators treat specially (properties/coverage.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.generators.scenarios import regular_join_scenarios
from converge.properties.campaign import measure_coverage
from converge.properties.coverage import CASES, REQUIRED, coverage_rows, missing_cases, special_cases
from converge.properties.registry import PROPERTIES, families
from converge.properties.spec import PropertySpec

EXAMPLES = 40  # per property, generation only


@pytest.mark.parametrize("family", families())
def test_every_family_draws_each_of_its_special_cases(family: str) -> None:
    drawn: Counter = Counter()
    for spec in (p for p in PROPERTIES if p.family == family):
        drawn.update(measure_coverage(spec, max_examples=EXAMPLES, seed=2026).coverage)
    assert missing_cases(family, drawn) == [], f"{family} never drew these in {EXAMPLES} examples per property"


def test_every_family_has_its_requirements_stated() -> None:
    assert set(families()) <= set(REQUIRED)
    assert all(REQUIRED[f] <= set(CASES) for f in REQUIRED)


def test_a_family_that_never_draws_a_case_is_caught() -> None:
    narrow = PropertySpec("regular", "narrow", lambda: regular_join_scenarios(modes=("retract",)).map(lambda s: (s,)),
                          lambda s: None)
    drawn = measure_coverage(narrow, max_examples=EXAMPLES, seed=1).coverage
    missing = missing_cases("regular", drawn)
    assert "mode_all" in missing and "mode_upsert" in missing and "mode_insert_only" in missing


def _scenario(a: InputSpec, b: InputSpec, events: list[tuple], condition: str = "a.k = b.k") -> Scenario:
    return Scenario("c", (a, b), JoinSpec(("a", "b"), ("left",), (condition,)),
                    events=tuple(ChangeEvent(n, k, r) for n, k, r in events))


def test_the_classifier_sees_each_case() -> None:
    cols = (("k", "BIGINT"), ("id", "BIGINT"))
    plain, own, in_key = InputSpec("a", cols), InputSpec("b", cols, ("id",)), InputSpec("b", cols, ("k",), "all")
    dup = _scenario(plain, own, [("a", "+I", (1, 1)), ("a", "+I", (1, 1)), ("a", "-D", (1, 1)), ("a", "-D", (1, 1))])
    assert {"duplicate_rows_no_uk", "uk_none", "uk_own", "mode_retract", "key_emptied", "single_row_key",
            "empty_input"} <= special_cases(dup)
    assert "null_key" not in special_cases(dup)
    nulls = _scenario(plain, in_key, [("a", "+I", (None, 1)), ("b", "+I", (1, 1)), ("b", "+U", (1, 2))])
    cases = special_cases(nulls)
    assert {"null_key", "uk_join_key", "mode_all"} <= cases and "empty_input" not in cases
    assert "duplicate_rows_no_uk" not in cases and "key_emptied" not in cases
    upsert = _scenario(InputSpec("a", cols, None, "insert_only"), InputSpec("b", cols, ("id",), "upsert"),
                       [("b", "+I", (1, 1)), ("b", "-D", (None, 1)), ("a", "+I", (2, 2))])
    assert {"mode_upsert", "mode_insert_only", "key_emptied"} <= special_cases(upsert)
    assert "null_key" not in special_cases(upsert)  # a key-only upsert delete's NULLs are not a join key


def test_the_coverage_table_marks_cases_a_family_need_not_draw() -> None:
    rows = coverage_rows({"interval": 10}, {"interval": Counter({"null_key": 5})})
    by_case = {r[0]: r[1] for r in rows}
    assert by_case["null_key"] == "5 (50%)" and by_case["mode_all"] == "-" and by_case["empty_input"] == "0 (0%)"


def test_converge_run_stats_prints_the_coverage_table(capsys) -> None:
    from converge.cli.main import main

    code = main(["run", "--family", "regular", "--property", "changelog_wellformed", "--examples", "20",
                 "--seed", "3", "--no-reports", "--stats"])
    out = capsys.readouterr().out
    assert code == 0
    table = out[out.index("special case (examples drawing it)"):]
    assert "regular (" in table
    for case in CASES:
        assert case in table


def test_the_classifier_sees_the_planner_shapes() -> None:
    """Issue 25's shapes, each on a hand-made scenario, and none of them on the plain key (same columns)."""
    cols = (("k", "BIGINT"), ("id", "BIGINT"), ("s", "VARCHAR"))
    a, b = InputSpec("a", cols), InputSpec("b", tuple(reversed(cols)), None, "insert_only")
    rows = [("a", "+I", (1, 1, "x")), ("b", "+I", ("x", 2, 1))]
    crossed = special_cases(_scenario(a, b, rows, "a.k = b.id AND a.id = b.k AND a.s = b.s"))
    assert {"key_composite", "key_three_columns", "key_mixed_types", "key_positions_differ", "key_crossed",
            "key_columns_tied"} <= crossed and "or_equality" not in crossed
    assert "or_equality" in special_cases(_scenario(a, b, rows, "(a.k = b.k OR a.k = b.id)"))
    assert "or_equality" in special_cases(_scenario(a, b, rows, "a.k = b.k AND (a.s = b.s OR a.id > 1)"))
    assert "or_equality" not in special_cases(_scenario(a, b, rows, "a.k = b.k AND (a.id IS NULL OR b.id > 1)"))
    plain = special_cases(_scenario(a, replace(b, columns=cols), [("a", "+I", (1, 2, "x"))], "a.k = b.k"))
    assert not plain & {"key_composite", "key_three_columns", "key_mixed_types", "key_positions_differ",
                        "key_crossed", "key_columns_tied", "or_equality", "mixed_modes", "bundle_update_pair"}
    same_order = special_cases(_scenario(a, replace(b, columns=cols), rows[:1], "a.k = b.k AND a.id = b.id"))
    assert "key_composite" in same_order and "key_crossed" not in same_order


def test_the_classifier_sees_mixed_modes_and_a_bundle_update_pair() -> None:
    cols = (("k", "BIGINT"), ("v", "BIGINT"))
    specs = (InputSpec("a", cols), InputSpec("b", cols, None, "insert_only"), InputSpec("c", cols))
    chain = Scenario("m", specs, JoinSpec(("a", "b", "c"), ("inner", "left"), ("a.k = b.k", "b.k = c.k")))
    assert "mixed_modes" in special_cases(chain)
    assert "mixed_modes" not in special_cases(replace(chain, inputs=(specs[0], replace(specs[1], changelog_mode="retract"),
                                                                     specs[2])))
    pair = [("b", "+I", (1, 1)), ("a", "+I", (1, 1)), ("a", "-U", (1, 1)), ("a", "+U", (2, 1))]
    one = replace(_scenario(specs[0], replace(specs[1], changelog_mode="insert_only"), pair),
                  config=Config(mini_batch_size=2))
    assert "bundle_update_pair" in special_cases(one)
    assert "bundle_update_pair" not in special_cases(replace(one, config=Config(mini_batch_size=3)))  # split
    assert "bundle_update_pair" not in special_cases(replace(one, config=Config()))


def test_converge_run_stats_with_a_system_prints_the_coverage_of_the_batches(capsys) -> None:
    from converge.cli.main import main

    code = main(["run", "--system", "reference", "--family", "minibatch", "--examples", "6", "--seed", "3",
                 "--no-reports", "--stats"])
    out = capsys.readouterr().out
    assert code == 0
    table = out[out.index("special case (batches drawing it)"):]
    assert "minibatch (" in table and "bundle_update_pair" in table and "key_crossed" in table
