"""`--system SPEC`: which kind of system a spec names, by its scheme (the part before ':').

    reference            converge's reference engine, local runtime (the default)
    reference-spark      the reference engine on the Spark runtime
    cmd:COMMAND          an adapter command (a path, or a command line split like a shell would)
    flink[:VERSION]      the Flink adapter, installed by `converge systems install flink`
    pathway[:VERSION]    the Pathway adapter, installed by `converge systems install pathway`
    spark                Spark's own stream-stream join (native-join cases, docs/spark.md)

A new kind is a SystemKind subclass in its own module, listed in KINDS.
"""

from __future__ import annotations

from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.systems.adapter.client import Timeouts
from converge.systems.adapter.kind import AdapterKind
from converge.systems.base import SystemKind
from converge.systems.flink.kind import FlinkKind
from converge.systems.pathway.kind import PathwayKind
from converge.systems.reference import ReferenceKind
from converge.systems.spark.kind import SparkKind

DEFAULT_SYSTEM = "reference"
KINDS: tuple[type[SystemKind], ...] = (ReferenceKind, AdapterKind, FlinkKind, PathwayKind, SparkKind)
BY_SCHEME: dict[str, type[SystemKind]] = {scheme: kind for kind in KINDS for scheme in kind.schemes}
SPEC_FORMS: tuple[str, ...] = tuple(form for kind in KINDS for form in kind.forms)


# The kinds that wait for an adapter process, so that `--system-timeout` means something to them.
TIMED: tuple[type[SystemKind], ...] = (AdapterKind, FlinkKind, PathwayKind)


def system_kind(spec: str, *, timeout: float | None = None) -> SystemKind:
    """The kind of system `spec` names, bound to it; a usage error naming the known forms otherwise.

    `timeout` (`--system-timeout`) is the base of each run request's limit (adapter/client.py Timeouts); a kind
    that starts no adapter refuses it rather than ignore it."""
    kind = BY_SCHEME.get(spec.partition(":")[0])
    if kind is None:
        raise UsageError(f"--system {spec!r}: expected one of {', '.join(SPEC_FORMS)}")
    bound = kind(spec)
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
    kind = system_kind(spec, timeout=timeout)
    return kind.open() if timeouts is None else kind.open(timeouts=timeouts)
