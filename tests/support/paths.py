"""Where the suite's files are, named once: a test that moves to another folder keeps its paths."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SCENARIOS = ROOT / "tests" / "scenarios"  # the hand-written scenario files (docs/scenario-format.md)
EXAMPLES = ROOT / "docs" / "examples"  # the documented example queries and programs
FAKE_ADAPTERS = ROOT / "tests" / "support" / "adapters"  # adapters that tests start as processes
NATIVE_CASES = ROOT / "tests" / "systems" / "spark" / "native_cases"  # Spark native-join cases, worked by hand
# The folders that hold converge's modules: the five mapped top-level folders (pyproject's package-dir), then the
# package's own folder with the systems and the command line
MAPPED_FOLDERS = ("engine", "oracle", "generators", "properties", "reports")
SOURCE_FOLDERS = (*MAPPED_FOLDERS, "converge")
