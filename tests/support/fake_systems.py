"""Systems under test made in the test suite, over converge's reference engine: no Flink, no Java."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence

from converge.engine.model.system import CaseResult, System
from converge.engine.reference_system import ReferenceSystem
from converge.systems.reference import ReferenceSystemType


class Dropping(ReferenceSystem):
    """A system that loses every row of every answer (the oracle's non-empty answers diverge)."""

    def __init__(self, seen: list[str], stream: io.StringIO) -> None:
        super().__init__()
        self.name, self.version = "dropping", "0"
        seen.append(stream.getvalue())  # what the user had been told when the system's start returned

    def run_cases(self, cases: Sequence) -> list[CaseResult]:
        return [CaseResult.ok(final=Counter()) for _ in cases]


class DroppingSystemType(ReferenceSystemType):
    startup = "a fake, ~0 s"

    def __init__(self, stream: io.StringIO) -> None:
        super().__init__("reference")
        self.stream, self.seen = stream, []

    def open(self, **kw) -> System:
        return Dropping(self.seen, self.stream)
