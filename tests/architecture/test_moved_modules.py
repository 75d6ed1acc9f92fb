"""The pre-0.3 import paths of the two top layers still work for one release, each with a DeprecationWarning."""

from __future__ import annotations

import pytest

import converge
from tests.support.fresh_interpreter import run_fresh


@pytest.mark.parametrize(("old", "new"), [
    ("converge.reports.tooling.cli", "converge.cli.main"),
    ("converge.reports.tooling.commands.run", "converge.cli.commands.run"),
    ("converge.reports.tooling", "converge.cli"),
    ("converge.reports.systems.flink.environment", "converge.systems.flink.environment"),
    ("converge.reports.systems", "converge.systems"),
])
def test_an_old_path_is_the_module_at_its_new_path_and_warns(old: str, new: str) -> None:
    done = run_fresh(f"import importlib, sys\n"
                  f"old = importlib.import_module({old!r})\n"
                  f"print(old is sys.modules[{new!r}], old.__name__, hasattr(old, '__path__'))")
    assert done.returncode == 0, done.stderr
    is_same, name, is_package = done.stdout.split()
    assert (is_same, name) == ("True", new)
    assert is_package == str(new in ("converge.cli", "converge.systems")), "a module must not become a package"
    assert f"DeprecationWarning: {old} moved to " in done.stderr and "the old name goes in 0.4" in done.stderr


def test_the_old_console_script_target_runs_the_command() -> None:
    """An environment installed before 0.3 has a `converge` script that imports converge.reports.tooling.cli:main."""
    done = run_fresh("import sys\nfrom converge.reports.tooling.cli import main\nsys.exit(main(['--version']))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(converge.__version__)


def test_a_class_imported_by_either_path_is_one_class() -> None:
    done = run_fresh("from converge.reports.systems.registry import SYSTEM_TYPES as old\n"
                  "from converge.systems.registry import SYSTEM_TYPES as new\n"
                  "print(old is new)")
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.parametrize("name", ["converge.reports.failure", "converge.reports.toolingx", "converge.systemsx"])
def test_names_that_did_not_move_are_left_to_the_ordinary_import(name: str) -> None:
    assert converge.moved_to(name) is None


def test_a_missing_module_under_an_old_path_is_still_a_module_not_found_error() -> None:
    done = run_fresh("import converge.reports.tooling.no_such_module")
    assert done.returncode == 1 and "ModuleNotFoundError: No module named 'converge.cli.no_such_module'" in done.stderr
