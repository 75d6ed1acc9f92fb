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
| `key_composite` | a join whose condition has two or more top-level key equalities |
| `key_three_columns` | ... three or more |
| `key_mixed_types` | a composite key with columns of different types (BIGINT and VARCHAR) |
| `key_positions_differ` | a join's key columns sit at other positions on the two inputs |
| `key_crossed` | a composite key whose columns come in another order on the two inputs (pairing them by position joins the wrong columns) |
| `key_columns_tied` | a change whose row holds one non-NULL value in two of its key columns |
| `or_equality` | an equality between two inputs' columns inside an OR of a join condition |
| `mixed_modes` | a chain of three or more inputs declared with two or more changelog modes |
| `bundle_update_pair` | mini-batch: a `-U`/`+U` pair inside one bundle whose rows differ in a column the condition names |
| `raw_retraction` | a retraction of a row its input never sent (a stream started mid-way; generators/mid_stream.py) |

`run_property` records them per example with Hypothesis's `event()` (shown by
pytest's `--hypothesis-show-statistics`) and counts them; `target()` steers
generation towards examples that hold more of them. `converge run --stats`
prints the table per family; tests/properties/test_coverage.py fails when a family never
draws one of the cases `REQUIRED` lists for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import pairwise
from typing import Protocol

import sqlglot
from sqlglot import exp

from converge.engine.calc import joined_scenario
from converge.engine.model.changelog import ACCUMULATE_KINDS
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario
from converge.generators.mid_stream import raw_retractions
from converge.properties.reference import equality_keys, view_kind

CASES = ("duplicate_rows_no_uk", "null_key", "uk_none", "uk_join_key", "uk_own", "mode_insert_only",
         "mode_retract", "mode_upsert", "mode_all", "key_emptied", "single_row_key", "empty_input",
         "key_composite", "key_three_columns", "key_mixed_types", "key_positions_differ", "key_crossed",
         "key_columns_tied", "or_equality", "mixed_modes", "bundle_update_pair", "raw_retraction")
# The shapes where planners broke (issue 25; docs/generators.md); `mixed_modes` needs a chain, `bundle_update_pair`
# a bundle, so only the families that draw those require them.
_PLANNER = frozenset(CASES[12:19])
_VIEW_CASE = {"InputSideHasNoUniqueKey": "uk_none", "JoinKeyContainsUniqueKey": "uk_join_key",
              "InputSideHasUniqueKey": "uk_own"}

# What each family must draw (tests/properties/test_coverage.py), and why a case is left out where it is.
_APPEND_ONLY = {"uk_join_key", "uk_own", "mode_retract", "mode_upsert", "mode_all", "key_emptied"}
_BASIC = frozenset(CASES[:12])
REQUIRED: dict[str, frozenset[str]] = {
    "regular": _BASIC | _PLANNER,
    "anomalies": _BASIC | _PLANNER,
    "multiway": _BASIC | _PLANNER | {"mixed_modes"},
    # interval joins take append-only inputs without unique keys (Flink's interval join has no state views
    # by unique key and no retractions): those cases cannot occur there; its generator's inputs have one key
    # column and one value column, so no key of three columns or of two types
    "interval": (_BASIC - _APPEND_ONLY) | (_PLANNER - {"key_three_columns", "key_mixed_types"}),
    # a bundle folds `+U v, -U v` away, which is right only when every +U follows its -U; a raw `all` input's
    # bare +U breaks that promise, so mini-batch on and off differ on it by design (docs/minibatch.md)
    "minibatch": (_BASIC - {"mode_all"}) | _PLANNER | {"bundle_update_pair"},
    # streams cut from the regular, multi-way and mini-batch generators' changelogs (generators/mid_stream.py)
    "raw_changelog": _BASIC | _PLANNER | {"raw_retraction"},
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


def _links(scenario: Scenario) -> Iterator[tuple[InputSpec, InputSpec, list[tuple[str, str]]]]:
    """(left input, right input, [(left column, right column), ...]) per pair of inputs a join's key links."""
    names = list(scenario.join.inputs)
    specs = {spec.name: spec for spec in scenario.chain}
    for i, cond in enumerate(scenario.join.conditions):
        pairs: dict[str, list[tuple[str, str]]] = {}
        for left_input, lc, rc, _ in equality_keys(cond, names[: i + 1], names[i + 1]):
            pairs.setdefault(left_input, []).append((lc, rc))
        for left_input, cols in pairs.items():
            yield specs[left_input], specs[names[i + 1]], cols


def _key_shape_cases(scenario: Scenario) -> set[str]:
    """The key shapes of the scenario's joins (CASES from key_composite to key_crossed)."""
    found: set[str] = set()
    for left, right, pairs in _links(scenario):
        types = dict(left.columns)
        lpos = [left.index_of(lc) for lc, _ in pairs]
        rpos = [right.index_of(rc) for _, rc in pairs]
        if len(pairs) >= 2:
            found.add("key_composite")
        if len(pairs) >= 3:
            found.add("key_three_columns")
        if len({types[lc] for lc, _ in pairs}) >= 2:
            found.add("key_mixed_types")
        if lpos != rpos:
            found.add("key_positions_differ")
        by_left = [r for _, r in sorted(zip(lpos, rpos, strict=False))]
        if by_left != sorted(by_left):
            found.add("key_crossed")
    if any(_or_equality(cond) for cond in scenario.join.conditions):
        found.add("or_equality")
    if len(scenario.chain) >= 3 and len({spec.changelog_mode for spec in scenario.chain}) >= 2:
        found.add("mixed_modes")
    return found


@lru_cache(maxsize=512)
def _or_equality(condition: str) -> bool:
    """Whether some OR of `condition` holds an equality between columns of two inputs (parsed by sqlglot)."""
    for node in _parsed(condition).find_all(exp.Or):
        for eq in node.find_all(exp.EQ, exp.NullSafeEQ):
            left, right = eq.left, eq.right
            if isinstance(left, exp.Column) and isinstance(right, exp.Column) and left.table != right.table:
                return True
    return False


def _bundle_update_pair(scenario: Scenario) -> bool:
    """A `-U`/`+U` pair of one input inside one count-triggered bundle, the rows differing in a condition column.

    Counted where every change is one element of the join (no upsert input: ChangelogNormalize may send it 0-2)."""
    size = scenario.config.mini_batch_size
    if not size or any(spec.changelog_mode == "upsert" for spec in scenario.chain):
        return False
    specs = {spec.name: spec for spec in scenario.chain}
    changes = [e for e in scenario.events if isinstance(e, ChangeEvent) and e.input in specs]
    for p, (old, new) in enumerate(pairwise(changes)):
        if old.kind != "-U" or new.kind != "+U" or old.input != new.input or p // size != (p + 1) // size:
            continue
        cols = _condition_columns(scenario, old.input)
        spec = specs[old.input]
        if any(old.row[spec.index_of(c)] != new.row[spec.index_of(c)] for c in cols if c in spec.column_names):
            return True
    return False


def _condition_columns(scenario: Scenario, name: str) -> set[str]:
    """The columns of input `name` that any join condition names."""
    cols: set[str] = set()
    for cond in scenario.join.conditions:
        for column in _parsed(cond).find_all(exp.Column):
            if column.table == name:
                cols.add(column.name)
    return cols


@lru_cache(maxsize=512)
def _parsed(condition: str) -> exp.Expr:
    """The condition's syntax tree; one sqlglot cannot read classifies as no shape (the check reports it)."""
    try:
        return sqlglot.parse_one(condition)
    except sqlglot.errors.SqlglotError:
        return exp.Boolean(this=True)


def special_cases(scenario: Scenario) -> set[str]:
    """The special cases one scenario holds (see the module docstring)."""
    scenario = joined_scenario(scenario)  # with views: what reaches the join
    found: set[str] = _key_shape_cases(scenario)
    chain = scenario.chain
    keys = {spec.name: _key_columns(scenario, spec) for spec in chain}
    if _bundle_update_pair(scenario):
        found.add("bundle_update_pair")
    if raw_retractions(scenario):
        found.add("raw_retraction")
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
        if any(key.count(v) > 1 for v in key if v is not None):
            found.add("key_columns_tied")
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
        elif isinstance(arg, (tuple, list)):  # a pair of scenarios; a system campaign's batch of cases
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


class _Covered(Protocol):
    """What coverage_summary reads of a property's result (properties.campaign.PropertyResult)."""

    family: str
    examples: int
    coverage: Counter


def coverage_summary(results: Iterable[_Covered], unit: str = "examples") -> tuple[tuple[str, ...], list]:
    """(headers, rows) of the `--stats` table: per family, how many `unit`s drew each case. A system campaign's
    unit is a batch: its cases share one shape, so a shape's case (key form, layout, modes) is every case's."""
    examples: dict[str, int] = {}
    drawn: dict[str, Counter] = {}
    for r in results:
        examples[r.family] = examples.get(r.family, 0) + r.examples
        drawn.setdefault(r.family, Counter()).update(r.coverage)
    headers = (f"special case ({unit} drawing it)",) + tuple(f"{f} ({n})" for f, n in examples.items())
    return headers, coverage_rows(examples, drawn)
