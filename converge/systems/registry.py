"""`--system SPEC`: which system type a spec names, by its scheme (the part before ':').

    reference            converge's reference engine, local runtime (the default)
    reference-spark      the reference engine on the Spark runtime
    cmd:COMMAND          an adapter command (a path, or a command line split like a shell would)
    flink[:VERSION]      the Flink adapter, installed by `converge systems install flink`
    pathway[:VERSION]    the Pathway adapter, installed by `converge systems install pathway`
    spark                Spark's native join (native-join cases, docs/spark.md)

A new system type is a SystemType subclass in its own module, listed in SYSTEM_TYPES.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from converge import renamed
from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.systems.adapter.client import Timeouts
from converge.systems.adapter.system_type import AdapterProgramSystemType, AdapterSystemType
from converge.systems.base import SystemType
from converge.systems.flink.system_type import FlinkSystemType
from converge.systems.pathway.system_type import PathwaySystemType
from converge.systems.reference import ReferenceSystemType
from converge.systems.spark.system_type import SparkSystemType

DEFAULT_SYSTEM = "reference"
SYSTEM_TYPES: tuple[type[SystemType], ...] = (ReferenceSystemType, AdapterSystemType, FlinkSystemType,
                                              PathwaySystemType, SparkSystemType)
BY_SCHEME: dict[str, type[SystemType]] = {scheme: cls for cls in SYSTEM_TYPES for scheme in cls.schemes}
SPEC_FORMS: tuple[str, ...] = tuple(form for cls in SYSTEM_TYPES for form in cls.forms)


# The system types that wait for an adapter process, so that `--system-timeout` means something to them.
TIMED: tuple[type[SystemType], ...] = tuple(t for t in SYSTEM_TYPES if issubclass(t, AdapterProgramSystemType))


def system_type_of(spec: str, *, timeout: float | None = None) -> SystemType:
    """The system type `spec` names, bound to it; a usage error naming the known forms otherwise.

    `timeout` (`--system-timeout`) is the base of each run request's limit (adapter/client.py Timeouts); a
    system type that starts no adapter refuses it rather than ignore it."""
    cls = BY_SCHEME.get(spec.partition(":")[0])
    if cls is None:
        raise UsageError(f"--system {spec!r}: expected one of {', '.join(SPEC_FORMS)}")
    bound = cls(spec)
    if timeout is not None:
        if not isinstance(bound, TIMED):
            raise UsageError(f"--system-timeout applies to systems behind an adapter (cmd:COMMAND, flink[:VERSION], "
                             f"pathway[:VERSION]), not to --system {spec}")
        bound.timeout = timeout
    return bound


def open_system(spec: str = DEFAULT_SYSTEM, *, timeouts: Timeouts | None = None,
                timeout: float | None = None) -> System:
    """The system a spec names, started, for commands that send it converge scenarios; `timeouts` (all limits)
    or `timeout` (`--system-timeout`; else $CONVERGE_SYSTEM_TIMEOUT) set how long an adapter gets."""
    system_type = system_type_of(spec, timeout=timeout)
    return system_type.open() if timeouts is None else system_type.open(timeouts=timeouts)


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
