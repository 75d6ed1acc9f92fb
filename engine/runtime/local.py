"""The embedded runtime: one process, keyed state in dicts, clocks driven by the events.

It validates every event before any operator sees it, routes changes through
the plan keyed by each operator's own key, advances processing time and
watermarks as the event sequence says, fires timers in time order, and returns
the output changelog event by event.

Every event applies to every operator of the plan or to none: while an event
runs, the first change of each state entry, timer, clock and watermark is
journaled (engine/state.py's StateJournal), and when the event raises -- bad
input found by the third operator of a chain, a residual that overflows after
a replaced row was retracted, a looping timer -- the journal is rolled back
before the error leaves `process_event`. A bad event raises BadInputError
naming its index, and the runtime can go on with the next event (the
position moves past the refused event, so the next error names its own). The timers
of one event run under a step budget (engine/runtime/guard.py), so a looping
operator raises NonTerminationError instead of hanging.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from converge.engine.calc import view_calc
from converge.engine.materialize import clean, fold, fold_history
from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.errors import BadInputError
from converge.engine.model.rows import RowValidator, allowed_kinds
from converge.engine.model.scenario import (
    ChangeEvent,
    Event,
    IdleEvent,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
    require_scenario,
    sources_of,
)
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.planner import Plan, PlanNode
from converge.engine.planner import plan as make_plan
from converge.engine.runtime.guard import TimerBudget
from converge.engine.state import KeyedStateBackend, StateJournal

OutputItem = Change | OutputWatermark


class LocalTimerService:
    """Per-node event-time and processing-time timers, deduplicated per (time, key) as in Flink."""

    def __init__(self, backend: KeyedStateBackend) -> None:
        self._backend = backend
        self.event: set[tuple[int, Any]] = set()
        self.proc: set[tuple[int, Any]] = set()
        self._event_heap: list = []
        self._proc_heap: list = []

    def register_event_time_timer(self, timestamp: int) -> None:
        item = (timestamp, self._backend.current_key)
        if item not in self.event:
            self._record(True, item, False)
            self.event.add(item)
            heapq.heappush(self._event_heap, (timestamp, repr(item[1]), item[1]))

    def register_processing_time_timer(self, timestamp: int) -> None:
        item = (timestamp, self._backend.current_key)
        if item not in self.proc:
            self._record(False, item, False)
            self.proc.add(item)
            heapq.heappush(self._proc_heap, (timestamp, repr(item[1]), item[1]))

    def delete_event_time_timer(self, timestamp: int) -> None:
        item = (timestamp, self._backend.current_key)
        if item in self.event:
            self._record(True, item, True)
            self.event.discard(item)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        item = (timestamp, self._backend.current_key)
        if item in self.proc:
            self._record(False, item, True)
            self.proc.discard(item)

    def pop_due(self, upto: int, *, event_time: bool) -> tuple[int, Any] | None:
        heap, live = (self._event_heap, self.event) if event_time else (self._proc_heap, self.proc)
        while heap and heap[0][0] <= upto:
            ts, _, key = heapq.heappop(heap)
            if (ts, key) in live:
                self._record(event_time, (ts, key), True)
                live.discard((ts, key))
                return ts, key
        return None

    def _record(self, event_time: bool, item: tuple[int, Any], was_live: bool) -> None:
        """Journal whether a timer was pending before this change (engine/state.py's StateJournal)."""
        undo = self._backend.undo
        if undo is not None:
            undo.append((self._undo, event_time, item, was_live))

    def _undo(self, event_time: bool, item: tuple[int, Any], was_live: bool) -> None:
        live, heap = (self.event, self._event_heap) if event_time else (self.proc, self._proc_heap)
        if not was_live:
            live.discard(item)        # its heap entry stays behind and is skipped, as a deleted timer's is
        elif item not in live:
            live.add(item)
            heapq.heappush(heap, (item[0], repr(item[1]), item[1]))

    def snapshot(self) -> dict:
        return {"event": sorted(self.event, key=repr), "proc": sorted(self.proc, key=repr)}

    def restore(self, snap: dict) -> None:
        self.event = set(map(tuple, snap["event"]))
        self.proc = set(map(tuple, snap["proc"]))
        self._event_heap = [(ts, repr(k), k) for ts, k in self.event]
        self._proc_heap = [(ts, repr(k), k) for ts, k in self.proc]
        heapq.heapify(self._event_heap)
        heapq.heapify(self._proc_heap)


@dataclass
class _NodeRuntime:
    node: PlanNode
    backend: KeyedStateBackend
    ctx: OperatorContext
    timers: LocalTimerService
    input_wms: list[int | None]
    idle: list[bool]
    wm: int | None = None
    keys: list = field(default_factory=list)


@dataclass
class RunResult:
    """What a run emitted: one list of output items per event.

    A custom property reads it through the accessors below (README: "Writing your own property"): what was
    emitted at each event, the table the output describes after each event and at the end, the watermarks.
    Each is computed from `per_event` when asked; none changes the result."""

    scenario: Scenario
    per_event: list[list[OutputItem]] = field(default_factory=list)

    @property
    def changelog(self) -> list[OutputItem]:
        """Every output item in emission order (changes and output watermarks)."""
        return [item for items in self.per_event for item in items]

    @property
    def changes(self) -> list[Change]:
        """The output's changes (+I, -U, +U, -D) in emission order."""
        return [item for item in self.changelog if isinstance(item, Change)]

    @property
    def final(self) -> Counter:
        """The table the output describes after the last event: row -> count (a negative count is a
        retraction of a row never emitted, kept as evidence)."""
        return clean(fold(self.changes))

    @property
    def answers(self) -> list[Counter]:
        """The table the output describes after each event (index i: after event i), as `final`."""
        return fold_history(self.per_event)

    @property
    def watermarks(self) -> list[tuple[int, int]]:
        """(event index, watermark) of every output watermark, in emission order."""
        return [(i, item.watermark) for i, items in enumerate(self.per_event) for item in items
                if isinstance(item, OutputWatermark)]


class LocalRuntime:
    """Drives a plan's operators over a scenario's events, one event at a time."""

    def __init__(self, scenario: Scenario, plan: Plan | None = None, *,
                 hash_prefix: tuple[tuple, tuple] = ((), ())) -> None:
        require_scenario(scenario, "LocalRuntime")
        self.scenario = scenario
        # a projection/filter in front of the join and a SELECT/WHERE after it run here; the plan is the core's
        self._calc = view_calc(scenario)
        self.plan = plan or make_plan(self._calc.core if self._calc is not None else scenario)
        self.processing_time = 0
        self.event_index = 0
        self._validators = {spec.name: RowValidator(spec) for spec in scenario.inputs}
        self._kinds = {spec.name: allowed_kinds(spec) for spec in scenario.inputs}
        self._nodes: dict[int, _NodeRuntime] = {}
        self._journal = StateJournal()          # one event's undo records, over every node
        self._undo_records = self._journal.records
        self._budget: TimerBudget | None = None
        for node in self.plan.nodes():
            backend = KeyedStateBackend(scenario.config.map_state_order, hash_prefix=hash_prefix)
            backend.undo = self._journal.records
            timers = LocalTimerService(backend)
            ctx = OperatorContext(backend, timers)
            n = len(node.inputs)
            self._nodes[id(node)] = _NodeRuntime(node, backend, ctx, timers, [None] * n, [False] * n)
            node.operator.open(ctx)
        self._order = [self._nodes[id(n)] for n in self.plan.nodes()]  # children before parents
        for rt in self._order:
            rt.keys = [rt.node.operator.key_selector(i) for i in range(len(rt.node.inputs))]
        # operators with fields outside keyed state (saved before every event, restored on rejection)
        self._volatile = [rt.node.operator for rt in self._order
                          if type(rt.node.operator).volatile_state is not Operator.volatile_state]
        self._finishing = [rt for rt in self._order if type(rt.node.operator).finish is not Operator.finish]
        self._proc_hooks = [rt for rt in self._order
                            if type(rt.node.operator).on_processing_time is not Operator.on_processing_time]
        # per scenario input: everything the hot path needs, looked up once
        self._routes: dict[str, tuple] = {}
        for spec in scenario.inputs:
            if spec.name in self.plan.entry:
                node, idx = self.plan.entry[spec.name]
                rt = self._nodes[id(node)]
                self._routes[spec.name] = (self._kinds[spec.name], self._validators[spec.name].validate, rt, idx)
        # one stream feeding several inputs (`source`): an event on it reaches each of them, in chain order
        self._fanout = {stream: fed for stream, fed in sources_of(scenario).items() if fed != (stream,)}
        self._readers = {spec.name: spec.source for spec in scenario.inputs if spec.source is not None}

    # ---------------------------------------------------------------- events
    def run(self, events: Iterable[Event] | None = None) -> RunResult:
        result = RunResult(self.scenario)
        for event in self.scenario.events if events is None else events:
            result.per_event.append(self.process_event(event))
        if result.per_event:
            result.per_event[-1].extend(self.finish())
        return result

    def finish(self) -> list[OutputItem]:
        """The end of the input: operators that buffer (a mini-batch bundle) emit what they hold,
        children before parents. `run` adds it to the last event's output."""
        out: list[OutputItem] = []
        for rt in self._finishing:
            self._forward(rt.node, rt.node.operator.finish(rt.ctx), out)
        return out if self._calc is None else self._calc.output_items(out)

    def process_event(self, event: Event) -> list[OutputItem]:
        """The output of one event; on any error nothing of the event remains (see the module docstring)."""
        index = self.event_index
        saved: tuple | None = None
        try:
            if type(event) is ChangeEvent:
                if self._volatile:
                    saved = (None, [op.volatile_state() for op in self._volatile])
                out = self._on_change(event)
            else:
                saved = self._save_clocks()
                self._budget = TimerBudget(index, self.pending_timers())
                out = self._dispatch(event)
        except BaseException as exc:
            self._undo(saved)
            self.event_index += 1  # the event was read and refused: a run that goes on names the next one right
            if isinstance(exc, BadInputError):
                raise exc.at_event(index) from None
            raise
        if self._undo_records:
            self._undo_records.clear()
        self.event_index += 1
        return out if self._calc is None else self._calc.output_items(out)

    def _save_clocks(self) -> tuple:
        clocks = (self.processing_time,
                  [(list(rt.input_wms), list(rt.idle), rt.wm, rt.ctx.watermark, rt.backend.now) for rt in self._order])
        return clocks, [op.volatile_state() for op in self._volatile]

    def _undo(self, saved: tuple | None) -> None:
        """Roll back the event being processed: journaled state and timers, clocks, operators' own fields."""
        self._journal.rollback()
        if saved is None:
            return
        clocks, volatile = saved
        for op, value in zip(self._volatile, volatile, strict=False):
            op.restore_volatile_state(value)
        if clocks is not None:
            self.processing_time, nodes = clocks
            for rt, (input_wms, idle, wm, ctx_wm, now) in zip(self._order, nodes, strict=False):
                rt.input_wms, rt.idle, rt.wm, rt.ctx.watermark, rt.backend.now = input_wms, idle, wm, ctx_wm, now

    def _dispatch(self, event: Event) -> list[OutputItem]:
        if isinstance(event, ChangeEvent):
            return self._on_change(event)
        if isinstance(event, ProcessingTimeEvent):
            return self._on_processing_time(event.processing_time)
        if isinstance(event, WatermarkEvent):
            return self._on_input_watermark(event.input, event.watermark, idle=False)
        if isinstance(event, IdleEvent):
            return self._on_input_watermark(event.input, None, idle=True)
        raise BadInputError(f"unknown event {event!r}")

    def _on_change(self, event: ChangeEvent) -> list[OutputItem]:
        if self._readers and event.input in self._readers:
            raise BadInputError(f"input {event.input!r} reads the stream of {self._readers[event.input]!r}: write "
                                f"its events on {self._readers[event.input]!r}")
        fed = self._fanout.get(event.input) if self._fanout else None
        if fed is None:
            return self._on_input_change(event.input, event)
        spec = self.scenario.input(event.input)
        if event.kind not in self._kinds[spec.name]:
            raise BadInputError(f"{event.kind} on input {event.input!r}: a {spec.changelog_mode} input accepts "
                                f"only {', '.join(sorted(self._kinds[spec.name]))}")
        checked = ChangeEvent(event.input, event.kind, self._validators[spec.name].validate(event.row))
        out: list[OutputItem] = []
        # the one record reaches every input that reads the stream (Flink's reused source), in chain order: Flink's
        # two-input task reads whichever input has data (MultipleInputSelectionHandler's fair selection), so its
        # order is not fixed; left first is converge's pick (docs/interval-joins.md "One source, both inputs")
        for name in fed:
            out.extend(self._on_input_change(name, checked))
        return out

    def _on_input_change(self, target: str, event: ChangeEvent) -> list[OutputItem]:
        route = self._routes.get(target)
        if route is None:
            raise BadInputError(f"input {event.input!r} is not part of the join")
        kinds, validate, rt, idx = route
        kind = event.kind
        if kind not in kinds:
            spec = self.scenario.input(event.input)
            raise BadInputError(
                f"{kind} on input {event.input!r}: a {spec.changelog_mode} input accepts only "
                f"{', '.join(sorted(kinds))}")
        row = validate(event.row)
        if self._calc is not None:
            joined = self._calc.input_row(target, row)
            if joined is None:  # the Calc in front of the join dropped it, whatever its kind
                return []
            row = joined
        rt.backend.current_key = rt.keys[idx](row)
        emitted = rt.node.operator.process(idx, Change(kind, row), rt.ctx)
        if rt.node.parent is None:
            out = emitted
        else:
            out = []
            self._forward(rt.node, emitted, out)
        if rt.idle[idx]:                 # only once every operator took the change
            rt.idle[idx] = False
        return out

    def _push(self, node: PlanNode, idx: int, change: Change, out: list[OutputItem]) -> None:
        rt = self._nodes[id(node)]
        rt.backend.current_key = rt.keys[idx](change.row)
        emitted = node.operator.process(idx, change, rt.ctx)
        self._forward(node, emitted, out)

    def _forward(self, node: PlanNode, emitted: list, out: list[OutputItem]) -> None:
        parent = node.parent
        if parent is None:
            out.extend(emitted)
            return
        for item in emitted:
            if isinstance(item, Change):
                self._push(parent, node.parent_index, item, out)

    # ---------------------------------------------------------------- clocks
    def _on_processing_time(self, t: int) -> list[OutputItem]:
        if t < self.processing_time:
            raise BadInputError(f"processing time goes backwards: {t} after {self.processing_time}")
        self.processing_time = t
        out: list[OutputItem] = []
        for rt in self._order:
            rt.backend.now = t
        budget = self._budget
        for rt in self._order:
            while (due := rt.timers.pop_due(t, event_time=False)) is not None:
                ts, key = due
                if budget is not None:
                    budget.fire(rt.node.name, ts, key, event_time=False, clock=t)
                rt.backend.current_key = key
                self._forward(rt.node, rt.node.operator.on_timer(ts, rt.ctx, event_time=False), out)
        for rt in self._proc_hooks:
            self._forward(rt.node, rt.node.operator.on_processing_time(t, rt.ctx), out)
        return out

    def _on_input_watermark(self, name: str, wm: int | None, *, idle: bool) -> list[OutputItem]:
        if self._readers and name in self._readers:
            raise BadInputError(f"input {name!r} reads the stream of {self._readers[name]!r}: write its watermarks "
                                f"on {self._readers[name]!r}")
        fed = self._fanout.get(name) if self._fanout else None
        if fed is not None:  # the scan's watermark (or idleness) reaches every input that reads it, as its records do
            out: list[OutputItem] = []
            for reader in fed:
                out.extend(self._on_reader_watermark(reader, wm, idle=idle))
            return out
        return self._on_reader_watermark(name, wm, idle=idle)

    def _on_reader_watermark(self, name: str, wm: int | None, *, idle: bool) -> list[OutputItem]:
        entry = self.plan.entry.get(name)
        if entry is None:
            what = "an idle marker" if idle else "a watermark"
            raise BadInputError(f"{what} on input {name!r}, which is not part of the join")
        node, idx = entry
        out: list[OutputItem] = []
        self._set_input_watermark(node, idx, wm, idle, out)
        return out

    def _set_input_watermark(self, node: PlanNode, idx: int, wm: int | None, idle: bool,
                             out: list[OutputItem]) -> None:
        rt = self._nodes[id(node)]
        if idle:
            rt.idle[idx] = True
        else:
            rt.idle[idx] = False
            current = rt.input_wms[idx]
            if wm is not None and (current is None or wm > current):
                rt.input_wms[idx] = wm
        watermarks = [w for w, i in zip(rt.input_wms, rt.idle, strict=False) if not i]
        if not watermarks:
            if node.parent is not None and all(rt.idle):
                self._set_input_watermark(node.parent, node.parent_index, None, True, out)
            return
        active = [w for w in watermarks if w is not None]
        if len(active) < len(watermarks):  # an active input without a watermark yet
            return
        combined = min(active)  # a multi-input operator's watermark is the MIN of its inputs
        if rt.wm is not None and combined <= rt.wm:
            return
        rt.wm = combined
        rt.ctx.watermark = combined
        emitted: list = []
        budget = self._budget
        while (due := rt.timers.pop_due(combined, event_time=True)) is not None:
            ts, key = due
            if budget is not None:
                budget.fire(node.name, ts, key, event_time=True, clock=combined)
            rt.backend.current_key = key
            emitted.extend(rt.node.operator.on_timer(ts, rt.ctx, event_time=True))
        emitted.extend(rt.node.operator.on_watermark(combined, rt.ctx))
        self._forward(node, emitted, out)
        downstream = [item.watermark for item in emitted if isinstance(item, OutputWatermark)]
        if node.parent is not None:
            forwarded = downstream[-1] if downstream else combined
            self._set_input_watermark(node.parent, node.parent_index, forwarded, False, out)

    # ---------------------------------------------------------------- state
    def snapshot(self) -> dict:
        """Everything needed to continue this run in a fresh runtime: state, timers, clocks."""
        return {
            "event_index": self.event_index,
            "processing_time": self.processing_time,
            "nodes": [
                {"state": rt.backend.snapshot(), "timers": rt.timers.snapshot(), "input_wms": list(rt.input_wms),
                 "idle": list(rt.idle), "wm": rt.wm}
                for rt in self._order
            ],
            "operators": [op.volatile_state() for op in self._volatile],   # e.g. a partly filled bundle
        }

    def restore(self, snap: dict) -> None:
        self.event_index = snap["event_index"]
        self.processing_time = snap["processing_time"]
        for rt, saved in zip(self._order, snap["nodes"], strict=True):
            rt.backend.restore(saved["state"])
            rt.backend.now = self.processing_time
            rt.timers.restore(saved["timers"])
            rt.input_wms = list(saved["input_wms"])
            rt.idle = list(saved["idle"])
            rt.wm = saved["wm"]
            rt.ctx.watermark = rt.wm
        if "operators" in snap:
            for op, value in zip(self._volatile, snap["operators"], strict=True):
                op.restore_volatile_state(value)

    def state_entries(self) -> int:
        """Live state entries over all operators (map entries count one each)."""
        return sum(sum(rt.backend.live_entries().values()) for rt in self._order)

    def node_backends(self) -> list[tuple[PlanNode, KeyedStateBackend]]:
        return [(rt.node, rt.backend) for rt in self._order]

    def pending_timers(self) -> int:
        return sum(len(rt.timers.event) + len(rt.timers.proc) for rt in self._order)


def run_scenario(scenario: Scenario, *, hash_prefix: tuple[tuple, tuple] = ((), ())) -> RunResult:
    """Run every event of a scenario on the local runtime. `hash_prefix` (values, types): columns a system
    stores in front of every row map key, which the `hashmap` order hashes with it (engine/state.py)."""
    return LocalRuntime(scenario, hash_prefix=hash_prefix).run()
