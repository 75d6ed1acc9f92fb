"""The Flink environment and one adapter process (one MiniCluster) shared by every Flink test.

The session's adapter is converge's own client (`AdapterSystem`, as `converge run --system flink`
opens it); the protocol-level tests speak raw lines to the same process (tests/support/flink_client.py), and
the campaign tests borrow the same system. Only the conformance kit starts adapters of its own (it
checks the handshake, the shutdown and version negotiation of fresh processes).

The environment is installed once into the user cache (~/.cache/converge/systems, or
CONVERGE_SYSTEMS_DIR) and reused by later runs. Without Java, or when the install fails, the
Flink tests are skipped with the reason (without Java: "Flink environment unavailable: Flink needs
Java 11 or newer ..., and no `java` was found"), unless CONVERGE_REQUIRE_FLINK=1 (CI), which makes
a missing Flink environment a failure. The tests sit in xdist group "flink", so one worker holds
the only JVM.
"""

from __future__ import annotations

import pytest

from converge.engine.model.errors import UsageError
from converge.engine.model.system import System
from converge.systems.adapter.client import AdapterSystem
from converge.systems.flink import environment
from converge.systems.flink.system_type import FlinkSystemType
from tests.support.flink_client import ProtocolClient
from tests.support.shared_adapter import Borrowed, session_adapter, unavailable


@pytest.fixture(scope="session")
def flink_command() -> list[str]:
    try:
        environment.java_version()
        environment.install()
        return environment.adapter_command(environment.DEFAULT_VERSION)
    except UsageError as exc:
        unavailable("Flink", str(exc))
        raise  # unreachable: skip/fail raise


@pytest.fixture(scope="session")
def flink_system(flink_command: list[str]):
    yield from session_adapter(flink_command, "flink")


@pytest.fixture(scope="session")
def flink(flink_system: AdapterSystem) -> ProtocolClient:
    """Raw protocol lines to the session's adapter process."""
    return ProtocolClient(flink_system.process)


@pytest.fixture
def on_session_flink(flink_system: AdapterSystem, monkeypatch: pytest.MonkeyPatch) -> AdapterSystem:
    """`converge run --system flink` campaigns borrow the session's adapter: the Flink kind's `open` is pointed at
    it and its close() is left to the session, which checks the adapter's exit status."""
    specs: list[str] = []

    def borrow(kind: FlinkSystemType, **_: object) -> System:
        specs.append(kind.spec)
        return Borrowed(flink_system)

    monkeypatch.setattr(FlinkSystemType, "open", borrow)
    yield flink_system
    assert specs == ["flink"], specs
