"""The runner stays readable, and a failing call reaches the runner through one typed field.

Read from the source (ast): the runner's functions (properties/campaign.py,
and the reduction of a live system's failure in properties/systems/specs.py)
stay at 60 lines or fewer, nested ones included; and no product module sets
or reads a `converge_*` attribute on an object: what a failure carries for
the runner is PropertyFailure.call, a FailedCall (properties/divergence.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario_json import load_scenario
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.divergence import Divergence, FailedCall, PropertyFailure
from converge.properties.spec import PropertySpec
from tests.support.paths import ROOT, SCENARIOS, SOURCE_FOLDERS

RUNNER = ("properties/campaign.py", "properties/systems/specs.py")
MAX_LINES = 60


def _functions(path: Path) -> list[tuple[str, int, int]]:
    """(name, first line, lines from `def` to its last line) of every function, nested ones and methods too."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1)  # type: ignore[operator]
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


@pytest.mark.parametrize("module", RUNNER)
def test_no_runner_function_is_over_60_lines(module: str) -> None:
    found = _functions(ROOT / module)
    assert found, f"{module}: no function found"
    long = [f"{module}:{line} {name} ({lines} lines)" for name, line, lines in found if lines > MAX_LINES]
    assert not long, f"split these into named pieces of at most {MAX_LINES} lines: {long}"


def _converge_attribute(node: ast.AST) -> str | None:
    """The `converge_*` attribute `node` sets or reads: `x.converge_args`, or getattr/setattr/hasattr/delattr
    with it spelled as a string."""
    if isinstance(node, ast.Attribute) and node.attr.startswith("converge_"):
        return node.attr
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and str(node.args[1].value).startswith("converge_")):
        return str(node.args[1].value)
    return None


def test_no_product_module_uses_converge_attributes_on_an_object() -> None:
    seen = 0
    found = []
    for package in SOURCE_FOLDERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            seen += 1
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                name = _converge_attribute(node)
                if name is not None:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")  # type: ignore[attr-defined]
    assert seen > 100  # the product was read
    assert not found, f"a failure's call travels in PropertyFailure.call (a FailedCall), not in attributes: {found}"


# The channel, end to end through run_property.

SCENARIO = load_scenario(SCENARIOS / "regular" / "acc_inner_no_match.json")
LIMIT = 1000
NUMBERS = st.tuples(st.lists(st.integers(0, 10**6), min_size=1))


@dataclass
class Reduced:
    """What a check's own reduction did (as properties/systems/reduce.Reduction, which is one)."""

    rounds: int

    def describe(self) -> str:
        return f"reduced in {self.rounds} rounds"


def _run(check: Callable[[list[int]], None], **options: Any) -> PropertyResult:
    spec = PropertySpec("fake", "sum_at_most_limit", lambda: NUMBERS, check, examples=50)
    return run_property(spec, seed=3, **options)


def test_a_failure_with_its_own_reduction_reaches_the_result_as_the_check_gave_it() -> None:
    record = Reduced(rounds=4)
    reduced = ([SCENARIO],)

    def check(xs: list[int]) -> None:
        if sum(xs) > LIMIT:
            raise PropertyFailure(Divergence("sum_at_most_limit", SCENARIO, "over the limit"),
                                  call=FailedCall(reduced, reduction=record, shrink_stopped=7.0))

    result = _run(check, shrink=False)  # as a system campaign runs: the check reduces, Hypothesis does not
    assert result.failure is not None and result.failure.call is not None
    assert result.failure_args is reduced and result.shrink_stopped == 7.0
    assert result.failure.call.reduction is record


def test_a_reduction_that_finished_in_its_budget_records_no_stop() -> None:
    def check(xs: list[int]) -> None:
        if sum(xs) > LIMIT:
            raise PropertyFailure(Divergence("sum_at_most_limit", SCENARIO, "over the limit"),
                                  call=FailedCall(([SCENARIO],), reduction=Reduced(rounds=1)))

    result = _run(check, shrink=False)
    assert result.failure_args == ([SCENARIO],) and result.shrink_stopped is None


def test_a_plain_assert_failure_gets_the_runners_args_of_the_shrunk_call() -> None:
    def check(xs: list[int]) -> None:
        assert sum(xs) <= LIMIT

    result = _run(check)
    assert isinstance(result.error, AssertionError) and result.failure is None
    assert result.failure_args == ([LIMIT + 1],) and result.shrink_stopped is None


def test_a_property_failure_without_a_call_gets_the_runners_args_in_its_field() -> None:
    def check(xs: list[int]) -> None:
        if sum(xs) > LIMIT:
            raise PropertyFailure(Divergence("sum_at_most_limit", SCENARIO, f"sum {sum(xs)}"))

    result = _run(check)
    assert result.failure is not None and result.failure.call == FailedCall(([LIMIT + 1],))
    assert result.failure_args == ([LIMIT + 1],)  # what the pytest plugin reads from the failure, too


def test_an_input_converge_rejects_itself_is_an_internal_error_with_the_runners_args() -> None:
    def check(xs: list[int]) -> None:
        if sum(xs) > LIMIT:
            raise BadInputError("not this one")

    result = _run(check)
    assert isinstance(result.error, InternalError) and result.failure_args == ([LIMIT + 1],)


def test_a_budget_stop_records_the_budget_and_the_best_calls_args() -> None:
    now = [0.0]

    def check(xs: list[int]) -> None:
        now[0] += 1.0
        assert sum(xs) <= LIMIT

    result = _run(check, shrink_budget=3, clock=lambda: now[0])
    assert result.shrink_stopped == 3.0 and isinstance(result.error, AssertionError)
    (numbers,) = result.failure_args
    assert sum(numbers) > LIMIT  # the best case found by then, still failing
