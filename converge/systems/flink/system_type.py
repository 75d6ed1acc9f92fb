"""`--system flink[:VERSION]`: real Apache Flink through its adapter program, in its own environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.system import System
from converge.systems.adapter.client import AdapterSystem, Timeouts
from converge.systems.campaign import ScenarioSystemType
from converge.systems.flink.environment import adapter_command


class FlinkSystemType(ScenarioSystemType):
    schemes: ClassVar[tuple[str, ...]] = ("flink",)
    forms: ClassVar[tuple[str, ...]] = ("flink[:VERSION]",)
    summary: ClassVar[str] = "the Flink adapter, installed by `converge systems install flink`"
    startup: ClassVar[str] = "a Flink MiniCluster and a warm-up job: 20-40 s idle, 90 s on a loaded machine"

    timeout: float | None = None  # `--system-timeout` (registry.system_type_of); None: $CONVERGE_SYSTEM_TIMEOUT or 30 s

    def open(self, *, timeouts: Timeouts | None = None) -> System:
        timeouts = timeouts or Timeouts.configured(self.timeout)
        return AdapterSystem(adapter_command(self.argument or None), label=self.spec, timeouts=timeouts)


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
