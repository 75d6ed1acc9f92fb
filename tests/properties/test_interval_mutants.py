"""Seeded interval-join bugs: each must make a property fail, with a shrunk counterexample.

Each mutant changes one line of engine source (converge/cli/mutant_catalog.py
applies it and puts the original back). The suite runs each mutant against
the properties expected to catch it, at the suite's example counts, so a
property that stopped looking at the hard cases fails here.
"""

from __future__ import annotations

import pytest

from converge.cli.mutant_catalog import Mutant, Patch, applied, by_name
from converge.properties.campaign import run_property
from converge.properties.registry import select
from tests.conftest import examples

OP = "converge.engine.operators.interval_join:TimeIntervalJoinOperator"

MUTANTS: dict[str, tuple[Mutant, tuple[str, ...]]] = {
    "qualified_lower_bound_exclusive": (
        Mutant("qualified_lower_bound_exclusive",
               "the join pass excludes partners exactly at the qualified lower bound (t - U for a left row)",
               "interval",
               (Patch(f"{OP}._join_pass", "lower <= other_time <= upper", "lower < other_time <= upper"),)),
        ("no_late_equals_oracle", "matches_step_model")),
    "qualified_upper_bound_exclusive": (
        Mutant("qualified_upper_bound_exclusive",
               "the join pass excludes partners exactly at the qualified upper bound (t - L for a left row)",
               "interval",
               (Patch(f"{OP}._join_pass", "lower <= other_time <= upper", "lower <= other_time < upper"),)),
        ("no_late_equals_oracle", "matches_step_model")),
    "cleanup_one_tick_early": (
        Mutant("cleanup_one_tick_early", "cleanup timers and expiration time are one millisecond early", "interval",
               (Patch(f"{OP}.expiration_time", "self.lateness - 1", "self.lateness"),
                Patch(f"{OP}._register_cleanup", "self.lateness + 1", "self.lateness"))),
        ("matches_step_model", "no_late_equals_oracle")),
    "expiration_one_tick_early": (
        Mutant("expiration_one_tick_early", "rows expire one millisecond early (timers unchanged)", "interval",
               (Patch(f"{OP}.expiration_time", "self.lateness - 1", "self.lateness"),)),
        ("matches_step_model", "no_late_equals_oracle")),
    "caches_at_the_bound": (
        Mutant("caches_at_the_bound", "a row is cached while opTime <= its upper bound (not <)", "interval",
               (Patch(f"{OP}._process_row", "if op_time < upper:", "if op_time <= upper:"),)),
        ("matches_step_model", "cleanup_timely")),
    "output_delay_min_of_sizes": (
        Mutant("output_delay_min_of_sizes", "the output watermark is held back by min(-L, U), not max", "interval",
               (Patch(f"{OP}.on_watermark", "watermark - self.spec.output_delay",
                      "watermark - min(self.size) - self.lateness"),)),
        ("output_watermarks", "matches_step_model")),
    "padding_ignores_join_flag": (
        Mutant("padding_ignores_join_flag", "an expiring outer row is padded even if it joined", "interval",
               (Patch(f"{OP}._remove_expired", "if not entry[1]:", "if True:"),)),
        ("late_records_bounded", "pairs_and_padding_once", "matches_step_model")),
    # a self-join's record handed to the right input before the left (tests/views/test_one_source_interval.py)
    "one_source_right_input_first": (
        Mutant("one_source_right_input_first", "a record of a stream both inputs read reaches the right input "
               "first", "interval",
               (Patch("converge.engine.runtime.local:LocalRuntime._on_change", "for name in fed:",
                      "for name in fed[::-1]:"),)),
        ("matches_step_model_one_source",)),
}


def _killed(mutant: Mutant, props: tuple[str, ...], factor: float, *, shrink: bool) -> list:
    """The failures (their Divergence) of the given properties with the mutant applied."""
    failures = []
    with applied(mutant):
        for name in props:
            (spec,) = select("interval", name)
            # never fewer than the suite's own count: CONVERGE_EXAMPLES may scale a run up, not blind it
            count = int(max(spec.suite_examples, examples(spec.suite_examples)) * factor)
            result = run_property(spec, max_examples=count, seed=7, shrink=shrink)
            if result.error is not None:
                raise result.error
            if result.failure is not None:
                failures.append(result.failure.divergence)
    return failures


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed_at_suite_example_counts(name: str) -> None:
    mutant, props = MUTANTS[name]
    assert _killed(mutant, props[:1], 1.0, shrink=False), f"{name}: {props[0]} did not notice: {mutant.bug}"


def test_watermark_max_instead_of_min_is_killed() -> None:
    """The catalog's runtime mutant: the combined watermark is the MAX of the inputs'."""
    (mutant,) = by_name("watermark_max_instead_of_min")
    assert _killed(mutant, ("output_watermarks",), 1.0, shrink=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTANTS) + ["watermark_max_instead_of_min"])
def test_mutant_is_killed_by_every_listed_property_with_a_small_counterexample(name: str) -> None:
    if name in MUTANTS:
        mutant, props = MUTANTS[name]
    else:
        (mutant,), props = by_name(name), ("output_watermarks", "no_late_equals_oracle", "matches_step_model")
    for prop in props:
        failures = _killed(mutant, (prop,), 4.0, shrink=True)
        assert failures, f"{name}: {prop} did not notice: {mutant.bug}"
        events = failures[0].scenario.events
        assert len(events) <= 12, f"{name}/{prop}: the counterexample did not shrink ({len(events)} events)"
