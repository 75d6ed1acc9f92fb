"""Which special cases a generated example contains, so a family that never draws one is noticed.

The operators treat some inputs specially; a generator family that never
produces one of them leaves that code path untested, however many examples it
runs (measured: a duplicated row on an input without unique key was drawn by
one family and never by another, and a planted bug there went unseen). Each
example's scenarios are classified here, from the scenario alone, with no
engine module:

| case | what the example holds |
|---|---|
| `duplicate_rows_no_uk` | an input without a unique key holds two identical rows at once |
| `null_key` | a change whose join key has a NULL |
| `uk_none` / `uk_join_key` / `uk_own` | an input whose state view is InputSideHasNoUniqueKey / JoinKeyContainsUniqueKey / InputSideHasUniqueKey |
| `mode_insert_only` / `mode_retract` / `mode_upsert` / `mode_all` | an input declared with that changelog mode |
| `key_emptied` | the rows of one join key of an input all retracted, after it held some |
| `single_row_key` | one join key of an input holding exactly one row |
| `empty_input` | a joined input that receives no change at all |

`run_property` records them per example with Hypothesis's `event()` (shown by
pytest's `--hypothesis-show-statistics`) and counts them; `target()` steers
generation towards examples that hold more of them. `converge run --stats`
prints the table per family; tests/test_coverage.py fails when a family never
draws one of the cases `REQUIRED` lists for it.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from converge.engine.model.changelog import ACCUMULATE_KINDS
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario
from converge.properties.reference import equality_keys, view_kind

CASES = ("duplicate_rows_no_uk", "null_key", "uk_none", "uk_join_key", "uk_own", "mode_insert_only",
         "mode_retract", "mode_upsert", "mode_all", "key_emptied", "single_row_key", "empty_input")
_VIEW_CASE = {"InputSideHasNoUniqueKey": "uk_none", "JoinKeyContainsUniqueKey": "uk_join_key",
              "InputSideHasUniqueKey": "uk_own"}

# What each family must draw (tests/test_coverage.py), and why a case is left out where it is.
_APPEND_ONLY = {"uk_join_key", "uk_own", "mode_retract", "mode_upsert", "mode_all", "key_emptied"}
REQUIRED: dict[str, frozenset[str]] = {
    "regular": frozenset(CASES),
    "anomalies": frozenset(CASES),
    "multiway": frozenset(CASES),
    # interval joins take append-only inputs without unique keys (Flink's interval join has no state views
    # by unique key and no retractions): those cases cannot occur there
    "interval": frozenset(CASES) - _APPEND_ONLY,
    # a bundle folds `+U v, -U v` away, which is right only when every +U follows its -U; a raw `all` input's
    # bare +U breaks that promise, so mini-batch on and off differ on it by design (docs/minibatch.md)
    "minibatch": frozenset(CASES) - {"mode_all"},
}


def _key_columns(scenario: Scenario, spec: InputSpec) -> list[str]:
    """The columns of `spec` some join condition compares for equality (its join key, as far as any link goes)."""
    names = list(scenario.join.inputs)
    cols: list[str] = []
    for i, cond in enumerate(scenario.join.conditions):
        right = names[i + 1]
        for left_input, lc, rc, _ in equality_keys(cond, names[: i + 1], right):
            for name, col in ((left_input, lc), (right, rc)):
                if name == spec.name and col not in cols:
                    cols.append(col)
    return cols


def special_cases(scenario: Scenario) -> set[str]:
    """The special cases one scenario holds (see the module docstring)."""
    found: set[str] = set()
    chain = scenario.chain
    keys = {spec.name: _key_columns(scenario, spec) for spec in chain}
    idx = {spec.name: [spec.index_of(c) for c in keys[spec.name]] for spec in chain}
    for spec in chain:
        found.add(f"mode_{spec.changelog_mode}")
        found.add(_VIEW_CASE[view_kind(spec, keys[spec.name])])
    touched: set[str] = set()
    bags: dict[str, Counter] = {spec.name: Counter() for spec in chain}
    groups: dict[tuple, int] = Counter()
    upsert_rows: dict[tuple, tuple] = {}
    specs = {spec.name: spec for spec in chain}
    for event in scenario.events:
        if not isinstance(event, ChangeEvent) or event.input not in specs:
            continue
        spec = specs[event.input]
        touched.add(spec.name)
        key = tuple(event.row[i] for i in idx[spec.name])
        if any(v is None for v in key) and spec.changelog_mode != "upsert":
            found.add("null_key")  # (an upsert -D may carry only the unique key: its NULLs are not a key)
        elif any(v is None for v in key) and event.kind != "-D":
            found.add("null_key")
        accumulate = event.kind in ACCUMULATE_KINDS
        if spec.changelog_mode in ("upsert", "all") and spec.unique_key:
            uk = (spec.name, tuple(event.row[spec.index_of(c)] for c in spec.unique_key))
            old = upsert_rows.pop(uk, None)
            old_group = None if old is None else (spec.name, tuple(old[i] for i in idx[spec.name]))
            if accumulate:
                upsert_rows[uk] = event.row
            if accumulate and old_group == (spec.name, key):
                continue  # a new version under the same join key: the key's rows do not change in number
            if old_group is not None:
                _leave(groups, old_group, found)
            if accumulate:
                _enter(groups, (spec.name, key), found)
            continue
        bag = bags[spec.name]
        if accumulate:
            bag[event.row] += 1
            if bag[event.row] >= 2 and not spec.unique_key:
                found.add("duplicate_rows_no_uk")
            _enter(groups, (spec.name, key), found)
        elif bag[event.row] > 0:
            bag[event.row] -= 1
            _leave(groups, (spec.name, key), found)
    if any(spec.name not in touched for spec in chain):
        found.add("empty_input")
    return found


def _enter(groups: dict, group: tuple, found: set[str]) -> None:
    groups[group] += 1
    if groups[group] == 1:
        found.add("single_row_key")


def _leave(groups: dict, group: tuple, found: set[str]) -> None:
    if groups[group] <= 0:
        return
    groups[group] -= 1
    if groups[group] == 0:
        found.add("key_emptied")
    elif groups[group] == 1:
        found.add("single_row_key")


def example_cases(args: Iterable[object]) -> set[str]:
    """The special cases of every scenario among a property's arguments (pairs of scenarios included)."""
    found: set[str] = set()
    for arg in args:
        if isinstance(arg, Scenario):
            found |= special_cases(arg)
        elif isinstance(arg, tuple):
            found |= example_cases(arg)
    return found


def missing_cases(family: str, drawn: Counter) -> list[str]:
    """The cases `family` must draw (REQUIRED) that `drawn` never saw, in CASES order."""
    required = REQUIRED.get(family, frozenset(CASES))
    return [c for c in CASES if c in required and not drawn.get(c)]


def coverage_rows(examples: dict[str, int], drawn: dict[str, Counter]) -> list[tuple[str, ...]]:
    """One row per case: per family, how many examples drew it and their share ("-" where not required)."""
    rows = []
    for case in CASES:
        row = [case]
        for family, n in examples.items():
            if case not in REQUIRED.get(family, frozenset(CASES)):
                row.append("-")
                continue
            k = drawn[family].get(case, 0)
            row.append(f"{k} ({100 * k / n:.0f}%)" if n else "0")
        rows.append(tuple(row))
    return rows
