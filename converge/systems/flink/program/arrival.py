"""The order in which a job's events reach Flink: one source, emitting in rounds that checkpoints keep apart.

Standard library only (the adapter runs it in the Flink environment; the tests import it without Java).

Flink's join task reads its input gates in whatever order data arrives, so with one source per
input the changelog a case emits differs from run to run, even at parallelism 1. The adapter
instead feeds every input of a job from ONE source, in the order this module lays out, and that
source is gated by checkpoints (`RateLimiterStrategy.perCheckpoint(width)`): it emits one round of
`width` records, then waits until a checkpoint completes. A checkpoint completes only after its
barrier, which follows the round, has passed every operator, the join included (aligned barriers:
a join that received the barrier on one input reads no further there until it arrives on all). So
the join has processed round k before any record of round k+1 exists.

Rounds are filled so that cases never share more than the job: events of different cases do not
interact (the case id is part of every key), so round k can hold event k of every case at once.

* Record-by-record joins: round k is event k of each case (in the scenario's global order). With `runs`
  (a job at parallelism 1 only), round k is instead RUN k of each case: its k-th stretch of consecutive events
  on one input. One input's records reach the join over one channel, in the order the source emitted them,
  and the join handles them one by one in that order, so a run needs no checkpoint inside it; only a change
  of input does, since the join reads its inputs' channels in whatever order data arrives. At parallelism
  above 1 two records of one input with different keys go to different subtasks, whose outputs interleave
  at the sink as they come, so there each event keeps a round of its own.
* Mini-batch joins (bundle size N): a checkpoint flushes Flink's bundle (`prepareSnapshotPreBarrier`),
  so a round is one bundle: N consecutive events of ONE case, and the next round another bundle. The
  count trigger then closes the bundle at the round's end, the barrier closes a case's last, partial
  one, as the end of its input would if the case ran alone.

Every round is padded to the same width with filler slots (None): the gate lets exactly `width`
records through per checkpoint, and a filler record (tag -1) is dropped before any join sees it.

The lead: the source starts emitting at once, and the first barrier often comes before its first
record, so the job's first two rounds share an epoch. They are the lead, which holds no case's
event: one dummy record per input (case LEAD; the adapter gives input i's dummy the case id
-1 - i, which no case has and no other dummy shares, so dummies never meet in a join and nothing
they emit reaches an answer), then fillers. Each input's first record starts things that would
otherwise depend on which input's first record the join reads first: the mini-batch assigner sends
a watermark with the first record of its input, and a watermark flushes the mini-batch bundle.

Guards: the gate resets its capacity at each completed checkpoint. If a barrier lands inside a
round (the source thread stalled for longer than the pause between checkpoints), that round's
tail shares an epoch with the next round, and if a checkpoint completes before the source has
used its capacity, every later epoch straddles two rounds. `guard` filler rounds between two
rounds of events make the round that shares an epoch with a round of events a filler round.
"""

from __future__ import annotations

from typing import Any

Event = tuple[int, list]                   # (view index, [kind, value, ...])
Slot = tuple[int, int, list]               # (case index, view index, [kind, value, ...])
LEAD = -1                                  # the case index of the lead's dummy records (their row: ["+I"])


def case_order(events: Any, chain: list[str], rows: list[list[list]]) -> list[Event]:
    """The case's changes as (view, row) in the scenario's global order.

    `rows` are the case's per-input changelogs (chain order). The order comes from the scenario's
    `events` when their change events spell out exactly those changelogs; otherwise (a case built by
    hand with no events) the inputs follow one another in chain order."""
    ordered: list[Event] = []
    if isinstance(events, list):
        for event in events:
            if not isinstance(event, dict) or "input" not in event or "row" not in event:
                continue  # a watermark or processing-time event: not a record
            if event.get("input") not in chain or not isinstance(event["row"], list):
                return _chain_order(rows)
            ordered.append((chain.index(event["input"]), [event.get("kind", "+I"), *event["row"]]))
    projected: list[list[list]] = [[] for _ in rows]
    for view, row in ordered:
        projected[view].append(row)
    return ordered if projected == rows else _chain_order(rows)


def _chain_order(rows: list[list[list]]) -> list[Event]:
    return [(view, row) for view, changes in enumerate(rows) for row in changes]


def runs_of(order: list[Event]) -> list[list[Event]]:
    """A case's events cut into runs: maximal stretches of consecutive events on one input."""
    out: list[list[Event]] = []
    for event in order:
        if out and out[-1][0][0] == event[0]:
            out[-1].append(event)
        else:
            out.append([event])
    return out


def rounds(orders: list[list[Event]], inputs: int, bundle: int | None = None,
           guard: int = 0, runs: bool = False) -> list[list[Slot | None]]:
    """The job's rounds: each a list of `width` slots (a case's event, or None for a filler record).

    `orders[c]` is case c's events in order. Without `bundle`, round k holds event k of every case
    that has one (with `runs`: run k of every case, runs_of); with `bundle` N, each round holds N
    consecutive events of one case. `guard` filler rounds follow every round but the last. The first
    two rounds are always the lead: one dummy record per input (case -1, LEAD) and fillers, then a
    round of fillers; see the module's docstring."""
    laid: list[list[Slot]]
    if bundle is None and runs:
        cut = [runs_of(o) for o in orders]
        depth = max((len(r) for r in cut), default=0)
        laid = [[(c, *e) for c, r in enumerate(cut) if k < len(r) for e in r[k]] for k in range(depth)]
    elif bundle is None:
        depth = max((len(o) for o in orders), default=0)
        laid = [[(c, *o[k]) for c, o in enumerate(orders) if k < len(o)] for k in range(depth)]
    else:
        if bundle < 1:
            raise ValueError(f"a bundle holds at least one record, not {bundle}")
        laid = [[(c, *e) for e in o[start:start + bundle]] for c, o in enumerate(orders)
                for start in range(0, len(o), bundle)]
    width = max([inputs, *(len(r) for r in laid)])
    lead: list[Slot | None] = [(LEAD, view, ["+I"]) for view in range(inputs)]
    out: list[list[Slot | None]] = [lead + [None] * (width - inputs), [None] * width]
    for n, members in enumerate(laid):
        if n:
            out.extend([None] * width for _ in range(guard))
        out.append(list(members) + [None] * (width - len(members)))
    return out
