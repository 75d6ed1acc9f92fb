"""What a property's run exercised: cases compared, known, not applicable, unsupported, skipped.

A property that passes without comparing anything says nothing, so every
result carries these counts and `run_property` turns a run that compared
nothing into NotCheckedError. A check records what it did with the case or
cases of one example through the functions below (a system check sends a
batch of cases, some of which the system may answer "unsupported"); an
example whose check records nothing and returns was one comparison: the
properties of converge's own engine compare every example they are given.

A case of a system whose divergence matched a known-divergences entry
(properties/systems/known.py) counts as `known`, under the entry's id, and
not as `compared`: `compared` counts the cases whose answer was judged by the
property (agreed, or diverged in a way no entry explains), so a run whose
every case was known compared nothing and still ends as not checked.
"""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["compared", "not_applicable", "unsupported", "skipped", "known"]
NOT_COMPARED: tuple[Kind, ...] = ("not_applicable", "unsupported", "skipped")
MAX_REASONS = 5


@dataclass
class Exercised:
    """Counts of cases by what became of them, and the most frequent reasons a case was not compared."""

    compared: int = 0
    not_applicable: int = 0
    unsupported: int = 0
    skipped: int = 0
    reasons: Counter = field(default_factory=Counter)   # "unsupported: <why>" -> cases
    known: int = 0          # a system's cases whose divergence a known entry matched ("known: <entry id>")

    def add(self, kind: Kind, n: int = 1, reason: str | None = None) -> None:
        setattr(self, kind, getattr(self, kind) + n)
        if kind != "compared" and reason and n:
            self.reasons[f"{kind.replace('_', ' ')}: {reason}"] += n

    def merge(self, other: Exercised) -> None:
        for kind in ("compared", "known") + NOT_COMPARED:
            setattr(self, kind, getattr(self, kind) + getattr(other, kind))
        self.reasons.update(other.reasons)

    @property
    def cases(self) -> int:
        return self.compared + self.known + self.not_compared

    @property
    def not_compared(self) -> int:
        return self.not_applicable + self.unsupported + self.skipped

    @property
    def empty(self) -> bool:
        return self.cases == 0

    def describe(self, *, compared: bool = True) -> str:
        """`12 compared, 1 known, 7 unsupported`: the nonzero counts, compared first (`compared=False`: the cases
        not compared only, known ones excepted)."""
        kinds = (("compared", "known") if compared else ()) + NOT_COMPARED
        parts = [f"{getattr(self, k)} {k.replace('_', ' ')}" for k in kinds if getattr(self, k)]
        return ", ".join(parts) or "no case"

    def why_nothing_compared(self) -> str:
        """The reason a run that compared nothing gives: the counts and the most frequent reasons."""
        if self.empty:
            return "no case was drawn"
        top = "; ".join(f"{reason} ({n})" for reason, n in self.reasons.most_common(MAX_REASONS))
        return f"none of {self.cases} cases compared ({self.describe()})" + (f": {top}" if top else "")

    def to_json(self) -> dict:
        return {"compared": self.compared, "not_applicable": self.not_applicable, "unsupported": self.unsupported,
                "skipped": self.skipped, "known": self.known, "reasons": dict(self.reasons.most_common(MAX_REASONS))}


_current: ContextVar[Exercised | None] = ContextVar("converge_exercised", default=None)


def record(kind: Kind, n: int = 1, reason: str | None = None) -> None:
    """Record what became of `n` cases of the example now being checked (outside run_property: nothing)."""
    current = _current.get()
    if current is not None and n > 0:
        current.add(kind, n, reason)


def compared(n: int = 1) -> None:
    record("compared", n)


def unsupported(reason: str, n: int = 1) -> None:
    record("unsupported", n, reason)


def known(entry: str, n: int = 1) -> None:
    """`n` cases whose divergence the known entry `entry` (its id) matched: counted, neither compared nor failed."""
    record("known", n, entry)


def not_applicable(reason: str, n: int = 1) -> None:
    record("not_applicable", n, reason)


def skipped(reason: str, n: int = 1) -> None:
    record("skipped", n, reason)


class Recording:
    """The records of one example: `with Recording() as r:` around the check, then `r.exercised`."""

    def __init__(self) -> None:
        self.exercised = Exercised()
        self._token: Token[Exercised | None] | None = None  # set by __enter__

    def __enter__(self) -> Recording:
        self._token = _current.set(self.exercised)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _current.reset(self._token)
