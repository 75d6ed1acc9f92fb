"""Flink's ChangelogNormalize: turns an upsert stream into a retract stream.

Keyed by the input's unique key, it keeps the last row per key. +I/+U on a new
key becomes +I; on a known key it becomes -U(old) +U(new) (dropped when the
row is unchanged); -D on a known key becomes -D(old full image), and a -D of
an unknown key is dropped, as an upsert delete is idempotent. The join behind
it then always sees full row images and proper retractions.

"Unchanged" is judged on the columns Flink's planner keeps of the input
(`compared`; all by default). In front of a SEMI/ANTI join's right input the
planner projects the input to the columns the condition reads and the unique
key before ChangelogNormalize, so an update of other columns only is dropped
there, and the stored row stays the one the join holds (Flink's
DeduplicateFunctionHelper.processLastRowOnChangelog returns before it updates
its state when the rows have the same content). Before Flink 2.2 that
comparison (RecordEqualiser over the stored INSERT row and the incoming one)
also compares the row kind, so only an +I of the same content is dropped and
a +U of the same content goes on as -U/+U (`kind_sensitive`; 2.2 added
`areRowsWithSameContent`, which compares a +U as an INSERT: read in the
flink-table-runtime jars of 1.20.1, 2.1.0, 2.2.0 and 2.3.0).
"""

from __future__ import annotations

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import InputSpec
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.operators.regular_join import key_extractor


class ChangelogNormalizeOperator(Operator):
    num_inputs = 1

    def __init__(self, spec: InputSpec, *, emit_identical: bool = False,
                 compared: tuple[str, ...] | None = None, kind_sensitive: bool = False) -> None:
        if not spec.unique_key:
            raise InternalError(f"input {spec.name!r}: ChangelogNormalize needs a unique key")
        self.spec = spec
        # With state TTL on, Flink emits unchanged rows too, so downstream state is refreshed.
        self._emit_identical = emit_identical
        self._kind_sensitive = kind_sensitive
        self._key = key_extractor([spec.index_of(c) for c in spec.unique_key])
        self._compared = None if compared is None else key_extractor(sorted(spec.index_of(c) for c in compared))

    def open(self, ctx: OperatorContext) -> None:
        self._last = ctx.state.value_state("last-row")

    def key_of(self, input_index: int, row: tuple) -> tuple:
        return self._key(row)

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        kind, row = change
        old = self._last.get()
        if kind == "-D":
            if old is None:
                return []
            self._last.clear()
            return [Change("-D", old)]
        if kind == "-U":
            raise BadInputError(f"input {self.spec.name!r} is an upsert stream; -U is not an upsert change")
        identical_dropped = not self._emit_identical and not (self._kind_sensitive and kind == "+U")
        if old is not None and identical_dropped and self._same(old, row):
            return []
        self._last.update(row)
        if old is None:
            return [Change("+I", row)]
        return [Change("-U", old), Change("+U", row)]

    def _same(self, old: tuple, row: tuple) -> bool:
        return old == row if self._compared is None else self._compared(old) == self._compared(row)
