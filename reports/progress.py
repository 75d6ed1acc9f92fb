"""A campaign's progress on stderr while it runs: one redrawn line on a terminal, plain lines in a log.

A campaign against a live system is silent for minutes otherwise (the
system's start, seconds per batch, shrinking). On a terminal the line is
redrawn in place (at most every `redraw` seconds) and erased at the end. When
stderr is not a terminal (a CI log) each line is printed whole: at every phase
change (the system starting and up, a property starting, its shrinking, its
end) and otherwise at most once every `interval` seconds, so a log stays
readable. `quiet_for` keeps a property's lines back until it has run that
long in a log: the embedded campaign's properties take a second or two, and
only a slow one is worth a line there; `every_done` still gives each finished
property its line in a log, so a CI log shows the campaign moving. `quiet`
(a command's --quiet) draws nothing at all. stdout (the table, the summary)
is never touched. `StepProgress` is the same writer for commands made of
named steps (check's reading, planning and properties; verify; replay).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from converge.properties.progress import PropertyProgress

__all__ = ["HEARTBEAT_SECONDS", "CampaignProgress", "StepProgress", "count", "describe"]

HEARTBEAT_SECONDS = 10.0  # the longest a command stays silent in a log (issue 41 row 4); tests shorten it



@contextlib.contextmanager
def beating(interval: float, beat: Callable[[float], None], *,
            clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """While the body runs, `beat(seconds since it began)` every `interval` seconds, on a thread of its own, as
    the body blocks (a JVM starting, a silent pip). A beat that cannot write (OSError, ValueError: stderr gone or
    closed) stops the beating, never the body."""
    done, started = threading.Event(), clock()

    def beats() -> None:
        while not done.wait(interval):
            try:
                beat(clock() - started)
            except (OSError, ValueError):
                return

    thread = threading.Thread(target=beats, name="converge-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()

class CampaignProgress:
    """Draws a campaign's progress; call it with each PropertyProgress (run_property's `progress` callback)."""

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None,
                 unit: tuple[str, str] = ("example", "examples"),
                 interval: float | None = None, quiet_for: float = 0.0, redraw: float = 0.1, every_done: bool = False,
                 quiet: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.every_done, self.quiet = every_done, quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval = HEARTBEAT_SECONDS if interval is None else interval
        self.unit, self.quiet_for, self.redraw, self.clock = unit, quiet_for, redraw, clock
        self.position = ""              # "[2/9] ": which property of the campaign
        self._last_line = float("-inf")  # when the last line was written
        self._drawn = 0                  # width of the line on the terminal (0: none)
        self._state: tuple[str, str] | None = None  # (property, phase) of the last line written
        self._started: dict[str, float] = {}
        self._begun: float | None = None  # when the campaign moved to the property not yet heard from

    def begin(self, index: int, total: int) -> None:
        """The campaign moves to its `index`-th property (from 0) of `total`: its time counts from now."""
        self.position = f"[{index + 1}/{total}] "
        self._begun = self.clock()

    def note(self, text: str) -> None:
        """A line of its own, always shown (the system starting, the system up)."""
        self._write(text, whole=True)

    def waiting(self, text: str) -> contextlib.AbstractContextManager[None]:
        """While the body runs (a system starting: a minute and more on a loaded machine), "text (N s)" every
        `interval` seconds, so a log never looks stuck."""
        return beating(self.interval, lambda seconds: self._write(f"{text} ({seconds:.0f} s)", whole=not self.tty),
                       clock=self.clock)

    def __call__(self, p: PropertyProgress) -> None:
        now = self.clock()
        if p.key not in self._started:
            self._started[p.key] = now if self._begun is None else self._begun
            self._begun = None
        started = self._started[p.key]
        if not self.tty and p.phase != "done" and now - started < self.quiet_for:
            return
        changed = self._state != (p.key, p.phase)
        if p.phase == "done" and (self._state is None or self._state[0] != p.key) and not self.every_done:
            return  # a property too quick to have shown anything ends without a line either
        if not changed and now - self._last_line < (self.redraw if self.tty else self.interval):
            return
        self._state = (p.key, p.phase)
        self._write(self.position + describe(p, self.unit, now - started), whole=False)

    def finish(self) -> None:
        """Erase the terminal's line (the table comes next on stdout)."""
        if self.tty and self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0

    def _write(self, text: str, *, whole: bool) -> None:
        self._last_line = self.clock()
        if self.quiet:
            return
        if not self.tty:
            self.stream.write(text + "\n")
        elif whole:
            self.finish()
            self.stream.write(text + "\n")
        else:
            text = text[:shutil.get_terminal_size((120, 24)).columns - 1]  # a wrapped line could not be redrawn
            width = max(self._drawn, len(text))
            self.stream.write("\r" + text.ljust(width))
            self._drawn = width
        self.stream.flush()


class StepProgress:
    """A command's named steps on stderr: each step's line as it starts ("check: planning ..."), through the
    same writer as a campaign's (redrawn on a terminal, whole lines in a log); `campaign()` gives the writer for
    the properties a step runs."""

    def __init__(self, command: str, *, quiet: bool = False, stream: TextIO | None = None, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.command, self.clock = command, clock
        self.started = clock()
        self.watch = CampaignProgress(stream, tty=tty, quiet=quiet, every_done=True, clock=clock)

    def step(self, text: str) -> None:
        """A new step begins: its line, with the seconds since the command started."""
        self.watch._write(f"{self.command}: {text} ({self.clock() - self.started:.0f} s)", whole=False)
        if self.watch.tty:
            return
        self.watch._state = None  # a log's next property line is never taken for a repeat

    def campaign(self) -> CampaignProgress:
        """The run_property callback for the properties of the current step (begin() numbers them)."""
        return self.watch

    def finish(self) -> None:
        self.watch.finish()


def count(n: int, noun: str) -> str:
    """ "1 case", "3 cases" (the nouns here take an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def describe(p: PropertyProgress, unit: tuple[str, str] = ("example", "examples"), seconds: float = 0.0) -> str:
    """One line for where a property stands; `unit` names an example (singular, plural): a system's is a batch,
    and then the cases sent are counted too."""
    sent = f", {p.cases} cases sent" if p.cases != p.examples or unit[0] != "example" else ""
    if p.phase == "shrinking":
        return (f"{p.key}: shrinking: step {p.shrink_steps}, best case {count(p.best_events, 'event')} / "
                f"{count(p.best_cases, 'case')}, {p.shrink_seconds:.0f} s (budget {p.budget:.0f} s)")
    if p.phase == "done":
        stopped = f", shrink stopped after {p.budget:.0f} s" if p.stopped else ""
        ran = f"{p.examples} {unit[p.examples != 1]}"
        return f"{p.key}: done: {ran}{sent}, {p.compared} compared, {seconds:.0f} s{stopped}"
    return f"{p.key}: {unit[0]} {p.examples}/{p.planned}{sent}, {p.compared} compared, {seconds:.0f} s"
