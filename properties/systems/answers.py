"""What a case's answer must be, and the evidence of a system that gave another one.

The expected answer always comes from an oracle (DuckDB's batch join, or the
batch interval join when no record is late), never from the system or the
reference engine. A divergence carries all three answers (oracle, system,
reference engine) so the report can show them side by side and say which
of them agree: that tells a defect of the system from one of converge.
"""

from __future__ import annotations

from collections import Counter
from typing import NoReturn

from converge.engine.model.changelog import sign
from converge.engine.model.errors import ConvergeError
from converge.engine.model.scenario import JOB_OPTION_KEYS, Scenario
from converge.engine.model.system import CaseResult, System
from converge.engine.model.system_cases import engine_model_settings
from converge.engine.reference_system import ReferenceSystem
from converge.oracle import batch_interval_join
from converge.oracle.shared import shared_oracle
from converge.properties.divergence import fail, require
from converge.properties.interval import model_of, why_not_exact, with_final, with_positions
from converge.properties.systems.upsert import sink_key_positions, upsert_fold

ORACLE, REFERENCE = "oracle", "reference engine"
_REFERENCE = ReferenceSystem("local")


def oracle_decides(scenario: Scenario) -> str | None:
    """None when an oracle decides the scenario's final answer; otherwise why not."""
    cfg = scenario.config
    if cfg.state_ttl_ms is not None and cfg.state_ttl_ms != {}:
        return "a state TTL makes the answer depend on time, not only on the input"
    if cfg.semantics != "correct":
        return "semantics=flink models a defect of Flink's join, not the batch answer"
    if not cfg.changelog_normalize and any(i.changelog_mode == "upsert" for i in scenario.chain):
        return "without changelog normalize an upsert input's join is an upsert stream, not a table"
    if cfg.optional_settings().keys() - {"multi_join_max_tables", "multi_join_min_tables",
                                         "multi_join_rewrite_right", "mini_batch_size", "mini_batch_latency_ms",
                                         *JOB_OPTION_KEYS}:
        return "the pipeline options of the anomalies family change the answer on purpose"
    iv = scenario.join.interval
    if iv is not None:
        if iv.time == "processing":
            return "a processing-time interval join's answer depends on arrival times"
        return why_not_exact(scenario, model_of(with_positions(with_final(scenario))))
    return None


def oracle_final(scenario: Scenario) -> Counter:
    """The batch answer; the caller has checked that an oracle decides the scenario (oracle_decides)."""
    if scenario.join.interval is not None:
        return batch_interval_join(scenario)
    return shared_oracle().final(scenario)


def reference_final(scenario: Scenario) -> Counter | str:
    """The reference engine's folded answer, or its error as text."""
    try:
        result = _REFERENCE.run_cases([scenario])[0]
    except ConvergeError as exc:
        return f"{type(exc).__name__}: {exc}"
    return result.folded() if result.status == "ok" else result.message


def engine_model_reason(scenario: Scenario) -> str | None:
    """Why the scenario is no divergence check for a system: it sets options only converge's engine model reads."""
    settings = engine_model_settings(scenario)
    if not settings:
        return None
    shown = ", ".join(f"{k}={v!r}" for k, v in settings.items())
    return f"{shown} steers converge's own engine model, which a system under test is not told about"


def require_applicable(prop: str, system: System, scenario: Scenario) -> None:
    """A case the generator should never have drawn for this system is bad input, never a silent pass."""
    reason = system.why_not(scenario)
    require(reason is None, prop, reason or "")


def agreement(answers: dict[str, Counter | str]) -> str:
    """Which answers agree: "oracle = reference engine ≠ flink 2.3.0"."""
    groups: list[list[str]] = []
    for name, answer in answers.items():
        for group in groups:
            if answers[group[0]] == answer:
                group.append(name)
                break
        else:
            groups.append([name])
    return " ≠ ".join(" = ".join(g) for g in groups)


def system_diverged(prop: str, system: System, scenario: Scenario, message: str, got: Counter | str,
                    compared_with: Counter | None, *, oracle: Counter | None = None,
                    extra_answers: dict[str, Counter | str] | None = None, system_spec: str | None = None) -> NoReturn:
    """Raise the divergence of `system` on `scenario`: the diff of `got` against `compared_with`, and every
    answer known (the oracle's, the system's, the reference engine's) to be shown side by side. The check
    that called it decides (checks.Judged) whether a known-divergences entry explains it."""
    answers: dict[str, Counter | str] = {}
    if oracle is not None:
        answers[ORACLE] = oracle
    answers[system.title] = got
    answers.update(extra_answers or {})
    if REFERENCE not in answers:
        answers[REFERENCE] = reference_final(scenario)
    extra = {"answers": answers, "agreement": agreement(answers), "system": system.title,
             "system_name": system.name}
    if system_spec:
        extra["system_spec"] = system_spec
    fail(prop, scenario, f"{message} ({extra['agreement']})", engine=got if isinstance(got, Counter) else Counter(),
         expected=compared_with, extra=extra)


def answer_of(prop: str, system: System, scenario: Scenario, result: CaseResult,
              expected: Counter | None, system_spec: str | None) -> Counter | None:
    """The system's folded answer (None: unsupported); an error, or a changelog that retracts a row it never
    emitted, is the system's divergence."""
    if result.status == "unsupported":
        return None
    if result.status == "error":
        system_diverged(prop, system, scenario, f"{system.name} failed on this case: {result.message}",
                        f"error: {result.message}", expected, oracle=expected, system_spec=system_spec)
    if result.changelog is not None and scenario.config.sink == "upsert":  # the table the sink holds
        return upsert_fold([(c.kind, c.row) for c in result.changelog], sink_key_positions(scenario))
    if result.changelog is not None:
        bag: Counter = Counter()
        for i, (kind, row) in enumerate(result.changelog):
            bag[row] += sign(kind)
            if bag[row] < 0:
                system_diverged(prop, system, scenario,
                                f"{system.name}'s changelog retracts {list(row)} at output {i}, more often than "
                                f"it emitted it", result.folded(), expected, oracle=expected, system_spec=system_spec)
    return result.folded()
