"""The conformance kit's answer checks: the fixed cases, batches that switch shapes, and declared settings.

Every expected answer here was worked out by hand from SQL semantics and is
written in the case file (`expect_final`, and `expect_changelog` for a
setting whose effect shows only in the changelog); the kit never computes an
answer. A FAIL names the case file and the rows missing and unexpected, with
their counts. The adapter process and its conversation are in `Session`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system import Capabilities, CaseResult, applicability
from converge.engine.model.system_cases import shape_key
from converge.systems.adapter import protocol
from converge.systems.adapter.client import AdapterProcess, Timeouts

CASES_FOLDER = Path(__file__).resolve().parent / "conformance"
Verdict = Literal["PASS", "FAIL", "SKIP"]
Record = Callable[[str, Verdict, str], None]
SHOWN_ROWS = 8  # the most distinct rows a message lists for one side before it says "and N more"


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    message: str

    def line(self) -> str:
        return f"{self.verdict}  {self.name}: {self.message}".replace("\n", "\n      ")


def fixed_cases(folder: str = "") -> list[tuple[str, Scenario]]:
    """The kit's cases of one folder (the top one: one check each; `batch`, `settings`), by file stem."""
    return [(p.stem, load_scenario(p)) for p in sorted((CASES_FOLDER / folder).glob("*.json"))]


def _rows(bag: Counter) -> str:
    items = sorted(bag.items(), key=repr)
    text = ", ".join(f"{list(r)}" + (f" x{n}" if n != 1 else "") for r, n in items[:SHOWN_ROWS])
    return "[" + text + (f", and {len(items) - SHOWN_ROWS} more" if len(items) > SHOWN_ROWS else "") + "]"


def _count(bag: Counter, what: str) -> str:
    n = sum(bag.values())
    return f"{n} {what}{'' if n == 1 else 's'}"


def compare(expected: Counter, got: Counter) -> str | None:
    """None when equal; else the rows missing and unexpected, with counts, then both answers' sizes."""
    if got == expected:
        return None
    missing, extra = expected - got, got - expected
    parts = [f"{_count(missing, 'row')} missing {_rows(missing)}"] if missing else []
    parts += [f"{_count(extra, 'unexpected row')} {_rows(extra)}"] if extra else []
    return "; ".join(parts) + f" (expected {_count(expected, 'row')}, got {_count(got, 'row')}: {_rows(got)})"


def expected_final(scenario: Scenario) -> Counter:
    return Counter(tuple(r) for r in scenario.expect_final or ())


@dataclass
class Session:
    """One adapter process at a time: restarted (and greeted) when a failed check killed the last one."""

    argv: Sequence[str]
    timeouts: Timeouts
    offered: Sequence[int] = protocol.VERSIONS
    process: AdapterProcess | None = None
    capabilities: Capabilities | None = None
    version: int = 0
    title: str = ""
    requests: int = 0
    slowest_run: float = 0.0
    hello_seconds: float = 0.0

    def start(self) -> AdapterProcess:
        if self.process is None:
            started = time.perf_counter()
            process = AdapterProcess(self.argv)
            process.send(protocol.hello_request(self.offered), during="the handshake")
            reply = process.receive(self.timeouts.hello, during="the handshake")
            try:
                name, version, self.capabilities = protocol.read_hello(reply, self.offered)
                self.version = protocol.negotiated_version(reply, self.offered)
            except SystemUnderTestError as exc:
                raise process.fail(str(exc), during="the handshake", line=protocol.encode(reply)) from None
            self.hello_seconds = max(self.hello_seconds, time.perf_counter() - started)
            self.title = f"{name} {version}"
            self.process = process
        return self.process

    def run(self, scenarios: Sequence[Scenario]) -> list[CaseResult]:
        process = self.start()
        assert self.capabilities is not None
        self.requests += 1
        cases = [(f"k{self.requests}-{i}", s) for i, s in enumerate(scenarios)]
        during = f"run request {self.requests}"
        started = time.perf_counter()
        try:
            process.send(protocol.run_request(self.requests, cases, self.version), during=during)
            reply = process.receive(self.timeouts.run(len(cases)), during=during)
            try:
                return protocol.read_results(reply, self.requests, cases, self.capabilities.output)
            except SystemUnderTestError as exc:
                raise process.fail(str(exc), during=during, line=protocol.encode(reply)) from None
        except SystemUnderTestError:
            self.process = None
            raise
        finally:
            self.slowest_run = max(self.slowest_run, time.perf_counter() - started)

    def close(self) -> int | None:
        if self.process is None:
            return None
        process, self.process = self.process, None
        return process.shutdown(self.timeouts.shutdown)


def answer_verdict(result: CaseResult, expected: Counter) -> tuple[Verdict, str]:
    if result.status != "ok":
        return "FAIL", (f"the declared capabilities cover this case, but the adapter answered {result.status}: "
                        f"{result.message}")
    diff = compare(expected, result.folded())
    return ("PASS", f"{_count(expected, 'row')} as expected") if diff is None else ("FAIL", diff)


def check_fixed_cases(session: Session, cases: list[tuple[str, Scenario]], record: Record) -> None:
    """One check per fixed case: SKIP outside the capabilities, else the folded answer against expect_final."""
    caps = session.capabilities
    assert caps is not None
    for name, scenario in cases:
        reason = applicability(scenario, caps)
        if reason is not None:
            record(f"case {name}", "SKIP", f"not applicable: {reason}")
            continue
        try:
            verdict, message = answer_verdict(session.run([scenario])[0], expected_final(scenario))
        except SystemUnderTestError as exc:
            verdict, message = "FAIL", str(exc)
        record(f"case {name}", verdict, message)


def check_batches(session: Session, cases: list[tuple[str, Scenario]], record: Record) -> None:
    """Requests of one shape each, switching shapes (batch_plan), several cases per request: an adapter that keeps
    per-shape state between requests, or mixes up the cases of a request, answers some case wrongly."""
    caps = session.capabilities
    assert caps is not None
    named = [(n, s) for n, s in cases + fixed_cases("batch") if applicability(s, caps) is None]
    shapes: dict[str, list[tuple[str, Scenario]]] = {}
    for name, scenario in named:
        shapes.setdefault(shape_key(scenario), []).append((name, scenario))
    groups = sorted((g for g in shapes.values() if len(g) >= 2), key=len, reverse=True)[:2]
    if caps.max_batch < 2:
        record("batch", "SKIP", "max_batch is 1: the adapter takes one case per request")
        return
    if len(groups) < 2:
        record("batch", "SKIP", "fewer than two shapes with two or more fixed cases lie inside the capabilities")
        return
    plan = batch_plan(groups[0], groups[1], caps.max_batch)
    wrong: list[str] = []
    for number, request in enumerate(plan, 1):
        try:
            results = session.run([s for _, s in request])
        except SystemUnderTestError as exc:
            record("batch", "FAIL", f"request {number} of {len(plan)} ({', '.join(n for n, _ in request)}): {exc}")
            return
        for (name, scenario), result in zip(request, results, strict=False):
            verdict, message = answer_verdict(result, expected_final(scenario))
            if verdict == "FAIL":
                wrong.append(f"request {number}, case {name}: {message}")
    sizes = "/".join(str(len(r)) for r in plan)
    record("batch", "FAIL" if wrong else "PASS", "\n".join(wrong) if wrong else
           f"{len(plan)} requests of one shape each, switching shapes A, B, A, B, A ({sizes} cases: "
           f"{', '.join(n for n, _ in plan[0])} / {', '.join(n for n, _ in plan[1])}; then one case alone, then "
           f"A's cases rotated, one twice, all under one name), each answered in order")


SHARED_NAME = "generated case"  # a campaign's generated cases share their names (generators/*.py)


def batch_plan(first: list[tuple[str, Scenario]], second: list[tuple[str, Scenario]], max_batch: int
               ) -> list[list[tuple[str, Scenario]]]:
    """The batch check's requests, as varied as a campaign's (issue 41 row 12): A, then B, then A reversed
    (every case of a shape answered in two positions); B's last case alone (a request of one); A's cases
    rotated with the first one again, all under one name (a case twice in a request, and cases told apart by
    their ids alone, as a campaign's generated ones must be)."""
    rotated = first[1:] + first[:1] + first[:1]
    same_name = [(name, replace(scenario, name=SHARED_NAME)) for name, scenario in rotated]
    return [first[:max_batch], second[:max_batch], list(reversed(first))[:max_batch], second[-1:],
            same_name[:max_batch]]


# What a declared setting must visibly change, and where nothing visible is guaranteed, why.
NO_VISIBLE_DIFFERENCE: dict[str, str] = {
    "multi_join": "a multi-way join operator gives the same final table as the binary chain, and no changelog "
                  "difference from the chain is guaranteed (docs/multiway.md), so nothing can show that it ran",
    "state_backend": "the state backend changes where state is kept, not the answer",
    "parallelism": "the parallelism changes how the work is split, not the answer",
    "upsert_sink": "the kit has no case for an upsert sink yet",
    "restart": "a stop and restore must leave the answer as it was: no visible difference is guaranteed",
}


def check_settings(session: Session, record: Record) -> None:
    """For each declared setting, a case whose answer must differ when the setting is honoured, or SKIP why."""
    caps = session.capabilities
    assert caps is not None
    cases = dict(fixed_cases("settings"))
    if "mini_batch" not in caps.settings:
        record("setting mini_batch", "SKIP", "not declared in capabilities.settings: converge sends the adapter no "
               "case with config.mini_batch_size")
    for setting in caps.settings:
        name = f"setting {setting}"
        if setting != "mini_batch":
            record(name, "SKIP", NO_VISIBLE_DIFFERENCE[setting])
            continue
        if caps.output != "changelog" or not caps.deterministic_order:
            record(name, "SKIP", "a mini-batch join's fold shows only in a changelog that follows the scenario's "
                   "order; this adapter answers " + ("the final table" if caps.output == "final" else
                                                     "a changelog without deterministic_order"))
            continue
        _check_mini_batch(session, "mini_batch_folds", cases["mini_batch_folds"], record)


def _check_mini_batch(session: Session, case: str, scenario: Scenario, record: Record) -> None:
    name = "setting mini_batch"
    reason = applicability(scenario, session.capabilities)  # type: ignore[arg-type]
    if reason is not None:
        record(name, "SKIP", f"{case} is not applicable: {reason}")
        return
    assert scenario.expect_changelog is not None
    expected = Counter((e["kind"], *e["row"]) for e in scenario.expect_changelog.emits)
    try:
        result = session.run([scenario])[0]
    except SystemUnderTestError as exc:
        record(name, "FAIL", f"{case}: {exc}")
        return
    if result.status != "ok" or result.changelog is None:
        record(name, "FAIL", f"{case}: the adapter declares mini_batch and answered {result.status}: "
               f"{result.message}")
        return
    got = Counter((c.kind, *c.row) for c in result.changelog)
    diff = _changelog_diff(expected, got)
    if diff is None:
        record(name, "PASS", f"{case}: the bundle folded, {_count(expected, 'change')} as expected")
    else:
        record(name, "FAIL", f"{case}: the changelog must hold only the folded bundle's changes (as a multiset): "
               f"{diff}; record by record, a row joined and deleted in one bundle shows as +I and -D (the case's "
               f"description says which)")


def _changelog_diff(expected: Counter, got: Counter) -> str | None:
    if got == expected:
        return None
    missing, extra = expected - got, got - expected

    def changes(bag: Counter) -> str:
        return "[" + ", ".join(f"{c[0]} {list(c[1:])}" + (f" x{n}" if n != 1 else "")
                               for c, n in sorted(bag.items(), key=repr)) + "]"
    parts = [f"{_count(missing, 'change')} missing {changes(missing)}"] if missing else []
    parts += [f"{_count(extra, 'unexpected change')} {changes(extra)}"] if extra else []
    return "; ".join(parts)

