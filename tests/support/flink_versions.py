"""The Flink versions converge supports, what the adapter declares of each, and an installed one to run (or the
skip that names its install command): tests/systems/flink/test_versions*.py and the findings' plain-PyFlink runs."""

from __future__ import annotations

import pytest

from converge.engine.model.errors import UsageError
from converge.systems.flink import environment
from tests.support.shared_adapter import unavailable

ADAPTER = environment.program_module("adapter")
NO_MULTI_JOIN = "has no multi-way join operator (FLIP-516, from 2.1)"
SUPPORTED = ("1.19.0", "1.20.3", "2.0.1", "2.1.0", "2.2.0", "2.3.0")


def installed(version: str) -> environment.InstalledSystem:
    try:
        environment.java_version()
    except UsageError as exc:
        unavailable("Flink", str(exc))
    try:
        return environment.find(version)
    except UsageError:
        if version == environment.DEFAULT_VERSION:
            unavailable("Flink", f"Flink {version} is not installed")
        pytest.skip(f"Flink {version} is not installed: run `converge systems install flink --version {version}`")
