"""Running properties under Hypothesis: one function serves pytest and `converge run`.

run_property is its steps in order, each a function of its own: the arguments
checked, the Hypothesis test built (settings, the per-example `_Checker`
inside the shrink budget), the search run and its end classified into the
PropertyResult, the failing call recorded, a run that compared nothing made
NotCheckedError. A failure's call (the arguments replay reruns, a check's own
reduction) comes back in PropertyFailure.call, a FailedCall
(properties/divergence.py says why a field of the failure).
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from hypothesis import Phase, event, given, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import FailedHealthCheck, Unsatisfiable, UnsatisfiedAssumption

from converge.engine.model.errors import (
    ApiMisuseError,
    BadInputError,
    InternalError,
    NotCheckedError,
    SystemUnderTestError,
    UnsupportedError,
)
from converge.generators.profile import PROFILE
from converge.properties.budget import ShrinkBudget, ShrinkStopped, budget_or_default
from converge.properties.coverage import example_cases
from converge.properties.determinism import process_independent_generation
from converge.properties.divergence import FailedCall, PropertyFailure
from converge.properties.evidence import with_oracle_final
from converge.properties.exercise import Exercised, Recording
from converge.properties.progress import ProgressCallback, PropertyProgress, RunPhase, case_size
from converge.properties.spec import PropertySpec


class _Enough(BaseException):
    """Raised through Hypothesis when a batched property has checked the scenarios asked for: the run ends there
    as a pass (Hypothesis's own max_examples counts examples, and each example holds several scenarios)."""


class _SystemFailed(BaseException):
    """Raised through Hypothesis when the system under test failed: a BaseException, so Hypothesis neither
    shrinks nor replays the example on a system that is no longer there (it would read a second, different
    error as a flaky test). run_property puts the system's SystemUnderTestError in the result."""


@dataclass
class PropertyResult:
    family: str
    name: str
    examples: int = 0
    failures: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0                # this process's CPU time (waiting excluded)
    failure: PropertyFailure | None = None
    error: BaseException | None = None
    reports: list[str] = field(default_factory=list)
    seed: int | None = None                 # the Hypothesis seed of this run (always set by run_property)
    failure_args: tuple | None = None       # the arguments of the shrunk failing call, for replay
    warnings: list[str] = field(default_factory=list)   # e.g. a campaign search that found nothing in budget
    coverage: Counter = field(default_factory=Counter)  # special case -> examples that drew it
    exercised: Exercised = field(default_factory=Exercised)  # cases compared / not applicable / unsupported / skipped
    shrink_stopped: float | None = None     # shrinking stopped at this budget (s), with the best case found by then
    batches: int | None = None              # a batched property (spec.batch > 1): the Hypothesis examples run

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def examples_per_cpu_second(self) -> float:
        return self.examples / self.cpu_seconds if self.cpu_seconds > 0 else 0.0

    @property
    def ok(self) -> bool:
        return self.failure is None and self.error is None

    @property
    def not_checked(self) -> bool:
        """It ran and compared nothing (the outcome says "not checked", never "passed")."""
        return isinstance(self.error, NotCheckedError)


def run_property(spec: PropertySpec, *, max_examples: int | None = None, seed: int | None = None,
                 shrink: bool = True, on_failure: Callable[[PropertyResult], None] | None = None,
                 shrink_budget: float | None = None, progress: ProgressCallback | None = None,
                 clock: Callable[[], float] = time.monotonic, target: bool = True) -> PropertyResult:
    """Run one property with Hypothesis; a failure comes back shrunk, with its evidence.

    Without a seed one is drawn and recorded, so every failure report names the
    seed that finds it again. `on_failure` is called with a failed result (for
    example `converge.reports.failure.failure_reporter(folder)`); without it
    nothing is written: under pytest, converge's plugin writes the report of a
    PropertyFailure that a test raises.

    The result counts what the examples exercised (properties/exercise.py); a
    run that compared no case ends as NotCheckedError, never as a pass. An
    input converge generated that its own engine, oracle or property rejects
    (BadInputError, UnsupportedError) is converge's bug: an InternalError,
    shrunk like any failure.

    Shrinking stops `shrink_budget` seconds (default DEFAULT_SHRINK_BUDGET) after
    the first failure, with the best case found by then; `result.shrink_stopped`
    then records the budget (properties/budget.py). `progress` is told after
    every example where the run stands (properties/progress.py); `clock` is
    what both read the time from. Without `target`, Hypothesis's target phase is off: a system campaign's few
    batches are then fresh draws, not variations of the batch that drew the most special cases (which keep its
    shape: 200 cases of multiway/final_equals_oracle sent 10 shapes in 20 batches with it, 20 without).
    """
    _check_arguments(spec, max_examples, seed)
    seconds = budget_or_default(shrink_budget)
    if seed is None:
        seed = random.SystemRandom().getrandbits(32)
    result = PropertyResult(spec.family, spec.name, seed=seed)
    planned = max_examples or spec.examples
    budget = ShrinkBudget(seconds if shrink else math.inf, clock)  # without shrinking there is nothing to stop
    watch = _Watcher(spec, planned, result, budget, progress)
    checker = _Checker(spec, result)
    test = _hypothesis_test(spec, checker, budget, watch, _settings(planned, shrink, target), seed)
    start, cpu_start = time.perf_counter(), time.process_time()
    watch.start()
    _end_of_search(result, lambda: _search(test, budget), checker)
    _record_failed_call(result, checker.calls.of(result.failure or result.error), budget)
    if spec.search is not None and result.ok:
        _run_search(spec, seed, result)
    result.seconds = time.perf_counter() - start
    result.cpu_seconds = time.process_time() - cpu_start
    result.examples = checker.count
    result.batches = checker.batches if spec.batch > 1 else None
    _not_checked(result)
    if result.failure is not None:  # once, on the shrunk failure: what its replayable file must end with
        with_oracle_final(result.failure.divergence)
    watch.done()
    if not result.ok and not result.not_checked and on_failure is not None:
        on_failure(result)
    return result


def _check_arguments(spec: PropertySpec, max_examples: int | None, seed: int | None) -> None:
    """A caller's mistake is ApiMisuseError before anything runs, never a property's failure."""
    if not isinstance(spec, PropertySpec):
        raise ApiMisuseError(f"run_property: expected a PropertySpec, got {type(spec).__name__}")
    for name, value in (("max_examples", max_examples), ("seed", seed)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0
                                  or (name == "max_examples" and value == 0)):
            raise ApiMisuseError(f"run_property({name}={value!r}): expected a positive integer or None")


def _settings(planned: int, shrink: bool, target: bool = True) -> settings:
    """converge's profile, no example database (a seed alone finds a run's examples again), no blob to print;
    without `shrink`, no shrink phase (against a live system the check reduces its own failure); without
    `target`, no target phase."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.target] if target else []) + (
        [Phase.shrink] if shrink else [])
    return settings(PROFILE, max_examples=planned, database=None, phases=phases, print_blob=False)


def _hypothesis_test(spec: PropertySpec, checker: _Checker, budget: ShrinkBudget, watch: _Watcher,
                     config: settings, seed: int) -> Callable[[], None]:
    """The property as a seeded Hypothesis test: every example's check runs inside the shrink budget, and the
    watcher hears of each one, and of every new best failing case."""
    @config
    @given(spec.strategy())
    def test(args: tuple) -> None:
        before, shrinking = checker.count, budget.failed
        if spec.batch > 1 and not shrinking:
            args = _at_most(args, watch.planned - checker.count)
        try:
            budget.run(args, lambda: checker.check(args))
            if spec.batch > 1 and not budget.failed and checker.count >= watch.planned:
                raise _Enough
        except UnsatisfiedAssumption:
            raise
        except Exception as exc:
            if exc is budget.best:  # the failure being shrunk: the best case so far
                call = checker.calls.of(exc)
                watch.failed(call.args if call is not None else args)  # a check may have reduced it
            raise
        finally:
            if checker.count > before:  # the check ran (not so for the final replay once the budget is spent)
                watch.checked(checker.count, shrinking)

    return hypothesis_seed(seed)(test)


def _at_most(args: tuple, scenarios: int) -> tuple:
    """A batch's arguments with its list cut to the scenarios still asked for, so that `--examples N` checks N.

    Only before a failure: a failing batch then holds its cut, and every later run of it (shrinking, the final
    replay) gets the whole batch, in which that failing scenario still is."""
    if args and isinstance(args[0], list) and 0 < scenarios < len(args[0]):
        return (args[0][:scenarios], *args[1:])
    return args


def _search(test: Callable[[], None], budget: ShrinkBudget) -> None:
    """Run the Hypothesis test; a search the budget stopped ends with the best failure found by then."""
    try:
        with process_independent_generation():  # the seed finds the same examples in any process
            test()
        return
    except ShrinkStopped:
        pass
    raise budget.best_failure()  # outside the handler: the failure keeps its own context and cause


def _end_of_search(result: PropertyResult, search: Callable[[], None], checker: _Checker) -> None:
    """Run `search` and record how it ended: a property failure, or an error (the system's, or a crash)."""
    try:
        search()
    except _Enough:
        pass
    except _SystemFailed:
        result.error = checker.system_failed
        result.failures = 1
    except PropertyFailure as exc:
        result.failure = exc
        result.failures = 1
    except ExceptionGroup as group:  # several distinct failures: report the first property failure
        found = group.subgroup(PropertyFailure)
        if found is not None:
            result.failure = _first_leaf(found)
        else:
            result.error = group
        result.failures = 1
    except Exception as exc:  # a crash is a failure of the harness or the engine, never a pass
        result.error = exc
        result.failures = 1


def _record_failed_call(result: PropertyResult, call: FailedCall | None, budget: ShrinkBudget) -> None:
    """The failing call's arguments, for replay, and a shrink stopped at its budget: Hypothesis's, or that of
    a check's own reduction."""
    result.failure_args = call.args if call is not None else None
    if budget.stopped:
        result.shrink_stopped = budget.seconds
    elif result.failure is not None and result.failure.call is not None:
        result.shrink_stopped = result.failure.call.shrink_stopped


def _not_checked(result: PropertyResult) -> None:
    """A run that compared no case is NotCheckedError, never a pass (nor Hypothesis giving up on every case)."""
    gave_up = isinstance(result.error, (Unsatisfiable, FailedHealthCheck)) and result.exercised.not_compared > 0
    if (result.ok or gave_up) and result.exercised.compared == 0:  # Hypothesis gives up when every case is rejected
        result.error, result.failures = NotCheckedError(result.exercised.why_nothing_compared()), 0


class _FailedCalls:
    """The call each failure came from, as run_property reads it back for the exception a run ends with.

    A PropertyFailure carries it in its `call` field (a check that reduced its failure set it already). Any
    other exception is a crash with no field of its own: the latest of each exception type is kept with its
    call. That is the one a run ends with: Hypothesis ends with its final replay of the failing example (the
    latest call failing that way), or the budget with its best failure (the latest of its type); a run
    ending in several distinct crashes (an ExceptionGroup) has no call, as before."""

    def __init__(self) -> None:
        self._latest: dict[type, tuple[BaseException, FailedCall]] = {}

    def record(self, exc: BaseException, args: tuple) -> None:
        if isinstance(exc, PropertyFailure):
            if exc.call is None:
                exc.call = FailedCall(args)
        else:
            self._latest[type(exc)] = (exc, FailedCall(args))

    def of(self, exc: BaseException | None) -> FailedCall | None:
        if isinstance(exc, PropertyFailure):
            return exc.call
        latest = self._latest.get(type(exc))
        return latest[1] if latest is not None and latest[0] is exc else None


class _Checker:
    """Each example's check, with what the run keeps of it: the special cases drawn, what was exercised (into
    the result), the call every failure came from, the system's failure that ends the run."""

    def __init__(self, spec: PropertySpec, result: PropertyResult) -> None:
        self.spec, self.result = spec, result
        self.count = 0                                          # examples (a batch: scenarios) whose check ran
        self.batches = 0                                        # checks run (a batched property's batches)
        self.calls = _FailedCalls()
        self.system_failed: SystemUnderTestError | None = None  # the system's failure that ended the run

    def check(self, args: tuple) -> None:
        self.count += case_size(args)[1] if self.spec.batch > 1 else 1  # a batch's scenarios are its examples
        self.batches += 1
        self._cover(args)
        with Recording() as recording:
            try:
                self.spec.check(*args)
            except UnsatisfiedAssumption:  # Hypothesis draws another; what it recorded still counts
                self.result.exercised.merge(recording.exercised)
                raise
            except SystemUnderTestError as exc:  # the system is dead: no shrinking, no replay on it
                self._system_failed(exc, args)
                raise _SystemFailed from None
            except (BadInputError, UnsupportedError) as exc:
                raise self._rejected(exc, args) from exc
            except Exception as exc:
                self.calls.record(exc, args)  # what replay needs to rerun it
                self._compared(recording)     # it compared, and the comparison failed (or crashed)
                raise
        self._compared(recording)

    def _cover(self, args: tuple) -> None:
        cases = example_cases(args)
        for case in sorted(cases):
            event(case)  # Hypothesis's statistics (pytest --hypothesis-show-statistics) show these
        target(float(len(cases)), label="special cases drawn")  # steer towards examples holding more of them
        self.result.coverage.update(cases)

    def _compared(self, recording: Recording) -> None:
        if recording.exercised.empty:  # a check that records nothing compared its example
            recording.exercised.add("compared")
        self.result.exercised.merge(recording.exercised)

    def _system_failed(self, exc: SystemUnderTestError, args: tuple) -> None:
        self.calls.record(exc, args)
        sent = len(args[0]) if args and isinstance(args[0], list) else 1
        self.result.exercised.add("skipped", sent, "the system failed on their request")  # not checked
        if self.system_failed is None:  # the run ends with the first
            self.system_failed = exc

    def _rejected(self, exc: BadInputError | UnsupportedError, args: tuple) -> InternalError:
        error = InternalError(f"converge generated an input that it rejects itself ({type(exc).__name__}: {exc})")
        self.calls.record(error, args)
        return error


class _Watcher:
    """Tells run_property's `progress` callback where the run stands (nothing when there is none)."""

    def __init__(self, spec: PropertySpec, planned: int, result: PropertyResult, budget: ShrinkBudget,
                 callback: ProgressCallback | None) -> None:
        self.spec, self.planned, self.result, self.budget, self.callback = spec, planned, result, budget, callback
        self.examples = 0            # examples whose check ran
        self.steps = 0               # of them, after the first failure
        self.best = (0, 0)           # (events, cases) of the latest failing example: Hypothesis keeps only smaller ones

    def failed(self, args: tuple) -> None:
        self.best = case_size(args)

    def checked(self, examples: int, after_failure: bool) -> None:
        self.examples = examples
        self.steps += after_failure
        shrinks = math.isfinite(self.budget.seconds)  # without shrinking, after a failure comes only its replay
        self._tell("shrinking" if self.budget.failed and shrinks else "running")

    def start(self) -> None:
        self._tell("running")        # before the first example: against a system, it may take seconds

    def done(self) -> None:
        self._tell("done")

    def _tell(self, phase: RunPhase) -> None:
        if self.callback is None:
            return
        seen = self.result.exercised
        try:
            self.callback(PropertyProgress(
                self.spec.family, self.spec.name, phase, self.examples, self.planned, seen.cases, seen.compared,
                self.steps, self.best[0], self.best[1], self.budget.elapsed(),
                self.budget.seconds if self.result.shrink_stopped is None else self.result.shrink_stopped,
                stopped=self.result.shrink_stopped is not None))
        except OSError:  # stderr is gone (a closed pipe): the display stops, never the property (nor its verdict)
            self.callback = None


def measure_coverage(spec: PropertySpec, *, max_examples: int, seed: int) -> PropertyResult:
    """Generation only: the special cases `spec`'s strategy draws in `max_examples` examples (no check runs)."""
    return run_property(replace(spec, check=lambda *args: None, search=None), max_examples=max_examples, seed=seed,
                        shrink=False)


def _run_search(spec: PropertySpec, seed: int, result: PropertyResult) -> None:
    """The existential property's seeded search, once per run: nothing found is a warning with its budget;
    a witness found on which the fix fails is a failure like any other."""
    try:
        outcomes = spec.search(seed, spec.search_budget)  # type: ignore[misc]  # seeded: the same in any process
    except PropertyFailure as exc:
        result.failure, result.failures = exc, 1
        return
    except Exception as exc:  # a crash of the search is a failure of the harness or the engine, never a pass
        result.error, result.failures = exc, 1
        return
    result.warnings += [w for w in (o.warning() for o in outcomes) if w]


def _first_leaf(group: BaseException) -> BaseException:
    while isinstance(group, ExceptionGroup):
        group = group.exceptions[0]
    return group
