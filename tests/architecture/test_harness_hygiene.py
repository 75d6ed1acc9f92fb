"""No expectation is computed with a module of the code under test.

The harness measured itself with hand-planted engine bugs: one it missed was
an expectation computed by the very helper the engine uses, so the bug moved
the expectation with it. This test reads (ast, not import) every module of
the layers that decide what is right — oracle/, generators/, properties/ —
and fails when one imports an engine module other than the shared data model,
unless the allow-list below names that import with the reason it cannot move
an expectation (typically: it *runs* or *inspects* the system under test).
Independent derivations live in properties/reference.py (tests/properties/test_reference.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

CHECKED = ("oracle", "generators", "properties")

# The data model (engine/model/): what a scenario, a case, a change and an error are. Expectations are stated
# in it; any module may import it.
DATA_MODEL = "converge.engine.model"

RUNS_THE_SYSTEM = "runs the system under test (its output is what gets judged, never the expectation)"
INSPECTS = "inspects what the system under test did (plan, state): the 'got' side of a comparison"
FOLDS_OUTPUT = ("folds an output changelog into a bag; no engine module imports it (checked below), so an "
                "engine bug cannot move it")

DESCRIBES = ("describes converge's plan to the user (`check`'s plan and findings); no verdict is computed "
             "from it")
MODEL_OF_A_SYSTEM = ("converge's model is what a real system (the one under test) is held to, never judged "
                     "itself there; the key codec's bytes and hashes are checked against Flink's own values "
                     "and its HashMap order against Java's rules (tests/engine/test_javahash.py)")
# (importing module, imported engine module) -> why this import cannot move an expected answer
ALLOWED: dict[tuple[str, str], str] = {
    ("converge.properties.systems.order_model", "converge.engine.runtime.local"): MODEL_OF_A_SYSTEM,
    ("converge.properties.anomalies", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.anomalies", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.regular", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.regular", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.replay", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.replay", "converge.engine.runtime.spark"): RUNS_THE_SYSTEM,
    ("converge.properties.replay", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.expectations", "converge.engine.runtime.local"): "the type of a run's result",
    ("converge.properties.expectations", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.history_check", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.history_check", "converge.engine.planner"): RUNS_THE_SYSTEM + " with a given plan",
    ("converge.properties.history_check", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.interval", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.projected_calc", "converge.engine.runtime.local"): (
        RUNS_THE_SYSTEM + " twice: with its Calc in front of the join and on the rows DuckDB projected "
        "(oracle/projected.py); the join both runs share is not what it judges"),
    ("converge.properties.empty_window", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.multiway", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.multiway", "converge.engine.planner"): INSPECTS,
    ("converge.properties.multiway", "converge.engine.planner.multi"): INSPECTS,
    ("converge.properties.multiway", "converge.engine.operators.multi_join"): INSPECTS,
    ("converge.properties.multiway", "converge.engine.state"): INSPECTS,
    ("converge.properties.multiway", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.shapes", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.shapes", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.wellformed", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.families.state_order", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.minibatch", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.raw_changelog", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    # the reference engine as a system under test (its answer is the 'got' side, or the engine model's answer)
    ("converge.properties.systems.answers", "converge.engine.reference_system"): RUNS_THE_SYSTEM,
    ("converge.properties.systems.changelogs", "converge.engine.runtime.local"):
        "runs converge's semantics=flink model, which changelog_rowkinds compares with a system event by event: "
        "the model is under test there too (a model bug shows as a divergence, never hides one of the system)",
    ("converge.properties.systems.ttl", "converge.engine.runtime.local"):
        "runs converge's semantics=flink model with state TTL, which ttl_matches_model compares with a system change "
        "by change; the fold is also held to properties/ttl_model.py, which shares no code with the engine",
    # `converge check` and `converge verify` (the user's own query)
    ("converge.properties.query_check", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.query_check", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.findings", "converge.engine.materialize"): FOLDS_OUTPUT,
    ("converge.properties.findings", "converge.engine.runtime.local"): RUNS_THE_SYSTEM,
    ("converge.properties.findings", "converge.engine.planner"): DESCRIBES,
    ("converge.properties.findings", "converge.engine.planner.multi"): DESCRIBES,
    ("converge.properties.query_plan", "converge.engine.planner"): DESCRIBES,
    ("converge.properties.query_plan", "converge.engine.views"): DESCRIBES,
    ("converge.properties.query_plan", "converge.engine.calc"): DESCRIBES + " (the Calc in front of the join)",
    ("converge.properties.coverage", "converge.engine.calc"): ("measures which special cases the drawn streams "
                                                               "reach at the join (through a view's Calc); no "
                                                               "expected answer is computed from it"),
    ("converge.properties.query_plan", "converge.engine.condition"): DESCRIBES + " (the equi keys of each step)",
    ("converge.properties.verify_capture", "converge.engine.condition"):
        "applies the query's WHERE to the oracle's rows; verify judges a real job's capture (Flink's own code), "
        "which shares no code with converge's condition compiler, so a compiler bug can raise a false "
        "divergence but never hide one of the job",
}


def _in_model(module: str) -> bool:
    return module == DATA_MODEL or module.startswith(DATA_MODEL + ".")


def _module_name(path: Path) -> str:
    parts = ["converge", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _engine_imports(path: Path) -> set[str]:
    """Every converge.engine module `path` imports (a `from converge.engine.x import y` names x, or x.y
    when y is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name == "converge.engine":
                continue  # the package itself (an empty __init__); its modules are named separately
            if name.startswith("converge.engine") and (ROOT / Path(*name.split(".")[1:])).with_suffix(".py").exists():
                found.add(name)
            elif name.startswith("converge.engine") and (ROOT / Path(*name.split(".")[1:]) / "__init__.py").exists():
                found.add(name)
    return found


def _all_imports() -> dict[tuple[str, str], Path]:
    out = {}
    for package in CHECKED:
        for path in sorted((ROOT / package).rglob("*.py")):
            for imported in _engine_imports(path):
                out[(_module_name(path), imported)] = path
    return out


def test_no_expectation_layer_imports_the_code_under_test_without_a_reason() -> None:
    bad = sorted(f"{mod} imports {imp}" for (mod, imp) in _all_imports()
                 if not _in_model(imp) and (mod, imp) not in ALLOWED)
    assert not bad, ("an oracle / generator / property module imports an engine module: derive what it needs "
                     "in properties/reference.py, or add it to ALLOWED with the reason it cannot move an "
                     "expectation:\n  " + "\n  ".join(bad))


def test_the_allow_list_has_no_stale_entries() -> None:
    used = set(_all_imports())
    stale = sorted(f"{m} -> {i}" for (m, i) in ALLOWED if (m, i) not in used)
    assert not stale, "allowed imports that no longer exist: " + ", ".join(stale)


# RunResult's read-only accessors for a user's own property (README, "Writing your own property") fold the
# run's output on request; no operator or runtime path calls them, so the engine's output never goes through it.
FOLDING_ACCESSORS = {("engine/runtime/local.py", "RunResult.final"), ("engine/runtime/local.py", "RunResult.answers")}


def _calls_outside_accessors(path: Path, root: Path = ROOT) -> list[str]:
    """Where `path` uses a name it imported from engine.materialize, outside FOLDING_ACCESSORS."""
    tree = ast.parse(path.read_text(), str(path))
    imported = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "converge.engine.materialize" for a in node.names}
    rel = path.relative_to(root).as_posix()
    found: list[str] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = f"{where}.{child.name}".lstrip(".") if isinstance(
                child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if isinstance(child, ast.Name) and child.id in imported and (rel, where) not in FOLDING_ACCESSORS:
                found.append(f"{rel}:{child.lineno} ({where or 'module level'})")
            visit(child, inner)

    visit(tree, "")
    return found


def test_no_engine_module_uses_the_output_folding_helper() -> None:
    """The reason given for engine.materialize: the engine itself never calls it (RunResult's accessors for
    users' properties aside)."""
    users = [p for p in sorted((ROOT / "engine").rglob("*.py"))
             if "converge.engine.materialize" in _engine_imports(p) and p.name != "materialize.py"]
    assert [p.relative_to(ROOT).as_posix() for p in users] == ["engine/runtime/local.py"]
    assert [where for p in users for where in _calls_outside_accessors(p)] == []


def test_the_folding_check_sees_a_call_outside_the_accessors(tmp_path: Path) -> None:
    """The check itself can fail: a runtime function that folds its output is caught, by line and function."""
    text = (ROOT / "engine" / "runtime" / "local.py").read_text() + "\n\ndef emit(changes):\n    return fold(changes)\n"
    planted = tmp_path / "engine" / "runtime" / "local.py"
    planted.parent.mkdir(parents=True)
    planted.write_text(text)
    assert _calls_outside_accessors(planted, tmp_path) == [f"engine/runtime/local.py:{len(text.splitlines())} (emit)"]


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The detector itself can fail: a module importing the key codec or the condition compiler is caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("from converge.engine.keycodec import encode_binary_row\n"
                     "def f():\n    from converge.engine import condition\n")
    assert _engine_imports(probe) == {"converge.engine.keycodec", "converge.engine.condition"}


# ---------------------------------------------------------------- the measured miss, planted again

def test_a_condition_compiler_bug_no_longer_moves_the_ttl_model() -> None:
    """The TTL model used to evaluate residuals with the engine's compiler; a compiler bug moved both."""
    from converge.cli.mutant_catalog import CATALOG, applied
    from converge.properties.campaign import run_property
    from converge.properties.registry import select

    mutant = next(m for m in CATALOG if m.name == "residual_python_truthiness")
    with applied(mutant):
        result = run_property(select("regular", "ttl_matches_model")[0], seed=1, max_examples=300, shrink=False)
    assert result.failure is not None and "TTL-aware model" in str(result.failure)


def test_a_key_codec_bug_no_longer_moves_the_rocksdb_order_expectation(monkeypatch) -> None:
    """rocksdb_iteration_order used to sort by the engine's key codec; a big-endian slot moved both. It now
    sorts by properties/reference.py and draws values whose byte order is not their numeric order."""
    import struct

    from converge.engine import keycodec
    from converge.properties.campaign import run_property
    from converge.properties.registry import select

    monkeypatch.setattr(keycodec, "_PACK_Q", struct.Struct(">q").pack)
    result = run_property(select("regular", "rocksdb_iteration_order")[0], seed=1, max_examples=100, shrink=False)
    assert result.failure is not None and "serialized-key order" in str(result.failure)
