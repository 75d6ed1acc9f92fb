"""The properties of Spark's native join, each checking one run of one case.

What each one expects comes from Spark's documented semantics: the batch
answer from DuckDB (oracle/native_join.py), the watermark of every epoch and
which rows are late from the rule's model (oracle/native_join_model.py),
never from what Spark reports. A run Spark rejects (`unsupported`) checks
nothing and is counted as such.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.native_join_case import SIDES, NativeJoinCase, NativeRun
from converge.oracle.native_join import batch_answer
from converge.oracle.native_join_model import CaseModel, ModelRow, model_case
from converge.properties.divergence import Divergence, PropertyFailure

OUTER = ("left", "right", "full")


def _fail(prop: str, case: NativeJoinCase, message: str, got: Counter | None = None,
          want: Counter | None = None) -> NoReturn:
    raise PropertyFailure(Divergence(prop, case, message, engine=got, expected=want))  # type: ignore[arg-type]


def check_alignment(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> None:
    """Epoch j read micro-batch j (the sentinel batch last), then only no-data epochs: else nothing else holds."""
    want = Counter(r.epoch for r in model.all_rows)   # Spark reads every case's rows of its query
    for e in run.epochs:
        if e.input_rows != want.get(e.batch_id, 0):
            raise SystemUnderTestError(f"Spark's epoch {e.batch_id} read {e.input_rows} rows, the case's micro-batch "
                                       f"{e.batch_id} has {want.get(e.batch_id, 0)}: the file source did not take "
                                       f"one file per trigger")
    if len(run.epochs) < len(case.batches) + 1:
        raise SystemUnderTestError(f"Spark ran {len(run.epochs)} epochs for {len(case.batches) + 1} micro-batches")


def _kept(model: CaseModel) -> dict[str, set[int]]:
    return {s: {r.id for r in model.rows if r.side == s and not r.late and not r.sentinel} for s in SIDES}


def _answers(case: NativeJoinCase, model: CaseModel) -> tuple[Counter, Counter]:
    """The batch answers of the rows the rule keeps and of all rows: the batch's, when computed for it at once."""
    if model.answers is not None:
        return model.answers
    return batch_answer(case, _kept(model)), batch_answer(case)


def _padded(bag: Counter) -> Counter:
    return Counter({p: n for p, n in bag.items() if p[0] is None or p[1] is None})


def _pairs(bag: Counter) -> Counter:
    return Counter({p: n for p, n in bag.items() if p[0] is not None and p[1] is not None})


def no_late_equals_batch(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> bool:
    """Output multiset = the batch answer of the rows Spark's rule keeps (all rows when none is late)."""
    got, want = Counter(run.output()), _answers(case, model)[0]
    if got != want:
        late = sum(r.late for r in model.rows)
        _fail("no_late_equals_batch", case, f"Spark's output differs from the batch answer of the "
              f"{'rows' if not late else f'rows not late ({late} late by the rule)'} (+ Spark only, - batch only)",
              got, want)
    return True


def within_batch_bounds(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> bool:
    """batch(non-late) <= output <= batch(all) for matched rows; a null-padded row only for a kept unmatched row."""
    got = Counter(run.output())
    low, high = _answers(case, model)
    if case.join in OUTER:
        low_m, got_m, high_m = _pairs(low), _pairs(got), _pairs(high)
        if not (low_m <= got_m):
            _fail("within_batch_bounds", case, "a pair of the batch answer of the non-late rows is missing "
                  "(- missing)", got_m & low_m, low_m)
        if not (got_m <= high_m):
            _fail("within_batch_bounds", case, "a pair that no batch answer has (+ extra)", got_m, got_m & high_m)
        if not (_padded(got) <= _padded(low)):
            _fail("within_batch_bounds", case, "a null-padded row for a row that is late or has a match among the "
                  "non-late rows (+ extra)", _padded(got), _padded(got) & _padded(low))
        return True
    if not (low <= got):
        _fail("within_batch_bounds", case, "a row of the batch answer of the non-late rows is missing (- missing)",
              got & low, low)
    if not (got <= high):
        _fail("within_batch_bounds", case, "a row outside the batch answer of all rows (+ extra)", got, got & high)
    return True


def outer_rows_once_after_watermark(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> bool:
    """Each null-padded row once, and only in an epoch whose watermark (by the rule) is past its range end."""
    if case.join not in OUTER:
        return False
    rows = {(r.side, r.id): r for r in model.rows}
    seen: Counter = Counter()
    for e in run.epochs:
        for lid, rid in e.output:
            if lid is not None and rid is not None:
                continue
            row: ModelRow = rows[("left", lid)] if rid is None else rows[("right", rid)]
            seen[(lid, rid)] += 1
            end, w = model.range_end(row), model.watermark(e.batch_id)
            if end > w:
                _fail("outer_rows_once_after_watermark", case, f"the null-padded row of {row.side} row {row.id} (time "
                      f"{row.time}, range end {end}) came out in epoch {e.batch_id}, whose watermark {w} has not "
                      f"passed its range end: a later non-late row could still match it")
    twice = Counter({p: n for p, n in seen.items() if n > 1})
    if twice:
        _fail("outer_rows_once_after_watermark", case, "a null-padded row came out more than once", seen,
              seen - twice + Counter(dict.fromkeys(twice, 1)))
    return True


def no_duplicate_pairs(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> bool:
    """No (left id, right id) twice; LEFT SEMI: no left row twice; no row both matched and null-padded."""
    got = Counter(run.output())
    twice = Counter({p: n for p, n in got.items() if n > 1})
    if twice:
        _fail("no_duplicate_pairs", case, "an output row (by hidden ids) came out more than once", got,
              got - twice + Counter(dict.fromkeys(twice, 1)))
    matched_l = {p[0] for p in _pairs(got)}
    matched_r = {p[1] for p in _pairs(got)}
    both = [p for p in _padded(got) if (p[1] is None and p[0] in matched_l) or (p[0] is None and p[1] in matched_r)]
    if both and case.join != "left_semi":
        _fail("no_duplicate_pairs", case, f"rows both matched and null-padded: {both}", got, got - Counter(both))
    return True


def state_bounded_by_watermark(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> bool:
    """After each epoch the join keeps no more rows than those (not late) whose range end the watermark has not
    passed."""
    for e in run.epochs:
        bound = model.live_rows(e.batch_id)   # over every case of the query: numRowsTotal is the query's
        if e.state_rows is not None and e.state_rows > bound:
            whose = "" if model.cases == 1 else f" (for the {model.cases} cases of its query)"
            _fail("state_bounded_by_watermark", case, f"after epoch {e.batch_id} (watermark "
                  f"{model.watermark(e.batch_id)}) the join keeps {e.state_rows} rows{whose}; at most {bound} can "
                  f"still match")
    return True


def watermark_follows_rule(case: NativeJoinCase, run: NativeRun, model: CaseModel) -> bool:
    """Each epoch's watermark is the rule's: per-input max event time - delay, min/max over inputs, from the next
    epoch on, never going back."""
    for e in run.epochs:
        want = model.watermark(e.batch_id)
        if e.watermark_ms is not None and e.watermark_ms != want:
            _fail("watermark_follows_rule", case, f"epoch {e.batch_id}'s watermark is {e.watermark_ms}; the rule "
                  f"({case.policy} policy) gives {want}")
    return True


@dataclass(frozen=True)
class NativeProperty:
    name: str
    description: str
    check: Callable[[NativeJoinCase, NativeRun, CaseModel], bool]   # False: the case does not exercise it


NATIVE_PROPERTIES: tuple[NativeProperty, ...] = (
    NativeProperty("no_late_equals_batch", "output = DuckDB batch answer of the rows not late by Spark's rule "
                   "(all rows when none is late)", no_late_equals_batch),
    NativeProperty("within_batch_bounds", "with late rows: batch(non-late) <= output <= batch(all)",
                   within_batch_bounds),
    NativeProperty("outer_rows_once_after_watermark", "each null-padded row once, only after the watermark passes "
                   "its range end", outer_rows_once_after_watermark),
    NativeProperty("no_duplicate_pairs", "no output pair (hidden ids) twice", no_duplicate_pairs),
    NativeProperty("state_bounded_by_watermark", "state rows <= rows that can still match under the watermark",
                   state_bounded_by_watermark),
    NativeProperty("watermark_follows_rule", "each epoch's watermark = the rule's (global min/max, next epoch)",
                   watermark_follows_rule),
)


def watermark_note(model: CaseModel) -> str:
    """Under which watermark a case ran: the query's, by epoch (and how many cases shared it)."""
    whose = "its own query" if model.cases == 1 else f"a query of {model.cases} cases"
    return f"run in {whose}; the query's watermark by epoch (by the rule): {list(model.watermarks)}"


def check_run(prop: NativeProperty, case: NativeJoinCase, run: NativeRun, model: CaseModel | None = None) -> bool:
    """Check one property on one run; False when the run checks nothing for it (rejected query, not exercised).

    `model` is the case's model under its query's watermark (oracle/native_join_model.batch_models) when the
    case ran in a batch; by default the case's own (one query for the case). A failure says which watermark."""
    if run.status != "ok":
        return False
    model = model_case(case) if model is None else model
    check_alignment(case, run, model)
    try:
        return prop.check(case, run, model)
    except PropertyFailure as exc:
        exc.divergence.message += f"\n  ({watermark_note(model)})"
        exc.divergence.extra["watermarks"] = list(model.watermarks)
        exc.divergence.extra["cases_in_query"] = model.cases
        raise PropertyFailure(exc.divergence, call=exc.call) from None
