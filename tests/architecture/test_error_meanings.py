"""Every `raise` in converge's packages against the meaning of its class (engine/model/errors.py).

Each error class means one thing, so a caller can act on the class alone:
bugs raise InternalError, misuse from Python ApiMisuseError, only the command
line UsageError, "converge cannot run this yet" UnsupportedError. This reads
each raise site (ast) and checks what can be checked from the source: a
BadInputError whose message speaks of converge's own machinery, a UsageError
below the command line, a bare built-in exception. The probes feed the checker
snippets with each violation, so a checker that stopped looking fails here.
"""

from __future__ import annotations

import ast

import pytest

from converge.engine.model.errors import (
    EXIT_BAD_INPUT,
    ApiMisuseError,
    BadInputError,
    InternalError,
    UnsupportedError,
    UsageError,
    exit_code,
    label,
)
from tests.support.paths import ROOT, SOURCE_FOLDERS

# Words that only converge's own machinery uses: a BadInputError saying them is a bug report in disguise.
BUG_WORDS = ("planner", "operator", "registered", "bug")

# Where UsageError belongs: the command line, and the systems layer's --system / environment checks.
USAGE_HOMES = ("converge/cli/", "converge/systems/")


BUILTINS = ("Exception", "ValueError", "RuntimeError", "TypeError", "KeyError", "IndexError", "AssertionError",
            "LookupError", "OSError")

# Built-in exceptions raised on purpose, each with the reason it cannot be a converge class.
BUILTIN_LEFT = {
    ("engine/model/rows.py", "TypeError"): "the private per-type value checks, caught in the same module "
                                           "(RowValidator) and raised on as BadInputError",
    ("engine/runtime/spark/job.py", "RuntimeError"): "an injected crash: it must look like a failed Spark task",
    ("engine/runtime/spark/processor.py", "RuntimeError"): "an injected failure: it must look like a failed "
                                                           "Spark task",
    ("converge/systems/adapter/protocol.py", "ValueError"): "caught in the same module and raised on as the "
                                                           "protocol's violation",
}


def _name(node: ast.expr) -> str | None:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def _message(node: ast.expr) -> str:
    """The literal text of a raise's first argument (the constant parts of an f-string)."""
    if not isinstance(node, ast.Call) or not node.args:
        return ""
    return " ".join(n.value for n in ast.walk(node.args[0])
                    if isinstance(n, ast.Constant) and isinstance(n.value, str))


def raise_sites(source: str) -> list[tuple[int, str, str]]:
    """(line, class name, message text) of every `raise X(...)` / `raise X` in `source`."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            name = _name(node.exc)
            if name is not None:
                out.append((node.lineno, name, _message(node.exc)))
    return out


def violations(source: str, path: str) -> list[str]:
    """What is wrong with the raise sites of one module (`path` relative to the checkout)."""
    found = []
    for line, name, message in raise_sites(source):
        where = f"{path}:{line}: {name}"
        if name == "BadInputError":
            words = [w for w in BUG_WORDS if w in message.lower()]
            if words:
                found.append(f"{where} says {words}: a state only a bug reaches is an InternalError")
        elif name == "UsageError":
            if not path.startswith(USAGE_HOMES):
                found.append(f"{where} below the command line: a Python caller's mistake is an ApiMisuseError")
        elif name in BUILTINS and (path, name) not in BUILTIN_LEFT:
            found.append(f"{where}: a bare built-in; raise the converge class that says what went wrong")
    return found


def _modules() -> list[tuple[str, str]]:
    return [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8"))
            for package in SOURCE_FOLDERS for p in sorted((ROOT / package).rglob("*.py"))
            if "/flink/program/" not in p.as_posix()]  # the Flink adapter program runs outside converge


def test_every_raise_site_means_what_its_class_means() -> None:
    found = [v for path, text in _modules() for v in violations(text, path)]
    assert not found, "\n".join(found)


def test_every_left_exception_still_exists() -> None:
    """An entry whose raise site is gone is stale: it would silently allow the next one."""
    sites = {(path, name, message) for path, text in _modules() for _, name, message in raise_sites(text)}
    for path, name in BUILTIN_LEFT:
        assert any(p == path and n == name for p, n, _ in sites), (path, name)


def test_internal_error_and_unsupported_error_are_raised() -> None:
    names = {name for _, text in _modules() for _, name, _ in raise_sites(text)}
    assert {"InternalError", "UnsupportedError", "ApiMisuseError"} <= names


@pytest.mark.parametrize("snippet, path, complaint", [
    ('raise BadInputError("interval joins are planned by the interval-join planner")', "engine/x.py", "bug"),
    ('raise BadInputError(f"{name}: an operator registered a timer")', "engine/x.py", "bug"),
    ('raise UsageError(f"buckets={n}: expected a whole number")', "engine/runtime/x.py", "command line"),
    ('raise ValueError(f"unknown map_state_order {order!r}")', "engine/state.py", "bare built-in"),
    ("raise RuntimeError", "oracle/x.py", "bare built-in"),
])
def test_the_checker_catches_each_violation(snippet: str, path: str, complaint: str) -> None:
    found = violations(f"def f(name, n, order):\n    {snippet}\n", path)
    assert len(found) == 1 and complaint in found[0], found


def test_the_checker_leaves_meaningful_raises_alone() -> None:
    source = ("def f(x):\n"
              "    raise BadInputError(f'input {x!r} has no column')\n"
              "    raise UsageError('--family: unknown')\n"
              "    raise InternalError('the planner produced no node')\n")
    assert violations(source, "converge/cli/main.py") == []


def test_unsupported_is_neither_bad_input_nor_a_crash() -> None:
    exc = UnsupportedError("a watermark flushes the mini-batch bundle on Spark")
    assert not isinstance(exc, (BadInputError, InternalError, UsageError, ApiMisuseError))
    assert label(exc) == "unsupported" and exit_code(exc) == EXIT_BAD_INPUT


def test_spark_refusals_are_unsupported() -> None:
    from converge.engine.runtime.spark.job import UnsupportedOnSpark  # imports no pyspark until a job runs

    assert issubclass(UnsupportedOnSpark, UnsupportedError) and not issubclass(UnsupportedOnSpark, BadInputError)


def test_the_package_exports_every_error_class() -> None:
    import converge
    from converge.engine.model import errors

    classes = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, errors.ConvergeError)}
    assert classes <= set(converge.__all__)
