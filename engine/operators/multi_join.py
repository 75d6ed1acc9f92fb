"""FLIP-516's StreamingMultiJoinOperator: N inputs joined INNER / LEFT on a common key, no intermediate state.

State: one inner view per input, picked from that input's unique key and its
part of the common key (engine/views.py), holding exactly the live input
records under the current partition key. Nothing else is stored: no joined
rows, no association counts.

The chain is left-deep: R_0 = input 0 and R_d = R_{d-1} ⋈_{type_d, cond_d} input
d, where `cond_d` sees inputs 0..d (a LEFT-padded input is all NULLs). A
change `r` on input j leaves R_{j-1} as it was, so the output changes only
for the combinations t of R_{j-1} that r's condition accepts:

* INNER at j: t+r joins with r's kind;
* LEFT at j: the association count of t (how many *other* records of input j
  it matches) is computed on the fly. Accumulate with 0 others: t+NULL goes
  away first (`-D`), then t+r comes in (r's kind). Retract: t+r goes (r's
  kind), then, with 0 others left, t+NULL comes back (`+I`).

Each of those rows of R_j is then extended through inputs j+1..N-1 (which did
not change), depth first, padding LEFT inputs that match nothing. Emitted
rows carry the change's kind, as Flink's operator emits them; padding
retractions are `-D` and re-emitted padding is `+I`. A change on input 0 is
simply extended with its own kind.

State order (MultiJoinStateViews of the released Flink 2.1 to 2.3, read from
their jars; docs/anomalies.md, "The multi-way join's state, per release"):
one flat MapState per input and partition key. Input 0 is keyed by its unique
key or record, as in the binary join; a later input by the row (its join key,
its unique key or record), and a lookup keeps the entries of one join key. On
RocksDB that row's bytes order the entries of one join key as the unique key's
(record's) own bytes do, so the views' `rocksdb` order is Flink's; on the heap
backend Flink 2.3 hashes the BinaryRowData of that row (`state_key_hash`); 2.1
and 2.2 hash a GenericRowData that mixes an identity hash, which no model can
follow. Flink 2.1 keeps every input by its record (engine/planner/multi.py,
`RECORD_KEYED_VERSIONS`).

`semantics="correct"` first retracts the record a new one replaces under the
same unique key (a bare `+U`, a duplicate `+I`), and retracts the full image
the state holds when a retraction names a unique key (a raw upsert `-D` may
carry only the key); `semantics="flink"` overwrites the replaced record (it
keeps counting as a partner, as in the binary join's flink mode) and joins
the retraction row as it came, also when the state does not hold it (a raw
retraction: it is joined, and the padding comes back by Flink's count, see
`_has_other_match`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from converge.engine.java_hashmap import row_of_rows_hash, spread
from converge.engine.model.changelog import Change
from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import Semantics
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.operators.regular_join import JoinSide, check_retraction, key_extractor
from converge.engine.state import KeyedStateBackend
from converge.engine.views import create_view

MultiJoinType = str  # "inner" | "left"


# One input of the multi-way operator (a scenario input, or an earlier node's output) carries what
# one side of a binary join does: its spec, its state view, where the common key sits, TTL, validation.
MultiJoinInput = JoinSide


@dataclass(frozen=True)
class MultiJoinSpec:
    inputs: tuple[MultiJoinInput, ...]
    join_types: tuple[MultiJoinType, ...]      # join_types[d] joins input d; [0] is unused ("inner")
    # conditions[d](*rows) for d >= 1, rows = one tuple per input (later inputs ignored); None = TRUE
    conditions: tuple[Callable[..., bool] | None, ...]
    condition_sql: tuple[str, ...]             # for describe(); [0] is ""
    common_key: tuple[str, ...]                # names of the common key, for describe()
    output_order: tuple[int, ...] | None = None  # concatenate the inputs' rows in this order (None: 0..N-1)
    semantics: Semantics = "correct"


def _always(*rows: tuple) -> bool:
    return True


def state_key_hash(state: KeyedStateBackend, inp: MultiJoinInput) -> Callable[[tuple], int] | None:
    """HashMap.hash of the Java key under which Flink 2.3 keeps a record of input d >= 1 on the heap backend
    (MultiJoinStateViews.InputSideHasUniqueKey / InputSideHasNoUniqueKey): the BinaryRowData of the row
    (join key, unique key or record), the join key being the input's part of the common key, the current
    partition key (the adapter's case id, `hash_prefix`, in front of both; a chain on one key, where the
    input's join key is its part of the common key). None where the map key is hashed as itself: on
    `rocksdb` and `arrival`, whose order the nested row leaves as the key's own (module docstring), and for
    a view without a map."""
    if state.map_state_order != "hashmap" or inp.side.kind == "JoinKeyContainsUniqueKey":
        return None
    prefix_values, prefix_types = state.hash_prefix
    types = inp.spec.column_types
    key_types = (*prefix_types, *(types[i] for i in inp.key_indexes))
    at = inp.side.unique_key_indexes
    stored_types = (*prefix_types, *(types if at is None else [types[i] for i in at]))

    def java_hash(map_key: tuple) -> int:
        parts = (((*prefix_values, *state.current_key), key_types), ((*prefix_values, *map_key), stored_types))
        return spread(row_of_rows_hash(parts))

    return java_hash


class StreamingMultiJoinOperator(Operator):
    """N-way INNER/LEFT join keyed by a common key; see the module docstring for the algorithm."""

    def __init__(self, spec: MultiJoinSpec) -> None:
        n = len(spec.inputs)
        if n < 2:
            raise InternalError("a multi-way join needs at least two inputs")
        if len(spec.join_types) != n or len(spec.conditions) != n:
            raise InternalError(f"a {n}-input multi-way join needs {n} join types and conditions")
        for d, jtype in enumerate(spec.join_types[1:], start=1):
            if jtype not in ("inner", "left"):
                raise InternalError(f"the multi-way join runs INNER and LEFT joins only, not {jtype!r} (input {d})")
        widths = {len(i.key_indexes) for i in spec.inputs}
        if len(widths) != 1 or 0 in widths:
            raise InternalError("every input of a multi-way join needs the same non-empty common key")
        self.spec = spec
        self.num_inputs = n
        self._keys = tuple(key_extractor(i.key_indexes) for i in spec.inputs)
        self._nulls = tuple((None,) * len(i.spec.columns) for i in spec.inputs)
        self._left = tuple(d > 0 and t == "left" for d, t in enumerate(spec.join_types))
        self._conds = tuple(c or _always for c in spec.conditions)
        self._replace_retracts = spec.semantics == "correct"
        self._flink_counts = spec.semantics == "flink"
        order = spec.output_order
        if order is not None and sorted(order) != list(range(n)):
            raise InternalError(f"output_order {order} is not a permutation of the {n} inputs")
        self._order = None if order is None or list(order) == list(range(n)) else tuple(order)

    # ------------------------------------------------------------ contract
    def open(self, ctx: OperatorContext) -> None:
        self.views = tuple(
            create_view(ctx.state, f"multi-join-input-{d}", i.spec, i.side, outer=False, ttl=i.ttl_ms,
                        java_hash=state_key_hash(ctx.state, i) if d else None)
            for d, i in enumerate(self.spec.inputs))

    def key_of(self, input_index: int, row: tuple) -> tuple:
        return self._keys[input_index](row)

    def key_selector(self, input_index: int) -> Callable[[tuple], tuple]:
        return self._keys[input_index]

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        kind, row = change
        view = self.views[input_index]
        out: list[Change] = []
        if kind == "+I" or kind == "+U":
            if self._replace_retracts and view.side_spec.has_unique_key:
                old = view.stored_for(row)
                if old is not None:
                    self._join(input_index, "-U" if kind == "+U" else "-D", old, False, out)
                    view.retract_record(old)
            self._join(input_index, kind, row, True, out)
            view.add_record(row)
        else:
            self._check_retraction(input_index, kind, row)
            if self._replace_retracts and view.side_spec.has_unique_key:
                # a raw upsert -D may carry only the key: retract the full image the state holds
                row = view.stored_for(row) or row
            self._join(input_index, kind, row, False, out)
            view.retract_record(row)
        return out

    def _check_retraction(self, index: int, kind: str, row: tuple) -> None:
        check_retraction(self.spec.inputs[index], self.views[index], kind, row)

    # ------------------------------------------------------------ the join
    def _join(self, j: int, kind: str, r: tuple, accumulate: bool, out: list) -> None:
        """Emit what changing input j by r does to the output (state does not hold the change yet)."""
        rows: list = [None] * self.num_inputs
        if j == 0:
            rows[0] = r
            self._extend(1, rows, kind, out)
        else:
            self._combinations(0, j, rows, kind, r, accumulate, out)

    def _combinations(self, d: int, j: int, rows: list, kind: str, r: tuple, accumulate: bool,
                      out: list) -> None:
        """Enumerate R_{j-1} depth first (inputs 0..j-1 from state, LEFT padding included)."""
        cond = self._conds[d]
        last = d + 1 == j
        matched = False
        for rec in self.views[d].records():
            rows[d] = rec
            if d == 0 or cond(*rows):
                matched = True
                if last:
                    self._at_input(j, rows, kind, r, accumulate, out)
                else:
                    self._combinations(d + 1, j, rows, kind, r, accumulate, out)
        if self._left[d] and not matched:
            rows[d] = self._nulls[d]
            if last:
                self._at_input(j, rows, kind, r, accumulate, out)
            else:
                self._combinations(d + 1, j, rows, kind, r, accumulate, out)

    def _at_input(self, j: int, rows: list, kind: str, r: tuple, accumulate: bool, out: list) -> None:
        """One combination t of R_{j-1} meets the changed record r of input j."""
        cond = self._conds[j]
        rows[j] = r
        if not cond(*rows):
            return
        if not self._left[j]:
            self._extend(j + 1, rows, kind, out)
            return
        if self._has_other_match(j, rows, r, accumulate):
            self._extend(j + 1, rows, kind, out)
            return
        # t had no other partner in input j: its NULL-padded row comes and goes with r
        if accumulate:
            rows[j] = self._nulls[j]
            self._extend(j + 1, rows, "-D", out)
            rows[j] = r
            self._extend(j + 1, rows, kind, out)
        else:
            self._extend(j + 1, rows, kind, out)
            rows[j] = self._nulls[j]
            self._extend(j + 1, rows, "+I", out)
        rows[j] = r

    def _has_other_match(self, j: int, rows: list, r: tuple, accumulate: bool) -> bool:
        """The association count of rows[0..j-1], computed on the fly: does it match a record of
        input j other than r? (A retracted r is still in state: one copy of it is skipped.)

        Under semantics=flink a retraction counts as Flink 2.3's operator counts it: the matching
        records in state, r's own copy included if it is there, minus one; the padding comes back
        only when that is exactly 0. For a raw retraction (r not in state) that differs from "no
        other match": with no record at all the count is -1 and nothing is padded; with exactly one
        other record the count is 0 and the padding comes back beside a live match."""
        cond = self._conds[j]
        if not accumulate and self._flink_counts:
            matching = 0
            for rec in self.views[j].records():
                rows[j] = rec
                if cond(*rows):
                    matching += 1
                    if matching > 1:
                        break
            rows[j] = r
            return matching != 1
        skip = not accumulate
        found = False
        for rec in self.views[j].records():
            if skip and rec == r:
                skip = False
                continue
            rows[j] = rec
            if cond(*rows):
                found = True
                break
        rows[j] = r
        return found

    def _extend(self, d: int, rows: list, kind: str, out: list) -> None:
        """Extend rows[0..d-1] through the unchanged inputs d..N-1 and emit every result with `kind`."""
        if d == self.num_inputs:
            out.append(Change(kind, self._output_row(rows)))
            return
        cond = self._conds[d]
        matched = False
        for rec in self.views[d].records():
            rows[d] = rec
            if cond(*rows):
                matched = True
                self._extend(d + 1, rows, kind, out)
        if self._left[d] and not matched:
            rows[d] = self._nulls[d]
            self._extend(d + 1, rows, kind, out)

    def _output_row(self, rows: list) -> tuple:
        order = self._order
        if order is None:
            out = rows[0]
            for part in rows[1:]:
                out = out + part
            return out
        out = ()
        for i in order:
            out = out + rows[i]
        return out
