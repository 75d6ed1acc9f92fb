"""`--system pathway[:VERSION]`: Pathway through its adapter program (protocol v2), in its own environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.systems.adapter.system_type import AdapterProgramSystemType
from converge.systems.pathway.environment import adapter_command


class PathwaySystemType(AdapterProgramSystemType):
    schemes: ClassVar[tuple[str, ...]] = ("pathway",)
    forms: ClassVar[tuple[str, ...]] = ("pathway[:VERSION]",)
    summary: ClassVar[str] = "the Pathway adapter, installed by `converge systems install pathway`"
    startup: ClassVar[str] = "importing Pathway: 2-5 s"

    def command(self) -> list[str]:
        return adapter_command(self.argument or None)


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
