"""SIGTERM and SIGINT end `converge` promptly and take every adapter it started with it.

A signal kills every live adapter process tree at once (client.kill_live_adapters: the group, the
descendants, those that left the group), then raises `Interrupted` in the main thread, so the
command's `finally` blocks run (an open system is closed, reports are settled) and `cli.main`
returns 128 + the signal's number, as a shell reports a process ended by that signal.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)
_CLIENT = "converge.systems.adapter.client"  # what starts adapters, and kills them


class Interrupted(BaseException):
    """converge was told to stop by a signal (a BaseException: no `except Exception` may swallow it)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextmanager
def ending_on_signals() -> Iterator[None]:
    """While inside, SIGTERM/SIGINT kill the live adapters and raise Interrupted (once; a second signal during
    the clean-up is ignored). Outside the main thread signals cannot be caught, and nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        client = sys.modules.get(_CLIENT)  # not imported: no adapter was ever started (`check --plan-only`)
        if client is not None:
            client.kill_live_adapters()
        if not fired:
            fired.append(signum)
            raise Interrupted(signum)

    previous = {s: signal.signal(s, on_signal) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
