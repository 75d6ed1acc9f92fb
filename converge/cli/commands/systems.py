"""`converge systems install flink|pathway` and `converge systems list`: the environments of the systems under test."""

from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Any

from converge.cli.arguments import Subparsers
from converge.reports.terminal import Footnotes, format_table
from converge.systems.flink import environment as flink_environment
from converge.systems.pathway import environment as pathway_environment
from converge.systems.venv_system import systems_dir

# Each system's environment module: install, find, installed, smoke_check, record_capabilities, features.
ENVIRONMENTS: dict[str, ModuleType] = {"flink": flink_environment, "pathway": pathway_environment}
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
                                      "lacks (recorded at install), and whether it answers now")
    ls.add_argument("--no-check", action="store_true", help="skip the handshake with each adapter")
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
    """One row per installed system; unless --no-check, whether its adapter answers a handshake now."""
    found = [(env, s) for env in ENVIRONMENTS.values() for s in env.installed()]
    if not found:
        hints = " or ".join(f"`{env.INSTALL_HINT}`" for env in ENVIRONMENTS.values())
        print(f"no system installed under {systems_dir()}; run {hints}")
        return 0
    rows = []
    notes = Footnotes()  # the lacks sentences and a broken adapter's message go under the table
    for environment, s in found:
        capabilities = s.capabilities
        if args.no_check:
            status = "not checked"
        else:
            check = environment.smoke_check(s.command(), s.version, with_case=False)
            status = f"works (handshake {check['seconds']} s)" if check["ok"] else \
                notes.mark("BROKEN", check["message"], f"{s.name} {s.version} is broken")
            capabilities = capabilities or check["capabilities"]  # an older record: what the adapter says now
        honours, lacks = environment.features(capabilities, s.version)
        rows.append((s.name, s.version, s.java, s.python, honours, lacks_cell(notes, s, capabilities, lacks),
                     str(s.folder), status))
    print(notes.under(format_table(("system", "version", "java", "python", "honours", "lacks", "folder", "status"),
                                   rows)))
    return 0


def lacks_cell(notes: Footnotes, s: Any, capabilities: dict | None, lacks: str) -> str:
    """The settings a system lacks, by name, with a footnote holding the adapter's sentences ("-": none)."""
    if lacks == "-":
        return lacks
    if not capabilities:  # recorded by an older converge: the footnote says how to record them
        return notes.mark("not recorded", lacks, f"{s.name} {s.version}")
    names = ", ".join(capabilities.get("lacks") or {}) or "not recorded"
    return notes.mark(names, lacks, f"{s.name} {s.version} lacks")
