"""Flink's MiniBatchStreamingJoinOperator: records of both inputs are buffered, folded per input, then joined.

A bundle holds every change the operator received since the last flush, in
arrival order, with its join key. It is flushed when it holds
`config.mini_batch_size` elements of both inputs together (Flink's
CountCoBundleTrigger), when processing time crosses a multiple of
`config.mini_batch_latency_ms` (the markers Flink's MiniBatchAssigner sends),
on a watermark, and at the end of the input. A flush folds each input's
records (engine/operators/bundle_fold.py) and joins what is left, input by
input: the right input first (INNER, LEFT, FULL; Flink's choice, so a left row
whose partner arrives in the same bundle is joined without being padded
first), the left input first for RIGHT joins.

Order inside a bundle (docs/minibatch.md): Flink walks each input's bundle
through Java HashMaps over binary keys; engine/operators/bundle_order.py
replays those maps (java.util.HashMap's buckets, BinaryRowData.hashCode), so
join keys, the unique keys under one join key and a keyless input's records
come out in Flink's order.

A folded unique-key pair (a retraction followed by an accumulate of the same
unique key) is processed as Flink's processElementWithSuppress does: under
`semantics="flink"` the retraction leaves the state alone and neither record
emits the other side's padding changes, even when the two rows do not match
the same other-side records (a residual condition): the padding is then lost
or left behind. Under `semantics="correct"` the pair's padding changes are
netted: a padding row is retracted or re-emitted only when its record's
association count really crosses zero over the pair.

The bundle lives outside keyed state, as in Flink; `volatile_state` hands it
to the runtime (rollback of a rejected event, snapshot and restore with a
partly filled bundle). Under `semantics="correct"` retractions are checked
against the state as it will be once the bundle's earlier records apply, when
they arrive, so bad input is rejected at its own event, not at the flush;
under `"flink"` a retraction of a row never held is bundled and processed as
Flink does (a bundle may start with a -U: docs/semantics.md, "Raw changelogs").
"""

from __future__ import annotations

from typing import Any

from converge.engine.java_hashmap import JavaHashMap
from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.operators import bundle_fold  # called through the module: `converge mutants` patches it
from converge.engine.operators.base import OperatorContext
from converge.engine.operators.bundle_fold import is_accumulate, pair_up
from converge.engine.operators.bundle_order import BundleOrder, Walk
from converge.engine.operators.regular_join import BinaryJoinSpec, PaddingSuppression, StreamingJoinOperator

Pending = tuple[int, Any, Change]      # (input index, join key, change)


class SuppressAll(PaddingSuppression):
    """Flink's isSuppress: no padding changes from either record of the pair; the state keeps the old row."""

    keeps_state = True

    def retracted_to_zero(self, other: tuple) -> bool:
        return False

    def matched_from_zero(self, other: tuple) -> bool:
        return False


class NetPadding(PaddingSuppression):
    """semantics=correct: padding re-emitted by the retraction and retracted by the accumulate cancel."""

    def __init__(self) -> None:
        self.zeroed: list[tuple] = []

    def retracted_to_zero(self, other: tuple) -> bool:
        self.zeroed.append(other)
        return False

    def matched_from_zero(self, other: tuple) -> bool:
        if other in self.zeroed:
            self.zeroed.remove(other)
            return False
        return True


class MiniBatchStreamingJoinOperator(StreamingJoinOperator):
    """INNER / LEFT / RIGHT / FULL join over bundles; see the module docstring."""

    buffers_across_keys = True

    def __init__(self, spec: BinaryJoinSpec, size: int, latency_ms: int | None = None) -> None:
        super().__init__(spec)
        if size < 1:
            raise InternalError(f"mini_batch_size must be at least 1, got {size}")
        self.size = size
        self.latency_ms = latency_ms
        self._pending: list[Pending] = []
        self._last_time = 0
        # a unique key per input (None: the input's records fold by value under their join key)
        self._uk = tuple(None if side.side.unique_key_indexes is None else side.side.unique_key_indexes
                         for side in self._sides)
        # each input's BufferBundle maps, whose iteration order is the order of a flush's outputs (made at the
        # first flush that has an order to decide)
        self._orders: list[BundleOrder | None] = [None, None]

    # ---------------------------------------------------------------- runtime calls
    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        key = ctx.state.current_key
        if not is_accumulate(change.kind):
            self._check_buffered_retraction(input_index, key, change)
        self._pending.append((input_index, key, change))
        if len(self._pending) >= self.size:
            return self.finish_bundle(ctx)
        return []

    def on_watermark(self, watermark: int, ctx: OperatorContext) -> list:
        return self.finish_bundle(ctx)

    def on_processing_time(self, time: int, ctx: OperatorContext) -> list:
        last, self._last_time = self._last_time, time
        if self.latency_ms is not None and time // self.latency_ms > last // self.latency_ms:
            return self.finish_bundle(ctx)
        return []

    def finish(self, ctx: OperatorContext) -> list:
        return self.finish_bundle(ctx)

    def volatile_state(self) -> Any:
        left, right = self._orders
        return (list(self._pending), self._last_time, None if left is None else left.bundle.capacity,
                None if right is None else right.bundle.capacity)

    def restore_volatile_state(self, saved: Any) -> None:
        pending, self._last_time, *capacities = saved      # (an older snapshot has no capacities: new maps)
        self._pending = list(pending)
        for index, capacity in enumerate(capacities or (None, None)):
            self._orders[index] = None if capacity is None else self._order(index, JavaHashMap(capacity))

    def _order(self, index: int, bundle: JavaHashMap | None = None) -> BundleOrder:
        order = self._orders[index]
        if order is None or bundle is not None:
            side = self._sides[index]
            order = BundleOrder(side.side.kind, side.spec.columns, side.key_indexes, side.side.unique_key_indexes)
            if bundle is not None:
                order.bundle = bundle
            self._orders[index] = order
        return order

    # ---------------------------------------------------------------- the bundle
    def finish_bundle(self, ctx: OperatorContext) -> list[Change]:
        """Fold and join everything buffered; the bundle is empty afterwards."""
        pending, self._pending = self._pending, []
        out: list[Change] = []
        if not pending:
            return out
        only_right_outer = self.right_outer and not self.left_outer
        for index in ((0, 1) if only_right_outer else (1, 0)):
            self._join_side(index, pending, ctx, out)
        return out

    def _groups(self, index: int, pending: list[Pending]) -> dict[Any, dict[Any, list[Change]]]:
        """join key -> unique key (None without one) -> changes, both in order of first arrival."""
        uk = self._uk[index]
        groups: dict[Any, dict[Any, list[Change]]] = {}
        for i, key, change in pending:
            if i != index:
                continue
            sub = None if uk is None else tuple([change.row[j] for j in uk])
            groups.setdefault(key, {}).setdefault(sub, []).append(change)
        return groups

    def _join_side(self, index: int, pending: list[Pending], ctx: OperatorContext, out: list) -> None:
        """One input's bundle, in the order Flink's processSingleSideBundles walks it (bundle_order.py)."""
        has_uk = self._uk[index] is not None
        semantics = self.spec.semantics
        groups = self._groups(index, pending)
        if not groups:
            return
        if len(groups) == 1 and (not has_uk or len(next(iter(groups.values()))) == 1) \
                and (has_uk or len(next(iter(groups.values()))[None]) == 1):
            walk: Walk | None = None       # one key, one unique key or one record: no order to decide
        else:
            walk = self._order(index).walk([(key, change) for i, key, change in pending if i == index])
        for key in (groups if walk is None else walk.keys(groups)):
            by_uk = groups[key]
            ctx.state.current_key = key
            if not has_uk:
                kept = bundle_fold.fold_no_unique_key(by_uk[None])
                for change in (kept if walk is None else walk.rows(key, kept)):
                    self._process_into(index, change, ctx, out, check=False)
                continue
            for sub in (by_uk if walk is None else walk.unique_keys(key, by_uk)):
                records = by_uk[sub]
                for first, second in pair_up(bundle_fold.fold_unique_key(records, semantics)):
                    if second is None:
                        if semantics == "correct" and first.kind == "+U" \
                                and self.views[index].stored_for(first.row) is None:
                            # an earlier bundle cleared the key (+I then -U cancelled): nothing of it was
                            # emitted, so its +U is an insert (FLINK-34380 across bundles)
                            first = Change("+I", first.row)
                        self._process_into(index, first, ctx, out, check=False)
                    else:
                        self._process_pair(index, first, second, ctx, out)

    def _process_pair(self, index: int, retraction: Change, accumulate: Change, ctx: OperatorContext,
                      out: list) -> None:
        if self.spec.semantics == "flink":
            pad: PaddingSuppression = SuppressAll()
            self._retract(index, retraction.kind, retraction.row, ctx, out, pad)
            self._accumulate(index, accumulate.kind, accumulate.row, ctx, out, pad)
            return
        net = NetPadding()
        _, retraction = self._replacement(index, retraction)      # a raw upsert -D: the stored full image
        self._retract(index, retraction.kind, retraction.row, ctx, out, net)
        replaced, accumulate = self._replacement(index, accumulate)
        if replaced is not None:
            self._retract(index, replaced.kind, replaced.row, ctx, out, net)
        self._accumulate(index, accumulate.kind, accumulate.row, ctx, out, net)
        is_left = index == 0
        for other in net.zeroed:
            out.append(Change("+I", self._padded(not is_left, other)))

    # ---------------------------------------------------------------- bad input, at its own event
    def _check_buffered_retraction(self, index: int, key: Any, change: Change) -> None:
        side = self._sides[index]
        if not side.validate_retractions or side.ttl_ms is not None:
            return
        row = change.row
        uk = self._uk[index]
        view = self.views[index]
        if uk is not None:
            sub = tuple([row[j] for j in uk])
            present = None
            for i, k, pending in reversed(self._pending):
                if i == index and k == key and tuple([pending.row[j] for j in uk]) == sub:
                    present = is_accumulate(pending.kind) and pending.row == row
                    break
            if present is None:
                present = view.contains(row)
        else:
            count = sum(1 for r in view.records() if r == row)
            for i, k, pending in self._pending:
                if i == index and k == key and pending.row == row:
                    count += 1 if is_accumulate(pending.kind) else -1
            present = count > 0
        if not present:
            raise BadInputError(
                f"{change.kind} on input {side.spec.name!r} retracts row {list(row)}, which is not in the join "
                f"state nor in the bundle (it was never inserted or was already retracted)")
