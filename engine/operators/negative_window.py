"""An interval join whose window is empty (lower bound above upper bound): Flink plans no join at all.

`a.t BETWEEN b.t + INTERVAL '3' SECOND AND b.t + INTERVAL '1' SECOND` is valid
SQL whose window holds no time difference. Flink's StreamExecIntervalJoin
sees `leftUpperBound - leftLowerBound < 0` and builds
`createNegativeWindowSizeJoin` instead of an interval join operator: each
input goes through a FilterAllFlatMapFunction (an inner side: nothing of it
is emitted, only its watermarks pass) or a PaddingLeftMapFunction /
PaddingRightMapFunction (an outer side: every row is emitted at once, padded
with NULLs for the other side), and the two are unioned. So nothing ever
joins, an outer side's every row comes out padded as it arrives (a late row
too: a map drops nothing), no state is kept, and the output watermark is the
union's, the least of the inputs' (no delay: no operator holds rows back).
"""

from __future__ import annotations

from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.errors import BadInputError
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.operators.interval_join import IntervalJoinSpec


class NegativeWindowJoinOperator(Operator):
    """Flink's negative-window-size "join": filter-all on an inner side, pad-all on an outer side."""

    def __init__(self, spec: IntervalJoinSpec) -> None:
        if spec.lower_ms <= spec.upper_ms:
            raise BadInputError(f"the window [{spec.lower_ms}, {spec.upper_ms}] is not empty: an interval join")
        self.spec = spec
        self.outer = (spec.join_type in ("left", "full"), spec.join_type in ("right", "full"))
        self._nulls = ((None,) * len(spec.left.columns), (None,) * len(spec.right.columns))
        self._names = (spec.left.name, spec.right.name)

    def key_of(self, input_index: int, row: tuple) -> tuple:
        return ()  # a map keeps no state: every row is its own

    def key_selector(self, input_index: int):
        return _no_key

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list:
        kind, row = change
        if kind != "+I":  # the planner refuses updating inputs of an interval join before this (as Flink does)
            raise BadInputError(f"{kind} on input {self._names[input_index]!r}: interval join inputs are "
                                f"append-only (only +I)")
        if not self.outer[input_index]:
            return []
        padded = row + self._nulls[1] if input_index == 0 else self._nulls[0] + row
        return [Change("+I", padded)]

    def on_watermark(self, watermark: int, ctx: OperatorContext) -> list:
        return [OutputWatermark(watermark)]  # the union forwards the least input watermark, undelayed


def _no_key(row: tuple) -> tuple:
    return ()


__all__ = ["NegativeWindowJoinOperator"]
