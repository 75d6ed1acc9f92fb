"""`--system SPEC`: which system a command runs against.

    reference            converge's reference engine, local runtime (the default)
    reference-spark      the reference engine on the Spark runtime
    cmd:COMMAND          an adapter command (a path, or a command line split like a shell would)
    flink[:VERSION]      the Flink adapter, installed by `converge systems install flink`
    spark                Spark's own stream-stream join (native-join cases, docs/spark.md)
"""

from __future__ import annotations

import shlex
from pathlib import Path

from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.engine.reference_system import ReferenceSystem
from converge.reports.systems.adapter.client import AdapterSystem, Timeouts

DEFAULT_SYSTEM = "reference"
SPEC_FORMS = ("reference", "reference-spark", "cmd:COMMAND", "flink[:VERSION]", "spark")


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


def open_system(spec: str = DEFAULT_SYSTEM, *, timeouts: Timeouts = Timeouts()) -> System:
    """The system a spec names, started (an adapter is running and has answered the handshake)."""
    if spec == "reference":
        return ReferenceSystem("local")
    if spec == "reference-spark":
        return ReferenceSystem("spark")
    if spec.startswith("cmd:"):
        return AdapterSystem(adapter_argv(spec[4:]), label=spec[4:], timeouts=timeouts)
    if spec == "flink" or spec.startswith("flink:"):
        version = spec.partition(":")[2] or None
        from converge.reports.systems.flink.environment import adapter_command  # lazy: the Flink adapter's own env

        return AdapterSystem(adapter_command(version), label=spec, timeouts=timeouts)
    if spec == "spark":
        from converge.reports.systems.spark.system import SparkNativeSystem  # lazy: starts a JVM

        return SparkNativeSystem()
    raise UsageError(f"--system {spec!r}: expected one of {', '.join(SPEC_FORMS)}")
