"""The Flink side of "Spark vs Flink for the same query" (docs/spark.md): every native-join case file with a Flink
form runs as a Flink interval join on converge's local runtime, against the Flink answer worked by hand in the case
file's meta (`flink_expect_output`, `flink_expect_batches`; `flink_why` says how). No JVM."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.native_join_case import NativeJoinCase, load_case
from converge.engine.model.scenario import LONG_MAX, WatermarkEvent
from converge.engine.runtime.local import run_scenario
from converge.systems.spark.flink_form import END, flink_form
from tests.support.paths import NATIVE_CASES

CASES = NATIVE_CASES
CASE_FILES = sorted(CASES.glob("*.json"))
WITH_FORM = [p for p in CASE_FILES if "flink_form" not in load_case(p).meta]


def _pair(pair: list) -> tuple:
    return tuple(pair)


def _run(case: NativeJoinCase) -> dict[str, list[tuple[str, tuple]]]:
    """What the Flink form emits, per micro-batch label, as (row kind, (left id, right id))."""
    form = flink_form(case)
    assert form is not None
    left_width = len(case.left.columns) + 1
    result = run_scenario(form.scenario)
    out: dict[str, list[tuple[str, tuple]]] = {}
    for batch, items in zip(form.batch_of_event, result.per_event, strict=True):
        for item in items:
            if isinstance(item, Change):
                out.setdefault(str(batch), []).append((item.kind, (item.row[left_width - 1], item.row[-1])))
    return out


def test_every_case_file_says_whether_it_has_a_flink_form() -> None:
    assert len(WITH_FORM) >= 9
    for path in CASE_FILES:
        meta = load_case(path).meta
        assert ("flink_form" in meta) != ("flink_expect_output" in meta), path.name


@pytest.mark.parametrize("path", WITH_FORM, ids=lambda p: p.stem)
def test_flink_side_matches_the_hand_worked_answer(path: Path) -> None:
    case = load_case(path)
    out = _run(case)
    kinds = {kind for changes in out.values() for kind, _ in changes}
    assert kinds <= {"+I"}, f"an interval join is append-only, got {kinds}"
    final = Counter(pair for changes in out.values() for _, pair in changes)
    assert final == Counter(_pair(p) for p in case.meta["flink_expect_output"])
    per_batch = {batch: Counter(pair for _, pair in changes) for batch, changes in out.items()}
    want = {batch: Counter(_pair(p) for p in pairs) for batch, pairs in case.meta["flink_expect_batches"].items()
            if pairs}
    assert per_batch == want


@pytest.mark.parametrize("name", ["semi_once", "left_anti_rejected"])
def test_semi_and_anti_have_no_interval_form(name: str) -> None:
    case = load_case(CASES / f"{name}.json")
    assert case.join in ("left_semi", "left_anti")
    assert flink_form(case) is None


def test_the_watermark_is_max_time_minus_delay_after_each_batch_then_max() -> None:
    form = flink_form(load_case(CASES / "max_policy.json"))
    assert form is not None
    marks = [(b, e.input, e.watermark) for b, e in zip(form.batch_of_event, form.scenario.events, strict=False)
             if isinstance(e, WatermarkEvent)]
    # left: 100000, 200000 seen; right: 50000, then nothing until 96000; delay 5000, no "- 1" (Flink SQL)
    assert marks == [(0, "l", 95000), (0, "r", 45000), (1, "l", 195000), (1, "r", 45000),
                     (2, "l", 195000), (2, "r", 91000), (END, "l", LONG_MAX), (END, "r", LONG_MAX)]


def test_the_bounds_turn_around_and_the_residual_joins_the_condition() -> None:
    obj = json.loads((CASES / "inclusive_bounds.json").read_text())
    obj["residual"] = {"left": "k", "op": "<>", "right": "t"}
    form = flink_form(NativeJoinCase.from_json(obj))
    assert form is not None
    interval = form.scenario.join.interval
    assert (interval.left_time, interval.right_time, interval.lower_ms, interval.upper_ms) == ("l.t", "r.t",
                                                                                              -2000, -1000)
    assert form.scenario.join.conditions == ("l.k = r.k AND l.k <> r.t",)


def test_a_case_column_named_like_the_id_column_is_refused() -> None:
    obj = json.loads((CASES / "inclusive_bounds.json").read_text())
    obj["left"]["columns"] = ["row_id", "t"]
    obj["keys"] = [["row_id", "k"]]
    with pytest.raises(BadInputError, match="row_id"):
        flink_form(NativeJoinCase.from_json(obj))
