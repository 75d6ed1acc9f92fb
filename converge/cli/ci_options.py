"""`converge run`'s CI options on the command line: -k, --maxfail/-x, --last-failed, --junit-xml, --quiet, and
the [tool.converge] defaults under the flags (converge/cli/project_config.py reads the file)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from converge.cli.arguments import add_quiet, output_file, positive_int
from converge.cli.last_failed import ANY_SYSTEM, LastFailed, last_failed
from converge.cli.project_config import ProjectConfig
from converge.engine.model.errors import UsageError
from converge.reports.location import ENVIRONMENT_VARIABLE

__all__ = ["add_ci_options", "last_failed_of", "with_project_defaults"]


def add_ci_options(parser: argparse.ArgumentParser) -> None:
    """The options a CI job uses: selection, stopping early, rerunning failures, a JUnit file, no progress."""
    parser.add_argument("-k", dest="keyword", metavar="EXPR", default=None,
                        help="only the properties whose family/property name matches EXPR: words (substrings, any "
                             "case), and, or, not, parentheses, e.g. -k 'regular and not ttl'")
    parser.add_argument("--maxfail", type=positive_int, metavar="N", default=None,
                        help="stop after N properties failed (diverged or errors); the rest are reported as not run")
    parser.add_argument("-x", "--exitfirst", dest="maxfail", action="store_const", const=1,
                        help="stop at the first property that fails (--maxfail 1)")
    parser.add_argument("--last-failed", action="store_true",
                        help="rerun only the properties that failed in the last campaign in the reports folder, "
                             "each with the seed it failed with")
    parser.add_argument("--junit-xml", metavar="FILE", type=output_file, default=None,
                        help="also write the results as JUnit XML: one testcase per property, a failure's report "
                             "and replay command in its message")
    add_quiet(parser)


def with_project_defaults(args: argparse.Namespace, config: ProjectConfig) -> argparse.Namespace:
    """`args` with each option the command line left unset taken from [tool.converge] (the flags win; the
    reports folder: --reports-dir, then $CONVERGE_REPORTS_DIR, then the file). The file's known and no-known
    apply to a --system campaign only: `--system none` runs the embedded campaign, which has no known lists."""
    out = argparse.Namespace(**vars(args))
    if config.values is None:
        out.system_named = out.system is not None
        if out.system == "none":  # the embedded campaign, as with a file that names a system
            out.system = None
        return out
    out.system_named = out.system is not None or config.get("system") is not None  # "none" included
    for key, attr in (("examples", "examples"), ("seed", "seed"), ("maxfail", "maxfail")):
        if key in ("seed", "examples") and args.last_failed:  # each property reruns with the seed and examples
            continue                                           # it failed with
        if getattr(out, attr) is None and config.get(key) is not None:
            setattr(out, attr, config.get(key))
    if out.system is None and config.get("system") is not None:
        out.system = config.get("system")
    if out.system == "none":  # the file names a system; the command line asks for the embedded campaign
        out.system = None
    if out.system is not None:  # the file's known lists are a system campaign's; the embedded one has none
        if out.known is None and config.get("known") is not None:
            out.known = [str(config.path_of(p)) for p in config.get("known")]
        if not out.no_known and config.get("no-known"):
            out.no_known = True
    if (out.reports_dir is None and not out.no_reports and not os.environ.get(ENVIRONMENT_VARIABLE)
            and config.get("reports-dir") is not None):
        value = config.get("reports-dir")
        out.reports_dir = value if value == "off" else str(config.path_of(value))
    if out.junit_xml is None and config.get("junit-xml") is not None:
        out.junit_xml = str(config.path_of(config.get("junit-xml")))
    return out


def last_failed_of(args: argparse.Namespace, reports: Path | None) -> LastFailed | None:
    """--last-failed as what the last campaign left failing (None: not asked; no properties: nothing failed
    last time, which it says on stderr). --seed with it is refused: each property keeps the seed it failed
    with. The campaign is the newest of the --system asked for (on the command line or in [tool.converge];
    `none`: the embedded campaign), else of any system, and the rerun runs on its system."""
    if not args.last_failed:
        return None
    if args.seed is not None:
        raise UsageError("--last-failed reruns each property with the seed it failed with; --seed would change it")
    last = last_failed(reports, args.system if getattr(args, "system_named", False) else ANY_SYSTEM)
    if not last.failed:
        print(f"converge: --last-failed: no property failed in the last campaign ({last.run_dir}); nothing was run",
              file=sys.stderr)
        return last
    how = ", ".join(last.failed) + " (as they failed: " + "; ".join(
        f"seed {r.seed}, {r.examples if r.examples is not None else 'default'} examples" for r in last.failed.values()) + ")"
    on = f" on --system {last.system}" + (f", batches of {last.batch}" if last.batch is not None else "") \
        if last.system is not None else ""
    print(f"converge: --last-failed: rerunning {len(last.failed)} properties still failing after {last.run_dir}"
          f"{on}: {how}", file=sys.stderr)
    return last
