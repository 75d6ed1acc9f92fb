"""The Flink environment and one adapter process (one MiniCluster) shared by every Flink test.

The environment is installed once into the user cache (~/.cache/converge/systems, or
CONVERGE_SYSTEMS_DIR) and reused by later runs. Without Java, or when the install fails, the
Flink tests are skipped with the reason, unless CONVERGE_REQUIRE_FLINK=1 (CI), which makes a
missing Flink environment a failure. The tests sit in xdist group "flink", so one worker holds
the only JVM.
"""

from __future__ import annotations

import os

import pytest

from converge.engine.errors import UsageError
from converge.engine.systems.flink import environment
from tests.flink.client import AdapterProcess


def _unavailable(reason: str):
    if os.environ.get("CONVERGE_REQUIRE_FLINK") == "1":
        pytest.fail(f"CONVERGE_REQUIRE_FLINK=1 but the Flink environment is unavailable: {reason}")
    pytest.skip(f"Flink environment unavailable: {reason}")


@pytest.fixture(scope="session")
def flink_command() -> list[str]:
    try:
        environment.java_version()
        environment.install()
        return environment.adapter_command(environment.DEFAULT_VERSION)
    except UsageError as exc:
        _unavailable(str(exc))
        raise  # unreachable: skip/fail raise


@pytest.fixture(scope="session")
def flink(flink_command: list[str]):
    """A started adapter (hello answered); shut down, and its exit status checked, at the end of the session."""
    adapter = AdapterProcess(flink_command)
    try:
        hello = adapter.hello()
        assert hello["type"] == "hello", hello
        adapter.hello_answer = hello
        yield adapter
        code = adapter.shutdown()
        assert code == 0, f"the adapter exited with {code} after shutdown; stderr: {adapter.stderr[-10:]}"
    finally:
        adapter.kill()
