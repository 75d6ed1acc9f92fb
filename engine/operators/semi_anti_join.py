"""Flink's StreamingSemiAntiJoinOperator: SEMI and ANTI joins (EXISTS / NOT EXISTS).

The left side is kept in an outer view (records with their number of
associations); the right side in an inner view. A left change is forwarded
with its own kind when it qualifies (SEMI: it has a match; ANTI: it has none).
A right change that moves a left record's matches 0 -> 1 emits that left
record (SEMI: with the right change's kind; ANTI: as -D); 1 -> 0 emits it
again (SEMI: the right change's kind; ANTI: +I).
"""

from __future__ import annotations

from converge.engine.model.changelog import Change
from converge.engine.model.errors import InternalError
from converge.engine.operators.base import OperatorContext
from converge.engine.operators.regular_join import BinaryJoinSpec, _JoinBase


class StreamingSemiAntiJoinOperator(_JoinBase):
    left_outer = True
    right_outer = False

    def __init__(self, spec: BinaryJoinSpec) -> None:
        if spec.join_type not in ("semi", "anti"):
            raise InternalError(f"StreamingSemiAntiJoinOperator does not run {spec.join_type!r} joins")
        super().__init__(spec)
        self.is_anti = spec.join_type == "anti"

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        replaced, change = self._replacement(input_index, change)  # semantics=correct, as the regular join
        if replaced is None:
            return self._process(input_index, change, ctx)
        return self._process(input_index, replaced, ctx) + self._process(input_index, change, ctx)

    def _process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        kind, row = change
        accumulate = kind == "+I" or kind == "+U"
        if not accumulate:
            self._check_retraction(input_index, kind, row)
        key = ctx.state.current_key
        out: list[Change] = []
        if input_index == 0:
            assoc = self._associated(row, True, key, False)
            if bool(assoc) != self.is_anti:
                out.append(Change(kind, row))
            if accumulate:
                self.views[0].add_record(row, len(assoc))  # type: ignore[call-arg]
            else:
                self.views[0].retract_record(row)
            return out
        left_view = self.views[0]
        assoc = self._associated(row, False, key, True)
        if accumulate:
            self.views[1].add_record(row)
            for left, n in assoc:
                if n == 0:
                    out.append(Change("-D" if self.is_anti else kind, left))
                left_view.update_num_of_associations(left, n + 1)  # type: ignore[attr-defined]
        else:
            self.views[1].retract_record(row)
            for left, n in assoc:
                if n == 1:
                    out.append(Change("+I" if self.is_anti else kind, left))
                left_view.update_num_of_associations(left, n - 1)  # type: ignore[attr-defined]
        return out
