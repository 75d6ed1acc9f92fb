"""`--system pathway[:VERSION]`: Pathway through its adapter program (protocol v2), in its own environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.system import System
from converge.systems.adapter.client import AdapterSystem, Timeouts
from converge.systems.campaign import ScenarioSystemType
from converge.systems.pathway.environment import adapter_command


class PathwaySystemType(ScenarioSystemType):
    schemes: ClassVar[tuple[str, ...]] = ("pathway",)
    forms: ClassVar[tuple[str, ...]] = ("pathway[:VERSION]",)
    summary: ClassVar[str] = "the Pathway adapter, installed by `converge systems install pathway`"
    startup: ClassVar[str] = "importing Pathway: 2-5 s"

    timeout: float | None = None  # `--system-timeout` (registry.system_type_of); None: $CONVERGE_SYSTEM_TIMEOUT or 30 s

    def open(self, *, timeouts: Timeouts | None = None) -> System:
        timeouts = timeouts or Timeouts.configured(self.timeout)
        return AdapterSystem(adapter_command(self.argument or None), label=self.spec, timeouts=timeouts)


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
