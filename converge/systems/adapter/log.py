"""`--adapter-log FILE` and the adapter's stderr per request: what converge and an adapter said, and when.

A command that talks to adapters opens one log for its whole run
(`adapter_log(path)`); every adapter process started meanwhile (a restart, each
process of the conformance kit) writes to it: one JSON object per line, the
format in docs/adapter-protocol.md, "Debugging an adapter". Messages are
recorded whole, as they went over the pipe: a log of a campaign is about as
large as everything converge sent and received.

Apart from the log, each process keeps the stderr lines that arrived during
each request (the last REQUEST_STDERR_LINES of them), so the report of a
divergence can show what the adapter wrote while it computed the wrong answer.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from converge.engine.model.errors import UsageError

REQUEST_STDERR_LINES = 200   # kept per request: an adapter that logs a lot keeps its last lines
Direction = Literal["sent", "received", "stderr"]


class AdapterLog:
    """One log file, written by every adapter process of a command (and their stderr reader threads)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self._file: IO[str] | None = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise UsageError(f"--adapter-log {self.path}: cannot write it: {exc.strerror or exc}") from None
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        """One line; a log that can no longer be written stops logging, never the run."""
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is None:
                return
            try:
                self._file.write(line)
                self._file.flush()
            except OSError:
                self._file = None

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


_ACTIVE: list[AdapterLog] = []


def active_log() -> AdapterLog | None:
    """The log of the command running now (None: no --adapter-log)."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def adapter_log(path: Path | None) -> Iterator[AdapterLog | None]:
    """While inside, every adapter process started writes to the log at `path` (None: no log)."""
    if path is None:
        yield None
        return
    log = AdapterLog(path)
    _ACTIVE.append(log)
    try:
        yield log
    finally:
        _ACTIVE.remove(log)
        log.close()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


def _describe(line: dict[str, Any] | bytes) -> tuple[dict[str, Any] | None, str | None]:
    """A line as the log holds it: the JSON object, or the text when it is not one (NaN included: the log stays
    JSON)."""
    if isinstance(line, dict):
        return line, None
    try:
        parsed = json.loads(line)
        json.dumps(parsed, allow_nan=False)  # NaN or Infinity in it: not JSON, the log keeps the text
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed, None
    return None, line.decode("utf-8", "replace").rstrip("\n")


class Conversation:
    """One adapter process's requests: which one is under way, how long it takes, its stderr lines, its log.

    A request starts when converge sends a message and lasts until the next message is sent; a stderr line
    belongs to the request under way when converge read it (the reader takes stderr before stdout)."""

    def __init__(self, label: str, pid: int, log: AdapterLog | None) -> None:
        self.label, self.pid, self.log = label, pid, log
        self._lock = threading.Lock()
        self.request: int | str | None = None   # the run request's number, or the message type (hello, shutdown)
        self.sent_at: float | None = None
        self.stderr: collections.deque[str] = collections.deque(maxlen=REQUEST_STDERR_LINES)
        self.dropped = 0   # stderr lines of this request beyond REQUEST_STDERR_LINES

    def _entry(self, direction: Direction, **more: Any) -> dict[str, Any]:
        return {"time": _now(), "adapter": self.label, "pid": self.pid, "request": self.request,
                "direction": direction, **more}

    def sent(self, message: dict[str, Any] | bytes, size: int) -> None:
        """converge sends `message` (`size` bytes on the pipe): a new request begins (its number when it is a run
        request)."""
        body, text = _describe(message)
        with self._lock:
            kind = body.get("type") if body is not None else None
            number = body.get("request") if body is not None else None
            self.request = number if isinstance(number, int) and not isinstance(number, bool) else (
                kind if isinstance(kind, str) else "unreadable")
            self.sent_at = time.monotonic()
            self.stderr = collections.deque(maxlen=REQUEST_STDERR_LINES)
            self.dropped = 0
        if self.log is not None:
            self.log.write(self._entry("sent", bytes=size, **_body(body, text)))

    def received(self, line: bytes) -> float | None:
        """A line the adapter answered; the seconds since the request was sent (None before any)."""
        seconds = None if self.sent_at is None else time.monotonic() - self.sent_at
        if self.log is not None:
            body, text = _describe(line)
            self.log.write(self._entry("received", bytes=len(line), seconds=None if seconds is None
                                       else round(seconds, 6), **_body(body, text)))
        return seconds

    def stderr_line(self, text: str) -> None:
        with self._lock:
            if len(self.stderr) == self.stderr.maxlen:
                self.dropped += 1
            self.stderr.append(text)
        if self.log is not None:
            self.log.write(self._entry("stderr", bytes=len(text.encode("utf-8")), text=text))

    def request_stderr(self) -> tuple[tuple[str, ...], int]:
        """The stderr lines of the request under way (the last REQUEST_STDERR_LINES) and how many were dropped."""
        with self._lock:
            return tuple(self.stderr), self.dropped


def _body(body: dict[str, Any] | None, text: str | None) -> dict[str, Any]:
    return {"message": body} if body is not None else {"text": text}


class StderrTail(collections.deque):
    """The reader's tail of stderr lines (the last ones, for a failure's message) that also tells the
    conversation of every line, for the request under way and the log."""

    def __init__(self, maxlen: int, conversation: Conversation | None = None) -> None:
        super().__init__(maxlen=maxlen)
        self.conversation = conversation

    def append(self, text: str) -> None:
        super().append(text)
        if self.conversation is not None:
            self.conversation.stderr_line(text)

    def extend(self, texts: Any) -> None:
        for text in texts:
            self.append(text)
