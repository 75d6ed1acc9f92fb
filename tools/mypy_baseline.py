"""mypy over converge as it is installed, against a per-module error baseline that only shrinks.

converge's modules sit in folders whose names are not their import names: pyproject.toml's
[tool.setuptools.package-dir] installs engine/ as converge.engine, oracle/ as converge.oracle, and so on.
mypy cannot map a folder onto another name, and run on the folders it resolves every
`from converge.engine... import` to nothing (Any), which hides most errors. So this script builds the
installed package's shape in a temporary folder, out of symlinks to the checkout (one per package-dir
entry, plus the entries of converge/ itself), runs `mypy -p converge` there with [tool.mypy] from
pyproject.toml, and reports each error at the checkout's own file and under its module's real name.

The baseline, tools/mypy_baseline.json, maps a module to its error count. The check fails when a module
has more errors than its entry (or has errors and no entry), printing that module's errors, and when a
module has fewer, printing the lowered entries to write: a fix is recorded when it is made, so the count
only goes down.

    python -m tools.mypy_baseline                   the check (.ci/run and tests/architecture/test_static_checks.py)
    python -m tools.mypy_baseline --write-baseline  write the lowered entries (it never raises one; after a
                                                    mypy upgrade, delete the file and write it anew)
    python -m tools.mypy_baseline --errors          every error, at its file in the checkout
    python -m tools.mypy_baseline --errors --root DIR   the same for another checkout (an older commit)

mypy's cache lives in the user cache ($XDG_CACHE_HOME/converge/mypy), never in the checkout; with it
warm, a run takes about a second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy_baseline.json"
CONFIG = ROOT / "pyproject.toml"
PACKAGE = "converge"
HOW_TO_WRITE = "python -m tools.mypy_baseline --write-baseline"


@dataclass(frozen=True)
class MypyError:
    module: str  # the installed name: converge.engine.model.scenario
    path: str  # the checkout's file: engine/model/scenario.py
    line: int
    message: str
    code: str | None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: error: {self.message}" + (f"  [{self.code}]" if self.code else "")


def package_tree(root: Path, into: Path) -> Path:
    """The installed `converge` package, as symlinks into the checkout `root`, under `into` (returned)."""
    package_dir: dict[str, str] = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    subpackages = {name.partition(".")[2]: root / folder for name, folder in package_dir.items()
                   if name.startswith(PACKAGE + ".") and name.count(".") == 1}
    package = into / PACKAGE
    package.mkdir()
    for entry in sorted((root / package_dir.get(PACKAGE, PACKAGE)).iterdir()):
        if entry.name not in subpackages and entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in subpackages.items():
        (package / name).symlink_to(folder)
    return into


def cache_dir() -> Path:
    """Where mypy keeps its cache: the user cache, as `converge systems install` does."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "converge" / "mypy"


def run_mypy(root: Path = ROOT, config: Path = CONFIG) -> list[MypyError]:
    """mypy's errors on the checkout `root`, under the settings in `config` (notes left out)."""
    root = root.resolve()
    with tempfile.TemporaryDirectory(prefix="converge-mypy-") as tmp:
        tree = package_tree(root, Path(tmp).resolve())
        done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
                               str(cache_dir()), "--output", "json", "-p", PACKAGE],
                              cwd=tree, env={**os.environ, "MYPYPATH": str(tree)}, capture_output=True, text=True,
                              timeout=900)
        items = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode not in (0, 1) or (done.returncode == 1 and not items):
            raise RuntimeError(f"mypy did not finish its check (exit {done.returncode}):\n{done.stdout}{done.stderr}")
        return [_located(item, tree, root) for item in items if item["severity"] == "error"]


def _located(item: dict, tree: Path, root: Path) -> MypyError:
    """An error of mypy's JSON output, at the checkout's file (the symlink resolved) and the module's name."""
    in_tree = (tree / item["file"]).absolute().relative_to(tree).with_suffix("")
    parts = list(in_tree.parts[:-1] if in_tree.name == "__init__" else in_tree.parts)
    path = Path(os.path.realpath(tree / item["file"])).relative_to(root).as_posix()
    return MypyError(".".join(parts), path, item["line"], item["message"], item["code"])


def load_baseline(path: Path = BASELINE) -> dict[str, int]:
    return json.loads(path.read_text())["modules"]


def baseline_mypy(path: Path = BASELINE) -> str:
    """The mypy version the baseline was written with."""
    return json.loads(path.read_text())["mypy"]


def counts(errors: list[MypyError]) -> dict[str, int]:
    return dict(Counter(e.module for e in errors))


def above(errors: list[MypyError], baseline: dict[str, int]) -> dict[str, int]:
    """Modules with more errors than their baseline entry (none: 0), and their count now."""
    return {m: n for m, n in counts(errors).items() if n > baseline.get(m, 0)}


def below(errors: list[MypyError], baseline: dict[str, int]) -> dict[str, int]:
    """Modules with fewer errors than their baseline entry, and their count now (0: drop the entry)."""
    now = counts(errors)
    return {m: now.get(m, 0) for m, n in baseline.items() if now.get(m, 0) < n}


def _version_note() -> str:
    written, running = baseline_mypy(), version("mypy")
    return "" if written == running else (f"\n(the baseline was written with mypy {written}, this is mypy {running}: "
                                          "after an upgrade, delete the baseline and write it anew)")


def above_report(errors: list[MypyError], baseline: dict[str, int]) -> str:
    """What a module over its entry has, for a failure message: every error of that module."""
    grown = above(errors, baseline)
    if not grown:
        return ""
    lines = [f"mypy: {len(grown)} module(s) with more errors than {BASELINE.relative_to(ROOT)} allows "
             "(fix the new errors; the baseline never goes up):"]
    for module in sorted(grown):
        lines.append(f"{module}: {grown[module]} errors, baseline {baseline.get(module, 0)}")
        lines += [f"    {e}" for e in sorted(errors, key=lambda e: (e.path, e.line)) if e.module == module]
    return "\n".join(lines) + _version_note()


def below_report(errors: list[MypyError], baseline: dict[str, int]) -> str:
    """The lowered entries to write, for a failure message."""
    fallen = below(errors, baseline)
    if not fallen:
        return ""
    lines = [f"mypy: {len(fallen)} module(s) with fewer errors than {BASELINE.relative_to(ROOT)} says; "
             f"lower these entries (or run `{HOW_TO_WRITE}`):"]
    lines += [f'    "{m}": {n},' if n else f'    "{m}": delete the entry (no error left)' for m, n in sorted(fallen.items())]
    return "\n".join(lines) + _version_note()


def write_baseline(errors: list[MypyError], path: Path = BASELINE) -> dict[str, int]:
    """Write the baseline: each module's count now, but never above its current entry (a first baseline, with no
    file, takes every count). Returns the modules left above their entry."""
    now = counts(errors)
    old = load_baseline(path) if path.exists() else None
    new = now if old is None else {m: min(n, old[m]) for m, n in now.items() if m in old}
    path.write_text(json.dumps({"mypy": version("mypy"), "modules": dict(sorted(new.items()))}, indent=2) + "\n")
    return {} if old is None else above(errors, old)


def _summary(errors: list[MypyError], seconds: float) -> str:
    return (f"mypy: {len(errors)} errors in {len({e.path for e in errors})} files "
            f"({len(counts(errors))} modules), {seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.mypy_baseline", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write-baseline", action="store_true", help="lower the baseline's entries to today's counts")
    mode.add_argument("--errors", action="store_true", help="print every error, then the totals; no check")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to check (with --errors)")
    args = parser.parse_args(argv)
    if args.root.resolve() != ROOT and not args.errors:
        parser.error("--root is for a measurement: give --errors too")
    start = time.monotonic()
    errors = run_mypy(args.root)
    summary = _summary(errors, time.monotonic() - start)
    if args.errors:
        print("\n".join(str(e) for e in sorted(errors, key=lambda e: (e.path, e.line))))
        print(summary)
        return 0
    if args.write_baseline:
        left = write_baseline(errors)
        print(f"{summary}; wrote {BASELINE.relative_to(ROOT)}")
        if left:
            print(above_report(errors, load_baseline()), file=sys.stderr)
        return 1 if left else 0
    baseline = load_baseline()
    print(f"{summary}; baseline {sum(baseline.values())} errors")
    problems = [report for report in (above_report(errors, baseline), below_report(errors, baseline)) if report]
    for report in problems:
        print(report, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
