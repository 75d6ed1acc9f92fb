"""Scenario events as Spark input: validated on the driver, keyed for their entry node, cut into micro-batches.

Spark's file source takes files in modification-time order, so each
micro-batch is one Parquet file whose mtime is set explicitly (one second
after the previous one) and the query reads with `maxFilesPerTrigger=1`: the
batch boundaries are exactly the ones asked for, and a restart from a
checkpoint replays the same files.

Processing time is carried in-band: every change row holds the processing
time in effect at its event, so TTL is decided by our state layer exactly as
in the local runtime (Spark's own TTL runs on the wall-clock batch time).
"""

from __future__ import annotations

import bisect
import os
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from converge.engine.model.errors import BadInputError
from converge.engine.model.rows import RowValidator, allowed_kinds
from converge.engine.model.scenario import ChangeEvent, IdleEvent, ProcessingTimeEvent, Scenario, WatermarkEvent
from converge.engine.operators.base import Operator
from converge.engine.planner import Plan
from converge.engine.runtime.spark.clocks import Clocks
from converge.engine.runtime.spark.processor import (
    DEFAULT_BUCKETS,
    END_KIND,
    END_POS,
    TICK_KEY,
    TIME_KIND,
    group_key,
    whole_node_key,
)

SOURCE_SCHEMA = "scenario int, seq long, stage int, node int, key string, data binary, etime timestamp"
# A row every micro-batch file of a time-driven job holds, so Spark's watermark moves. Stage 0 reads it (its
# processor drops the TICK_KEY group): Spark pushes the stage filter below withWatermark, so a row no stage read
# would be filtered out before the watermark saw it, and a micro-batch of watermark events only would not move it.
TICK_STAGE = 0


@dataclass
class SourceRows:
    """One scenario's change events as source rows, in event order (other events make no row)."""

    scenario: int
    seq: list[int]
    stage: list[int]
    node: list[int]
    key: list[str]
    data: list[bytes]

    def __len__(self) -> int:
        return len(self.seq)

    def add(self, seq: int, stage: int, number: int, item: tuple) -> None:
        """A marker row for a node grouped by node alone (processor.py's TIME_KIND / END_KIND)."""
        self.seq.append(seq)
        self.stage.append(stage)
        self.node.append(number)
        self.key.append(whole_node_key(number))
        self.data.append(pickle.dumps([item], pickle.HIGHEST_PROTOCOL))


def encode_events(scenario: Scenario, plan: Plan, numbers: dict[int, tuple[int, int]],
                  scenario_index: int = 0, clocks: Clocks | None = None, buckets: int = DEFAULT_BUCKETS
                  ) -> SourceRows:
    """Validate every event as the local runtime does and encode each change for its entry node.

    Raises BadInputError naming the event index, before any Spark work starts.
    `numbers` maps id(plan node) to its (global node number, stage). Every
    change carries the processing time in effect and, for a time-driven node,
    its watermark (`clocks`); watermark, idle and processing-time events make
    no row: they reach the operator through these in-band values and timers.
    A node that buffers across keys (processor.py) gets its changes under its
    node alone, a TIME_KIND marker at every processing-time event (if it
    reacts to processing time) and an END_KIND marker at the last event.
    """
    routes = {}
    for spec in scenario.inputs:
        if spec.name in plan.entry:
            node, idx = plan.entry[spec.name]
            number, stage = numbers[id(node)]
            key_of = (_whole_key(number) if node.operator.buffers_across_keys
                      else _keyed(number, node.operator.key_selector(idx), buckets))
            routes[spec.name] = (allowed_kinds(spec), RowValidator(spec).validate, number, stage, idx, key_of)
    # (position in the plan, global node number, stage, whether it reacts to processing time)
    whole = [(i, *numbers[id(n)], type(n.operator).on_processing_time is not Operator.on_processing_time)
             for i, n in enumerate(plan.nodes()) if n.operator.buffers_across_keys]
    out = SourceRows(scenario_index, [], [], [], [], [])
    now = 0
    dumps = pickle.dumps
    for i, event in enumerate(scenario.events):
        try:
            if isinstance(event, ChangeEvent):
                route = routes.get(event.input)
                if route is None:
                    raise BadInputError(f"input {event.input!r} is not part of the join")
                kinds, validate, number, stage, idx, key_of = route
                if event.kind not in kinds:
                    spec = scenario.input(event.input)
                    raise BadInputError(
                        f"{event.kind} on input {event.input!r}: a {spec.changelog_mode} input accepts only "
                        f"{', '.join(sorted(kinds))}")
                row = validate(event.row)
                out.seq.append(i)
                out.stage.append(stage)
                out.node.append(number)
                out.key.append(key_of(row))
                wm = clocks.watermark_at(i) if clocks is not None else None
                out.data.append(dumps([(i, (), idx, event.kind, row, now, wm)], pickle.HIGHEST_PROTOCOL))
            elif isinstance(event, ProcessingTimeEvent):
                if event.processing_time < now:
                    raise BadInputError(f"processing time goes backwards: {event.processing_time} after {now}")
                now = event.processing_time
                for place, number, stage, ticks in whole:
                    if ticks:
                        out.add(i, stage, number, (i, (place,), -1, TIME_KIND, None, now, None))
            elif isinstance(event, (WatermarkEvent, IdleEvent)):
                if event.input not in routes:     # as the local runtime: only joined inputs have watermarks
                    what = "an idle marker" if isinstance(event, IdleEvent) else "a watermark"
                    raise BadInputError(f"{what} on input {event.input!r}, which is not part of the join")
            else:
                raise BadInputError(f"unknown event {event!r}")
        except BadInputError as exc:
            raise exc.at_event(i) from None
    if scenario.events:
        for place, number, stage, _ticks in whole:
            last = len(scenario.events) - 1
            out.add(last, stage, number, (last, (END_POS + place,), -1, END_KIND, None, now, None))
    return out


def _whole_key(number: int) -> Callable[[tuple], str]:
    key = whole_node_key(number)
    return lambda row: key


def _keyed(number: int, selector: Callable[[tuple], object], buckets: int) -> Callable[[tuple], str]:
    return lambda row: group_key(number, selector(row), buckets)  # type: ignore[arg-type]


def batch_bounds(n_events: int, *, batches: int | None = None, bounds: Sequence[int] | None = None
                 ) -> list[tuple[int, int]]:
    """Event-index ranges [start, end) of the micro-batches.

    `bounds` gives the first event index of every batch after the first
    (e.g. [3, 7] -> [0,3), [3,7), [7,n)); `batches` splits evenly; neither: one batch.
    """
    if bounds is not None:
        cuts = [0, *bounds, n_events]
        if any(b <= a for a, b in zip(cuts, cuts[1:], strict=False)) or cuts[-2] > n_events:
            raise BadInputError(f"batch bounds {list(bounds)} must be increasing and inside 1..{n_events - 1}")
        return list(zip(cuts, cuts[1:], strict=False))
    count = max(1, min(batches or 1, max(n_events, 1)))
    edges = [round(i * n_events / count) for i in range(count + 1)]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a] or [(0, 0)]


def batch_columns(parts: Sequence[tuple[SourceRows, int, int]], batch: int, *, tick: bool) -> dict[str, list]:
    """The source columns of micro-batch `batch`: events [start, end) of each scenario.

    `etime` is the micro-batch number + 1 (ms): in a time-driven job it is the
    event time Spark's watermark follows, so Spark timers can wake keys once a
    given micro-batch is done. `tick` adds a row stage 0 drops (TICK_STAGE), so a
    batch of watermark events only still moves Spark's watermark."""
    cols: dict[str, list] = {"scenario": [], "seq": [], "stage": [], "node": [], "key": [], "data": []}
    for rows, start, end in parts:
        lo = bisect.bisect_left(rows.seq, start)
        hi = bisect.bisect_left(rows.seq, end)
        cols["scenario"].extend([rows.scenario] * (hi - lo))
        for name in ("seq", "stage", "node", "key", "data"):
            cols[name].extend(getattr(rows, name)[lo:hi])
    if tick:
        for name, value in (("scenario", -1), ("seq", -1), ("stage", TICK_STAGE), ("node", -1), ("key", TICK_KEY),
                            ("data", b"")):
            cols[name].append(value)
    cols["etime"] = [batch + 1] * len(cols["seq"])
    return cols


def write_batch_file(cols: dict[str, list], path: Path, mtime: float) -> bool:
    """Write one micro-batch's columns as a Parquet file (atomically); False when there are no rows."""
    if not cols["seq"]:
        return False
    types = {"scenario": pa.int32(), "seq": pa.int64(), "stage": pa.int32(), "node": pa.int32(),
             "key": pa.string(), "data": pa.binary()}
    arrays = {name: pa.array(cols[name], types[name]) for name in types}
    arrays["etime"] = pa.array(cols["etime"], pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
    table = pa.table(arrays)
    staging = path.parent.parent / "staging" / path.name
    staging.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, staging)
    os.utime(staging, (mtime, mtime))
    path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staging, path)
    return True


def mtime_base() -> float:
    """A start for the files' modification times: whole seconds, so each batch gets its own second."""
    return float(int(time.time()))
