"""The module graph stays acyclic and layered, and every function-level import says why it is there.

Read from the source (ast), not by importing: an import cycle that Python
tolerates today, because of import order, is still a cycle here.

Layers, bottom to top (docs/architecture.md):

    model < engine < oracle < generators < properties < reports < systems < cli

model is converge.engine.model, engine the rest of converge.engine (the
reference engine), systems converge.systems (the folder converge/systems/),
cli converge.cli (converge/cli/). A module may import only its own layer or lower
ones, and the oracle and the generators import nothing of converge.engine but
the data model: the oracle's independence from the code under test is a rule
of the layout, not a list of exceptions.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.layers import LAYERS
from tests.support.paths import ROOT, SOURCE_FOLDERS

LAYER = {name: i for i, (name, _) in enumerate(LAYERS)}
# Function-level imports keep a heavy dependency off the import path; each carries a one-line reason.
LAZY_REASON = "# lazy:"


def _modules() -> dict[str, Path]:
    out = {}
    for package in SOURCE_FOLDERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            if not (path.parent / "__init__.py").exists():
                continue  # package data (the Flink adapter program), not a converge module
            parts = path.relative_to(ROOT).with_suffix("").parts
            parts = ["converge", *parts] if package != "converge" else list(parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(path: Path, module: str) -> list[tuple[str, int, bool]]:
    """(imported converge module, line, inside a function) for every import of converge's own modules."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def resolve(name: str) -> str | None:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in child.names] + [base]
                targets = {resolve(n) for n in names if n.startswith("converge")}
                found.extend((t, child.lineno, inside) for t in targets if t and t != module)
            elif isinstance(child, ast.Import):
                targets = {resolve(a.name) for a in child.names if a.name.startswith("converge")}
                found.extend((t, child.lineno, inside) for t in targets if t and t != module)
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


GRAPH = {m: _imports(p, m) for m, p in MODULES.items()}


def layer_of(module: str) -> str | None:
    """The layer a module belongs to (None: converge/__init__.py, the version and names loaded on first use)."""
    matching = [(len(prefix), name) for name, prefix in LAYERS if module == prefix or module.startswith(prefix + ".")]
    return max(matching)[1] if matching else None


def _layer(module: str) -> int:
    name = layer_of(module)
    return -1 if name is None else LAYER[name]


def test_the_source_tree_is_what_this_test_reads() -> None:
    assert len(MODULES) > 60 and "converge.engine.planner" in MODULES and "converge.cli.main" in MODULES
    assert {layer_of(m) for m in MODULES} == set(LAYER) | {None}


def test_the_oracle_and_the_generators_import_only_the_data_model_of_the_engine() -> None:
    """The differential claim: the oracle (and what draws its inputs) shares nothing with the code under test
    but the data model: not the reference engine, not a system under test."""
    crossing = [f"{m}:{line} imports {t}" for m, found in GRAPH.items() if layer_of(m) in ("oracle", "generators")
                for t, line, _ in found if layer_of(t) not in ("model", "oracle", "generators")]
    assert crossing == []


def test_the_check_sees_an_oracle_importing_the_engine(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from converge.engine.runtime.local import run_scenario\n"
                     "from converge.engine.model.scenario import Scenario\n")
    found = {t for t, _, _ in _imports(probe, "converge.oracle.probe")}
    assert {layer_of(t) for t in found} == {"engine", "model"}


def test_no_import_cycles_between_modules() -> None:
    edges = {m: {t for t, _, _ in found} for m, found in GRAPH.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in edges:
        if module not in index:
            connect(module)
    assert cycles == []


def test_every_module_imports_only_its_own_layer_or_lower_ones() -> None:
    upward = [(m, line, t) for m, found in GRAPH.items() for t, line, inside in found
              if m != "converge" and not inside and _layer(t) > _layer(m)]
    assert upward == []


def test_every_function_level_import_says_why() -> None:
    unexplained = []
    for _module, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)) and LAZY_REASON not in lines[inner.end_lineno - 1]:
                    unexplained.append(f"{path.relative_to(ROOT)}:{inner.lineno}: {lines[inner.lineno - 1].strip()}")
    assert unexplained == []


def test_the_registries_list_every_module_of_their_folder() -> None:
    from converge.cli import bench
    from converge.properties import registry

    families = {p.stem for p in (ROOT / "properties" / "families").glob("*.py") if p.stem != "__init__"}
    assert {m.__name__.rpartition(".")[2] for m in registry.FAMILIES} == families
    benches = {p.stem for p in (ROOT / "converge" / "cli" / "benches").glob("*.py") if p.stem != "__init__"}
    listed = {fn.__module__.rpartition(".")[2] for fn in bench.BENCHES.values()}
    assert listed == benches


@pytest.mark.parametrize("module", ["converge", "converge.reports.pytest_plugin"])
def test_light_modules_import_nothing_heavy(module: str) -> None:
    """`import converge` and the pytest plugin (loaded by every pytest run where converge is installed)."""
    code = (f"import sys, {module}\n"
            "heavy = [m for m in ('duckdb', 'hypothesis', 'matplotlib', 'pyspark', 'converge.engine')"
            " if m in sys.modules]\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
