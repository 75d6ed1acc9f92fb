"""`converge adapter check CMD`: the command line of the adapter conformance kit (converge/cli/adapter_check.py)."""

from __future__ import annotations

import argparse

from converge.cli.adapter_check import run_adapter_check
from converge.cli.arguments import Subparsers, adapter_log_of, add_adapter_log
from converge.systems.adapter import protocol
from converge.systems.adapter.client import Timeouts
from converge.systems.adapter.log import adapter_log


def register(subparsers: Subparsers) -> None:
    """The `adapter` command and its one subcommand, `check`."""
    ad = subparsers.add_parser("adapter", help="tools for adapter authors (docs/adapter-protocol.md)")
    ad_sub = ad.add_subparsers(dest="adapter_command", required=True)
    ck = ad_sub.add_parser("check", help="the conformance kit: check an adapter command against the protocol; "
                                          "exit 0 when every check passes, 1 when one failed, 2 when no answer "
                                          "was compared")
    ck.add_argument("command_line", metavar="CMD", help="the adapter command (a path, or a quoted command line)")
    ck.add_argument("--hello-timeout", type=float, default=Timeouts.hello, help="seconds for the handshake")
    ck.add_argument("--run-timeout", type=float, default=Timeouts.run_base,
                    help="seconds for a run request (plus one per case)")
    ck.add_argument("--version", type=int, choices=protocol.VERSIONS, default=None,
                    help="offer only this protocol version (default: every version converge speaks; the "
                         "handshake check says which one was negotiated)")
    add_adapter_log(ck)
    ck.set_defaults(handler=cmd_adapter_check)


def cmd_adapter_check(args: argparse.Namespace) -> int:
    """0 when every conformance check passed, 1 when one failed, 2 when no answer was compared."""
    with adapter_log(adapter_log_of(args, needs_system=False)):  # every adapter process the kit starts writes it
        return run_adapter_check(args.command_line, timeouts=Timeouts(hello=args.hello_timeout,
                                                                      run_base=args.run_timeout),
                                 version=args.version)
