"""A time budget for shrinking: once a property has failed, shrinking stops after `seconds`, keeping its best case.

Against a live system one example costs seconds, and Hypothesis shrinks for up
to five minutes per failure before it gives up with a warning of its own. The
budget wraps the property's test body:

* every example runs until the budget is spent; each failure of the kind
  first found (its exception type) is remembered with its arguments.
  Hypothesis's shrinker only moves to a smaller case that fails the same way,
  so the latest such failure is the best case found so far;
* the first example asked for once `seconds` have passed since the first
  failure ends the search: `ShrinkStopped`, a BaseException, goes through
  Hypothesis untouched (it neither shrinks nor replays it), and run_property
  reports the remembered failure. The one exception is Hypothesis's final
  replay of that very case: it fails again, the same way, and Hypothesis ends
  as it always does (shrinking had finished: nothing was stopped).

Answering the remaining candidates as passes instead, without their check,
does not end shrinking in time: measured on a 20-case batch of a system
property, Hypothesis spent five minutes (0.1 s a candidate) drawing candidates
that were never checked, and then printed its own warning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from hypothesis.errors import UnsatisfiedAssumption

from converge.engine.model.errors import ApiMisuseError

__all__ = ["DEFAULT_SHRINK_BUDGET", "MAX_SHRINK_BUDGET", "ShrinkBudget", "ShrinkStopped", "budget_or_default",
           "check_budget"]

DEFAULT_SHRINK_BUDGET = 120.0   # seconds of shrinking after a property's first failure (embedded or live system)
MAX_SHRINK_BUDGET = 240.0       # Hypothesis stops (with its own warning) 300 s into shrinking: stay well below it


def check_budget(seconds: float | None, what: str = "shrink_budget") -> float | None:
    """`seconds` when it is a budget converge can keep (0 to MAX_SHRINK_BUDGET; None: the default applies)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_SHRINK_BUDGET:
        raise ApiMisuseError(f"{what}={seconds!r}: expected seconds from 0 to {MAX_SHRINK_BUDGET:.0f} (Hypothesis "
                             "itself stops shrinking after 300 s, with a warning converge keeps out of its output)")
    return float(seconds)


def budget_or_default(seconds: float | None) -> float:
    """The budget a run keeps: the one given, checked, or DEFAULT_SHRINK_BUDGET."""
    checked = check_budget(seconds)
    return DEFAULT_SHRINK_BUDGET if checked is None else checked


class ShrinkStopped(BaseException):
    """Raised through Hypothesis when the budget is spent: it ends the search at once (never shrunk or replayed)."""


class ShrinkBudget:
    """Runs a property's examples and, `seconds` after its first failure, ends the search with the best case."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.first_failure_at: float | None = None
        self.stopped = False        # the search ended at the budget (with `best`)
        self.best: BaseException | None = None
        self._best_key: str | None = None
        self._best_tb: TracebackType | None = None

    @property
    def failed(self) -> bool:
        return self.first_failure_at is not None

    def elapsed(self) -> float:
        """Seconds since the first failure (0 before it)."""
        return 0.0 if self.first_failure_at is None else self.clock() - self.first_failure_at

    @property
    def spent(self) -> bool:
        return self.first_failure_at is not None and self.elapsed() >= self.seconds

    def run(self, args: tuple, body: Callable[[], None]) -> None:
        """Run `body` for `args`; once the budget is spent, end the search instead (ShrinkStopped)."""
        if self.spent:
            if repr(args) == self._best_key and self.best is not None:  # the final replay of the best case
                raise self.best.with_traceback(self._best_tb)
            self.stopped = True
            raise ShrinkStopped
        try:
            body()
        except UnsatisfiedAssumption:  # an invalid draw, not a failure
            raise
        except Exception as exc:
            if self.best is None or type(exc) is type(self.best):  # the failure being shrunk, smaller each time
                self.best, self._best_key, self._best_tb = exc, repr(args), exc.__traceback__
            if self.first_failure_at is None:
                self.first_failure_at = self.clock()
            raise

    def best_failure(self) -> BaseException:
        """The failure to report once the search stopped (its traceback as when it was raised)."""
        assert self.best is not None, "ShrinkStopped comes only after a failure"
        return self.best.with_traceback(self._best_tb)
