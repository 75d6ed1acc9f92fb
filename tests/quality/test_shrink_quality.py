"""Shrink quality: with a known bug injected, the counterexample shrinks to a handful of events.

A harness is only as good as the evidence it hands back. Each case injects
one seeded bug (converge/cli/mutant_catalog.py), runs the property that should
catch it with a fixed seed, and bounds the size of the shrunk counterexample:
at most 6 events for the regular-join bugs and the interval / multi-way bugs.
A generator change that makes counterexamples stop shrinking (a draw that
cannot be deleted, a value that does not shrink towards the simple case)
fails here first.

Each measurement runs in a fresh Python process. Hypothesis draws from a pool
of constants it collects from the modules loaded in the process, so the same
seed shrinks differently after other tests have run in the same xdist worker
(measured: interval_bound_exclusive, seed 1, 2 events alone and 16 after the
rest of the suite); a fresh process makes the bound a property of the seed.

The snapshot bug is caught by `arrival_order_survives_restore`, which cuts
in the middle of the stream: `snapshot_restore` draws its cut as an absolute
event index, so events before the cut can only be deleted together with a
smaller cut, and its counterexamples for this bug stayed at 7 to 13 events.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from converge.cli.mutant_catalog import by_name
from converge.cli.mutants import run_mutant
from converge.generators.scenarios import regular_join_scenarios
from converge.generators.schema import any_schema_join_scenarios
from converge.properties import regular
from converge.properties.registry import PropertySpec, select
from tests.conftest import HYPOTHESIS_HOME

REGULAR_BOUND = 6

# mutant -> the property that kills it; every regular-join bug of the catalog
REGULAR = {
    "padding_not_retracted_on_first_match": "prefix_consistency",
    "padding_not_reemitted_after_last_match": "prefix_consistency",
    "association_count_not_decremented": "hot_key_prefix_consistency",
    "null_keys_match": "prefix_consistency",
    "residual_python_truthiness": "prefix_consistency",
    "ttl_off_by_one": "ttl_fine_clock",
    "ttl_refreshed_on_read": "ttl_fine_clock",
    "ttl_association_update_not_a_write": "ttl_fine_clock",
    "mapstate_arrival_order_in_rocksdb": "rocksdb_iteration_order",
    "restore_forgets_arrival_counter": "arrival_order_survives_restore",
    "duplicates_joined_once": "duplicates_prefix_consistency",
    "unmatched_outer_retraction_keeps_padding": "prefix_consistency",
    "anti_emits_right_kind": "prefix_consistency",
    "semi_emits_on_every_match": "hot_key_prefix_consistency",
    "normalize_drops_update_before": "hot_key_prefix_consistency",
}
OTHER_FAMILIES = {
    "watermark_max_instead_of_min": ("interval", "output_watermarks"),
    "interval_bound_exclusive": ("interval", "no_late_equals_oracle"),
    "late_outer_record_dropped": ("interval", "late_records_bounded"),
    "multiway_left_association_miscounted": ("multiway", "matches_binary_chain"),
    "multiway_padding_not_retracted": ("multiway", "prefix_consistency"),
}
CHEAP = ("padding_not_retracted_on_first_match", "unmatched_outer_retraction_keeps_padding",
         "mapstate_arrival_order_in_rocksdb", "ttl_refreshed_on_read")


ROOT = Path(__file__).resolve().parents[2]

# The batched regular properties and the one-scenario checks and generators they replaced (main before batches).
ONE_PER_EXAMPLE = {
    "prefix_consistency": (regular_join_scenarios, regular.prefix_consistency),
    "final_convergence": (regular_join_scenarios, regular.final_convergence),
    "prefix_consistency_any_schema": (any_schema_join_scenarios, regular.prefix_consistency),
    "final_convergence_any_schema": (any_schema_join_scenarios, regular.final_convergence),
}


def one_per_example(spec: PropertySpec) -> PropertySpec:
    """A batched property as it was before batches: one scenario per Hypothesis example."""
    strategy, check = ONE_PER_EXAMPLE[spec.name]
    return replace(spec, strategy=lambda: strategy().map(lambda s: (s,)), check=check, batch=1)


def shrunk_size(mutant_name: str, family: str, prop: str, seed: int, examples: int = 400,
                form: str = "registered") -> int:
    """The size of the shrunk counterexample, measured in a fresh process (see the module docstring).

    `form="single"`: the property as it ran before batches, one scenario per example (`one_per_example`)."""
    args = json.dumps([mutant_name, family, prop, seed, examples, form])
    code = ("import json; from hypothesis.configuration import set_hypothesis_home_dir; "
            f"set_hypothesis_home_dir({str(HYPOTHESIS_HOME)!r}); "
            f"from tests.quality.test_shrink_quality import measure; print(measure(*json.loads({args!r})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.strip().splitlines()[-1])


def measure(mutant_name: str, family: str, prop: str, seed: int, examples: int, form: str = "registered") -> int:
    (mutant,) = by_name(mutant_name)
    specs = select(family, prop) if form == "registered" else [one_per_example(spec) for spec in select(family, prop)]
    outcome = run_mutant(mutant, examples=examples, seed=seed, properties=specs)
    assert outcome.status == "killed", f"{mutant_name}: {prop} did not catch it ({outcome.status})"
    assert outcome.shrunk_events is not None
    return outcome.shrunk_events


@pytest.mark.parametrize("name", CHEAP)
def test_regular_join_bug_shrinks_small(name: str) -> None:
    size = shrunk_size(name, "regular", REGULAR[name], seed=1)
    assert size <= REGULAR_BOUND, f"{name}: shrunk to {size} events"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(REGULAR))
def test_every_regular_join_bug_shrinks_small(name: str, seed: int) -> None:
    size = shrunk_size(name, "regular", REGULAR[name], seed=seed)
    assert size <= REGULAR_BOUND, f"{name} (seed {seed}): shrunk to {size} events"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OTHER_FAMILIES))
def test_interval_and_multiway_bugs_shrink_small(name: str) -> None:
    family, prop = OTHER_FAMILIES[name]
    size = shrunk_size(name, family, prop, seed=1)
    assert size <= REGULAR_BOUND, f"{name}: shrunk to {size} events"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["padding_not_retracted_on_first_match", "padding_not_reemitted_after_last_match",
                                  "unmatched_outer_retraction_keeps_padding", "anti_emits_right_kind"])
def test_batches_shrink_no_worse_than_one_scenario_per_example(name: str) -> None:
    """Issue 43: a batched property's counterexample is no larger than the one-scenario form's, same seed."""
    batched = shrunk_size(name, "regular", REGULAR[name], seed=1)
    single = shrunk_size(name, "regular", REGULAR[name], seed=1, form="single")
    assert batched <= single, f"{name}: batched {batched} events, one per example {single}"
