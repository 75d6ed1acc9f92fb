"""Suite-wide options: slow tests (long campaigns, the full Spark set) run only with --run-slow."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from converge.generators.profile import PROFILE_NAME

# Hypothesis keeps its example database and constants cache in ./.hypothesis, written while tests are
# collected; the suite (and the processes it starts) keep them out of the checkout, in the temp dir.
HYPOTHESIS_HOME = Path(tempfile.gettempdir()) / "converge-suite-hypothesis"
CHECKOUT = Path(__file__).resolve().parents[1]
_BEFORE = pytest.StashKey[frozenset[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run tests marked slow (long campaigns, the full Spark set)")


# Every test's Hypothesis settings start from converge's profile: no deadline. Hypothesis's default deadline
# (200 ms an example) and its too_slow health check measure wall-clock time, which a loaded shared CI machine
# stretches many times over; a test that sets `deadline=` itself still gets what it asks for.
settings.register_profile("converge-suite", parent=settings.get_profile(PROFILE_NAME))
settings.load_profile("converge-suite")


def pytest_configure(config: pytest.Config) -> None:
    set_hypothesis_home_dir(HYPOTHESIS_HOME)
    # `pytest -n auto` distributes with "load"; Spark tests must share one JVM, so keep
    # xdist_group members on one worker ("loadgroup"). Without xdist nothing changes.
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    # A worker re-parses the command line (dist "load"), so it must be told to tag its tests
    # with their group, or the controller's loadgroup scheduler sees no groups at all.
    if getattr(config, "workerinput", {}).get("converge_loadgroup"):
        config.option.loadgroup = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist, controller side: tell each worker whether tests are grouped (see pytest_configure)."""
    node.workerinput["converge_loadgroup"] = node.config.getvalue("dist") == "loadgroup"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow") or os.environ.get("CONVERGE_RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (or CONVERGE_RUN_SLOW=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _nothing_written_into_the_checkout(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
    """The suite's own failure reports go under pytest's temporary folder, never into the checkout,
    unless --converge-reports names a folder. The environment variable carries the same folder to
    code that reads the default (`reports_folder()`) and to the processes tests start."""
    folder = str(tmp_path_factory.getbasetemp() / "converge-reports")
    if pytestconfig.getoption("converge_reports") is None:
        pytestconfig.option.converge_reports = folder
    saved = os.environ.get("CONVERGE_REPORTS_DIR")
    os.environ["CONVERGE_REPORTS_DIR"] = pytestconfig.option.converge_reports
    yield
    if saved is None:
        os.environ.pop("CONVERGE_REPORTS_DIR", None)
    else:
        os.environ["CONVERGE_REPORTS_DIR"] = saved


def checkout_files() -> frozenset[str] | None:
    """`git status --porcelain --ignored` of the checkout, as a set of lines (None: not a git checkout).

    Python's own bytecode caches are left out: `.ci/run` keeps them away with PYTHONDONTWRITEBYTECODE."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=CHECKOUT,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return frozenset(line for line in done.stdout.splitlines()
                     if "__pycache__/" not in line and not line.endswith(".pyc"))


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist) checks
        before = checkout_files()
        if before is not None:
            session.config.stash[_BEFORE] = before


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run, loudly, when a test left a file in the checkout that was not there before."""
    before = session.config.stash.get(_BEFORE, None)
    after = checkout_files() if before is not None else None
    if after is None:
        return
    left = sorted(after - before)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run left files in the checkout:\n" + "\n".join(f"  {line}" for line in left)
        if reporter is not None:
            reporter.write_sep("!", "files written into the checkout", red=True, bold=True)
            reporter.write_line(message, red=True)
        else:
            print(message)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def examples(default: int) -> int:
    """Examples per property test; CONVERGE_EXAMPLES scales the whole suite."""
    return int(os.environ.get("CONVERGE_EXAMPLES", default))
