"""A time-driven node's clocks, known up front: where its watermark rises and where processing time is set.

The driver sees every event before Spark does, so it can tell, for each
event, the node's combined watermark (the MIN over its active inputs, as the
local runtime computes it: an idle input does not hold it back, a change on
an idle input makes it active again, the watermark fires only when it rises)
and the processing time. Rows carry both in-band; timers use the rises to
find the event that fires them (a timer fires at the first rise at or after
its registration that reaches its time, as in the local runtime, where timers
are popped only when a clock moves).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from converge.engine.model.scenario import ChangeEvent, IdleEvent, ProcessingTimeEvent, Scenario, WatermarkEvent


@dataclass(frozen=True)
class Clocks:
    """Rises of one scenario's single time-driven node, and its micro-batch ends."""

    wm_seq: tuple[int, ...] = ()        # events where the combined watermark rose ...
    wm_value: tuple[int, ...] = ()      # ... and to what
    pt_seq: tuple[int, ...] = ()        # processing-time events (each one pops due processing-time timers)
    pt_value: tuple[int, ...] = ()
    batch_ends: tuple[int, ...] = field(default=())   # first event index after each micro-batch

    def watermark_at(self, seq: int) -> int | None:
        """The node's watermark after event `seq` (None before the first one)."""
        i = bisect.bisect_right(self.wm_seq, seq)
        return self.wm_value[i - 1] if i else None

    def processing_time_at(self, seq: int) -> int:
        i = bisect.bisect_right(self.pt_seq, seq)
        return self.pt_value[i - 1] if i else 0

    def fires_at(self, timestamp: int, registered: int, event_time: bool) -> int | None:
        """The event at which a timer registered during event `registered` fires (None: never)."""
        seqs, values = (self.wm_seq, self.wm_value) if event_time else (self.pt_seq, self.pt_value)
        start = bisect.bisect_left(seqs, registered)
        # values are non-decreasing along the rises, so the first one reaching the timer is found by bisection
        i = bisect.bisect_left(values, timestamp, lo=start)
        return seqs[i] if i < len(seqs) else None

    def batch_of(self, seq: int) -> int:
        return bisect.bisect_right(self.batch_ends, seq)

    def end_of_batch(self, batch: int) -> int:
        """First event index after micro-batch `batch` (every event when past the last one)."""
        return self.batch_ends[min(batch, len(self.batch_ends) - 1)] if self.batch_ends else 0


def node_clocks(scenario: Scenario, entry: dict[str, int], n_inputs: int,
                bounds: Sequence[tuple[int, int]]) -> Clocks:
    """The clocks of a node reading scenario inputs directly (`entry`: input name -> input index)."""
    input_wms: list[int | None] = [None] * n_inputs
    idle = [False] * n_inputs
    wm: int | None = None
    wm_seq: list[int] = []
    wm_value: list[int] = []
    pt_seq: list[int] = []
    pt_value: list[int] = []
    for seq, event in enumerate(scenario.events):
        if isinstance(event, ChangeEvent):
            if event.input in entry:
                idle[entry[event.input]] = False
            continue
        if isinstance(event, ProcessingTimeEvent):
            pt_seq.append(seq)
            pt_value.append(event.processing_time)
            continue
        if not isinstance(event, (WatermarkEvent, IdleEvent)) or event.input not in entry:
            continue
        idx = entry[event.input]
        if isinstance(event, IdleEvent):
            idle[idx] = True
        else:
            idle[idx] = False
            current = input_wms[idx]
            if current is None or event.watermark > current:
                input_wms[idx] = event.watermark
        watermarks = [w for w, i in zip(input_wms, idle, strict=False) if not i]
        active = [w for w in watermarks if w is not None]
        if not active or len(active) < len(watermarks):  # none active, or one without a watermark yet
            continue
        combined = min(active)
        if wm is not None and combined <= wm:
            continue
        wm = combined
        wm_seq.append(seq)
        wm_value.append(combined)
    return Clocks(tuple(wm_seq), tuple(wm_value), tuple(pt_seq), tuple(pt_value), tuple(end for _, end in bounds))
