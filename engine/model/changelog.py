"""Row kinds and changes: the vocabulary every operator speaks."""

from __future__ import annotations

from typing import Literal, NamedTuple

RowKind = Literal["+I", "-U", "+U", "-D"]
ROW_KINDS: tuple[RowKind, ...] = ("+I", "-U", "+U", "-D")
ACCUMULATE_KINDS = frozenset({"+I", "+U"})
RETRACT_KINDS = frozenset({"-U", "-D"})

Row = tuple


class Change(NamedTuple):
    """One changelog entry: a row kind and a full row image."""

    kind: str
    row: tuple

    def to_json(self) -> dict:
        return {"kind": self.kind, "row": list(self.row)}


class OutputWatermark(NamedTuple):
    """A watermark emitted by an operator; part of the output changelog."""

    watermark: int

    def to_json(self) -> dict:
        return {"watermark": self.watermark}


def sign(kind: str) -> int:
    """+1 for +I/+U, -1 for -U/-D: how a change moves a materialized bag."""
    return 1 if kind in ACCUMULATE_KINDS else -1
