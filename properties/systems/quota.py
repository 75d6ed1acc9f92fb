"""How many cases a system campaign's property sends: exactly the `--examples` asked, in full batches.

`converge run --system` promises N cases per property (docs/systems.md:
examples, batches and cases). Each Hypothesis example is one batch; every
batch holds `batch` cases except the last, cut to what is left of N. The
size of the next batch depends only on the cases of the batches that passed
before it, so the same seed draws the same batches in any run. After a
failing batch the size is frozen: Hypothesis replays that batch from its
recorded choices, and it must draw the same number of cases again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from converge.engine.model.errors import ApiMisuseError


@dataclass
class CaseQuota:
    """N cases in batches of at most `batch`: what the next batch holds, and what was sent."""

    total: int
    batch: int
    passed: int = 0          # cases of the batches whose check returned
    sent: int = 0            # cases of every batch checked (a failing batch's replay counted again)
    batches: int = 0         # batches checked
    frozen: int | None = None  # the size of the failing batch, once one failed

    def __post_init__(self) -> None:
        for name in ("total", "batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ApiMisuseError(f"CaseQuota({name}={value!r}): expected a positive integer")

    @property
    def planned_batches(self) -> int:
        """The batches that hold `total` cases: Hypothesis's max_examples for the property."""
        return math.ceil(self.total / self.batch)

    def next_size(self) -> int:
        """Cases in the batch drawn now: a full batch, the rest of the quota, or (after a failure) the failing
        batch's size; at least 1 (Hypothesis may draw once more than planned, such as a replay)."""
        if self.frozen is not None:
            return self.frozen
        return max(1, min(self.batch, self.total - self.passed))

    def checked(self, size: int, *, ok: bool) -> None:
        """A batch of `size` cases was checked; `ok`: its check returned (a known divergence inside it too)."""
        self.batches += 1
        self.sent += size
        if ok:
            if self.frozen is None:
                self.passed += size
        elif self.frozen is None:
            self.frozen = size
