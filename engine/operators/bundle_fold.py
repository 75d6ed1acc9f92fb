"""How a mini-batch bundle folds the records of one input before they reach the join (docs/minibatch.md).

Flink's MiniBatchStreamingJoinOperator buffers each input in a bundle chosen
by the input's state view, and the bundle folds records as they arrive:

* unique-key views (JoinKeyContainsUniqueKey, InputSideHasUniqueKey), per
  unique key: an accumulate (+I/+U) followed by another accumulate keeps only
  the later one; a retraction (-U/-D) followed by another retraction keeps
  only the later one; an accumulate followed by a retraction removes both; a
  retraction followed by an accumulate is kept as a pair. What is left is at
  most [retraction, accumulate].
* no unique key, per join key: a record cancels the most recent earlier
  record with the same field values and the opposite direction (accumulate vs
  retraction); otherwise it is kept.

The fold is a left fold, so folding the whole sequence at flush time gives
exactly what Flink's incremental folding gives. `semantics="flink"` keeps
Flink 2.x's row kinds: after `+I a, -U a` cancel, a following `+U b` stays
`+U` although nothing was ever emitted for that key (FLINK-34380), and
`+I a, +U b` folds to `+U b`. `semantics="correct"` turns the surviving
accumulate into `+I` in both cases (the fix proposed for FLINK-34380).
"""

from __future__ import annotations

from collections.abc import Sequence

from converge.engine.model.changelog import ACCUMULATE_KINDS, Change
from converge.engine.model.scenario import Semantics


def is_accumulate(kind: str) -> bool:
    return kind in ACCUMULATE_KINDS


def fold_unique_key(records: Sequence[Change], semantics: Semantics) -> list[Change]:
    """The records of one unique key in one bundle, folded (at most [retraction, accumulate])."""
    kept: list[Change] = []
    inserted_and_cleared = False          # the last step cancelled a +I: nothing was emitted for the key
    for change in records:
        kind = change.kind
        if semantics == "correct" and inserted_and_cleared and kind == "+U":
            change = Change("+I", change.row)
            kind = "+I"
        inserted_and_cleared = False
        if kept:
            last = kept[-1]
            if is_accumulate(last.kind):
                kept.pop()
                if not is_accumulate(kind):          # accumulate then retraction: both go
                    inserted_and_cleared = last.kind == "+I"
                    continue
                if semantics == "correct" and last.kind == "+I" and kind == "+U":
                    change = Change("+I", change.row)   # +I then +U: still an insert downstream
            elif not is_accumulate(kind):            # retraction then retraction: keep the later one
                kept.pop()
        kept.append(change)
    return kept


def fold_no_unique_key(records: Sequence[Change]) -> list[Change]:
    """The records of one join key in one bundle, with equal rows of opposite direction cancelled."""
    kept: list[Change] = []
    for change in records:
        acc = is_accumulate(change.kind)
        for i in range(len(kept) - 1, -1, -1):
            other = kept[i]
            if other.row == change.row and is_accumulate(other.kind) != acc:
                del kept[i]
                break
        else:
            kept.append(change)
    return kept


def pair_up(folded: Sequence[Change]) -> list[tuple[Change, Change | None]]:
    """Flink's processElementWithSuppress walk over one unique key's folded records: a retraction
    directly followed by an accumulate is a pair (processed with padding suppressed); anything else
    stands alone (second element None)."""
    out: list[tuple[Change, Change | None]] = []
    i = 0
    while i < len(folded):
        current = folded[i]
        if (not is_accumulate(current.kind) and i + 1 < len(folded)
                and is_accumulate(folded[i + 1].kind)):
            out.append((current, folded[i + 1]))
            i += 2
        else:
            out.append((current, None))
            i += 1
    return out
