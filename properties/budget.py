"""A time budget for shrinking: once a property has failed, shrinking stops after `seconds`, keeping its best case.

Against a live system one example costs seconds, and Hypothesis shrinks for up
to five minutes per failure before it gives up with a warning of its own. The
budget wraps the property's test body instead of touching Hypothesis:

* until the budget is spent every example runs, and every example that raised
  is remembered with its exception (keyed by the arguments' repr);
* once `seconds` have passed since the first failure, an example is no longer
  run: one that raised before raises the same exception object again (so
  Hypothesis's final replay of its best case, and any replay of an earlier
  case, sees what it saw the first time: same type, same place, no Flaky),
  and every other one is answered as a pass without running the check.

Hypothesis only replaces its best failing case by a smaller one that fails
the same way, so once nothing new can fail its shrinker runs out of
candidates quickly (each is only drawn, not checked) and reports the best case
found within the budget. `stopped` says whether any candidate went unchecked:
a budget spent only at the final replay stopped nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from hypothesis.errors import UnsatisfiedAssumption

from converge.engine.model.errors import ApiMisuseError

__all__ = ["DEFAULT_SHRINK_BUDGET", "MAX_SHRINK_BUDGET", "ShrinkBudget", "check_budget"]

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


class ShrinkBudget:
    """Runs a property's examples and, `seconds` after its first failure, stops running new ones."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.first_failure_at: float | None = None
        self.unchecked = 0          # examples answered without running the check, once the budget was spent
        self._raised: dict[str, tuple[BaseException, TracebackType | None]] = {}

    @property
    def failed(self) -> bool:
        return self.first_failure_at is not None

    def elapsed(self) -> float:
        """Seconds since the first failure (0 before it)."""
        return 0.0 if self.first_failure_at is None else self.clock() - self.first_failure_at

    @property
    def spent(self) -> bool:
        return self.first_failure_at is not None and self.elapsed() >= self.seconds

    @property
    def stopped(self) -> bool:
        """Shrinking ended at the budget: some candidate was never checked."""
        return self.unchecked > 0

    def run(self, args: tuple, body: Callable[[], None]) -> bool:
        """Run `body` for `args` (True), or, once the budget is spent, answer as before without running it
        (False: a pass, or the exception `args` raised the first time)."""
        key = repr(args)
        if self.spent:
            if key in self._raised:
                exc, tb = self._raised[key]
                raise exc.with_traceback(tb)
            self.unchecked += 1
            return False
        try:
            body()
        except Exception as exc:
            rejected = isinstance(exc, UnsatisfiedAssumption)  # an invalid draw: where it came from does not matter
            self._raised[key] = (exc, None if rejected else exc.__traceback__)
            if self.first_failure_at is None and not rejected:
                self.first_failure_at = self.clock()
            raise
        return True
