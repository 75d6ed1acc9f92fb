"""Folding a changelog into the table it describes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from converge.engine.model.changelog import Change


def fold(changes: Iterable[Change], into: Counter | None = None) -> Counter:
    """The multiset a retract changelog describes (+I/+U add one, -U/-D remove one).

    Counts may go negative (a retraction of a row never emitted); callers that
    require non-negativity check it, so the anomaly is visible, not hidden.
    """
    bag: Counter = Counter() if into is None else into
    for kind, row in changes:
        if kind == "+I" or kind == "+U":
            bag[row] += 1
        else:
            bag[row] -= 1
    return bag


def clean(bag: Counter) -> Counter:
    """Drop zero counts (keep negative ones: they are evidence)."""
    return Counter({row: n for row, n in bag.items() if n != 0})


def fold_history(per_event: Iterable[Sequence[object]]) -> list[Counter]:
    """The materialized output after every event."""
    bag: Counter = Counter()
    out: list[Counter] = []
    for items in per_event:
        fold([i for i in items if isinstance(i, Change)], bag)
        out.append(clean(bag))
    return out
