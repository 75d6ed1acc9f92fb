"""`--system reference` and `--system reference-spark`: converge's own engine as a system under test."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.engine.reference_system import ReferenceSystem
from converge.systems.adapter.client import DEFAULT_TIMEOUTS, Timeouts
from converge.systems.campaign import ScenarioSystemType


class ReferenceSystemType(ScenarioSystemType):
    schemes: ClassVar[tuple[str, ...]] = ("reference", "reference-spark")
    forms: ClassVar[tuple[str, ...]] = ("reference", "reference-spark")
    summary: ClassVar[str] = "converge's reference engine, on the local runtime or on the Spark runtime"

    def open(self, *, timeouts: Timeouts = DEFAULT_TIMEOUTS) -> System:
        if self.argument:
            raise UsageError(f"--system {self.spec}: {self.scheme} takes no argument")
        return ReferenceSystem("spark" if self.scheme == "reference-spark" else "local")


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
