"""`--system flink[:VERSION]`: real Apache Flink through its adapter program, in its own environment."""

from __future__ import annotations

from typing import ClassVar

from converge.engine.model.system import System
from converge.reports.systems.adapter.client import AdapterSystem, Timeouts
from converge.reports.systems.campaign import ConvergeCaseKind
from converge.reports.systems.flink.environment import adapter_command


class FlinkKind(ConvergeCaseKind):
    schemes: ClassVar[tuple[str, ...]] = ("flink",)
    forms: ClassVar[tuple[str, ...]] = ("flink[:VERSION]",)
    summary: ClassVar[str] = "the Flink adapter, installed by `converge systems install flink`"

    def open(self, *, timeouts: Timeouts = Timeouts()) -> System:
        return AdapterSystem(adapter_command(self.argument or None), label=self.spec, timeouts=timeouts)
