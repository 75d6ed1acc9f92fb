"""A native-join case file, rerun on Spark: every property, and the file's `meta.expect_output` when it has one.

`meta.expect_output` is the hand-worked output as [left id, right id] pairs
(null for the padded side; LEFT SEMI: [left id, null]); `meta.expect_epochs`,
when present, maps an epoch to the pairs that must come out in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from converge.engine.model.errors import BadInputError, DivergenceError, exit_code, label
from converge.engine.model.native_join_case import NativeJoinCase, NativeRun, load_case
from converge.properties.divergence import PropertyFailure
from converge.properties.native_join.checks import NATIVE_PROPERTIES, check_run
from converge.systems.spark.runs import RunCache


def _pairs(value: Iterable[Iterable[object]]) -> Counter:
    return Counter(tuple(p) for p in value)


def expectation_problems(case: NativeJoinCase, run: NativeRun) -> list[str]:
    """How the run differs from the file's hand-worked expectations (none: it matches, or the file has none)."""
    problems = []
    meta = case.meta
    if "expect_status" in meta and meta["expect_status"] != run.status:
        problems.append(f"expected status {meta['expect_status']!r}, Spark's run is {run.status!r} {run.message}")
    if "expect_output" in meta and run.status == "ok":
        want, got = _pairs(meta["expect_output"]), Counter(run.output())
        if want != got:
            problems.append(f"output {sorted(got.elements(), key=repr)} differs from the file's expect_output "
                            f"{sorted(want.elements(), key=repr)}")
    for epoch, pairs in (meta.get("expect_epochs") or {}).items():
        got = Counter(next((e.output for e in run.epochs if e.batch_id == int(epoch)), ()))
        if got != _pairs(pairs):
            problems.append(f"epoch {epoch}: output {sorted(got, key=repr)} differs from expect_epochs "
                            f"{sorted(_pairs(pairs), key=repr)}")
    return problems


@dataclass
class NativeReplay:
    path: Path
    checked: list[str] = field(default_factory=list)
    problems: list[tuple[BaseException, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return max((exit_code(e) for e, _ in self.problems), default=0)

    @property
    def label(self) -> str:
        worst = max(self.problems, key=lambda p: exit_code(p[0]), default=None)
        return "passed" if worst is None else label(worst[0])


def replay_native(path: Path, cache: RunCache) -> NativeReplay:
    """Load one case file and check every property on Spark's run of it; each problem with its error."""
    out = NativeReplay(path)
    try:
        case = load_case(path)
    except BadInputError as exc:
        out.problems.append((exc, f"{label(exc)}: {exc}"))
        return out
    run = cache.run(case)
    for prop in NATIVE_PROPERTIES:
        try:
            exercised = check_run(prop, case, run)
            out.checked.append(prop.name + ("" if exercised else " (not exercised)"))
        except PropertyFailure as exc:
            out.checked.append(prop.name)
            out.problems.append((exc, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a system error is this check's outcome, the next one still runs
            out.problems.append((exc, f"{prop.name}: {label(exc)}: {type(exc).__name__}: {exc}"))
    problems = expectation_problems(case, run)
    if {"expect_output", "expect_epochs", "expect_status"} & set(case.meta):
        out.checked.append("expectations")
    for p in problems:
        out.problems.append((DivergenceError(p), p))
    return out
