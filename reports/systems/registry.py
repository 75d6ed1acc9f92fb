"""`--system SPEC`: which kind of system a spec names, by its scheme (the part before ':').

    reference            converge's reference engine, local runtime (the default)
    reference-spark      the reference engine on the Spark runtime
    cmd:COMMAND          an adapter command (a path, or a command line split like a shell would)
    flink[:VERSION]      the Flink adapter, installed by `converge systems install flink`
    spark                Spark's own stream-stream join (native-join cases, docs/spark.md)

A new kind is a SystemKind subclass in its own module, listed in KINDS.
"""

from __future__ import annotations

from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.reports.systems.adapter.client import Timeouts
from converge.reports.systems.adapter.kind import AdapterKind
from converge.reports.systems.base import SystemKind
from converge.reports.systems.flink.kind import FlinkKind
from converge.reports.systems.reference import ReferenceKind
from converge.reports.systems.spark.kind import SparkKind

DEFAULT_SYSTEM = "reference"
KINDS: tuple[type[SystemKind], ...] = (ReferenceKind, AdapterKind, FlinkKind, SparkKind)
BY_SCHEME: dict[str, type[SystemKind]] = {scheme: kind for kind in KINDS for scheme in kind.schemes}
SPEC_FORMS: tuple[str, ...] = tuple(form for kind in KINDS for form in kind.forms)


def system_kind(spec: str) -> SystemKind:
    """The kind of system `spec` names, bound to it; a usage error naming the known forms otherwise."""
    kind = BY_SCHEME.get(spec.partition(":")[0])
    if kind is None:
        raise UsageError(f"--system {spec!r}: expected one of {', '.join(SPEC_FORMS)}")
    return kind(spec)


def open_system(spec: str = DEFAULT_SYSTEM, *, timeouts: Timeouts = Timeouts()) -> System:
    """The system a spec names, started, for commands that send it converge scenarios."""
    return system_kind(spec).open(timeouts=timeouts)
