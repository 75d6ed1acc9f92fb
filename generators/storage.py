"""Where Hypothesis keeps its files when converge runs it: the user's cache, never the working directory.

Hypothesis writes a cache of the literals of every local module it has seen
(`constants/`, about 140 files after `converge check`), and its Unicode table,
under its home directory, which defaults to `./.hypothesis` in whatever folder
the process started in. A command must leave only the files it promises there,
so `converge` (converge/cli/main.py) moves that home, once per process, to
`$XDG_CACHE_HOME/converge/hypothesis` (default `~/.cache/converge/hypothesis`),
beside the systems' environments (converge/systems/flink/environment.py). converge
runs every property with `database=None`, so nothing of value lived there.

A home someone chose is kept: `$HYPOTHESIS_STORAGE_DIRECTORY` (Hypothesis's own
setting), or one a program set with `set_hypothesis_home_dir` before (a test
suite's conftest.py that calls `converge.cli.main.main`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import configuration

__all__ = ["HYPOTHESIS_CACHE", "converge_hypothesis_home", "keep_hypothesis_out_of_the_working_directory"]

HYPOTHESIS_CACHE = ("converge", "hypothesis")  # under the user's cache folder
_ENVIRONMENT_VARIABLE = "HYPOTHESIS_STORAGE_DIRECTORY"


def converge_hypothesis_home() -> Path:
    """`$XDG_CACHE_HOME/converge/hypothesis`, else `~/.cache/converge/hypothesis` (a temp folder without a home)."""
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        try:
            cache = str(Path.home() / ".cache")
        except RuntimeError:  # no home directory to be found (a bare container): the temp folder still works
            cache = tempfile.gettempdir()
    return Path(cache).expanduser().joinpath(*HYPOTHESIS_CACHE)


def _chosen_home() -> Path | None:
    """The home a program chose with set_hypothesis_home_dir (None: Hypothesis's default, ./.hypothesis)."""
    names = vars(configuration)
    chosen = names.get("__hypothesis_home_directory")  # Hypothesis's own record; absent in another version
    default = names.get("__hypothesis_home_directory_default", Path.cwd() / ".hypothesis")
    if chosen is None or Path(chosen) == Path(default):
        return None
    return Path(chosen)


def keep_hypothesis_out_of_the_working_directory() -> Path:
    """Point Hypothesis's home at converge's cache unless one was chosen (see the module docstring); the home."""
    where = os.environ.get(_ENVIRONMENT_VARIABLE)
    if where:
        return Path(where)
    chosen = _chosen_home()
    if chosen is not None:
        return chosen
    home = converge_hypothesis_home()
    configuration.set_hypothesis_home_dir(home)
    return home
