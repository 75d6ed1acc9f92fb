"""Suite-wide options: slow tests (long campaigns, the full Spark set) run only with --run-slow."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run tests marked slow (long campaigns, the full Spark set)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow") or os.environ.get("CONVERGE_RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (or CONVERGE_RUN_SLOW=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def examples(default: int) -> int:
    """Examples per property test; CONVERGE_EXAMPLES scales the whole suite."""
    return int(os.environ.get("CONVERGE_EXAMPLES", default))
