"""Finding and killing every process an adapter started, including those that left its process group.

An adapter runs in its own session and process group, so killing the group
ends the adapter and the children that stayed in it (a JVM, a shell). A
descendant can leave the group (`setsid`, a daemonizing engine) and, once
its parent is gone, be re-parented to PID 1, where no parent-child walk finds
it. So every adapter is started with a mark in its environment
(`CONVERGE_ADAPTER=<id>`), which every descendant inherits: `kill_tree`
kills the group, then every living process that descends from the adapter,
is in its group or carries its mark (Linux /proc; elsewhere only the group),
and repeats until none is left, so one forked while it was killing is found
on the next round.

Measured on Linux 6.x with a grandchild in its own session that holds the
adapter's stdout: the group kill alone leaves the grandchild running under
PID 1 and converge's reader waiting on the pipe for ever; the mark finds it
whether or not its parent is still alive. converge does not make itself a
child subreaper (prctl PR_SET_CHILD_SUBREAPER): the mark finds the same
processes, and a subreaper would inherit the orphans of every other child
process converge starts (Spark's JVM, pytest's own) as zombies to reap.
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

MARK_VARIABLE = "CONVERGE_ADAPTER"
KILL_ROUNDS = 5
_PROC = Path("/proc")


def new_mark() -> str:
    """A value for MARK_VARIABLE that no other adapter of any converge process carries."""
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


def marked_environment(mark: str) -> dict[str, str]:
    """converge's environment plus the adapter's mark."""
    return {**os.environ, MARK_VARIABLE: mark}


def _stat(pid: str) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of a process; None once it is gone."""
    try:
        text = (_PROC / pid / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[0], int(fields[1]), int(fields[2])


def _carries(pid: str, needle: bytes) -> bool:
    try:
        return needle in (_PROC / pid / "environ").read_bytes()
    except OSError:  # gone, or another user's process
        return False


def members(root: int, mark: str) -> set[int]:
    """The living processes that belong to the adapter `root` (its group, its descendants, its mark)."""
    if not _PROC.is_dir():
        return set()
    needle = f"{MARK_VARIABLE}={mark}\0".encode()
    parents: dict[int, int] = {}
    found: set[int] = set()
    me = os.getpid()
    for entry in os.listdir(_PROC):
        if not entry.isdigit() or int(entry) == me:
            continue
        stat = _stat(entry)
        if stat is None or stat[0] in ("Z", "X"):  # a zombie is dead: only its parent's wait is left
            continue
        pid = int(entry)
        parents[pid] = stat[1]
        if stat[2] == root or pid == root or _carries(entry, needle):
            found.add(pid)
    for pid in parents:
        seen, up = set(), parents.get(pid)
        while up is not None and up not in seen and up > 1:
            if up == root or up in found:
                found.add(pid)
                break
            seen.add(up)
            up = parents.get(up)
    return found


def alive(pid: int) -> bool:
    """Is `pid` a process that still runs (a zombie does not)?"""
    stat = _stat(str(pid))
    if stat is not None:
        return stat[0] not in ("Z", "X")
    if _PROC.is_dir():
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_tree(root: int, mark: str) -> set[int]:
    """SIGKILL the adapter's process group and every member (see `members`), until none is left; the pids killed
    besides the group. Never blocks: it waits for nothing."""
    killed: set[int] = set()
    for _ in range(KILL_ROUNDS):
        try:
            os.killpg(root, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        left = members(root, mark)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
    return killed
