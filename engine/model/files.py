"""Writing a file whole or not at all: a temporary name in the same folder, renamed into place.

A report, a scenario file or a summary that a full disk cut short must not be
left behind looking like one (a 0-byte `summary.json`, half a scenario). So
every file converge promises is written to a hidden temporary beside it
(`.NAME.XXXX.tmp`) and renamed over `NAME` only once it is complete; on any
failure the temporary is deleted and the OSError goes on, naming `NAME` (not
the temporary) and the reason. The rename is atomic on one file system, so a
reader sees the old file or the new one, never a part.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["replacing", "write_bytes_whole", "write_text_whole"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (the one low-level write here: tests make it fail)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside `path` to write the whole file to; renamed over `path` when the block ends.

    When the block raises, the temporary is deleted and the exception goes on; an OSError then names
    `path` as its filename, so its message says which file was not written and why."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes the file private; a report is an ordinary file
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            exc.filename = str(path)  # the file the caller asked for, not the temporary
            del exc.filename2  # (os.replace's second name): the message then reads "REASON: 'PATH'"
        raise


def write_bytes_whole(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` whole or not at all (see the module docstring); `path`."""
    with replacing(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    return Path(path)


def write_text_whole(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` (UTF-8) to `path` whole or not at all; `path`."""
    return write_bytes_whole(path, text.encode("utf-8"))
