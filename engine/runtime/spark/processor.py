"""Plan nodes as a Spark `StatefulProcessor`: the same operator objects, our state layer inside Spark's.

A job runs one or more scenarios. Their plan nodes are numbered globally and
put in stages by height (leaves are stage 0); each stage is one
`transformWithState` operator grouped by "node|bucket": a keyed node's keys
are hashed into `JobSpec.buckets` buckets (a stable hash of the key's repr),
so a node's keyed state lives in Spark's RocksDB state store under its own
node number. (One string column, not two: Spark's Python worker converts
every cell of every row.)

Each bucket of a micro-batch is one call of `handleInputRows`. Spark pays a
fixed cost per group (a JVM round trip to set the grouping key, an Arrow
batch each way) and every state call is another round trip (~100 µs
measured; docs/spark.md, "Performance"), so a group holds many keys and one
ValueState blob: {key: (its KeyedStateBackend slice, its pending timers)},
read once and written once per bucket and batch. Inside, each key with
changes runs on its own: its slice is put into a local KeyedStateBackend,
the operator processes the key's changes in (event seq, position) order
through an ordinary OperatorContext, and the slice is taken out again, so
keys sharing a bucket never see each other. Timers live in the blob with
their key (engine/runtime/spark/timers.py); one Spark timer per bucket, at
the earliest of its keys', wakes it. TTL and MapState order stay in our
layer, so both runtimes agree exactly; processing time and watermark arrive
in-band on every change.

Rows are `key string, data binary`, the key being "node|bucket". `data`
pickles a list of items `(seq, pos, input index, kind, row, processing time,
watermark)` for that node and bucket, so a group emits one row per
destination bucket, not one per change. `pos` is the path of output
positions from the source event to this change: sorting by (seq, pos) gives
exactly the local runtime's order. A negative node -(s+1) marks the output
of scenario s's root; those rows pass through later stages untouched, with
items `(seq, pos, kind, row)`.

A node whose operator buffers records of many keys (`buffers_across_keys`,
the mini-batch join) is grouped by its node number alone ("node|*"): one
call sees all of the micro-batch's records for it, in event order, and its
ValueState holds the whole node (a KeyedStateBackend snapshot of every key)
plus the operator's volatile state (the partly filled bundle), so a restart
from a checkpoint resumes the bundle. Two in-band markers reach it from the
source: TIME_KIND at every processing-time event (the latency trigger's
on_processing_time) and END_KIND in the last micro-batch (finish(), the end
of the input), both in the local runtime's order of those calls.
"""

from __future__ import annotations

import os
import pickle
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from converge.engine.model.changelog import Change
from converge.engine.model.collector import cyclic_collector_paused
from converge.engine.model.errors import BadInputError, ConvergeError, InternalError, NonTerminationError
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.operators.base import OperatorContext
from converge.engine.planner import plan as make_plan
from converge.engine.runtime.guard import TimerBudget
from converge.engine.runtime.spark.clocks import Clocks
from converge.engine.runtime.spark.timers import KeyTimers, completed_before, due_before, first_firing, spark_timer_for
from converge.engine.state import KeyedStateBackend

ROW_SCHEMA = "key string, data binary"
SLICE_SCHEMA = "slice binary"
ERROR_KIND = "!error"      # an item kind no change has: a bad-input error for the driver to raise
LOOP_KIND = "!loop"        # ... a non-termination error (a timer that keeps firing) for the driver to raise
ERROR_KINDS: dict[str, type[ConvergeError]] = {ERROR_KIND: BadInputError, LOOP_KIND: NonTerminationError}
TIME_KIND = "!time"        # a marker for a whole node: processing time advanced (call on_processing_time)
END_KIND = "!end"          # a marker for a whole node: the end of the input (call finish)
DEFAULT_BUCKETS = 2048   # key groups per keyed node; measured in docs/spark.md, "Performance"
TICK_KEY = "tick|"         # the group of source.py's tick rows: they only move Spark's watermark, nothing reads them
END_POS = 1 << 40          # marker positions: after every output position of the last event, per plan node

_dumps = pickle.dumps
_loads = pickle.loads
_PROTOCOL = pickle.HIGHEST_PROTOCOL


def bucket_of(key: tuple, buckets: int) -> int:
    """A key's bucket: stable across processes and restarts (Python's str hash is salted per process),
    from repr, which is canonical for the tuples of ints, strings, booleans and NULLs that keys are made
    of (pickle is not: it memoizes shared objects)."""
    return zlib.crc32(repr(key).encode("utf-8", "surrogatepass")) % buckets


def group_key(node: int, key: tuple, buckets: int) -> str:
    """The grouping column of a node's key: the node and the key's bucket."""
    return f"{node}|{bucket_of(key, buckets)}"


def whole_node_key(node: int) -> str:
    """The grouping column of a node that buffers across keys: the node alone."""
    return f"{node}|*"


def sink_key(scenario_index: int) -> str:
    """The grouping column of a scenario's output: node -(s+1), no key."""
    return f"{-(scenario_index + 1)}|"


def node_of(grouping: str) -> int:
    return int(grouping[:grouping.index("|")])


@dataclass(frozen=True)
class NodeRef:
    scenario: int       # index into JobSpec.scenarios
    index: int          # position in that scenario's plan.nodes() (children before parents)
    stage: int
    parent: int | None  # global node number of the parent; None for a root
    whole: bool = False  # grouped by node alone (its operator buffers records of many keys)


@dataclass(frozen=True)
class JobSpec:
    """What workers need to rebuild the plan nodes: small and picklable (no events, no compiled code)."""

    scenarios: tuple[dict, ...]      # scenario_to_dict without events
    nodes: tuple[NodeRef, ...]       # global node number -> where it is
    token: str                       # unique per job, so workers never mix two jobs' cached nodes
    clocks: tuple[Clocks | None, ...] = ()   # per scenario: its time-driven node's clocks, or None
    fail_marker: str | None = None   # failure injection for restart tests: raise while this file exists
    fail_event: tuple[int, int] | None = None   # ... in the key group holding (scenario, event seq)
    buckets: int = DEFAULT_BUCKETS   # key groups per keyed node (the checkpoint's layout: see job.py)


class NoTimers:
    """Timer service of a node the job did not find time-driven: any call is a bug worth a clear error."""

    def _refuse(self, timestamp: int) -> None:
        raise InternalError("an operator the Spark job did not plan as time-driven registered a timer")

    register_event_time_timer = register_processing_time_timer = _refuse
    delete_event_time_timer = delete_processing_time_timer = _refuse


class BuiltNode:
    """A node's operator, opened on a local backend that holds one key at a time."""

    def __init__(self, job: JobSpec, number: int) -> None:

        ref = job.nodes[number]
        scenario = scenario_from_dict(job.scenarios[ref.scenario])
        node = make_plan(scenario).nodes()[ref.index]
        self.operator = node.operator
        self.name = node.name
        self.backend = KeyedStateBackend(scenario.config.map_state_order)
        self.clocks = job.clocks[ref.scenario] if job.clocks else None
        self.timers = KeyTimers() if self.clocks is not None else None
        self.ctx = OperatorContext(self.backend, self.timers or NoTimers())
        self.operator.open(self.ctx)
        self.keys = [self.operator.key_selector(i) for i in range(len(node.inputs))]
        self.stage = ref.stage
        self.scenario = ref.scenario
        self.parent = ref.parent
        self.parent_index = node.parent_index
        self.parent_key = None if node.parent is None else node.parent.operator.key_selector(node.parent_index)
        self.has_ttl = scenario.config.state_ttl_ms is not None
        self.whole = ref.whole
        self.parent_whole = ref.parent is not None and job.nodes[ref.parent].whole
        # a whole node's state before any record: what a group without a ValueState starts from
        self.initial = (self.backend.snapshot(), self.operator.volatile_state()) if ref.whole else None


_BUILT: OrderedDict[tuple[str, int], BuiltNode] = OrderedDict()
_BUILT_LIMIT = 1024      # nodes are small; a campaign job holds a few hundred


def built_node(job: JobSpec, number: int) -> BuiltNode:
    """Node `number` of `job`, built once per Python worker (init() runs per batch and partition)."""
    cache_key = (job.token, number)
    node = _BUILT.get(cache_key)
    if node is None:
        node = _BUILT[cache_key] = BuiltNode(job, number)
        while len(_BUILT) > _BUILT_LIMIT:
            _BUILT.popitem(last=False)
    return node


def _order(item: tuple) -> tuple:
    return item[0], item[1]


class StageProcessor(StatefulProcessor):
    """Runs the operators of one stage, one node|bucket group at a time, state read and written once.

    A keyed node's ValueState blob is {key: (state slice, pending timers)}:
    the keys, so a Spark timer that wakes a bucket without rows knows them;
    the timers, so they live in our layer with the state they guard.
    """

    def __init__(self, job: JobSpec, stage: int) -> None:
        self.job = job
        self.stage = stage

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.slice_state = handle.getValueState("slice", SLICE_SCHEMA)

    # ------------------------------------------------------------ Spark's calls
    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        with cyclic_collector_paused():      # a bucket's unpickled blob lives until the group ends
            yield from self._input_rows(key, rows)

    def _input_rows(self, key: Any, rows: Iterator[Row]) -> Iterator[Row]:
        (grouping,) = key
        if grouping == TICK_KEY:
            for _row in rows:
                pass
            return
        number = node_of(grouping)
        if number < 0 or self.job.nodes[number].stage != self.stage:
            for row in rows:                 # a root's output, or rows for a later stage: pass on
                yield Row(key=grouping, data=row[1])
            return
        items: list = []
        for row in rows:
            items.extend(_loads(row[1]))
        if len(items) > 1:
            items.sort(key=_order)
        node = built_node(self.job, number)
        self._maybe_fail(node, items)
        errors = [(s, p, kind, message, pt, wm) for s, p, _t, kind, message, pt, wm in items if kind in ERROR_KINDS]
        if errors:                           # a child's error: pass it to the root, process the rest
            yield from self._emit(node, errors)
            items = [item for item in items if item[3] not in ERROR_KINDS]
            if not items:
                return
        if node.whole:
            yield from self._run_whole(node, items)
            return
        per_key: dict = {}
        selectors = node.keys
        for item in items:                   # each key's changes keep their (seq, pos) order
            k = selectors[item[2]](item[4])
            found = per_key.get(k)
            if found is None:
                per_key[k] = [item]
            else:
                found.append(item)
        yield from self._run_bucket(node, per_key, None)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Row]:
        """A Spark timer woke a bucket of a time-driven node: fire what is due up to the finished batches."""
        node = built_node(self.job, node_of(key[0]))
        if node.clocks is None:
            return
        before = completed_before(node.clocks, timerValues.getCurrentWatermarkInMs())
        with cyclic_collector_paused():
            yield from self._run_bucket(node, {}, before)

    def close(self) -> None:
        pass

    # ------------------------------------------------------------ one bucket of keys
    def _run_bucket(self, node: BuiltNode, per_key: dict, fire_before: int | None) -> Iterator[Row]:
        """Load the bucket's blob once, run each key with changes (or, woken by a timer, each key with a
        due timer) on its own slice, write the blob back once; one output row per destination."""
        stored = self.slice_state.get()
        entries: dict = {} if stored is None else _loads(stored[0])
        if fire_before is not None:          # a wake-up: the keys whose timers are due
            clocks = node.clocks
            per_key = {k: [] for k, (_slice, pending) in entries.items()
                       if pending and due_before(pending, clocks, fire_before)}
        out: list = []
        errors: list = []
        for k, key_items in per_key.items():
            entry = self._run_key(node, k, key_items, fire_before, entries.get(k), out, errors)
            if entry is None:
                entries.pop(k, None)
            else:
                entries[k] = entry
        if per_key:
            if entries:
                self.slice_state.update((_dumps(entries, _PROTOCOL),))
            elif stored is not None:
                self.slice_state.clear()
        if node.timers is not None:
            self._register_wake_up(node, entries)
        if errors:
            yield from self._emit(node, errors)
        if out:
            yield from self._emit(node, out)

    def _register_wake_up(self, node: BuiltNode, entries: dict) -> None:
        """One Spark timer per bucket: the micro-batch after the one where its keys' first timer fires."""
        clocks = node.clocks
        assert clocks is not None
        first = None
        for _slice, pending in entries.values():
            if pending:
                at = first_firing(pending, clocks)
                if at is not None and (first is None or at < first):
                    first = at
        if first is not None:
            self.handle.registerTimer(spark_timer_for(clocks, first))

    def _run_key(self, node: BuiltNode, k: Any, items: list, fire_before: int | None, entry: Any,
                 out: list, errors: list) -> Any:
        """Fire the key's due timers and process its changes in order on its slice; the key's new entry
        (state slice, pending timers), None when nothing is left, or `entry` itself after an error (the
        error goes to `errors`, the key's output of this call is dropped: the driver stops at the error)."""
        backend = node.backend
        timers = node.timers
        backend.take_key_slice(k)          # leftovers of a batch aborted in this worker, if any
        if entry is not None:
            state_slice, pending = entry
            if state_slice is not None:
                backend.put_key_slice(k, state_slice)
            if timers is not None:
                timers.pending = dict(pending or {})
        elif timers is not None:
            timers.pending = {}
        backend.current_key = k
        process = node.operator.process
        ctx = node.ctx
        mine: list = []
        append = mine.append
        seq, pos, pt, wm = 0, (), 0, None
        try:
            for seq, pos, tag, kind, row, pt, wm in items:
                if timers is not None:
                    self._fire(node, k, seq, mine)
                    timers.seq = seq
                    ctx.watermark = wm
                backend.now = pt
                emitted = process(tag, Change(kind, row), ctx)
                for j, change in enumerate(emitted):
                    append((seq, pos + (j,), change.kind, change.row, pt, wm))
            if fire_before is not None:
                self._fire(node, k, fire_before, mine)
        except BadInputError as exc:
            backend.take_key_slice(k)
            errors.append((seq, pos, ERROR_KIND, exc.detail, pt, wm))
            return entry                     # the driver raises it; the key's state stays as it was
        except NonTerminationError as exc:
            backend.take_key_slice(k)
            errors.append((self._loop_at, (), LOOP_KIND, str(exc), pt, wm))
            return entry
        out.extend(mine)
        if node.has_ttl:
            backend.purge_expired()          # expired entries are invisible: do not carry them along
        state_slice = backend.take_key_slice(k)
        pending = dict(timers.pending) if timers is not None and timers.pending else None
        if state_slice is None and not pending:
            return None
        return state_slice, pending

    def _run_whole(self, node: BuiltNode, items: list) -> Iterator[Row]:
        """A node grouped by node alone: load its whole state and bundle, process every item in order
        (keying the backend per record, as the local runtime does), save both once."""
        backend, op, ctx = node.backend, node.operator, node.ctx
        stored = self.slice_state.get()
        snap, volatile = node.initial if stored is None else _loads(stored[0])  # type: ignore[misc]
        backend.restore(snap)
        op.restore_volatile_state(volatile)
        out: list = []
        append = out.append
        seq, pos, pt, wm = 0, (), 0, None
        try:
            for seq, pos, tag, kind, row, pt, wm in items:
                if kind in ERROR_KINDS:      # a child's error: pass it to the root
                    yield from self._emit(node, [(seq, pos, kind, row, pt, wm)])
                    return
                backend.now = pt
                if kind == END_KIND:
                    emitted = op.finish(ctx)
                elif kind == TIME_KIND:
                    emitted = op.on_processing_time(pt, ctx)
                else:
                    backend.current_key = node.keys[tag](row)
                    emitted = op.process(tag, Change(kind, row), ctx)
                for j, change in enumerate(emitted):
                    if isinstance(change, Change):
                        append((seq, pos + (j,), change.kind, change.row, pt, wm))
        except BadInputError as exc:
            yield from self._emit(node, [(seq, pos, ERROR_KIND, exc.detail, pt, wm)])
            return                           # the driver raises it; the node's saved state stays as it was
        if node.has_ttl:
            backend.purge_expired()
        self.slice_state.update((_dumps((backend.snapshot(), op.volatile_state()), _PROTOCOL),))
        if out:
            yield from self._emit(node, out)

    def _fire(self, node: BuiltNode, k: Any, before: int, out: list) -> None:
        """Fire the key's timers that fire before event `before`, in firing order, as the local runtime does."""
        timers, clocks, ctx = node.timers, node.clocks, node.ctx
        assert timers is not None and clocks is not None
        fired = 0
        budget: TimerBudget | None = None
        while (due := timers.next_due(clocks, before)) is not None:
            at, ts, event_time = due
            del timers.pending[(ts, event_time)]
            pt, wm = clocks.processing_time_at(at), clocks.watermark_at(at)
            if budget is None or budget.event_index != at:   # the step budget is per firing event
                budget = TimerBudget(at, len(timers.pending) + 1)
            self._loop_at = at
            budget.fire(node.name, ts, k, event_time=event_time, clock=wm if event_time else pt)
            node.backend.now = pt
            ctx.watermark = wm
            timers.seq = at
            for j, change in enumerate(node.operator.on_timer(ts, ctx, event_time=event_time)):
                if isinstance(change, Change):
                    out.append((at, (0, ts, repr(k), fired, j), change.kind, change.row, pt, wm))
            fired += 1

    # ------------------------------------------------------------ output
    def _emit(self, node: BuiltNode, items: list) -> Iterator[Row]:
        """A root emits one row per key group; an inner node one row per destination key."""
        if node.parent is None or items[0][2] in ERROR_KINDS:
            data = [(s, p, kd, r) for s, p, kd, r, _, _ in items]
            yield Row(key=sink_key(node.scenario), data=_dumps(data, _PROTOCOL))
            return
        parent_key = node.parent_key
        parent = node.parent
        tag = node.parent_index
        groups: dict[str, list] = {}
        whole = whole_node_key(parent) if node.parent_whole else None
        buckets = self.job.buckets
        for seq, pos, kind, row, pt, wm in items:
            dest = whole or group_key(parent, parent_key(row), buckets)
            groups.setdefault(dest, []).append((seq, pos, tag, kind, row, pt, wm))
        for dest, group in groups.items():
            yield Row(key=dest, data=_dumps(group, _PROTOCOL))

    def _maybe_fail(self, node: BuiltNode, items: list) -> None:
        job = self.job
        if job.fail_marker is None or job.fail_event is None or not os.path.exists(job.fail_marker):
            return
        scenario, seq = job.fail_event
        if node.scenario == scenario and any(item[0] == seq for item in items):
            raise RuntimeError(f"injected failure while processing event {seq} of scenario {scenario}")
