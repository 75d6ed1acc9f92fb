"""A system type: a type of system under test, as the command line names it: `SCHEME` or `SCHEME:ARGUMENT`.

Each system type owns what is particular to it: the cases it runs (converge
scenarios, or Spark's native-join cases), how it starts, its campaign
(`converge run --system`) and its replay (`converge replay --system`).
registry.py maps a scheme to its system type, so no command compares a spec string
with a system's name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.properties.systems.specs import CASES_PER_SHAPE
from converge.reports.options import RunOptions
from converge.systems.adapter.client import DEFAULT_TIMEOUTS, Timeouts


class SystemType(ABC):
    """One system type, bound to the spec that named it."""

    schemes: ClassVar[tuple[str, ...]]     # the spec's part before ':' (or the whole spec)
    forms: ClassVar[tuple[str, ...]]       # how a spec of this type is written, for help and errors
    case_type: ClassVar[type]              # what one case of this type is
    summary: ClassVar[str]                 # one line for `converge run --help` and docs
    startup: ClassVar[str] = ""            # what starting it costs, shown while it starts ("a MiniCluster, ~20-40 s")
    default_batch: ClassVar[int] = CASES_PER_SHAPE  # cases per run request without --batch: one shape a request

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.scheme, _, self.argument = spec.partition(":")

    @abstractmethod
    def run_campaign(self, options: RunOptions) -> int:
        """`converge run --system SPEC`: every selected property of this type; the exit code."""

    @abstractmethod
    def replay_files(self, files: Sequence[Path]) -> int:
        """`converge replay --system SPEC FILE...`: each case file on the system; the worst exit code."""

    def write_repros(self, reports: Sequence[str]) -> list[str]:
        """Standalone reproductions beside a failure's report files (`converge run`, unless --no-repro); the paths
        written. A system type with no repro generator writes none."""
        return []

    def open(self, *, timeouts: Timeouts = DEFAULT_TIMEOUTS) -> System:
        """The system started, for commands that send it converge scenarios (`converge check --system`)."""
        raise UsageError(f"--system {self.spec}: this system runs {self.case_type.__name__} cases, not converge "
                         f"scenarios")


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
