"""Known divergences of Spark's native join: a confirmed divergence that a Spark campaign counts as known instead of
failing and reducing it again on Spark (one query a round, most of a campaign's time when it meets one).

The native-join counterpart of properties/systems/known.py, with its entry format and loader: the list is
properties/systems/known_divergences/native/*.json (a folder of its own, so the scenario systems' built-in list
stays theirs), and each entry's `case` is a native-join case file. A scenario's matcher text names inputs and
conditions; a native case has neither, so an entry's `matcher` is searched in `native_case_text`: the
divergence's message, `join: <type>`, and per row of the output's difference `extra: L = R` or `missing: L = R`,
where L and R are the key values of the pair's left and right row ([NULL] for a NULL key) and `-` for a padded side.
`--known FILE` entries with `"system": "spark"` apply too; `--no-known` drops the built-in list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from converge.engine.model.native_join_case import SIDES, NativeJoinCase, Side
from converge.properties.divergence import Divergence, bag_diff
from converge.properties.systems.known import BUILTIN, KnownDivergence, load_known, version_matches

NATIVE_BUILTIN = BUILTIN / "native"
FAMILY = "spark_native"


def builtin_native_known() -> list[KnownDivergence]:
    """The built-in list of Spark's native join: every known_divergences/native/*.json."""
    return [k for path in sorted(NATIVE_BUILTIN.glob("*.json")) for k in load_known(path)]


def native_known(files: Sequence[Path] = (), *, builtin: bool = True) -> list[KnownDivergence]:
    """What a Spark campaign applies: the built-in list (unless `builtin` is off), then the spark entries of each
    `--known FILE` (a file may list entries of other systems too)."""
    extra = [k for f in files for k in load_known(f) if k.system == "spark"]
    return (builtin_native_known() if builtin else []) + extra


def _keys(case: NativeJoinCase, side: Side, rid: int | None) -> str:
    if rid is None:
        return "-"
    spec = case.input(side)
    row = case.rows(side)[rid][2]
    cols = [k[0] if side == "left" else k[1] for k in case.keys]
    return "[" + ", ".join("NULL" if row[spec.columns.index(c)] is None else str(row[spec.columns.index(c)])
                           for c in cols) + "]"


def native_case_text(d: Divergence) -> str:
    """What a matcher is searched in, one fact a line (see the module's docstring)."""
    case = cast(NativeJoinCase, d.scenario)  # a native property's divergence holds its case (checks.py `_fail`)
    lines = [d.message, f"join: {case.join}"]
    if d.engine is not None and d.expected is not None:
        for sign, pair, _ in bag_diff(d.engine, d.expected):
            left, right = (pair[0], pair[1]) if len(pair) == 2 else (pair[0], None)
            sides = dict(zip(SIDES, (left, right), strict=True))
            lines.append(f"{'extra' if sign == '+' else 'missing'}: {_keys(case, 'left', sides['left'])} = "
                         f"{_keys(case, 'right', sides['right'])}")
    return "\n".join(lines)


@dataclass(frozen=True)
class NativeRecogniser:
    """The entries that apply to one native-join property on one Spark version: what a check asks of a failure."""

    known: tuple[KnownDivergence, ...]
    version: str
    prop: str

    def __call__(self, d: Divergence) -> KnownDivergence | None:
        text = None
        for k in self.known:
            if k.system != "spark" or not version_matches(k.versions, self.version):
                continue
            if k.property is not None and k.property not in (self.prop, f"{FAMILY}/{self.prop}"):
                continue
            if k.matcher is not None:
                text = native_case_text(d) if text is None else text
                if re.search(k.matcher, text) is None:
                    continue
            return k
        return None
