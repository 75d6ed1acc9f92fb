"""Calling converge's API wrongly is an ApiMisuseError at once, naming the call (Hypothesis's InvalidArgument)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import converge
from converge.engine.model.errors import ApiMisuseError, exit_code
from converge.properties.registry import select

SPEC = select("regular", "final_convergence")[0]


@pytest.mark.parametrize("call, message", [
    (lambda: converge.regular_join_scenarios(join_types=("bogus",)),
     "regular_join_scenarios(join_types=...): 'bogus' is not one of 'inner'"),
    (lambda: converge.regular_join_scenarios(join_types="inner"), "expected a sequence of choices, got the string"),
    (lambda: converge.regular_join_scenarios(min_ops=5, max_ops=2), "need 0 <= min_ops <= max_ops"),
    (lambda: converge.regular_join_scenarios(map_state_orders=()), "map_state_orders=()): there must be at least one"),
    (lambda: converge.interval_join_scenarios(join_types=("semi",)), "'semi' is not one of 'inner', 'left'"),
    (lambda: converge.interval_join_scenarios(time="wall"), "interval_join_scenarios(time='wall')"),
    (lambda: converge.multiway_scenarios(num_inputs=(1,)), "multiway_scenarios(num_inputs=...): 1 is not one of"),
    (lambda: converge.multiway_scenarios(extra_configs=({"max_tables": 3},)), "is not a set of Config options"),
    (lambda: converge.run_scenario(Path("case.json")), "LocalRuntime: expected a Scenario, got PosixPath (load"),
    (lambda: converge.DuckDBOracle().final("case.json"), "DuckDBOracle.final: expected a Scenario, got str (load"),
    (lambda: converge.prefix_consistency(None), "prefix_consistency: expected a Scenario, got NoneType"),
    (lambda: converge.run_property(SPEC, max_examples=0), "run_property(max_examples=0)"),
    (lambda: converge.run_property("final_convergence"), "run_property: expected a PropertySpec, got str"),
])
def test_misuse_is_refused_when_the_call_is_made(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ApiMisuseError) as info:
        call()
    assert message in str(info.value)
    assert exit_code(info.value) == 2 and isinstance(info.value, TypeError)
