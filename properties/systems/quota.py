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
from typing import TYPE_CHECKING

from converge.engine.model.errors import ApiMisuseError

if TYPE_CHECKING:
    from converge.properties.systems.sent import Sent

REPEATS_AFTER = 20  # rejected batches in a row after which a shape already sent is taken (a small shape space)


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


@dataclass
class FreshShapes:
    """Whether a drawn batch's shapes are taken: not when the campaign has sent one of them already, or the batch
    holds one twice (issue 39: Hypothesis's generation copies parts of a test case into others, which keeps the
    template, so 200 cases in 10 batches sent 9 or 10 shapes). Decided after the batch's every choice is drawn,
    so the choices never depend on it. After a failing batch every shape is taken (its replay must be the same
    batch), and after REPEATS_AFTER rejections in a row too (a property with few shapes still sends its cases)."""

    quota: CaseQuota
    sent: Sent
    rejected: int = 0  # rejections in a row

    def admit(self, shapes: list[str]) -> bool:
        """Whether a batch of these shapes (one per shape it holds) is taken."""
        new = not any(s in self.sent.shapes for s in shapes) and len(set(shapes)) == len(shapes)
        if self.quota.frozen is not None or new or self.rejected >= REPEATS_AFTER:
            self.rejected = 0
            return True
        self.rejected += 1
        return False
