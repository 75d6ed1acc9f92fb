"""What a path a user named is, when it is not a regular file to read: said in words, never opened to find out.

A capture or a query given as a folder, a FIFO, a socket or a device (``/dev/null``) used to be reported as
"no such file", which sends the user looking for a typo. `not_a_file(path)` names what the path is instead,
from `os.stat` alone: opening a FIFO for reading would block until a writer appears.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def not_a_file(path: str | Path) -> str | None:
    """None when `path` is a regular file (after symbolic links); otherwise why it cannot be read as one."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except NotADirectoryError:
        return "no such file (a part of the path is a file, not a directory)"
    except PermissionError:
        return "permission denied"
    except OSError as exc:  # a loop of links, a name too long ...
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"is {what}, not a regular file" if what != "not a regular file" else what
