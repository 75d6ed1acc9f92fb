"""The native-join properties over a batch: one Spark query, many cases, each judged under the query's watermark.

A batch's run is the run of its merged case (engine/model/native_join_batch.py);
each case gets its share of the output and is checked by the same property
code as a case alone, against its model under the query's watermark
(oracle/native_join_model.batch_models): the query's watermarks and late
rows, its own expected output, and, for `state_bounded_by_watermark` and the
epoch alignment, the rows of every case of the query (numRowsTotal and
numInputRows are the query's).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, replace

from converge.engine.model.native_join_batch import NativeBatch, split_run
from converge.engine.model.native_join_case import SIDES, NativeJoinCase, NativeRun
from converge.oracle.native_join import batch_answers
from converge.oracle.native_join_model import CaseModel, batch_models, model_case
from converge.properties.divergence import PropertyFailure
from converge.properties.native_join.checks import NativeProperty, check_run


@dataclass(frozen=True)
class CaseVerdict:
    """One case of a batch under one property: exercised or not, or its failure."""

    index: int
    case: NativeJoinCase
    run: NativeRun
    model: CaseModel
    exercised: bool = False
    failure: PropertyFailure | None = None


_MEMO: OrderedDict[tuple[int, str], tuple[NativeRun, list]] = OrderedDict()   # the six properties share a batch's
MEMO_SIZE = 32


def case_runs(batch: NativeBatch, run: NativeRun) -> list[tuple[NativeJoinCase, NativeRun, CaseModel]]:
    """Each case with its share of the query's run and its model under the query's watermark, the batch answers
    of every case computed in one DuckDB connection for the whole batch (not two a case and property); kept for
    the next property that checks the same batch and run."""
    key = (id(run), json.dumps(batch.merged.to_json(), sort_keys=True))
    if key in _MEMO and _MEMO[key][0] is run:
        _MEMO.move_to_end(key)
        return _MEMO[key][1]
    out = _case_runs(batch, run)
    _MEMO[key] = (run, out)   # the run is kept with its id, so the id cannot be reused while the entry lives
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return out


def _case_runs(batch: NativeBatch, run: NativeRun) -> list[tuple[NativeJoinCase, NativeRun, CaseModel]]:
    models = batch_models(batch)
    if run.status == "ok":
        merged = model_case(batch.merged)
        kept: dict[str, set[int]] = {s: {r.id for r in merged.rows if r.side == s and not r.late and not r.sentinel} for s in SIDES}
        answers = zip(*batch_answers(batch, [kept, None]), strict=True)
        models = [replace(m, answers=a) for m, a in zip(models, answers, strict=True)]
    return list(zip(batch.cases, split_run(batch, run), models, strict=True))


def check_batch(prop: NativeProperty, batch: NativeBatch, run: NativeRun) -> Iterator[CaseVerdict]:
    """The property on every case of the batch, in order (a failing case is yielded, and the next ones still are)."""
    for i, (case, own, model) in enumerate(case_runs(batch, run)):
        try:
            yield CaseVerdict(i, case, own, model, exercised=bool(check_run(prop, case, own, model)))
        except PropertyFailure as exc:
            yield CaseVerdict(i, case, own, model, failure=exc)


def first_failure(prop: NativeProperty, batch: NativeBatch, run: NativeRun) -> CaseVerdict | None:
    """The first case of the batch the property fails on, if any."""
    return next((v for v in check_batch(prop, batch, run) if v.failure is not None), None)
