"""What a system under test is to converge: what it declares it can do, and what it answers per case.

A real engine cannot do everything converge's reference engine can (Flink's
state TTL runs on wall-clock processing time, so no test can drive it), and it
may only return the final table, in an order that is not repeatable. So a
system declares its `Capabilities` once, every property asks `applicability`
before it sends a case, and a property that cannot run says why instead of
passing with nothing checked.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, get_args

from converge import renamed
from converge.engine.model.changelog import Change, sign
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import (
    ChangelogMode,
    ColumnType,
    JoinType,
    Scenario,
    check_bool,
    check_int,
    check_literal,
    short_repr,
)

JoinCategory = Literal["regular", "interval", "multiway"]
TimeDomain = Literal["event_time", "processing_time"]
OutputForm = Literal["final", "changelog"]
CaseStatus = Literal["ok", "unsupported", "error"]
# Options of a case that a system may silently ignore: a system honours one only when it says so.
Setting = Literal["multi_join", "mini_batch", "state_backend", "parallelism", "upsert_sink", "restart"]
SETTING_MEANING: dict[str, str] = {
    "multi_join": "config.multi_join=on (a multi-way join operator)",
    "mini_batch": "config.mini_batch_size (a mini-batch join)",
    "state_backend": "config.state_backend (the state backend)",
    "parallelism": "config.parallelism (the job's parallelism)",
    "upsert_sink": "config.sink=upsert (a sink with a primary key)",
    "restart": "config.restart_after (a stop with a savepoint and a restore)",
}

MAX_BATCH_LIMIT = 1_000_000
MAX_LACKS_CHARS = 300  # a `lacks` sentence is shown as a reason, on one line of a table


def _vocabulary(value: Any, lit: Any, path: str) -> tuple[str, ...]:
    """A list of distinct values of a `Literal` type, as a tuple."""
    if not isinstance(value, (list, tuple)):
        raise BadInputError(f"expected a list of {', '.join(get_args(lit))}, got {short_repr(value)}", path=path)
    out = tuple(check_literal(v, lit, f"{path}[{i}]") for i, v in enumerate(value))
    if len(set(out)) != len(out):
        raise BadInputError(f"{short_repr(list(value))} names a value twice", path=path)
    return out


@dataclass(frozen=True)
class Capabilities:
    """What a system can run and how it answers (the `capabilities` object of the adapter protocol's hello)."""

    families: tuple[JoinCategory, ...]  # the join categories it runs (the protocol's key keeps its name)
    join_types: tuple[JoinType, ...]
    changelog_modes: tuple[ChangelogMode, ...]
    column_types: tuple[ColumnType, ...]
    time_domains: tuple[TimeDomain, ...]
    state_ttl: bool
    output: OutputForm
    deterministic_order: bool
    max_batch: int
    # the settings it honours; one it does not is ignored, so a property about it is not applicable
    settings: tuple[Setting, ...] = ()
    # why it ignores a setting it does not honour, in its own words ("Flink 1.19.0 has no multi-way join operator
    # (FLIP-516, from 2.1)"): (setting, sentence) pairs, read from the protocol's object {setting: sentence}
    lacks: tuple[tuple[Setting, str], ...] = ()
    # a paced adapter (Flink's) delivers a job's events in rounds, this many per event of the job's longest case
    # (a mini-batch job: per bundle of each case), so a request's time limit counts them; 0: not paced
    rounds_per_event: int = 0

    def __post_init__(self) -> None:
        for key, lit in (("families", JoinCategory), ("join_types", JoinType), ("changelog_modes", ChangelogMode),
                         ("column_types", ColumnType), ("time_domains", TimeDomain), ("settings", Setting)):
            object.__setattr__(self, key, _vocabulary(getattr(self, key), lit, f"capabilities.{key}"))
        object.__setattr__(self, "lacks", _lacks(self.lacks, self.settings))
        check_bool(self.state_ttl, "capabilities.state_ttl")
        check_literal(self.output, OutputForm, "capabilities.output")
        check_bool(self.deterministic_order, "capabilities.deterministic_order")
        check_int(self.max_batch, "capabilities.max_batch", lo=1, hi=MAX_BATCH_LIMIT)
        check_int(self.rounds_per_event, "capabilities.rounds_per_event", lo=0, hi=100)

    @classmethod
    def everything(cls, *, max_batch: int = MAX_BATCH_LIMIT) -> Capabilities:
        """Every join category, join type, mode, type and time domain; the changelog in a repeatable order."""
        return cls(get_args(JoinCategory), get_args(JoinType), get_args(ChangelogMode), get_args(ColumnType),
                   get_args(TimeDomain), True, "changelog", True, max_batch, get_args(Setting))

    @classmethod
    def from_json(cls, obj: Any, path: str = "capabilities") -> Capabilities:
        """Read the protocol's object; every key but `settings` (absent: none honoured), `lacks` (absent: no
        sentences) and `rounds_per_event` (absent: 0, not paced) is required, and an unknown key is an error
        naming it."""
        if not isinstance(obj, Mapping):
            raise BadInputError(f"expected an object, got {short_repr(obj)}", path=path)
        names = [f.name for f in fields(cls)]
        unknown = [k for k in obj if k not in names]
        if unknown:
            raise BadInputError(f"unknown key {unknown[0]!r} (known: {', '.join(names)})", path=f"{path}.{unknown[0]}")
        missing = [k for k in names if k not in obj and k not in ("settings", "lacks", "rounds_per_event")]
        if missing:
            raise BadInputError(f"missing key {missing[0]!r}", path=path)
        return cls(**{k: obj[k] for k in names if k in obj})

    def honours(self, setting: Setting) -> bool:
        return setting in self.settings

    def why_ignored(self, setting: Setting, system: str) -> str:
        """Why `system` ignores a setting it does not honour: its own sentence when it gave one (`lacks`), else
        what the setting asks for."""
        own = dict(self.lacks).get(setting)
        return own if own is not None else f"{system} does not honour {SETTING_MEANING[setting]}"

    def to_json(self) -> dict[str, Any]:
        """The protocol's object; `lacks` only when the system gave sentences (it is optional, like `settings`),
        `rounds_per_event` only when paced."""
        out = {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}
        out["lacks"] = dict(self.lacks)
        if not self.lacks:
            del out["lacks"]
        if not self.rounds_per_event:
            del out["rounds_per_event"]
        return out


def _lacks(value: Any, settings: tuple[Setting, ...]) -> tuple[tuple[Setting, str], ...]:
    """`capabilities.lacks` checked: settings it does not honour, each with a sentence of one line."""
    path = "capabilities.lacks"
    pairs = list(value.items()) if isinstance(value, Mapping) else value
    if not isinstance(pairs, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise BadInputError(f"expected an object from a setting to a sentence, got {short_repr(value)}", path=path)
    out = []
    for setting, sentence in pairs:
        check_literal(setting, Setting, f"{path}.{setting}")
        if setting in settings:
            raise BadInputError(f"{setting!r} is in capabilities.settings: a setting it honours lacks nothing",
                                path=f"{path}.{setting}")
        if not isinstance(sentence, str) or not sentence.strip() or "\n" in sentence \
                or len(sentence) > MAX_LACKS_CHARS:
            raise BadInputError(f"expected one line of 1 to {MAX_LACKS_CHARS} characters, got {short_repr(sentence)}",
                                path=f"{path}.{setting}")
        out.append((setting, sentence.strip()))
    if len({s for s, _ in out}) != len(out):
        raise BadInputError("a setting is named twice", path=path)
    return tuple(out)


def join_category_of(scenario: Scenario) -> JoinCategory:
    """The join category a scenario belongs to: an interval join, a chain of three or more inputs, or a regular join."""
    if scenario.join.interval is not None:
        return "interval"
    return "multiway" if len(scenario.join.inputs) > 2 else "regular"


def _uses_processing_time(scenario: Scenario) -> bool:
    iv = scenario.join.interval
    return iv is not None and iv.time == "processing"


def applicability(scenario: Scenario, capabilities: Capabilities, system: str = "the system") -> str | None:
    """None when the system can run the scenario; otherwise the reason it cannot, naming what is missing."""
    caps = capabilities
    category = join_category_of(scenario)
    if scenario.has_views():
        return (f"{system} is sent the join only: a projection or filter in front of it, a SELECT list or a WHERE "
                f"after it are not part of the adapter protocol yet")
    if any("epoch_ms(" in c.lower() for c in scenario.join.conditions):  # the one shape: year(epoch_ms(x)), ...
        return (f"{system} is sent conditions in the adapter protocol's expression tree, which has no calendar "
                f"fields of a timestamp (year, quarter, month, day of epoch_ms) yet")
    if any(spec.source is not None for spec in scenario.inputs):
        return (f"{system} is sent one stream per input: one source feeding several inputs (`source`) is not part "
                f"of the adapter protocol yet")
    if category not in caps.families:
        return f"{system} does not run {category} joins"
    for jtype in scenario.join.types:
        if jtype not in caps.join_types:
            return f"{system} does not run {jtype.upper()} joins"
    for spec in scenario.chain:
        if spec.changelog_mode not in caps.changelog_modes:
            return f"{system} does not take {spec.changelog_mode} inputs"
        for _, ctype in spec.columns:
            if ctype not in caps.column_types:
                return f"{system} does not take {ctype} columns"
    for setting in settings_used(scenario):
        if not caps.honours(setting):
            return f"{caps.why_ignored(setting, system)}: it would ignore the setting"
    if scenario.config.state_ttl_ms is not None and scenario.config.state_ttl_ms != {} and not caps.state_ttl:
        return f"{system} cannot drive state TTL (its TTL is not driven by the scenario's clock)"
    if category == "interval":
        domain = "processing_time" if _uses_processing_time(scenario) else "event_time"
        if domain not in caps.time_domains:
            return f"{system} does not run {domain.replace('_', '-')} interval joins"
    if _uses_processing_time(scenario) and not caps.deterministic_order:
        return (f"{system} cannot be given the interleaving of its inputs, and a processing-time join's answer "
                f"depends on it")
    return None


def settings_used(scenario: Scenario) -> tuple[Setting, ...]:
    """The settings a scenario asks for that a system may ignore."""
    out: list[Setting] = []
    if scenario.config.multi_join == "on" and len(scenario.join.inputs) > 2:
        out.append("multi_join")
    cfg = scenario.config
    if cfg.mini_batch_size is not None:
        out.append("mini_batch")
    if cfg.state_backend is not None:
        out.append("state_backend")
    if cfg.parallelism is not None:
        out.append("parallelism")
    if cfg.sink == "upsert":
        out.append("upsert_sink")
    if cfg.restart_after is not None:
        out.append("restart")
    return tuple(out)


def _nonzero(bag: Counter) -> Counter:
    return Counter({row: n for row, n in bag.items() if n != 0})


@dataclass(frozen=True)
class CaseResult:
    """One case's answer: the final multiset and/or the changelog (ok), or why there is none."""

    status: CaseStatus
    final: Counter | None = None
    changelog: tuple[Change, ...] | None = None
    message: str = ""

    def __post_init__(self) -> None:
        check_literal(self.status, CaseStatus, "status")
        if self.status == "ok" and self.final is None and self.changelog is None:
            raise BadInputError("an ok result needs a final multiset or a changelog", path="status")

    @classmethod
    def ok(cls, *, final: Counter | None = None, changelog: Sequence[Change] | None = None) -> CaseResult:
        return cls("ok", final=None if final is None else _nonzero(Counter(final)),
                   changelog=None if changelog is None else tuple(changelog))

    @classmethod
    def unsupported(cls, reason: str) -> CaseResult:
        return cls("unsupported", message=reason)

    @classmethod
    def error(cls, message: str) -> CaseResult:
        return cls("error", message=message)

    def folded(self) -> Counter:
        """The final table: the multiset given, or the changelog folded (+I/+U add, -U/-D remove)."""
        if self.final is not None:
            return self.final
        if self.changelog is None:
            raise BadInputError(f"a {self.status} result has no answer ({self.message})")
        # counted here rather than with engine.materialize: the properties fold outputs with that helper on
        # the promise that no engine module uses it (tests/architecture/test_harness_hygiene.py)
        bag: Counter = Counter()
        for change in self.changelog:
            bag[change.row] += sign(change.kind)
        return _nonzero(bag)


class System(ABC):
    """A streaming join engine converge can send cases to; use it as a context manager (close() ends it)."""

    name: str
    version: str
    capabilities: Capabilities

    @abstractmethod
    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        """One result per case, in order; the cases should be of one shape (docs/systems.md)."""

    def close(self) -> None:  # noqa: B027 - a system that holds nothing need not close anything
        """Release what the system holds (a process, a cluster); a closed system runs nothing more."""

    @property
    def title(self) -> str:
        """`name version`, as reports show it."""
        return f"{self.name} {self.version}"

    def why_not(self, scenario: Scenario) -> str | None:
        """applicability() for this system, naming it."""
        return applicability(scenario, self.capabilities, self.name)

    def __enter__(self) -> System:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
