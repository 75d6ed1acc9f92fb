"""`--system cmd:COMMAND`: any engine behind an adapter program (docs/adapter-protocol.md)."""

from __future__ import annotations

import shlex
from abc import abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.systems.adapter.client import AdapterSystem, Timeouts
from converge.systems.campaign import ScenarioSystemType


def adapter_argv(command: str) -> list[str]:
    """A path that exists is one argument (spaces and all); anything else is split like a shell command line."""
    if Path(command).exists():
        return [command]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"--system cmd:{command}: {exc}") from None
    if not argv:
        raise UsageError("--system cmd: names no command")
    return argv


class AdapterProgramSystemType(ScenarioSystemType):
    """A system behind an adapter program converge starts (docs/adapter-protocol.md): `--system-timeout` is the
    base of each run request's limit (adapter/client.py Timeouts)."""

    timeout: float | None = None  # `--system-timeout` (registry.system_type_of); None: $CONVERGE_SYSTEM_TIMEOUT or 30 s

    @abstractmethod
    def command(self) -> list[str]:
        """The adapter program's command line."""

    def label(self) -> str:
        """How reports and messages name the system."""
        return self.spec

    def open(self, *, timeouts: Timeouts | None = None) -> System:
        timeouts = timeouts or Timeouts.configured(self.timeout)
        return AdapterSystem(self.command(), label=self.label(), timeouts=timeouts)


class AdapterSystemType(AdapterProgramSystemType):
    schemes: ClassVar[tuple[str, ...]] = ("cmd",)
    forms: ClassVar[tuple[str, ...]] = ("cmd:COMMAND",)
    summary: ClassVar[str] = "an adapter command: a path, or a command line split like a shell would"

    def command(self) -> list[str]:
        return adapter_argv(self.argument)

    def label(self) -> str:
        return self.argument


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
