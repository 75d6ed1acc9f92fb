"""The Pathway environment and one adapter process shared by every Pathway test.

The session's adapter is converge's own client (`AdapterSystem`, as `converge run --system pathway` opens it);
only the conformance kit starts adapters of its own. The environment is installed once into the user cache
(~/.cache/converge/systems, or CONVERGE_SYSTEMS_DIR) and reused. When it is missing and cannot be installed
(no network to PyPI), the tests skip with the install command, unless CONVERGE_REQUIRE_PATHWAY=1 (CI), which
makes that a failure. The tests sit in xdist group "pathway", so one worker holds the only adapter.
"""

from __future__ import annotations

import os

import pytest

from converge.engine.model.errors import UsageError
from converge.reports.systems.adapter.client import AdapterSystem
from converge.reports.systems.pathway import environment


def unavailable(reason: str):
    if os.environ.get("CONVERGE_REQUIRE_PATHWAY") == "1":
        pytest.fail(f"CONVERGE_REQUIRE_PATHWAY=1 but the Pathway environment is unavailable: {reason}")
    pytest.skip(f"Pathway environment unavailable ({reason}); install it with `{environment.INSTALL_HINT}`")


@pytest.fixture(scope="session")
def pathway_command() -> list[str]:
    try:
        environment.install()
        return environment.adapter_command(environment.DEFAULT_VERSION)
    except UsageError as exc:
        unavailable(str(exc))
        raise  # unreachable: skip/fail raise


@pytest.fixture(scope="session")
def pathway_system(pathway_command: list[str]):
    """The started adapter as converge's client holds it; shut down, and its exit status checked, at the end."""
    system = AdapterSystem(pathway_command, label="pathway")
    try:
        yield system
        code = system.process.shutdown(30.0)
        assert code == 0, f"the adapter exited with {code} after shutdown; stderr: {system.process.stderr_tail()}"
    finally:
        system.process.kill()
