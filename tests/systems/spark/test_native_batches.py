"""Batches of native-join cases without a JVM: merging cases into one query's case, splitting its run, each case's
model under the query's watermark, the batch generator, and the reduction on a stand-in for Spark.

The stand-in answers a merged case the way Spark's documented semantics say (every kept pair and padded row in
the epoch after the sentinel, whose watermark is past every range end) but with a planted bug: it never emits
a pair of two rows whose `v` is 2. So every property's expectation here comes from DuckDB and the rule's model,
and the reduction must find the two rows of one such pair.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.native_join_batch import merge_cases, shape_of, split_run
from converge.engine.model.native_join_case import SIDES, Epoch, NativeJoinCase, NativeRun, load_case
from converge.generators.native_join import native_join_batches
from converge.oracle.native_join import batch_answer
from converge.oracle.native_join_model import batch_models, model_case
from converge.properties.divergence import PropertyFailure
from converge.properties.native_join.batches import check_batch, first_failure
from converge.properties.native_join.checks import NATIVE_PROPERTIES
from converge.properties.native_join.reduce import reduce_on_spark
from tests.support.paths import NATIVE_CASES

PROPS = {p.name: p for p in NATIVE_PROPERTIES}


def _stand_in(case: NativeJoinCase, *, bug: bool = True) -> NativeRun:
    """Spark as documented (all output once the sentinel's watermark passes everything), minus pairs of v = 2 rows."""
    model = model_case(case)
    kept = {s: {r.id for r in model.rows if r.side == s and not r.late and not r.sentinel} for s in SIDES}
    values = {s: {rid: row[case.input(s).columns.index("v")] if "v" in case.input(s).columns else None
                  for rid, _, row in case.rows(s)} for s in SIDES}
    out = [p for p in batch_answer(case, kept).elements()
           if not (bug and p[0] is not None and p[1] is not None and values["left"][p[0]] == 2 == values["right"][p[1]])]
    epochs = Counter(r.epoch for r in model.rows)
    last = len(case.batches) + 1   # the no-data epoch after the sentinel's
    return NativeRun("ok", tuple(Epoch(e, tuple(out) if e == last else (), model.watermark(e), None, epochs.get(e, 0))
                                 for e in range(last + 1)))


def test_two_copies_of_a_hand_case_keep_its_watermarks_and_double_its_rows() -> None:
    case = load_case(NATIVE_CASES / "outer_after_watermark.json")
    batch = merge_cases([case, case])
    assert batch.merged.keys[0] == ("case_no", "case_no") and batch.merged.left.columns[0] == "case_no"
    alone, models = model_case(case), batch_models(batch)
    assert [m.watermarks for m in models] == [alone.watermarks] * 2 == [(0, 97000, 125000, 155000, 176000)] * 2
    assert [models[1].live_rows(e) for e in range(5)] == [8, 14, 8, 6, 2]   # 2 x [4, 7, 4, 4] and one sentinel each
    assert [(r.side, r.id, r.late) for r in models[1].rows] == [(r.side, r.id, r.late) for r in alone.rows]


def test_a_case_of_a_batch_runs_under_the_querys_watermark() -> None:
    """Case 1 alone never raises the watermark above 0 in time; beside case 0 its second row is late."""
    late = load_case(NATIVE_CASES / "late_rule_previous_epoch.json")
    quiet = late.with_batches([{"left": [(1, 10000)], "right": []}, {"left": [], "right": []},
                               {"left": [(1, 94000)], "right": [(1, 94000)]}])
    models = batch_models(merge_cases([late, quiet]))
    assert not any(r.late for r in model_case(quiet).rows)
    assert models[1].watermarks == model_case(late).watermarks and models[1].late_ids("left") == {1}


def test_cases_of_another_shape_are_refused() -> None:
    a = load_case(NATIVE_CASES / "outer_after_watermark.json")
    with pytest.raises(ApiMisuseError, match="another query shape"):
        merge_cases([a, load_case(NATIVE_CASES / "max_policy.json")])


def test_split_run_gives_each_case_its_pairs_and_marks_a_pair_across_cases() -> None:
    case = load_case(NATIVE_CASES / "outer_after_watermark.json")
    batch = merge_cases([case, case])
    left, right = ({o: m for m, o in enumerate(batch.origin[s])} for s in SIDES)   # (case, own id) -> merged id
    run = NativeRun("ok", (Epoch(0, ((left[0, 0], right[0, 0]), (left[1, 1], None), (left[0, 1], right[1, 0])),
                                 0, 3, 8),))
    first, second = split_run(batch, run)
    assert first.epochs[0].output == ((0, 0), (1, "case 1 right 0"))
    assert second.epochs[0].output == ((1, None),) and second.epochs[0].state_rows == 3
    assert left[1, 0] != 0 and right[1, 0] != 0   # the merged ids are not the cases' own


@settings(max_examples=40, database=None, deadline=None)
@given(native_join_batches(cases=4, late_share=0.0))
def test_a_batch_without_late_share_draws_no_late_row_under_its_querys_watermark(batch) -> None:
    assert len(batch) == 4 and len({shape_of(c) for c in batch.cases}) == 1
    assert not any(r.late for m in batch_models(batch) for r in m.rows)


@settings(max_examples=25, database=None, deadline=None)
@given(native_join_batches(cases=3))
def test_batch_answers_in_one_query_equal_each_cases_own(batch) -> None:
    from converge.oracle.native_join import batch_answers

    merged = model_case(batch.merged)
    kept = {s: {r.id for r in merged.rows if r.side == s and not r.late and not r.sentinel} for s in SIDES}
    for case, model, answer in zip(batch.cases, batch_models(batch), batch_answers(batch, [kept])[0], strict=True):
        assert answer == batch_answer(case, {s: {r.id for r in model.rows if r.side == s and not r.late
                                                 and not r.sentinel} for s in SIDES})


@settings(max_examples=15, database=None, deadline=None)
@given(native_join_batches(cases=3))
def test_the_documented_run_passes_every_property_on_every_case(batch) -> None:
    run = _stand_in(batch.merged, bug=False)
    for prop in NATIVE_PROPERTIES:
        assert all(v.failure is None for v in check_batch(prop, batch, run)), prop.name


def test_state_rows_are_bounded_by_every_case_of_the_query() -> None:
    case = load_case(NATIVE_CASES / "outer_after_watermark.json")
    batch = merge_cases([case, case])
    run = _stand_in(batch.merged, bug=False)
    fine = NativeRun("ok", tuple(Epoch(e.batch_id, e.output, e.watermark_ms, 8 if e.batch_id == 0 else None,
                                       e.input_rows) for e in run.epochs))
    assert first_failure(PROPS["state_bounded_by_watermark"], batch, fine) is None   # 8 = both cases' 4
    over = NativeRun("ok", tuple(Epoch(e.batch_id, e.output, e.watermark_ms, 9 if e.batch_id == 0 else None,
                                       e.input_rows) for e in run.epochs))
    verdict = first_failure(PROPS["state_bounded_by_watermark"], batch, over)
    assert verdict is not None and "for the 2 cases of its query" in str(verdict.failure)
    assert "a query of 2 cases" in str(verdict.failure)


def _buggy_batch():
    base = load_case(NATIVE_CASES / "bug_full_outer_null_keys_match_from_state.json")
    shape = base.with_batches([{"left": [], "right": []}] * 2)
    shape = NativeJoinCase("c", shape.left, shape.right, "inner", shape.keys, 0, 2000, None, "min", shape.batches)
    clean = shape.with_batches([{"left": [(1, 10000, 0)], "right": [(1, 11000, 1)]},
                                {"left": [(2, 12000, 0)], "right": []}])
    buggy = shape.with_batches([{"left": [(1, 10000, 0), (1, 10500, 2), (2, 10000, 1)],
                                 "right": [(1, 11000, 2), (2, 10500, 0)]},
                                {"left": [(2, 12000, 2)], "right": [(1, 12000, 0), (2, 12500, 1)]}])
    return merge_cases([clean, buggy, clean])


def test_a_failing_case_is_reduced_alone_to_the_rows_of_its_pair_one_query_a_round() -> None:
    batch = _buggy_batch()
    asked: list[NativeJoinCase] = []

    def runner(case: NativeJoinCase) -> NativeRun:
        asked.append(case)
        return _stand_in(case)

    prop = PROPS["no_late_equals_batch"]
    verdict = first_failure(prop, batch, runner(batch.merged))
    assert verdict is not None and verdict.index == 1
    reduction = reduce_on_spark(prop, batch, 1, verdict.failure, runner, budget_s=60)
    assert reduction.alone and reduction.cases_before == 3 and reduction.cases_after == 1
    assert reduction.rows_before == 8 and reduction.rows_after == 2
    rows = [row for b in reduction.case.batches for s in SIDES for row in b[s]]
    assert sorted(rows) == [(1, 10500, 2), (1, 11000, 2)]
    assert reduction.queries == len(asked) - 1 and reduction.rounds <= reduction.queries
    assert "alone, in a one-case query" in reduction.describe()
    with pytest.raises(PropertyFailure, match="no_late_equals_batch"):
        raise reduction.failure
