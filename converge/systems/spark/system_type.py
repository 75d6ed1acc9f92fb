"""`--system spark`: Spark's native join, on native-join cases (docs/spark.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from converge import renamed
from converge.engine.model.errors import UsageError
from converge.engine.model.native_join_case import NativeJoinCase
from converge.reports.options import RunOptions
from converge.systems.base import SystemType
from converge.systems.spark.campaign import replay_native_files, run_native_join_campaign


class SparkSystemType(SystemType):
    schemes: ClassVar[tuple[str, ...]] = ("spark",)
    forms: ClassVar[tuple[str, ...]] = ("spark",)
    case_type: ClassVar[type] = NativeJoinCase
    summary: ClassVar[str] = "Spark's native join (native-join cases, docs/spark.md)"

    def __init__(self, spec: str) -> None:
        super().__init__(spec)
        if self.argument:
            raise UsageError(f"--system {spec}: spark takes no argument (the installed pyspark is the version)")

    def run_campaign(self, options: RunOptions) -> int:
        return run_native_join_campaign(options)

    def replay_files(self, files: Sequence[Path]) -> int:
        return replay_native_files(list(files))


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
