"""Dedupe before the join: keep the last row per key by arrival (Flink's ROW_NUMBER() ... = 1 rewrite).

`SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY key ORDER BY
PROCTIME() DESC) AS rn FROM t) WHERE rn = 1` is planned by Flink as a
Deduplicate node keeping the last row (ProcTimeDeduplicateKeepLastRowFunction).
Its output is a retract stream whose unique key is the PARTITION BY key, so
the join behind it gets a unique-key state view back and never holds two
versions of one key (the state-views write-up's recommended workaround).

Per key it keeps the last row in a ValueState:

* +I/+U of a new key -> +I; of a known key -> -U(previous) +U(new). On a
  changelog input an unchanged row emits nothing (unless state TTL is on, so
  downstream state is refreshed); on an insert-only input Flink emits the
  -U/+U pair even for an identical row, and so does converge.
* -U/-D of a known key -> -D(previous full image), state cleared (Flink always
  says DELETE here: an UPDATE_BEFORE may have no UPDATE_AFTER after it); of
  an unknown key -> nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from converge.engine.model.changelog import Change
from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import InputSpec
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.operators.regular_join import key_extractor


class DeduplicateKeepLastRowOperator(Operator):
    """One input, keyed by the dedupe key; emits a retract stream with that key as its unique key."""

    num_inputs = 1

    def __init__(self, spec: InputSpec, key_columns: Sequence[str], *, emit_identical: bool = False) -> None:
        if not key_columns:
            raise InternalError(f"input {spec.name!r}: a dedupe needs at least one key column")
        self.spec = spec
        self.key_columns = tuple(key_columns)
        self._key = key_extractor([spec.index_of(c) for c in key_columns])
        self._insert_only = spec.changelog_mode == "insert_only"
        self._emit_identical = emit_identical or self._insert_only

    def open(self, ctx: OperatorContext) -> None:
        self._last = ctx.state.value_state("dedupe-last-row")

    def key_of(self, input_index: int, row: tuple) -> tuple:
        return self._key(row)

    def key_selector(self, input_index: int):
        return self._key

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        kind, row = change
        previous = self._last.get()
        if kind == "-U" or kind == "-D":
            if previous is None:
                return []
            self._last.clear()
            return [Change("-D", previous)]
        if previous is None:
            self._last.update(row)
            return [Change("+I", row)]
        if previous == row and not self._emit_identical:
            return []
        self._last.update(row)
        return [Change("-U", previous), Change("+U", row)]

    def describe(self) -> str:
        return (f"Deduplicate(keep=[LastRow], key=[{', '.join(self.key_columns)}], order=[PROCTIME]) "
                f"-- ROW_NUMBER() OVER (PARTITION BY {', '.join(self.key_columns)} ORDER BY PROCTIME() DESC) = 1")
