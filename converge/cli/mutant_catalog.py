"""Seeded bugs: named, realistic mistakes that `converge mutants` injects into the engine one at a time.

A mutant is a set of source patches: each names a function or method of the
engine (``module:Qualified.name``), a snippet of its source and the buggy
replacement. Applying a mutant recompiles the patched functions from their
own source with the snippet replaced and installs them; leaving the context
puts the originals back. So a bug is literally a changed line of engine code,
never a wrapper that guesses its effect, and the shipped engine path is never
touched: only `mutants` (the `converge mutants` command) and the tests use
this module.

A patch whose snippet is no longer found (the engine was edited) makes the
mutant *stale*: it is reported, never silently skipped.
"""

from __future__ import annotations
import __future__

import contextlib
import importlib
import inspect
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from converge.engine import condition
from converge.engine.model.errors import BadInputError, InternalError


class StaleMutantError(InternalError):
    """A patch's snippet is not in the engine source any more: the mutant must be updated."""


@dataclass(frozen=True)
class Patch:
    target: str          # "package.module:Class.method" or "package.module:function"
    old: str             # exact snippet of the function's (dedented) source
    new: str             # what it becomes
    count: int = 1       # how many times `old` must occur (all are replaced)


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str                              # one sentence: what the engine gets wrong
    family: str                           # the property family that should kill it
    patches: tuple[Patch, ...]
    properties: tuple[str, ...] = ()      # properties to try first, in this order (then the rest)


# ---------------------------------------------------------------- applying


def _resolve(target: str) -> tuple[Any, Any, str]:
    module_name, _, qual = target.partition(":")
    module = importlib.import_module(module_name)
    owner: Any = module
    *path, name = qual.split(".")
    for part in path:
        owner = getattr(owner, part)
    return module, owner, name


def _mutated(patch: Patch, mutant: str) -> tuple[Any, str, Any, Any]:
    """(owner, attribute name, original attribute, mutated attribute)."""
    module, owner, name = _resolve(patch.target)
    original = owner.__dict__[name]
    func = original.__func__ if isinstance(original, (staticmethod, classmethod)) else original
    if func.__code__.co_freevars:
        raise StaleMutantError(f"{mutant}: {patch.target} is a closure; it cannot be recompiled")
    source = textwrap.dedent(inspect.getsource(func))
    found = source.count(patch.old)
    if found != patch.count:
        raise StaleMutantError(f"{mutant}: expected {patch.count} occurrence(s) of {patch.old!r} in "
                               f"{patch.target}, found {found}; update converge/cli/mutant_catalog.py")
    code = compile(source.replace(patch.old, patch.new), f"<mutant {mutant}: {patch.target}>", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)  # noqa: S102 - the engine's own source, one snippet changed
    return owner, name, original, namespace[name]


def _reset_caches() -> None:
    """Compiled conditions are cached; a mutant of the compiler must not leak through the cache."""
    condition._CACHE.clear()
    condition._split_cached.cache_clear()


ACTIVE: list[str] = []  # names of the mutants applied right now (reports record them)


def report_notes() -> dict[str, list[str]]:
    """What a failure report written now must record: the seeded bugs applied (none: nothing)."""
    return {"mutants": list(ACTIVE)} if ACTIVE else {}


def _imported_copies(swaps: list[tuple[Any, str, Any, Any]]) -> list[tuple[Any, str, Any, Any]]:
    """The same swaps in every converge module that imported a patched function by name (`from m import f`)."""
    out = []
    for owner, name, original, new in swaps:
        if not inspect.ismodule(owner):
            continue
        for module in list(sys.modules.values()):
            if module is not owner and getattr(module, "__name__", "").startswith("converge.") \
                    and module.__dict__.get(name) is original:
                out.append((module, name, original, new))
    return out


@contextlib.contextmanager
def applied(mutant: Mutant) -> Iterator[Mutant]:
    """The engine with `mutant`'s bug in it, only inside the `with` block."""
    swaps = [_mutated(p, mutant.name) for p in mutant.patches]  # all resolved before anything changes
    swaps += _imported_copies(swaps)
    _reset_caches()
    try:
        for owner, name, _, new in swaps:
            setattr(owner, name, new)
        ACTIVE.append(mutant.name)
        yield mutant
    finally:
        if ACTIVE and ACTIVE[-1] == mutant.name:
            ACTIVE.pop()
        for owner, name, original, _ in reversed(swaps):
            setattr(owner, name, original)
        _reset_caches()


# ---------------------------------------------------------------- the catalog

_JOIN = "converge.engine.operators.regular_join:StreamingJoinOperator"
_SEMI = "converge.engine.operators.semi_anti_join:StreamingSemiAntiJoinOperator"
_STATE = "converge.engine.state"

REGULAR = "regular"
INTERVAL = "interval"
MULTIWAY = "multiway"
_INTERVAL_OP = "converge.engine.operators.interval_join:TimeIntervalJoinOperator"
_MULTI_OP = "converge.engine.operators.multi_join:StreamingMultiJoinOperator"
MINIBATCH = "minibatch"
_FOLD = "converge.engine.operators.bundle_fold"
_MINIBATCH_OP = "converge.engine.operators.minibatch_join:MiniBatchStreamingJoinOperator"

CATALOG: tuple[Mutant, ...] = (
    Mutant(
        "padding_not_retracted_on_first_match",
        "an outer record's NULL padding is not retracted (-D) when its first match arrives",
        REGULAR,
        (Patch(f"{_JOIN}._meet_padded", 'append(Change("-D", self._padded(not is_left, other)))', "pass", 1),),
    ),
    Mutant(
        "padding_not_reemitted_after_last_match",
        "an outer record's NULL padding is not re-emitted (+I) when its last match is retracted",
        REGULAR,
        (Patch(f"{_JOIN}._retract", 'append(Change("+I", self._padded(not is_left, other)))', "pass", 2),),
    ),
    Mutant(
        "association_count_not_decremented",
        "retracting a match leaves the outer record's association count unchanged",
        REGULAR,
        (Patch(f"{_JOIN}._retract", "other_view.update_num_of_associations(other, n - 1)",
               "other_view.update_num_of_associations(other, n)", 2),),
        properties=("hot_key_prefix_consistency", "prefix_consistency"),
    ),
    Mutant(
        "null_keys_match",
        "a NULL join key matches another NULL under '=' (filterNulls ignored)",
        REGULAR,
        (Patch("converge.engine.operators.regular_join:_null_filter",
               "checked = tuple(i for i, f in enumerate(filter_nulls) if f)", "checked = ()"),),
    ),
    Mutant(
        "residual_python_truthiness",
        "the residual condition's NOT / FALSE test uses Python truthiness (not NULL is TRUE) "
        "instead of SQL three-valued logic",
        REGULAR,
        (Patch("converge.engine.condition_compiler:Compiler.truth", 'cls, typ = node.get("class"), node.get("type")',
               'if not want:\n        return f"(not {self.truth(node, True)})"\n'
               '    cls, typ = node.get("class"), node.get("type")'),),
        properties=("prefix_consistency", "tlp_partition"),
    ),
    Mutant(
        "ttl_off_by_one",
        "a state entry written at t with TTL T is still visible at t+T (it must be gone)",
        REGULAR,
        (Patch(f"{_STATE}:MapState.put", "backend.now + self._ttl", "backend.now + self._ttl + 1"),
         Patch(f"{_STATE}:TtlValueState.update", "backend.now + self._ttl", "backend.now + self._ttl + 1")),
        properties=("ttl_fine_clock", "ttl_matches_model"),
    ),
    Mutant(
        "ttl_refreshed_on_read",
        "reading a state entry refreshes its TTL (Flink's OnCreateAndWrite never does)",
        REGULAR,
        (Patch(f"{_STATE}:MapState.get", "return entry[0]",
               "if self._ttl is not None:\n        entry[1] = self._backend.now + self._ttl\n"
               "    return entry[0]"),
         Patch(f"{_STATE}:MapState.items", "if len(entries) == 1:",
               "if self._ttl is not None:\n        for e in entries.values():\n"
               "            e[1] = now + self._ttl\n    if len(entries) == 1:"),
         Patch(f"{_STATE}:TtlValueState.get", "return timed.value",
               "timed.expires = backend.now + self._ttl\n    return timed.value")),
        properties=("ttl_fine_clock", "ttl_matches_model"),
    ),
    Mutant(
        "ttl_association_update_not_a_write",
        "a write that keeps an entry's place (association or copy-count update) does not refresh its TTL",
        REGULAR,
        (Patch(f"{_STATE}:MapState.put", "entry[1] = expires", "entry[1] = expires if new_arrival else entry[1]"),),
        properties=("ttl_fine_clock", "ttl_matches_model"),
    ),
    Mutant(
        "mapstate_arrival_order_in_rocksdb",
        "MapState in rocksdb mode iterates in arrival order instead of serialized-key byte order",
        REGULAR,
        (Patch(f"{_STATE}:KeyedStateBackend.map_state", "order_key_fn(self.map_state_order, key_types)",
               'order_key_fn("arrival" if self.map_state_order == "rocksdb" else self.map_state_order, '
               "key_types)"),),
        properties=("rocksdb_iteration_order",),
    ),
    Mutant(
        "hashmap_bucket_in_reverse_insertion_order",
        "hashmap mode iterates the entries of one HashMap bucket newest first instead of in insertion order",
        REGULAR,
        (Patch(f"{_STATE}:MapState.items", "key=lambda item: (item[1][2][0] & mask, item[1][2][1])",
               "key=lambda item: (item[1][2][0] & mask, -item[1][2][1])"),),
        properties=("hashmap_iteration_order",),
    ),
    Mutant(
        "hashmap_table_never_grows",
        "hashmap mode keeps every map at 16 buckets, however many entries it holds",
        REGULAR,
        (Patch(f"{_STATE}:MapState._insert_hashed", "grown = grown_capacity(capacity, len(entries), same)",
               "grown = capacity"),),
        properties=("hashmap_iteration_order",),
    ),
    Mutant(
        "restore_forgets_arrival_counter",
        "restoring a snapshot resets the arrival counter, so arrival-ordered MapState reorders after a restart",
        REGULAR,
        (Patch(f"{_STATE}:KeyedStateBackend.restore", 'self._arrival[0] = snap["arrival"]', "pass"),),
        properties=("arrival_order_survives_restore", "snapshot_restore"),
    ),
    Mutant(
        "duplicates_joined_once",
        "the no-unique-key view yields a duplicated row once instead of once per copy",
        REGULAR,
        (Patch("converge.engine.views:InputSideHasNoUniqueKeyStateView.records", "out.extend([row] * count)",
               "out.append(row)"),),
        properties=("duplicates_prefix_consistency", "prefix_consistency"),
    ),
    Mutant(
        "unmatched_outer_retraction_keeps_padding",
        "retracting an outer record that matched nothing does not retract its padded row",
        REGULAR,
        (Patch(f"{_JOIN}._retract", 'append(Change("-D", self._padded(is_left, row)))', "pass"),),
    ),
    Mutant(
        "anti_emits_right_kind",
        "ANTI join: a right change that gives a left record its first match emits the right change's "
        "kind instead of -D",
        REGULAR,
        (Patch(f"{_SEMI}._process", 'out.append(Change("-D" if self.is_anti else kind, left))',
               "out.append(Change(kind, left))"),),
    ),
    Mutant(
        "semi_emits_on_every_match",
        "SEMI/ANTI: the left record is emitted on every new match, not only when its matches go 0 -> 1",
        REGULAR,
        (Patch(f"{_SEMI}._process", "if n == 0:", "if n >= 0:"),),
        properties=("hot_key_prefix_consistency", "prefix_consistency"),
    ),
    Mutant(
        "normalize_drops_update_before",
        "ChangelogNormalize emits only +U for a known key and drops the -U of the old row",
        REGULAR,
        (Patch("converge.engine.operators.normalize:ChangelogNormalizeOperator.process",
               'return [Change("-U", old), Change("+U", row)]', 'return [Change("+U", row)]'),),
        properties=("hot_key_prefix_consistency", "prefix_consistency"),
    ),
    Mutant(
        "watermark_max_instead_of_min",
        "a two-input operator's watermark is the MAX of its inputs' watermarks instead of the MIN",
        INTERVAL,
        (Patch("converge.engine.runtime.local:LocalRuntime._set_input_watermark", "combined = min(active)",
               "combined = max(active)"),),
        properties=("output_watermarks",),
    ),
    Mutant(
        "interval_bound_exclusive",
        "the interval join's lower bound is exclusive (a.t > b.t + L instead of >=)",
        INTERVAL,
        (Patch(f"{_INTERVAL_OP}._join_pass", "lower <= other_time <= upper", "lower < other_time <= upper"),),
        properties=("no_late_equals_oracle", "matches_step_model"),
    ),
    Mutant(
        "late_outer_record_dropped",
        "a late outer record that joins nothing is dropped instead of padded at once",
        INTERVAL,
        (Patch(f"{_INTERVAL_OP}._process_row", 'out.append(Change("+I", self._padded(side, row)))', "pass"),),
        properties=("late_records_bounded", "pairs_and_padding_once", "matches_step_model"),
    ),
    Mutant(
        "interval_cleanup_timer_not_advanced",
        "the interval join re-registers its cleanup timer at the earliest remaining row's time instead of that "
        "time plus the interval size, lateness and 1, so the timer is due again at once and fires for ever",
        INTERVAL,
        (Patch(f"{_INTERVAL_OP}._remove_expired", "self._register_cleanup(ctx, earliest, side)",
               "self._register_cleanup(ctx, earliest - self.size[side] - self.min_cleanup - self.lateness - 1, "
               "side)", 2),),
        properties=("matches_step_model", "no_late_equals_oracle"),
    ),
    Mutant(
        "multiway_left_association_miscounted",
        "multi-way LEFT: a retracted record still counts as its own partner, so the padding never comes back",
        MULTIWAY,
        (Patch(f"{_MULTI_OP}._has_other_match", "skip = not accumulate", "skip = False"),),
        properties=("matches_binary_chain", "prefix_consistency"),
    ),
    Mutant(
        "multiway_padding_not_retracted",
        "multi-way LEFT: the NULL padding is not retracted when a combination gets its first partner",
        MULTIWAY,
        (Patch(f"{_MULTI_OP}._at_input", 'self._extend(j + 1, rows, "-D", out)', "pass"),),
        properties=("prefix_consistency", "matches_binary_chain"),
    ),
    Mutant(
        "bundle_keeps_retraction_of_cancelled_insert",
        "mini-batch, unique-key bundle: an accumulate followed by its retraction drops only the accumulate, "
        "so the retraction still reaches the join",
        MINIBATCH,
        (Patch(f"{_FOLD}:fold_unique_key", "continue", "pass"),),
        properties=("equals_off", "prefix_consistency"),
    ),
    Mutant(
        "bundle_cancels_unequal_rows",
        "mini-batch, no-unique-key bundle: a retraction cancels any earlier accumulate of its join key, not "
        "only one with equal fields (FLINK-35184's hash collision, made certain)",
        MINIBATCH,
        (Patch(f"{_FOLD}:fold_no_unique_key",
               "if other.row == change.row and is_accumulate(other.kind) != acc:",
               "if is_accumulate(other.kind) != acc:"),),
        properties=("equals_off", "prefix_consistency"),
    ),
    Mutant(
        "bundle_cancels_equal_inserts",
        "mini-batch, no-unique-key bundle: two equal records cancel whatever their direction, so a "
        "duplicated insert disappears",
        MINIBATCH,
        (Patch(f"{_FOLD}:fold_no_unique_key",
               "if other.row == change.row and is_accumulate(other.kind) != acc:",
               "if other.row == change.row:"),),
        properties=("equals_off", "prefix_consistency"),
    ),
    Mutant(
        "bundle_pair_padding_not_netted",
        "mini-batch, semantics=correct: a -U/+U pair whose new version lost an outer record's last match "
        "does not re-emit that record's padding",
        MINIBATCH,
        (Patch(f"{_MINIBATCH_OP}._process_pair",
               'out.append(Change("+I", self._padded(not is_left, other)))', "pass"),),
        properties=("equals_off", "prefix_consistency"),
    ),
)


# ---------------------------------------------------------------- reader mutants

READER = "reader"
_QUERY = "converge.engine.model.flinksql.query"

# Misreadings of a user's Flink SQL (engine/model/flinksql). The engine and the oracle both consume the reading,
# so no engine property can see them: `converge check` kills them with check/reading_equals_query, which runs
# the query as written in DuckDB (tests/cli/check_verify/test_check_reading.py runs each on the documented examples).
READER_MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "left_read_as_inner",
        "a LEFT [OUTER] JOIN is read as an INNER join",
        READER,
        (Patch(f"{_QUERY}:_Mapper._join", "self.types.append(_SIDES[side])",
               'self.types.append("inner" if side == "LEFT" else _SIDES[side])'),),
        properties=("reading_equals_query",),
    ),
    Mutant(
        "between_upper_exclusive",
        "BETWEEN's upper bound is read as exclusive (an interval join's time bound and a plain condition)",
        READER,
        (Patch("converge.engine.model.flinksql.time_bounds:TimeAttributes.bounds",
               'return [("lower", lo[1]), ("upper", hi[1])]\n        return [("lower", -hi[1]), ("upper", -lo[1])]',
               'return [("lower", lo[1]), ("upper", hi[1] - 1)]\n        return [("lower", -hi[1] + 1), ("upper", -lo[1])]'),
         Patch("converge.engine.model.flinksql.expressions:Renderer.render", "{v2.sql} <= {hi.sql}",
               "{v2.sql} < {hi.sql}")),
        properties=("reading_equals_query",),
    ),
    Mutant(
        "interval_residual_dropped",
        "an interval join's conditions other than its time bounds (equi keys and residuals) are dropped",
        READER,
        (Patch(f"{_QUERY}:_Mapper._interval_bounds", "return rest", "return []"),),
        properties=("reading_equals_query",),
    ),
    Mutant(
        "decimal_scale_zero",
        "a DECIMAL(p, s) column is read with scale 0 (its unscaled value taken for the value)",
        READER,
        (Patch("converge.engine.model.flinksql.ddl:read_table", "columns.append((item.name, ftype))",
               "columns.append((item.name, FlinkType(ftype.name, ftype.kind, ftype.model, 0, ftype.nullable)))"),),
        properties=("reading_equals_query",),
    ),
)


def by_name(names: str | None) -> list[Mutant]:
    """The mutants named in a comma-separated list (all when None); unknown names are an error."""
    if not names:
        return list(CATALOG)
    known = {m.name: m for m in CATALOG}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise BadInputError(f"unknown mutant(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return [known[n] for n in wanted]
