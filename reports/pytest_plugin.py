"""converge's pytest plugin, active wherever converge is installed (entry point `pytest11`).

* A test that fails with a PropertyFailure (a property called under `@given`,
  or a result's failure raised) leaves a failure report behind: a replayable
  scenario file, a Markdown report and a picture. So does any other failure
  (a plain `assert`, a BadInputError, a crash) of a Hypothesis test that drew
  scenarios: one report per scenario of the final, shrunk example
  (reports/pytest_capture.py records them). Their paths, and a one-line
  command that reproduces the failure, are added to the test's failure output;
  each report names the pytest node id and Hypothesis's seed
  (reports/pytest_failures.py).
* `--converge-reports=DIR|off` says where reports go; without it,
  $CONVERGE_REPORTS_DIR, then `reports-dir` in `[tool.converge]` of the
  nearest pyproject.toml (as `converge run` reads it), then ./converge-reports
  (converge.reports.location).
  Each pytest run writes into a directory of its own inside that folder,
  created at its first report and shared by its xdist workers; latest-run.txt
  and the `latest` link name it (converge.reports.runs).
  The marker `@pytest.mark.converge_reports("off")` (or a folder) overrides
  it for one test, e.g. a test that expects a property to fail.
* Fixtures: `converge_oracle` (one DuckDB oracle per worker process),
  `converge_scenario` (loads a scenario from a file, a JSON text or a dict)
  and `converge_reports_dir` (the folder, or None when reports are off).

Loading this module imports nothing but pytest and the standard library:
every pytest run of a project with converge installed loads it, so DuckDB,
Hypothesis and the engine are imported only by the hooks and fixtures that
need them.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from converge.reports.location import ENVIRONMENT_VARIABLE, OFF, new_run_name, reports_folder
from converge.reports.pytest_capture import drawn_scenarios, forget, watch

_MARKER = "converge_reports"
_RUN_NAME = pytest.StashKey[str]()
_SETTING = pytest.StashKey["str | None"]()
_WORKER_KEY = "converge_run_name"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("converge", "converge: failure reports of streaming-join properties")
    group.addoption("--converge-reports", metavar="DIR|off", default=None, dest="converge_reports",
                    help="where failure reports of failing converge properties go "
                         "(default: $CONVERGE_REPORTS_DIR, else ./converge-reports; off: none)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{_MARKER}(folder): where this test's converge failure reports go "
                                       "(\"off\": none), instead of --converge-reports")
    # One name per pytest run: an xdist worker takes its controller's, so the run's reports stay together.
    config.stash[_RUN_NAME] = getattr(config, "workerinput", {}).get(_WORKER_KEY) or new_run_name("pytest")
    setting = config.getoption("converge_reports")
    if setting is None and not os.environ.get(ENVIRONMENT_VARIABLE):
        setting = _project_reports_dir(config.invocation_params.dir)  # as `converge run` honours it
    config.stash[_SETTING] = setting


def _refuse(message: str) -> NoReturn:
    """End the pytest run as a usage error (exit 4), as a wrong setting must not be ignored: pytest's own way for
    a plugin (this module imports none of converge's engine, so not converge's UsageError)."""
    pytest.exit(f"converge: {message}", returncode=pytest.ExitCode.USAGE_ERROR)


def _project_reports_dir(start: Path) -> str | None:
    """`reports-dir` of `[tool.converge]` in the nearest pyproject.toml at or above `start`, relative to that
    file ("off" as it is), as converge/cli/project_config.py reads it for `converge run` (issue 41 row 7: the
    plugin ignored it); None when no file sets it. A file converge cannot read ends the run (_refuse)."""
    here = Path(start).resolve()
    path = next((f / "pyproject.toml" for f in (here, *here.parents) if (f / "pyproject.toml").is_file()), None)
    if path is None:
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        _refuse(f"{path}: cannot read it as TOML ({exc})")
    tool = data.get("tool")
    table = tool.get("converge") if isinstance(tool, dict) else None
    value = table.get("reports-dir") if isinstance(table, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        _refuse(f"{path}: [tool.converge] reports-dir: expected a string, got {value!r}")
    return value if value == OFF else str(path.parent / value)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist, controller side: hand the run's directory name to each worker."""
    node.workerinput[_WORKER_KEY] = node.config.stash[_RUN_NAME]


def _run_folder(config: pytest.Config) -> Path | None:
    return reports_folder(config.stash[_SETTING])


def _folder_for(item: pytest.Item) -> Path | None:
    marker = item.get_closest_marker(_MARKER)
    if marker is not None and marker.args:
        return reports_folder(str(marker.args[0]))
    return _run_folder(item.config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Record the scenarios each example of a Hypothesis test draws (the last one is the shrunk failing example)."""
    undo = watch(item) if _folder_for(item) is not None else None
    try:
        yield
    finally:
        if undo is not None:
            undo()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call":
        return
    try:
        _report_failure(item, call, report)
    finally:
        forget(item)


def _report_failure(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
    """Write the reports of a failed call and name them in the test's failure output."""
    if call.excinfo is None:
        return
    if "converge.properties.divergence" not in sys.modules and not drawn_scenarios(item):
        return  # no PropertyFailure can have been raised and no scenario was drawn: leave the failure alone
    folder = _folder_for(item)
    if folder is None:
        return
    from converge.engine.model.errors import UsageError  # lazy: the engine
    from converge.reports.pytest_failures import write_test_reports  # lazy: engine, DuckDB, matplotlib
    from converge.reports.runs import ensure_run_dir  # lazy: the engine's errors

    dropped: list[str] = []  # a picture left out says so beside the paths
    try:
        paths, commands = write_test_reports(
            item, call.excinfo.value, lambda: ensure_run_dir(folder, item.config.stash[_RUN_NAME]), dropped.append)
    except (OSError, UsageError) as exc:
        report.sections.append(("converge failure reports", f"not written to {folder}: {exc}"))
        return
    if paths or dropped:
        lines = [str(p) for p in paths] + [f"reproduce: {c}" for c in dict.fromkeys(commands)]
        lines += [f"warning: {w}" for w in dropped]
        report.sections.append(("converge failure reports", "\n".join(lines)))


@pytest.fixture(scope="session")
def converge_oracle() -> Any:
    """The DuckDB batch oracle, one per worker process (it shares the process's connection)."""
    from converge.oracle import DuckDBOracle  # lazy: DuckDB loads only for tests that use the oracle

    return DuckDBOracle()


@pytest.fixture(scope="session")
def converge_reports_dir(pytestconfig: pytest.Config) -> Path | None:
    """The reports folder of this run (None: reports are off); the run's own directory is made inside it."""
    return _run_folder(pytestconfig)


@pytest.fixture(scope="session")
def converge_scenario() -> Callable[[Any], Any]:
    """A loader: a scenario file's path, a JSON text or a dict in the scenario format -> a Scenario."""
    from converge.engine.model.errors import BadInputError  # lazy: the engine
    from converge.engine.model.scenario_json import load_scenario, scenario_from_dict  # lazy: the engine

    def load(source: Any) -> Any:
        if isinstance(source, dict):
            return scenario_from_dict(source)
        if isinstance(source, str) and source.lstrip().startswith("{"):
            try:
                return scenario_from_dict(json.loads(source))
            except json.JSONDecodeError as exc:
                raise BadInputError(f"scenario text is not JSON: {exc}") from None
        return load_scenario(source)

    return load
