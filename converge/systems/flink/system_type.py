"""`--system flink[:VERSION]`: real Apache Flink through its adapter program, in its own environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.systems.adapter.system_type import AdapterProgramSystemType
from converge.systems.flink.environment import adapter_command, find


class FlinkSystemType(AdapterProgramSystemType):
    schemes: ClassVar[tuple[str, ...]] = ("flink",)
    forms: ClassVar[tuple[str, ...]] = ("flink[:VERSION]",)
    summary: ClassVar[str] = "the Flink adapter, installed by `converge systems install flink`"
    startup: ClassVar[str] = "a Flink MiniCluster and a warm-up job: 20-40 s idle, 90 s on a loaded machine"
    # eight shapes of 10 cases a request: the adapter runs them as one job (session.run_shapes), whose fixed
    # cost (planning, submission, the paced rounds) the eight then share (issue 39, docs/flink.md)
    default_batch: ClassVar[int] = 80

    def command(self) -> list[str]:
        return adapter_command(self.argument or None)

    def write_repros(self, reports: Sequence[str]) -> list[str]:
        from converge.systems.flink.campaign_repro import write_beside  # lazy: the generator loads the oracle

        return write_beside(reports, find(self.argument or None).version)


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
