"""Running properties under Hypothesis: one function serves pytest and `converge run`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from properties.divergence import PropertyFailure
from properties.registry import PropertySpec


@dataclass
class PropertyResult:
    family: str
    name: str
    examples: int = 0
    failures: int = 0
    seconds: float = 0.0
    failure: PropertyFailure | None = None
    error: BaseException | None = None
    reports: list[str] = field(default_factory=list)

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def ok(self) -> bool:
        return self.failure is None and self.error is None


def run_property(spec: PropertySpec, *, max_examples: int | None = None, seed: int | None = None,
                 shrink: bool = True, on_failure: Callable[[PropertyResult], None] | None = None
                 ) -> PropertyResult:
    """Run one property with Hypothesis; a failure comes back shrunk, with its evidence."""
    result = PropertyResult(spec.family, spec.name)
    counter = [0]
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target] + ([Phase.shrink] if shrink else [])

    @settings(max_examples=max_examples or spec.examples, deadline=None, database=None, phases=phases,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(spec.strategy())
    def test(args: tuple) -> None:
        counter[0] += 1
        spec.check(*args)

    if seed is not None:
        test = hypothesis_seed(seed)(test)
    start = time.perf_counter()
    try:
        test()
    except PropertyFailure as exc:
        result.failure = exc
        result.failures = 1
    except Exception as exc:  # a crash is a failure of the harness or the engine, never a pass
        result.error = exc
        result.failures = 1
    result.seconds = time.perf_counter() - start
    result.examples = counter[0]
    if not result.ok and on_failure is not None:
        on_failure(result)
    return result
