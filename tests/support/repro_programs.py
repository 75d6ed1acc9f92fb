"""What the repro-program tests read from a generated program without running it (Flink, Spark and Pathway alike):
its module-level literals, the top-level packages it imports, and ruff's verdict on it alone."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path


def literals(program: str) -> dict:
    """The module-level constants of the program, read as Python literals (never run)."""
    out = {}
    for node in ast.parse(program).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper():
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def imported_packages(program: str) -> set[str]:
    """The top-level package of every `import` and `from ... import` in the program."""
    tree = ast.parse(program)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    return imported | {node.module.split(".")[0] for node in ast.walk(tree)
                       if isinstance(node, ast.ImportFrom) and node.module}


def ruff_on_its_own(program: str, folder: Path, rules: list[str]) -> subprocess.CompletedProcess:
    """ruff run on the program as a file of its own, with the given rule options."""
    target = folder / "repro.py"
    target.write_text(program, encoding="utf-8")
    return subprocess.run(["ruff", "check", "--no-cache", *rules, str(target)], capture_output=True, text=True,
                          check=False)
