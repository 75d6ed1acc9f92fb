"""The Pathway environment and one adapter process shared by every Pathway test.

The session's adapter is converge's own client (`AdapterSystem`, as `converge run --system pathway` opens it);
only the conformance kit starts adapters of its own. The environment is installed once into the user cache
(~/.cache/converge/systems, or CONVERGE_SYSTEMS_DIR) and reused. When it is missing and cannot be installed
(no network to PyPI), the tests skip with the install command, unless CONVERGE_REQUIRE_PATHWAY=1 (CI), which
makes that a failure. The tests sit in xdist group "pathway", so one worker holds the only adapter.
"""

from __future__ import annotations

import pytest

from converge.engine.model.errors import UsageError
from converge.systems.pathway import environment
from tests.support.shared_adapter import session_adapter, unavailable


@pytest.fixture(scope="session")
def pathway_command() -> list[str]:
    try:
        environment.install()
        return environment.adapter_command(environment.DEFAULT_VERSION)
    except UsageError as exc:
        unavailable("Pathway", str(exc), environment.INSTALL_HINT)
        raise  # unreachable: skip/fail raise


@pytest.fixture(scope="session")
def pathway_system(pathway_command: list[str]):
    yield from session_adapter(pathway_command, "pathway")
