"""Native-join cases without a JVM: validation, JSON round trip, the watermark/lateness model, the DuckDB answer,
the generator, and that each property catches a run that breaks it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings

from converge.engine.model.errors import BadInputError
from converge.engine.model.native_join_case import Epoch, NativeJoinCase, NativeRun, dump_case, load_case
from converge.generators.native_join import native_join_cases
from converge.oracle.native_join import batch_answer
from converge.oracle.native_join_model import model_case
from converge.properties.divergence import PropertyFailure
from converge.properties.native_join.checks import NATIVE_PROPERTIES, check_run
from tests.support.paths import NATIVE_CASES

CASES = NATIVE_CASES
PROPS = {p.name: p for p in NATIVE_PROPERTIES}


def _case(**changes) -> dict:
    obj = json.loads((CASES / "outer_after_watermark.json").read_text())
    obj.update(changes)
    return obj


def test_every_case_file_round_trips(tmp_path: Path) -> None:
    for path in sorted(CASES.glob("*.json")):
        case = load_case(path)
        assert load_case(dump_case(case, tmp_path / path.name)) == case


@pytest.mark.parametrize("change, message", [
    ({"join": "left_outer"}, r"^join: 'left_outer' is not one of"),
    ({"watermark_policy": "avg"}, r"^watermark_policy: 'avg' is not one of min, max"),
    ({"extra": 1}, r"^case\.extra: unknown key 'extra'"),
    ({"keys": [["k", "z"]]}, r"^keys\[0\]\[1\]: 'z' is not a right column"),
    ({"bounds_ms": [5, 1]}, r"^bounds_ms: lower bound 5 is above the upper bound 1"),
    ({"batches": [{"left": [[1, None]]}]}, r"^batches\[0\]\.left\[0\]\.t: the event time 't' is NULL"),
    ({"batches": [{"middle": []}]}, r"^batches\[0\]\.middle: unknown key"),
])
def test_bad_cases_name_the_key_path(change: dict, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        NativeJoinCase.from_json(_case(**change))


def test_the_model_on_the_hand_worked_case() -> None:
    """docs/spark.md: watermarks 0, 97000 (left 102000 - 5000 < right 105000 - 5000), 125000, 155000, and 176000
    after the sentinel (160000 + 10000 + 5000 + 5000 + 1000, minus 5000)."""
    model = model_case(load_case(CASES / "outer_after_watermark.json"))
    assert model.watermarks == (0, 97000, 125000, 155000, 176000)
    assert [model.live_rows(e) for e in range(5)] == [4, 7, 4, 4, 2]
    late = model_case(load_case(CASES / "late_rule_previous_epoch.json"))
    assert late.late_ids("left") == {2, 3} == late.late_ids("right")   # 94999 and 95000 <= 95000


def test_the_model_ignores_null_keys_of_a_side_the_join_drops() -> None:
    assert model_case(load_case(CASES / "null_key_holds_watermark.json")).watermarks[1] == 10000


def test_the_batch_answer_by_hidden_ids() -> None:
    case = load_case(CASES / "full_outer_after_watermark.json")
    assert batch_answer(case) == Counter({(0, 0): 1, (1, 1): 1, (2, None): 1, (3, None): 1, (4, None): 1,
                                          (None, 2): 1, (None, 3): 1})
    semi = load_case(CASES / "semi_once.json")
    assert batch_answer(semi) == Counter({(0, None): 1})


@settings(max_examples=150, database=None, deadline=None)
@given(native_join_cases(late_share=0.0))
def test_no_late_share_draws_no_late_row(case: NativeJoinCase) -> None:
    assert not any(r.late for r in model_case(case).rows)
    assert NativeJoinCase.from_json(case.to_json()) == case


def _good_run() -> tuple[NativeJoinCase, NativeRun]:
    case = load_case(CASES / "outer_after_watermark.json")
    outs = [((0, 0),), ((1, 1),), ((2, None),), ((3, None),), ((4, None),)]
    inputs = [4, 3, 2, 2, 0]
    states = [4, 7, 4, 4, 2]
    marks = [0, 97000, 125000, 155000, 176000]
    return case, NativeRun("ok", tuple(Epoch(i, outs[i], marks[i], states[i], inputs[i]) for i in range(5)))


def _with(run: NativeRun, epoch: int, **changes) -> NativeRun:
    epochs = list(run.epochs)
    e = epochs[epoch]
    epochs[epoch] = Epoch(**{**e.__dict__, **changes})
    return NativeRun("ok", tuple(epochs))


def test_the_hand_worked_run_passes_every_property() -> None:
    case, run = _good_run()
    for prop in NATIVE_PROPERTIES:
        check_run(prop, case, run)


@pytest.mark.parametrize("prop, epoch, changes", [
    ("no_late_equals_batch", 2, {"output": ()}),
    ("within_batch_bounds", 1, {"output": ((1, 1), (0, 1))}),
    ("outer_rows_once_after_watermark", 1, {"output": ((1, 1), (2, None))}),   # before W passes 112000
    ("no_duplicate_pairs", 1, {"output": ((1, 1), (1, 1))}),
    ("state_bounded_by_watermark", 2, {"state_rows": 5}),
    ("watermark_follows_rule", 1, {"watermark_ms": 100000}),
])
def test_each_property_catches_a_broken_run(prop: str, epoch: int, changes: dict) -> None:
    case, run = _good_run()
    with pytest.raises(PropertyFailure, match=prop):
        check_run(PROPS[prop], case, _with(run, epoch, **changes))


def test_sparks_watermark_timestamps_are_read_exactly() -> None:
    """The campaign's first divergence was this harness's own: 16.188 s read as 16187 ms through a float."""
    from converge.systems.spark.system import millis

    assert millis("1970-01-01T00:00:16.188Z") == 16188
    assert millis("2026-11-24T03:13:32.595Z") == 1795490012595
    assert millis(None) is None


def test_a_native_case_failure_comes_back_from_run_property_with_its_case() -> None:
    """run_property completes a converge scenario's evidence with the oracle's final answer; a native-join
    case has its own evidence and must come back as it failed, not crash the campaign."""
    from converge.properties.campaign import run_property
    from converge.properties.divergence import Divergence
    from converge.properties.spec import PropertySpec

    def check(case: NativeJoinCase) -> None:
        raise PropertyFailure(Divergence("planted", case, "a planted failure"))

    spec = PropertySpec("spark_native", "planted", lambda: native_join_cases().map(lambda c: (c,)), check, 5, "")
    result = run_property(spec, max_examples=5, seed=1)
    assert result.error is None and result.failure is not None
    divergence = result.failure.divergence
    assert isinstance(divergence.scenario, NativeJoinCase) and divergence.expected_final is None
