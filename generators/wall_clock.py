"""State-TTL cases a system can run on a paced wall clock (Flink's TTL reads the TaskManager's clock).

A system whose TTL reads the wall clock is driven by mapping converge's logical processing time onto it: one
round of the paced source per instant (docs/flink.md, "State TTL on a paced wall clock"). Two things keep that
mapping cheap and its expiry decisions away from the system's boundary, and `on_wall_clock` gives every case
both:

* every instant's changes are ONE run (consecutive changes of one input): a round reaches the join in the
  source's order on one input only, so a change of input within an instant gets an instant of its own (one
  logical ms later);
* no advance of processing time is longer than the TTL: every entry written before such an advance has expired
  after it whether the advance is the TTL or longer, so each decision stays the same while the case's span,
  which is what the wall clock costs, stays at most a TTL per advance.

The changes themselves are untouched; only `processing_time` events are added, shortened or dropped (an advance
of 0). The scenario's expected answer is then computed from the new events, as for any case.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, Event, ProcessingTimeEvent, Scenario

# Operations per wall-clock case: its span is paid in real time (Flink: 0.8 s per logical ms), and the span grows
# with each advance (up to a TTL) and each change of input within an instant (a logical ms).
MAX_OPS = 8


def on_wall_clock(scenario: Scenario) -> Scenario:
    """The scenario with each instant's changes one run of one input and no advance longer than its TTL."""
    ttl = scenario.config.state_ttl_ms
    if not isinstance(ttl, int) or ttl < 1:
        raise ApiMisuseError(f"on_wall_clock: {scenario.name!r} has no single TTL of 1 ms or more ({ttl!r})")
    events: list[Event] = []
    before = now = 0              # the scenario's processing time, and the new one
    run: str | None = None        # the input of the instant's run so far
    for event in scenario.events:
        if isinstance(event, ProcessingTimeEvent):
            gap = event.processing_time - before
            before = event.processing_time
            if gap > 0:
                now += min(gap, ttl)
                events.append(ProcessingTimeEvent(now))
                run = None
            continue
        if isinstance(event, ChangeEvent):
            if run is not None and event.input != run:
                now += 1
                events.append(ProcessingTimeEvent(now))
            run = event.input
        events.append(event)
    return replace(scenario, events=tuple(events), expect_final=None, expect_changelog=None)


def wall_clock_cases(templates: st.SearchStrategy[Scenario]) -> st.SearchStrategy[Scenario]:
    """`templates` (each with one TTL) that change something, laid on the wall clock (on_wall_clock); more cases of
    a drawn one's shape: generators.shapes.same_shape. (A template of processing-time advances alone would make a
    batch's first case compare nothing.)"""
    return templates.filter(lambda s: any(isinstance(e, ChangeEvent) for e in s.events)).map(on_wall_clock)
