"""converge's side of the adapter protocol: an adapter command in its own process, spoken to in JSON lines.

An adapter is someone else's program wrapping someone else's engine, so
everything can go wrong: it may not start, hang in a JVM, print a log line
on stdout, answer another request, or die half-way. Each of these ends the
conversation the same way: the process group is killed (an adapter's JVM
children go with it) and a SystemUnderTestError names the adapter, the
request, the offending line and the tail of the adapter's stderr.
"""

from __future__ import annotations

import atexit
import collections
import math
import os
import queue
import select
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from converge.engine.model.errors import SystemUnderTestError, UsageError
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.systems.adapter import processes, protocol
from converge.systems.adapter.log import Conversation, StderrTail, active_log
from converge.systems.adapter.requests import RequestHistory, RequestRecord
from converge.systems.adapter.rounds import request_rounds

STDERR_TAIL_LINES = 40
MAX_LINE_BYTES = 256 * 1024 * 1024   # a batch of results is one line; a line without an end is a broken adapter
SHOWN_CHARS = 300                    # of an offending line, in a message
SHOWN_BYTES = 4 * SHOWN_CHARS
SEND_TIMEOUT = 30.0                  # for a message to be taken by an adapter that does not say how long
KILL_WAIT = 2.0                      # for a killed adapter to end (SIGKILL: it cannot refuse)
EXIT_GRACE = 1.0                     # an exited adapter's last line may still be in the pipe


ENV_TIMEOUT = "CONVERGE_SYSTEM_TIMEOUT"   # seconds: the base of a run request's limit, as --system-timeout
MAX_TIMEOUT = 7 * 24 * 3600.0             # a week: a larger limit is a typo, not a wish


@dataclass(frozen=True)
class Timeouts:
    """Seconds converge waits (docs/adapter-protocol.md): the hello (a JVM starts), a run request (a base, plus
    each case and each event of its cases, plus each round a paced adapter delivers them in: a request's limit
    grows with what it asks), the shutdown."""

    hello: float = 120.0
    run_base: float = 30.0
    run_per_case: float = 1.0
    run_per_event: float = 0.01
    shutdown: float = 10.0
    run_per_round: float = 0.25   # a paced round is a checkpoint cycle: ~0.05 s idle, 0.1 s or more at load 18

    def run(self, cases: int, events: int = 0, rounds: int = 0) -> float:
        """The limit of a run request of `cases` cases holding `events` events in all, delivered in `rounds`
        paced rounds (rounds.request_rounds; 0 for an adapter that is not paced)."""
        return self.run_base + self.run_per_case * cases + self.run_per_event * events + self.run_per_round * rounds

    def explain(self, cases: int, events: int, rounds: int = 0) -> str:
        """How a run request's limit was reached, for a message that must say which limit was used."""
        per_round = f" + {self.run_per_round:g} s per paced round" if rounds else ""
        in_rounds = f" in {rounds} rounds" if rounds else ""
        return (f"{self.run_base:g} s + {self.run_per_case:g} s per case + {self.run_per_event:g} s per event"
                f"{per_round} = {self.run(cases, events, rounds):g} s for {cases} cases of {events} events{in_rounds}")

    @classmethod
    def configured(cls, seconds: float | None = None) -> Timeouts:
        """The limits a command uses: `seconds` (from --system-timeout), else $CONVERGE_SYSTEM_TIMEOUT, else the
        defaults. The value is the base of every run request; the hello waits as long when that is longer than its
        own 120 s (a slow machine starts a JVM slowly too)."""
        if seconds is None:
            text = os.environ.get(ENV_TIMEOUT, "").strip()
            if not text:
                return cls()
            seconds = timeout_seconds(text, ENV_TIMEOUT)
        return cls(hello=max(cls.hello, seconds), run_base=seconds)


# The default limits, one shared frozen value (a default argument is evaluated once).
DEFAULT_TIMEOUTS = Timeouts()
Cost = tuple[int, int, int]   # a run request's cases, events and paced rounds (Timeouts.run's arguments)


def load_text() -> str:
    """The machine's load when a limit was met: a time-out on a machine busy with other work is not a hang."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not every platform has it
        return "load average unknown"
    return f"load average {one:.1f}/{five:.1f}/{fifteen:.1f} (1/5/15 min) on {os.cpu_count() or 1} cores"


def timeout_seconds(text: str, source: str = "--system-timeout") -> float:
    """A time limit as written by a user: a number of seconds above 0 and at most a week; UsageError naming
    `source` (the flag or the environment variable) and what was wrong."""
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{source} {text!r}: expected a number of seconds, such as 120") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{source} {text!r}: expected a number of seconds above 0")
    if value > MAX_TIMEOUT:
        raise UsageError(f"{source} {text!r}: at most {MAX_TIMEOUT:g} s (a week)")
    return value


_EOF = object()


@dataclass(frozen=True)
class _Oversized:
    """What the reader puts for a line past MAX_LINE_BYTES: its head only (the rest is dropped unread)."""

    head: bytes


class _Reader:
    """One thread reads the adapter's stdout into lines and its stderr into a tail, until both end or stop().

    It reads the raw descriptors (poll + os.read) and closes them itself, so nothing converge does ever
    waits on a pipe that a stray descendant of the adapter keeps open: stop() only wakes the thread.
    """

    def __init__(self, stdout: IO[bytes], stderr: IO[bytes], lines: queue.Queue, tail: collections.deque[str]) -> None:
        self._streams = {stdout.fileno(): stdout, stderr.fileno(): stderr}
        self._stdout, self._stderr = stdout.fileno(), stderr.fileno()
        self._lines, self._tail = lines, tail
        self._wake_r, wake_w = os.pipe()
        self._wake_w: int | None = wake_w
        self._wake_lock = threading.RLock()  # stop() may run again inside itself, from a signal handler
        self.stderr_ended = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="converge-adapter-reader")
        self.thread.start()

    def stop(self) -> None:
        """Wake the thread to end (it closes the pipes); harmless once it has ended."""
        with self._wake_lock:
            if self._wake_w is not None:
                os.write(self._wake_w, b"x")  # one byte into an empty pipe of our own: never blocks

    def _close_wake(self) -> None:
        with self._wake_lock:  # never a write into a descriptor number that was closed and reused since
            for fd in (self._wake_r, self._wake_w):
                if fd is not None:
                    os.close(fd)
            self._wake_w = None

    def _run(self) -> None:
        poller = select.poll()
        for fd in (*self._streams, self._wake_r):
            poller.register(fd, select.POLLIN)
        line, err = bytearray(), bytearray()
        dropping = False  # past an oversized line: stdout is drained, not kept
        open_fds = set(self._streams)
        try:
            while open_fds:
                for fd, _ in sorted(poller.poll(), key=lambda ready: ready[0] != self._stderr):  # stderr first:
                    # a line the adapter wrote before its answer belongs to that answer's request
                    if fd == self._wake_r:
                        return
                    try:
                        data = os.read(fd, 1 << 16)
                    except OSError:
                        data = b""
                    if not data:
                        poller.unregister(fd)
                        open_fds.discard(fd)
                        if fd == self._stdout:
                            if line and not dropping:
                                self._lines.put(bytes(line))  # a last line without its end
                            self._lines.put(_EOF)
                        else:
                            if err:
                                self._tail.append(err.decode("utf-8", "replace"))
                            self.stderr_ended.set()
                    elif fd == self._stdout:
                        if not dropping:
                            dropping = self._take_lines(line, data)
                    else:
                        err += data
                        *done, rest = err.split(b"\n")
                        self._tail.extend(d.decode("utf-8", "replace") for d in done)  # a bounded deque
                        err[:] = rest[-64 * 1024:]
        finally:
            self.stderr_ended.set()
            for stream in self._streams.values():
                try:
                    stream.close()
                except OSError:
                    pass
            self._close_wake()

    def _take_lines(self, line: bytearray, data: bytes) -> bool:
        """Add `data` to the line being read and put each complete line; True once a line grew too long."""
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                line += data[start:]
                if len(line) > MAX_LINE_BYTES:
                    self._lines.put(_Oversized(bytes(line[:SHOWN_BYTES])))
                    line.clear()
                    return True
                return False
            line += data[start:end + 1]
            self._lines.put(bytes(line))
            line.clear()
            start = end + 1


class AdapterProcess:
    """The adapter command as a process: send a message, receive one within a time limit, stop it.

    Every wait has a limit: a send (the adapter may stop reading), a receive, the shutdown and the kill.
    """

    def __init__(self, argv: Sequence[str], *, label: str | None = None) -> None:
        self.argv = list(argv)
        self.label = label or " ".join(self.argv)
        self.mark = processes.new_mark()
        self._lines: queue.Queue = queue.Queue()
        self._exited_at: float | None = None
        self.timed_out = False  # its last failure was a time limit (a slow adapter, not a broken one)
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True,
                                         env=processes.marked_environment(self.mark))
        except OSError as exc:
            raise SystemUnderTestError(f"adapter {self.label}: cannot start it: {exc.strerror or exc}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        # each request's stderr lines and timing, and the --adapter-log (converge/systems/adapter/log.py)
        self.conversation = Conversation(self.label, self.proc.pid, active_log())
        self._stderr: collections.deque[str] = StderrTail(STDERR_TAIL_LINES, self.conversation)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._reader = _Reader(self.proc.stdout, self.proc.stderr, self._lines, self._stderr)
        _LIVE.add(self)

    def stderr_tail(self) -> str:
        """The last lines the adapter wrote to stderr (after a short wait for the last of them)."""
        self._reader.stderr_ended.wait(0.05 if self.proc.poll() is None else 0.5)
        return "\n".join(self._stderr)

    def fail(self, what: str, *, during: str, line: bytes | None = None) -> SystemUnderTestError:
        """Kill the adapter; the error to raise, with the offending line and stderr's tail."""
        self.kill()
        text = f"adapter {self.label}, {during}: {what}"
        if line is not None:
            text += "\n  offending line: " + shown_line(line)
        tail = self.stderr_tail()
        if tail:
            text += "\n  stderr (last lines):\n    " + tail.replace("\n", "\n    ")
        return SystemUnderTestError(text)

    def send(self, message: dict[str, Any] | bytes, *, during: str, timeout: float = SEND_TIMEOUT) -> None:
        """Write one message within `timeout` seconds (an adapter that stops reading fills the pipe)."""
        data = memoryview(message if isinstance(message, bytes) else protocol.encode(message))
        self.conversation.sent(message, len(data))
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                raise self.fail(f"it did not read its input within {timeout:g} s (timed out)", during=during)
            poller.poll(max(1, int(left * 1000)))
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:
                continue
            except OSError:
                code = self.proc.poll()
                raise self.fail(f"it stopped reading its input (exit status {code})", during=during) from None

    def receive(self, timeout: float, *, during: str, limit: float | None = None) -> dict[str, Any]:
        """The next message within `timeout` seconds (the rest of a `limit` the message states), checked to be a
        JSON object with a type; a timeout, an exit or garbage raises."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(0.0, min(left, 0.25)))
                break
            except queue.Empty:
                pass
            code = self.proc.poll()
            if code is not None:  # it exited, yet its output is still open (a descendant holds it)
                self._exited_at = self._exited_at or time.monotonic()
                if time.monotonic() - self._exited_at > EXIT_GRACE or left <= 0:
                    raise self.fail(f"it exited (exit status {code}) without answering; a process it started "
                                    f"still held its output", during=during)
            if left <= 0:
                self.timed_out = True
                raise self.fail(f"no answer within {limit or timeout:g} s (timed out)", during=during)
        if line is not _EOF:
            self.conversation.received(line.head if isinstance(line, _Oversized) else line)
        if line is _EOF:
            code = self.wait_exit(2)
            raise self.fail(f"it closed its output (exit status {code})", during=during)
        if isinstance(line, _Oversized):
            raise self.fail(f"a line longer than {MAX_LINE_BYTES} bytes", during=during, line=line.head)
        if not line.endswith(b"\n"):
            code = self.wait_exit(2)
            raise self.fail(f"a line without its end, then it closed its output (exit status {code})",
                            during=during, line=line)
        try:
            return protocol.decode(line)
        except SystemUnderTestError as exc:
            raise self.fail(f"it wrote {exc}", during=during, line=line) from None

    def wait_exit(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill the adapter's whole process group and every process it started (processes.kill_tree); waits at most
        KILL_WAIT seconds for the adapter itself to end, and never for its pipes."""
        _LIVE.discard(self)
        processes.kill_tree(self.proc.pid, self.mark)
        self.wait_exit(KILL_WAIT)
        self._reader.stderr_ended.wait(0.2)  # the last stderr lines, once every holder of the pipe is gone
        self._reader.stop()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # nothing is buffered in it: send() writes the descriptor directly
        except OSError:
            pass

    def shutdown(self, timeout: float) -> int | None:
        """Ask the adapter to exit within `timeout` seconds, then kill what is left; its exit status (None when it
        had to be killed). The whole shutdown takes at most `timeout` + KILL_WAIT + a fraction of a second."""
        deadline = time.monotonic() + timeout
        code: int | None = None
        if self.proc.poll() is None:
            try:
                self.send({"type": "shutdown"}, during="shutdown", timeout=timeout)
                code = self.wait_exit(max(0.0, deadline - time.monotonic()))
            except SystemUnderTestError:
                code = self.proc.poll()
        else:
            code = self.proc.returncode
        self.kill()
        return code


_LIVE: weakref.WeakSet[AdapterProcess] = weakref.WeakSet()


def shown_line(line: bytes) -> str:
    """An offending line as a message shows it: at most SHOWN_CHARS characters, and its length when cut."""
    text = line[:SHOWN_BYTES].decode("utf-8", "replace").rstrip("\n")
    if len(text) > SHOWN_CHARS or len(line) > SHOWN_BYTES:
        return f"{text[:SHOWN_CHARS]} ... ({len(line)} bytes)"
    return text


def kill_live_adapters() -> int:
    """Kill every adapter this process started and has not stopped (at exit, on SIGTERM/SIGINT); how many."""
    live = list(_LIVE)
    for process in live:
        try:
            process.kill()
        except Exception:  # noqa: BLE001, S110 - at exit or in a signal handler: kill what can be killed, go on
            pass
    return len(live)


atexit.register(kill_live_adapters)


class AdapterSystem(System):
    """A system behind an adapter command: started and greeted at construction, stopped by close().

    After a failure the adapter is dead: every later request raises the same failure at once, never a
    second, different one from the dead process. One failure is forgiven: when the first run request of the
    system times out (a cold engine's first job on a loaded machine), the adapter is restarted once and the
    request resent; a second timeout is the failure, and its message says so.
    """

    def __init__(self, argv: Sequence[str], *, label: str | None = None, timeouts: Timeouts = Timeouts()) -> None:
        self.timeouts = timeouts
        self.argv = list(argv)
        self.requests = 0
        self.restarts = 0
        self.history = RequestHistory()   # the last run requests, each with its stderr lines and seconds
        self.waited_seconds = 0.0         # spent in run requests (sent to answered), the campaign's summary shows it
        self.failure: SystemUnderTestError | None = None
        self.process = AdapterProcess(self.argv, label=label)
        self.name, self.version, self.capabilities, self.protocol_version = self._greet("the handshake")

    def _greet(self, during: str) -> tuple[str, str, Capabilities, int]:
        """Send the hello to the current process and read its answer (and the version it chose) within the limit."""
        deadline = time.monotonic() + self.timeouts.hello
        self.process.send(protocol.hello_request(), during=during, timeout=self.timeouts.hello)
        reply = self.process.receive(max(0.0, deadline - time.monotonic()), during=during, limit=self.timeouts.hello)
        try:
            return (*protocol.read_hello(reply), protocol.negotiated_version(reply))
        except SystemUnderTestError as exc:
            raise self.process.fail(str(exc), during=during, line=protocol.encode(reply)) from None

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        out: list[CaseResult] = []
        size = self.capabilities.max_batch
        for start in range(0, len(cases), size):
            out += self._run_batch(cases[start:start + size])
        return out

    def _run_batch(self, scenarios: Sequence[Scenario]) -> list[CaseResult]:
        if self.failure is not None:
            first = str(self.failure).splitlines()[0]
            raise SystemUnderTestError(f"adapter {self.process.label} failed earlier and was stopped ({first})")
        self.requests += 1
        request = self.requests
        cases = [(f"c{i}", s) for i, s in enumerate(scenarios)]
        cost = (len(cases), sum(len(s.events) for s in scenarios),
                request_rounds(scenarios, self.capabilities.rounds_per_event))
        try:
            try:
                return self._exchange(request, cases, cost)
            except SystemUnderTestError as exc:
                if not self.process.timed_out:
                    raise
                if request != 1:
                    raise self._timed_out(exc, cost) from None
            self._restart(request, cases, cost[1], cost[2])
            try:
                return self._exchange(request, cases, cost)
            except SystemUnderTestError as exc:
                if not self.process.timed_out:
                    raise
                raise self._timed_out_twice(exc, cost) from None
        except SystemUnderTestError as exc:
            self.failure = exc
            raise

    def _exchange(self, request: int, cases: list[tuple[str, Scenario]], cost: Cost) -> list[CaseResult]:
        """Send one run request and read its results, within the limit its size gives it."""
        during = f"run request {request} (its {len(cases)} cases not checked)"
        limit = self.timeouts.run(*cost)
        started = time.monotonic()
        deadline = started + limit
        self.process.send(protocol.run_request(request, cases, self.protocol_version), during=during, timeout=limit)
        reply = self.process.receive(max(0.0, deadline - time.monotonic()), during=during, limit=limit)
        self._answered(request, cases, time.monotonic() - started)
        try:
            return protocol.read_results(reply, request, cases, self.capabilities.output)
        except SystemUnderTestError as exc:
            raise self.process.fail(str(exc), during=during, line=protocol.encode(reply)) from None

    def _answered(self, request: int, cases: list[tuple[str, Scenario]], seconds: float) -> None:
        """Remember the request with the stderr lines the adapter wrote during it (requests.py)."""
        self.waited_seconds += seconds
        lines, dropped = self.process.conversation.request_stderr()
        self.history.add(RequestRecord(request, tuple(s for _, s in cases), seconds, lines, dropped))

    def _restart(self, request: int, cases: list[tuple[str, Scenario]], events: int, rounds: int = 0) -> None:
        """A fresh adapter process in place of the one that timed out (already killed), greeted; it must be the
        same system with the same capabilities, or the cases of one campaign would meet two systems."""
        self.restarts += 1
        limit = self.timeouts.run(len(cases), events, rounds)
        label = self.process.label
        print(f"retrying: adapter {label}: run request {request} timed out after {limit:g} s; the first request of a "
              f"session may meet a cold engine, so the adapter is restarted once and the request resent",
              file=sys.stderr, flush=True)
        self.process = AdapterProcess(self.argv, label=label)
        during = f"the handshake of the restart after run request {request} timed out"
        again = self._greet(during)
        if again != (self.name, self.version, self.capabilities, self.protocol_version):
            raise self.process.fail(f"the restarted adapter is {again[0]} {again[1]} (protocol {again[3]}) with other "
                                    f"capabilities or protocol than {self.name} {self.version} (protocol "
                                    f"{self.protocol_version}) before the restart", during=during)

    def _timed_out_twice(self, exc: SystemUnderTestError, cost: Cost) -> SystemUnderTestError:
        """The second timeout of the first request, as a message naming both attempts, the limit, its knobs and
        the machine's load."""
        head, _, rest = str(exc).partition("\n")
        text = (f"{head}, on the second attempt: the first had timed out too, then the adapter was restarted and "
                f"the request resent; the limit was {self.timeouts.explain(*cost)}; {self._knobs()}; {load_text()}")
        return SystemUnderTestError(text + ("\n" + rest if rest else ""))

    def _timed_out(self, exc: SystemUnderTestError, cost: Cost) -> SystemUnderTestError:
        """A later request's timeout, as a message naming the limit it used, its knobs and the machine's load."""
        head, _, rest = str(exc).partition("\n")
        text = f"{head}; the limit was {self.timeouts.explain(*cost)}; {self._knobs()}; {load_text()}"
        return SystemUnderTestError(text + ("\n" + rest if rest else ""))

    def _knobs(self) -> str:
        return (f"give the system more time with --system-timeout SECONDS or {ENV_TIMEOUT}=SECONDS (the base of "
                f"every request's limit, {self.timeouts.run_base:g} s now)")

    def close(self) -> None:
        self.process.shutdown(self.timeouts.shutdown)
