"""Checking a run against a scenario file's own expectations (`expect`, `expect_changelog`, `expect_final`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from converge.engine.materialize import clean, fold
from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.scenario import Expect, Scenario
from converge.engine.runtime.local import RunResult


def item_to_json(item: Change | OutputWatermark) -> dict:
    return item.to_json()


def _norm(item: dict) -> tuple:
    if "watermark" in item:
        return ("wm", item["watermark"])
    return (item["kind"], tuple(item["row"]))


def _show(items: list[tuple]) -> str:
    return "[" + ", ".join(f"{k}{list(r)}" if k != "wm" else f"WM({r})" for k, r in items) + "]"


def compare_emits(expect: Expect, got: list[Change | OutputWatermark]) -> str | None:
    """None if the output satisfies the expectation, else a readable difference."""
    want = [_norm(i) for i in expect.emits]
    have = [_norm(item_to_json(i)) for i in got]
    if expect.match == "contains":
        missing = Counter(want) - Counter(have)
        if missing:
            return f"expected to contain {_show(list(missing.elements()))}, got {_show(have)}"
        return None
    if expect.ordered:
        if want != have:
            return f"expected {_show(want)}\n    got      {_show(have)}"
        return None
    if Counter(want) != Counter(have):
        extra = Counter(have) - Counter(want)
        missing = Counter(want) - Counter(have)
        return (f"expected (any order) {_show(want)}\n    got {_show(have)}\n"
                f"    missing {_show(list(missing.elements()))}, unexpected {_show(list(extra.elements()))}")
    return None


def check_expectations(scenario: Scenario, result: RunResult) -> list[str]:
    """Every way the run differs from what the scenario file says it must do."""
    problems: list[str] = []
    pending: list[Any] = []
    for i, (event, items) in enumerate(zip(scenario.events, result.per_event, strict=False)):
        pending.extend(items)
        if event.expect is not None:
            diff = compare_emits(event.expect, pending)
            if diff:
                problems.append(f"event {i}: {diff}")
            pending = []
    if scenario.expect_changelog is not None:
        diff = compare_emits(scenario.expect_changelog, result.changelog)
        if diff:
            problems.append(f"whole changelog: {diff}")
    if scenario.expect_final is not None:
        got = clean(fold(result.changes))
        want = Counter(tuple(r) for r in scenario.expect_final)
        if got != want:
            extra = got - want
            missing = want - got
            problems.append(
                f"final table: missing {[list(r) for r in missing.elements()]}, "
                f"unexpected {[list(r) for r in extra.elements()]}")
    return problems
