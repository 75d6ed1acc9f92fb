"""Failure reports of a failed pytest test: the evidence its exception carries, else the scenarios it drew.

A PropertyFailure carries its evidence (reports/failure.py writes it). Any
other failure of a test that drew scenarios from converge's strategies (a
plain `assert`, a BadInputError, a crash) gets a report of each scenario the
final, shrunk example drew (reports/pytest_capture.py), so the case is a file
that can be replayed or read. Each report names the pytest node id, the seed
Hypothesis ran the test with and a one-line command that reproduces it:
`converge replay FILE` where replay can rerun the property, else the pytest
command with `--hypothesis-seed` (or, where Hypothesis derandomized the run
because it saw a CI environment, the command with `CI=true`: a rerun without
it draws other examples).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from converge.engine.model.scenario import Scenario
from converge.properties.divergence import Divergence
from converge.properties.evidence import with_oracle_final
from converge.properties.registry import select
from converge.reports.failure import property_failures, write_failure_report
from converge.reports.pytest_capture import drawn_scenarios

__all__ = ["hypothesis_seed", "pytest_command", "write_test_reports"]

_MESSAGE_LIMIT = 400  # characters of the test's exception in the report's message


def hypothesis_seed(item: pytest.Item) -> tuple[Any, str]:
    """(the seed Hypothesis ran `item` with, where it came from: "@seed", "derandomize", "option", "generated" or
    "unknown").

    Hypothesis records a seed it generated on the test function (the attribute it reads itself to print
    "--hypothesis-seed=N" when a failure does not reproduce); there is no public accessor for it."""
    func = getattr(item, "obj", None)
    func = getattr(func, "__func__", func)
    fixed = getattr(func, "_hypothesis_internal_use_seed", None)
    if fixed is not None:
        return fixed, "@seed"
    settings = getattr(func, "_hypothesis_internal_use_settings", None)
    if settings is not None and getattr(settings, "derandomize", False):
        return None, "derandomize"
    try:
        option = item.config.getoption("hypothesis_seed", None)
    except ValueError:  # Hypothesis's pytest plugin is not loaded
        option = None
    if option is not None:
        try:
            return int(option), "option"  # as Hypothesis reads it: an integer where it is one
        except ValueError:
            return option, "option"
    generated = getattr(func, "_hypothesis_internal_use_generated_seed", None)
    if generated is not None:
        return generated, "generated"
    return None, "unknown"


def _in_ci() -> bool:
    """Whether Hypothesis sees a CI environment (it then loads its `ci` profile, which derandomizes runs).

    Hypothesis has no public accessor for it; its own test keeps the list of CI variables its own."""
    try:
        from hypothesis._settings import is_in_ci  # lazy: only a failure asks
    except ImportError:
        return "CI" in os.environ
    return bool(is_in_ci())


def pytest_command(item: pytest.Item, seed: Any, source: str) -> str:
    """The pytest command that reruns `item` with the same seed (from the rootdir).

    A run Hypothesis derandomized for CI draws the same examples only where it is derandomized again: a
    developer's shell is not CI, so the command sets CI itself."""
    parts = ["pytest"]
    if seed is not None and source in ("option", "generated"):
        parts.append(f"--hypothesis-seed={seed}")
    if source == "derandomize" and _in_ci():
        parts.insert(0, "CI=true")
    return " ".join([*parts, shlex.quote(item.nodeid)])


def _rerunnable(d: Divergence) -> bool:
    """Whether `converge replay` can rerun the property (a registered one); a test's own check it cannot."""
    return bool(select(None, d.property))


def _test_failure(item: pytest.Item, exc: BaseException, where: str, scenario: Scenario) -> Divergence:
    text = str(exc).strip()
    if len(text) > _MESSAGE_LIMIT:
        text = text[:_MESSAGE_LIMIT] + " …"
    return Divergence(item.name, scenario, f"the test failed on this scenario ({where}): {type(exc).__name__}"
                                           + (f": {text}" if text else ""))


def write_test_reports(item: pytest.Item, exc: BaseException, folder: Callable[[], Path],
                       warn: Callable[[str], None]) -> tuple[list[Path], list[str]]:
    """Write the reports of `item`'s failure `exc`; return (their paths, one reproduce command per report).

    `folder` makes the run's directory when it is first needed: a failure with no evidence and no drawn
    scenario writes nothing and makes nothing."""
    failures = property_failures(exc)
    cases: list[tuple[Divergence, Any]] = [(f.divergence, f.call.args if f.call is not None else None)
                                           for f in failures]
    if not cases:
        cases = [(_test_failure(item, exc, where, s), None) for where, s in drawn_scenarios(item)]
    if not cases:
        return [], []
    seed, source = hypothesis_seed(item)
    command = pytest_command(item, seed, source)
    test = {"test": item.nodeid, "reproduce": command, "seed_source": source}
    target = folder()
    paths: list[Path] = []
    commands: list[str] = []
    for d, args in cases:
        with_oracle_final(d)  # as run_property does: the file expects the oracle's final answer
        written = write_failure_report(d, target, seed=seed, args=args, test=test, warn=warn)
        paths.extend(written)
        commands.append(f"converge replay {written[0]}" if _rerunnable(d) else command)
    return paths, commands
