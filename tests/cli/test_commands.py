"""The command line in one place: each `converge` subcommand is one module of converge/cli/commands/ with its own
`register(subparsers)`, and what the commands share comes from converge/cli/arguments.py."""

from __future__ import annotations

import argparse
import ast
import importlib

import pytest

from converge.cli.commands import COMMANDS
from converge.cli.main import build_parser, main
from tests.support.paths import ROOT

COMMANDS_FOLDER = ROOT / "converge" / "cli" / "commands"
MODULE_NAMES = sorted(p.stem for p in COMMANDS_FOLDER.glob("*.py") if p.stem != "__init__")
# `converge --help` before the commands moved into their own modules, in its order.
HELP_COMMANDS = ["run", "replay", "repro", "adapter", "bench", "mutants", "explain", "systems", "check", "verify",
                 "capture"]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _registered_by(module) -> list[str]:
    parser = argparse.ArgumentParser(prog="converge")
    module.register(parser.add_subparsers(dest="command", required=True))
    return list(_subcommands(parser))


def _leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers a command line ends in: the subcommands without subcommands of their own."""
    if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        return [parser]
    return [leaf for child in _subcommands(parser).values() for leaf in _leaves(child)]


def test_every_command_module_has_register_and_is_registered_once() -> None:
    modules = [importlib.import_module(f"converge.cli.commands.{name}") for name in MODULE_NAMES]
    assert all(callable(getattr(m, "register", None)) for m in modules)
    assert sorted(m.__name__ for m in COMMANDS) == sorted(m.__name__ for m in modules)


def test_every_subcommand_of_the_help_comes_from_exactly_one_command_module() -> None:
    owners: dict[str, list[str]] = {}
    for module in COMMANDS:
        names = _registered_by(module)
        assert names, f"{module.__name__} registers no subcommand"
        for name in names:
            owners.setdefault(name, []).append(module.__name__)
    assert {name: len(found) for name, found in owners.items()} == {name: 1 for name in HELP_COMMANDS}
    assert list(_subcommands(build_parser())) == [name for m in COMMANDS for name in _registered_by(m)]


def test_every_command_line_ends_in_a_handler_of_its_own_module() -> None:
    for module in COMMANDS:
        parser = argparse.ArgumentParser()
        module.register(parser.add_subparsers())
        for leaf in _leaves(parser):
            handler = leaf.get_default("handler")
            assert callable(handler) and handler.__module__ == module.__name__, leaf.prog


def test_the_help_lists_the_same_commands_as_before(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "{" + ",".join(HELP_COMMANDS) + "}" in out
    listed = [line.split()[0] for line in out.split("positional arguments:")[1].split("options:")[0].splitlines()
              if line.startswith("    ") and not line.startswith("     ")]
    assert listed == HELP_COMMANDS


def test_a_command_module_imports_neither_the_cli_nor_another_command() -> None:
    """What two commands share lives in converge/cli/arguments.py (no function passed in to dodge a cycle)."""
    crossing = []
    for name in MODULE_NAMES:
        tree = ast.parse((COMMANDS_FOLDER / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                imported = [a.name for a in node.names]
            else:
                continue
            crossing += [f"{name}: {i}" for i in imported if i == "converge.cli.main"
                         or (i.startswith("converge.cli.commands.") and i.rpartition(".")[2] != name)]
    assert crossing == []
