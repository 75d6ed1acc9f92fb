"""Every Python example in README.md and docs/ runs as printed (the Spark one in tests/systems/spark/)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.doc_examples import code_blocks, run_block

BLOCKS = code_blocks()
PLAIN = [b for b in BLOCKS if not b.needs_spark and not b.is_a_pytest_file]


def test_every_block_has_a_runner() -> None:
    assert any(b.is_a_pytest_file and b.page == "README.md" for b in BLOCKS)
    assert any(b.needs_spark for b in BLOCKS)  # run by tests/systems/spark/test_docs_spark.py
    assert PLAIN  # run below


@pytest.mark.parametrize("block", PLAIN, ids=[b.name for b in PLAIN])
def test_example_runs(block) -> None:
    run_block(block)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.is_a_pytest_file],
                         ids=[b.name for b in BLOCKS if b.is_a_pytest_file])
def test_readme_test_passes_under_plain_pytest_in_a_project_with_its_own_engine_and_reports(
        block, tmp_path: Path) -> None:
    """A user's project, with packages named like converge's folders, copies the example verbatim."""
    for package in ("engine", "reports"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f'WHOSE = "the user\'s {package}"\n')
        (tmp_path / package / "scenario.py").write_text("")
    (tmp_path / "test_readme_example.py").write_text(block.code)
    (tmp_path / "test_own_packages.py").write_text(textwrap.dedent("""
        import engine.scenario, reports

        def test_the_projects_own_packages_are_imported():
            assert engine.WHOSE == "the user's engine" and reports.WHOSE == "the user's reports"
    """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert not (tmp_path / "converge-reports").exists()  # nothing failed, so no report was written
