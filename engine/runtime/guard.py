"""The step budget of one event: a looping operator becomes a NonTerminationError, not a hang.

The only unbounded loop a runtime runs is "fire the timers due at the current
clock": an operator that registers a timer at or below the clock from its
timer callback keeps that loop going for ever. Both runtimes count, per event,

* the firings of each single timer (operator, domain, time, key). A timer
  fires once when its clock reaches it; firing again in the same event means
  the operator re-registered it at or below a clock that did not move. No
  operator of converge does that (cleanup timers are always registered after
  the clock, see docs/semantics.md), so `MAX_SAME_TIMER_FIRINGS` (1,000) is
  far above anything legitimate and is reached in milliseconds by a loop;
* all firings: at most the timers pending when the event began plus
  `EXTRA_TIMER_FIRINGS` (100,000). A legitimate event fires each pending
  timer at most once; the slack admits timers registered in the past on
  purpose (Flink fires those at once) and still ends a loop that keeps
  registering new, ever earlier timers within a fraction of a second.
"""

from __future__ import annotations

from typing import Any, Final

from converge.engine.model.errors import NonTerminationError

MAX_SAME_TIMER_FIRINGS: Final = 1_000
EXTRA_TIMER_FIRINGS: Final = 100_000


class TimerBudget:
    """Counts the timer firings of one event and raises once a bound is passed."""

    __slots__ = ("event_index", "limit", "fired", "_per_timer")

    def __init__(self, event_index: int, pending: int) -> None:
        self.event_index = event_index
        self.limit = pending + EXTRA_TIMER_FIRINGS
        self.fired = 0
        self._per_timer: dict[tuple, int] = {}

    def fire(self, operator: str, timestamp: int, key: Any, *, event_time: bool, clock: int | None) -> None:
        """Count one firing of `operator`'s timer; raise NonTerminationError past a bound."""
        self.fired += 1
        domain = "event-time" if event_time else "processing-time"
        clock_name = "watermark" if event_time else "processing time"
        timer = (operator, event_time, timestamp, key)
        same = self._per_timer.get(timer, 0) + 1
        self._per_timer[timer] = same
        if same > MAX_SAME_TIMER_FIRINGS:
            raise NonTerminationError(
                f"event {self.event_index}: operator {operator} fired its {domain} timer {timestamp} for key "
                f"{key!r} {same} times without the {clock_name} ({clock}) moving past it (bound "
                f"{MAX_SAME_TIMER_FIRINGS} per event): it keeps re-registering a timer at or below the clock")
        if self.fired > self.limit:
            raise NonTerminationError(
                f"event {self.event_index}: {self.fired} timer firings in one event, more than the "
                f"{self.limit - EXTRA_TIMER_FIRINGS} timers pending when it began plus {EXTRA_TIMER_FIRINGS} "
                f"(last: operator {operator}, {domain} timer {timestamp} for key {key!r}, {clock_name} {clock}): "
                f"an operator keeps registering timers that are already due")
