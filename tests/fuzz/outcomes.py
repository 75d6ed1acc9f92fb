"""What converge does with one damaged file, as one outcome word; anything untyped escapes as itself.

The judge reads the bytes as `converge replay` would, runs the engine event by
event (checking that a rejected event changes no state and that processing
goes on after it), and then checks the file's own expectations or, for a file
without any (as replay does), holds the engine to the oracle with the
properties that apply. A property failure there is a finding, not a damage
outcome.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from converge.engine.model.errors import BadInputError, DivergenceError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import parse_scenario_bytes
from converge.engine.runtime.local import LocalRuntime, RunResult
from converge.properties.expectations import check_expectations
from converge.properties.replay import applicable_properties

HANG_SECONDS = 20  # the slowest seed file replays in well under a second


class Hung(AssertionError):
    """The judge did not finish one file in HANG_SECONDS."""


class Finding(AssertionError):
    """converge itself misbehaved on a file: changed state on a rejected event, or a property failed."""


@contextmanager
def no_hang(seconds: int = HANG_SECONDS) -> Iterator[None]:
    def alarm(signum: int, frame: object) -> None:
        raise Hung(f"no outcome after {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _run_checking_rejections(scenario: Scenario) -> tuple[RunResult, int]:
    """The engine over every event; a rejected event must leave the whole runtime as it was."""
    runtime = LocalRuntime(scenario)
    result = RunResult(scenario)
    rejected = 0
    for i, event in enumerate(scenario.events):
        before = runtime.snapshot()
        try:
            result.per_event.append(runtime.process_event(event))
        except BadInputError as exc:
            rejected += 1
            if exc.event_index != i:
                raise Finding(f"event {i} was rejected as event {exc.event_index}: {exc}") from exc
            if runtime.snapshot() != {**before, "event_index": i + 1}:  # only the position moves past it
                raise Finding(f"event {i} was rejected ({exc}) but the runtime's state changed") from exc
            result.per_event.append([])
    if result.per_event:  # the end of the input, as LocalRuntime.run: a mini-batch bundle still held emits now
        result.per_event[-1].extend(runtime.finish())
    return result, rejected


def judge(data: bytes, source: str = "damaged.json") -> str:
    """One outcome word for a damaged file (see the module docstring)."""
    try:
        scenario = parse_scenario_bytes(data, source=source)
    except BadInputError:
        return "rejected when read"
    try:
        result, rejected = _run_checking_rejections(scenario)
    except BadInputError:
        return "rejected when planned"
    outcome = f"ran, {'some events rejected' if rejected else 'every event accepted'}"
    if scenario.has_expectations():
        # as replay does: the file's own expectations decide it (some files hold streams, e.g. a
        # duplicate insert under semantics=correct, whose meaning is the expectation, not the batch answer)
        if rejected:
            return outcome
        return outcome + ", expectations " + ("differ" if check_expectations(scenario, result) else "met")
    properties = applicable_properties(scenario)
    for name, check in properties:
        try:
            check(scenario)
        except BadInputError:
            return outcome + ", rejected by the oracle"
        except DivergenceError as exc:
            raise Finding(f"{name} failed on a file the engine and the oracle both accept: {exc}") from exc
    return outcome + (", properties hold" if properties else ", no property applies")


def classify(data: bytes, source: str = "damaged.json") -> str:
    """`judge` under the hang guard. Every other error escapes: an OracleError or InternalError on a
    file that was read and planned is a bug of converge's, as much as an untyped exception is."""
    with no_hang():
        return judge(data, source)
