"""What `pip install converge` puts into site-packages: one `converge` package and its entry points."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from converge import __version__
from tests.support.paths import MAPPED_FOLDERS, ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_folders() -> set[str]:
    """Every folder with an __init__.py, as its installed dotted name."""
    names = {"converge"}
    for folder in MAPPED_FOLDERS:
        for init in (ROOT / folder).rglob("__init__.py"):
            names.add(".".join(["converge", *init.parent.relative_to(ROOT).parts]))
    # the layers above the reports (the systems, the command line) live in the package's own folder
    names |= {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "converge").rglob("__init__.py")}
    return names


def test_every_package_folder_is_listed_for_installation() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _package_folders()
    assert setuptools["package-dir"] == {"converge": "converge", **{f"converge.{f}": f for f in MAPPED_FOLDERS}}


def test_the_wheel_holds_only_the_converge_package(tmp_path: Path) -> None:
    source = tmp_path / "source"
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    for name in tracked:  # a copy, so the build leaves nothing in the checkout
        if not name.startswith("tests/") and (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path),
                    str(source)], check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("converge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"converge"}
    packages = {".".join(n.split("/")[:-1]) for n in names if n.endswith("/__init__.py")}
    assert packages == _package_folders()
    entry_points = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith("entry_points.txt"))
    assert "converge = converge.cli.main:main" in entry_points
    assert "[pytest11]\nconverge = converge.reports.pytest_plugin" in entry_points
    assert not any(n.startswith("converge/tests") for n in names)
    assert "converge/cli/conformance/01_inner_insert_only.json" in names  # the adapter kit's cases
    assert "converge/cli/conformance/batch/A1_inner_insert_only_empty.json" in names
    assert "converge/cli/conformance/settings/mini_batch_folds.json" in names
    program = {n.rpartition("/")[2] for n in names if n.startswith("converge/systems/flink/program/")}
    assert program == {"adapter.py", "arrival.py", "case_plan.py", "condition_sql.py", "dedupe_sql.py", "pacing.py", "parallel.py",
                       "restart.py", "sinks.py",
                       "session.py", "state_backend.py", "time_attributes.py", "ttl_clock.py",
                       "ttl_probe.py"}  # package data, run by Flink's Python
    # the built-in known divergences, applied by default, and each entry's minimal case (package data)
    known = "converge/properties/systems/known_divergences/"
    assert known + "flink.json" in names
    assert known + "native/spark.json" in names  # Spark's native join (properties/native_join/known.py)
    assert known + "native/cases/spark_full_outer_null_keys_match.json" in names
    assert {n for n in names if n.startswith(known + "cases/")} >= {
        known + "cases/flink_exists_correlated_null_semi.json", known + "cases/flink_minibatch_suppressed_padding.json"}


def test_the_installed_command_prints_its_version() -> None:
    done = subprocess.run(["converge", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"converge {__version__}"
