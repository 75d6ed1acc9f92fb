"""Every error converge raises on purpose, one class per meaning, and the exit code each one means.

A caller (the command line, the pytest plugin, a user's CI) must be able to
tell "your input is wrong" from "the system under test is wrong" from "converge
itself is wrong" without reading messages. So each class below means exactly
one thing, and `exit_code()` / `label()` map them to what `converge` prints
and returns:

========================  ====  ==========================================
class                     exit  meaning
========================  ====  ==========================================
(none)                    0     every check passed
DivergenceError           1     an engine's answer differs from a property
BadInputError             2     a scenario, stream, option or file is invalid
UsageError                2     the command line is wrong (raised by the CLI only)
ApiMisuseError            2     a Python caller broke an API's contract
UnsupportedError          2     valid input that converge cannot run yet
NotCheckedError           2     a check ran but compared nothing (every case
                                unsupported, not applicable or skipped)
OracleError               3     the batch oracle could not answer
SystemUnderTestError      3     a system under test or its adapter failed
InternalError             3     a state only a bug can reach (incl. a hang)
MisreadQueryError         3     converge's reading of a user's query disagrees
                                with the query run as written
any other exception       3     a crash
========================  ====  ==========================================

`UnsupportedError` exits 2 like bad input (some checks did not run, and the
run says so) but prints its own label, `unsupported`: the input is fine and a
later converge may run it, so it must not read as the user's mistake nor as a
crash. `NotCheckedError` exits 2 for the same reason: nothing was compared, so
nothing passed. tests/architecture/test_error_meanings.py checks every raise site against this table.
"""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
EXIT_DIVERGENCE: Final = 1
EXIT_BAD_INPUT: Final = 2
EXIT_INTERNAL: Final = 3


class ConvergeError(Exception):
    """Root of every error converge raises on purpose."""


class BadInputError(ConvergeError):
    """The scenario, stream, option or file is not valid; the message names what and where.

    `path` is the key path inside the scenario (``config.state_ttl_ms``) and
    `event_index` the event that was rejected, when either is known.
    """

    def __init__(self, message: str, *, event_index: int | None = None, path: str | None = None) -> None:
        self.event_index = event_index
        self.path = path
        self.detail = message
        if path:  # a key path such as events[3].row already names the event
            where = f"{path}: "
        else:
            where = f"event {event_index}: " if event_index is not None else ""
        super().__init__(where + message)

    def at_event(self, index: int) -> BadInputError:
        """The same error, now naming the event that caused it."""
        if self.event_index is not None:
            return self
        return type(self)(self.detail, event_index=index, path=self.path)


class DivergenceError(ConvergeError):
    """The engine's answer differs from what a property requires."""


class OracleError(ConvergeError):
    """The batch oracle (DuckDB) failed to produce an answer."""


class ApiMisuseError(ConvergeError, TypeError):
    """A Python caller passed converge's API something its contract rules out (Hypothesis's InvalidArgument).

    It is also a TypeError so that code catching the built-in keeps working.
    """


class SystemUnderTestError(ConvergeError):
    """A system under test, or the adapter that speaks for it, failed: it crashed, timed out or broke the protocol.

    Not a divergence (the system gave no answer to compare) and not converge's own bug: the message names
    the adapter, the request and what was wrong, with the tail of the adapter's stderr.
    """


class UsageError(ConvergeError):
    """The command line is wrong: an unknown option value, a missing file, an unwritable folder.

    Only the command-line layer raises it; a function called from Python with a wrong argument raises
    ApiMisuseError, and one given an unreadable file BadInputError."""


class UnsupportedError(ConvergeError):
    """The input is valid but converge cannot run it yet (a runtime, the oracle or the Flink SQL reader lacks it).

    Not bad input (nothing is wrong with it) and not a crash: the message says what is missing and,
    where there is one, the way around it."""


class NotCheckedError(ConvergeError):
    """A property ran and compared nothing: every case it drew was unsupported, not applicable or skipped.

    Never "passed" (a check that compared nothing says nothing) and not bad input (the user's input is
    fine): the message says what was exercised and why nothing was compared."""


class InternalError(ConvergeError):
    """A state that only a bug in converge or in an engine under test can reach."""


class MisreadQueryError(InternalError):
    """converge's reading of a user's query and the query run as written (transpiled to DuckDB) disagree.

    converge's own bug: the message shows the example on which the two batch answers differ."""


class NonTerminationError(InternalError):
    """An engine kept working on one event past its step budget (e.g. timers that re-fire without progress)."""


# Each class's label and exit code, most specific first (a subclass before its base): the table above, as data.
_MEANINGS: tuple[tuple[type[ConvergeError], str, int], ...] = (
    (DivergenceError, "diverged", EXIT_DIVERGENCE),
    (BadInputError, "bad input", EXIT_BAD_INPUT),
    (ApiMisuseError, "bad input", EXIT_BAD_INPUT),
    (UsageError, "usage", EXIT_BAD_INPUT),
    (UnsupportedError, "unsupported", EXIT_BAD_INPUT),
    (NotCheckedError, "not checked", EXIT_BAD_INPUT),
    (OracleError, "oracle error", EXIT_INTERNAL),
    (SystemUnderTestError, "system error", EXIT_INTERNAL),
    (MisreadQueryError, "misread query", EXIT_INTERNAL),
    (InternalError, "internal error", EXIT_INTERNAL),
)


def _meaning(exc: BaseException) -> tuple[str, int]:
    for cls, word, code in _MEANINGS:
        if isinstance(exc, cls):
            return word, code
    return "crashed", EXIT_INTERNAL


def exit_code(exc: BaseException | None) -> int:
    """The process exit code that `exc` stands for (None: success)."""
    return EXIT_OK if exc is None else _meaning(exc)[1]


def label(exc: BaseException | None) -> str:
    """The one word `converge` prints for an outcome: passed, diverged, bad input, usage, unsupported, not checked,
    oracle error, system error, misread query, internal error, crashed."""
    return "passed" if exc is None else _meaning(exc)[0]
