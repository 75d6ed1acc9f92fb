"""`converge systems install flink|pathway` and `converge systems list`: the environments of the systems under test."""

from __future__ import annotations

import argparse
import sys

from converge.cli.arguments import Subparsers
from converge.cli.systems_list import ENVIRONMENTS, add_list_options, list_systems
from converge.systems.venv_system import systems_dir

SYSTEMS = tuple(ENVIRONMENTS)
TITLES = {"flink": "Flink", "pathway": "Pathway"}


def register(subparsers: Subparsers) -> None:
    """The `systems` command and its two subcommands."""
    systems = subparsers.add_parser("systems", help="install and list the environments of systems under test "
                                                    "(Flink, Pathway)")
    what = systems.add_subparsers(dest="systems_command", required=True)
    inst = what.add_parser("install", help="create a system's environment under the user cache")
    inst.add_argument("system", choices=SYSTEMS)
    defaults = ", ".join(f"{name} {env.DEFAULT_VERSION}" for name, env in ENVIRONMENTS.items())
    inst.add_argument("--version", default=None, help=f"the system's release (default: {defaults})")
    inst.set_defaults(handler=cmd_install)
    ls = what.add_parser("list", help="what is installed, its version and Java, the settings it honours and what it "
                                      "lacks (recorded at install), and its last check (--check: a handshake now)")
    add_list_options(ls)
    ls.set_defaults(handler=cmd_list)


def cmd_install(args: argparse.Namespace) -> int:
    """Install the system's environment (nothing to do when that version is there already)."""
    environment, title = ENVIRONMENTS[args.system], TITLES[args.system]
    version = args.version or environment.DEFAULT_VERSION
    folder = systems_dir() / f"{args.system}-{version}"
    if (folder / "system.json").is_file():
        system = environment.find(version)
        if system.capabilities is None:  # recorded by an older converge: ask its adapter what it has
            system = environment.record_capabilities(system)
            print(f"{title} {version} is already installed in {folder}; recorded its capabilities")
        else:
            print(f"{title} {version} is already installed in {folder}")
        return 0
    folder = environment.install(version, echo=lambda line: print(line, file=sys.stderr))
    system = environment.find(version)
    honours, lacks = environment.features(system.capabilities, system.version)
    java = f"; {system.java}" if system.java not in ("", "-") else ""
    print(f"installed {title} {system.version} in {folder} (Python {system.python}{java}; "
          f"smoke check {system.smoke.get('seconds')} s; honours {honours}; lacks: {lacks})")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """One row per installed system from its record (main.py answers a plain list without this parser too)."""
    return list_systems(args)
