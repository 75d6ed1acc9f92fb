"""Flink's StreamingJoinOperator: INNER / LEFT / RIGHT / FULL regular joins over changelogs.

The algorithm is the regular-join write-up's accumulate/retract pseudocode, with the output row
kinds of Flink's implementation:

* outer input, accumulate: no match -> +I[row+null], stored with 0
  associations; matches -> per match (other side outer: -D[null+other] when
  that record has 0 associations, and +1) then +I[row+other], stored with the
  match count;
* inner input, accumulate: other side outer -> per matched record, -D padding
  when it had 0 associations, +I joined row, +1; other side inner -> joined
  rows with the input's own kind (+I/+U);
* retract: no match -> -D[row+null] if the input is outer; matches -> per
  match, the joined row as -D (outer input) or the input's own kind (-U/-D),
  then, if the other side is outer, +I[null+other] when that record's
  associations go 1 -> 0, and -1.

Per match means interleaved, as Flink 2.2 and 2.3 emit: their
StreamingJoinOperator.processElement walks the other side's matches once,
lazily (AbstractStreamingJoinOperator.iterator), and writes each match's
padding change beside its joined row. Flink 1.19 to 2.1 collect the matches
first (AbstractStreamingJoinOperator.AssociatedRecords.of) and loop twice:
an accumulate whose other side is outer (the input itself outer or inner:
1.20's StreamingJoinOperator.processElement, 2.1's JoinHelper.processJoin)
sends every padding retraction (-D, over getOuterRecords()) before the
joined rows (+I, over getRecords()); a retraction whose other side is outer
sends every joined row's retraction before the paddings (+I).
`config.flink_version` picks the release (`grouped_padding` for 1.19-2.1;
docs/semantics.md).

`semantics="flink"` keeps Flink's current behaviour for a record that replaces
another with the same unique key (a bare +U, or a duplicate +I): it is counted
as a new association (FLINK-40681), so a later delete does not bring the
padding back. `semantics="correct"` first retracts the replaced record. A
retraction of a row the input's state does not hold is bad input under
`correct` (`JoinSide.validate_retractions`); under `flink` the planner turns
the check off and the retract path above runs as it is, as in Flink: the
row is joined, the view's retract changes what it changes (nothing, or the
row its unique key holds), and an outer other side's counts may go to -1
(docs/semantics.md, "Raw changelogs").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import InputSpec, Semantics
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.views import JoinInputSideSpec, JoinRecordStateView, create_view

# The Flink releases whose StreamingJoinOperator sends an outer join's padding changes apart from the joined rows
GROUPED_PADDING_VERSIONS = frozenset({"1.19", "1.20", "2.0", "2.1"})


def key_extractor(indexes: Sequence[int]) -> Callable[[tuple], tuple]:
    """A fast function from a row to the tuple of its key fields."""
    idx = tuple(indexes)
    if len(idx) == 1:
        (i,) = idx
        return lambda row: (row[i],)
    if len(idx) == 2:
        i, j = idx
        return lambda row: (row[i], row[j])
    return lambda row: tuple([row[i] for i in idx])


@dataclass(frozen=True)
class JoinSide:
    """One input of a binary join as the operator sees it."""

    spec: InputSpec                   # a real input, or a synthesized one for a joined left part
    side: JoinInputSideSpec
    key_indexes: tuple[int, ...]
    ttl_ms: int | None
    validate_retractions: bool        # reject a retraction of a row that is not in state (never under flink)


def check_retraction(side: JoinSide, view: JoinRecordStateView, kind: str, row: tuple) -> None:
    """Bad input: a retraction of a row the state does not hold (checked where state must hold it: no TTL)."""
    if side.validate_retractions and side.ttl_ms is None and not view.contains(row):
        raise BadInputError(
            f"{kind} on input {side.spec.name!r} retracts row {list(row)}, which is not in the join state "
            f"(it was never inserted or was already retracted)")


@dataclass(frozen=True)
class BinaryJoinSpec:
    join_type: str                    # inner | left | right | full | semi | anti
    left: JoinSide
    right: JoinSide
    filter_nulls: tuple[bool, ...]    # per key field: True for '=', False for IS NOT DISTINCT FROM
    residual: Callable[[tuple, tuple], bool] | None
    residual_sql: str | None
    semantics: Semantics = "correct"
    grouped_padding: bool = False     # Flink 1.19-2.1: all padding changes apart from the joined rows (docstring)


def _null_filter(filter_nulls: tuple[bool, ...]) -> Callable[[tuple], bool]:
    """True when the key can never match (a NULL in a field compared with '=')."""
    checked = tuple(i for i, f in enumerate(filter_nulls) if f)
    if not checked:
        return lambda key: False
    if len(checked) == 1:
        (i,) = checked
        return lambda key: key[i] is None
    return lambda key: any(key[i] is None for i in checked)


class _JoinBase(Operator):
    """Shared set-up of the regular and semi/anti join operators."""

    left_outer = False
    right_outer = False

    def __init__(self, spec: BinaryJoinSpec) -> None:
        self.spec = spec
        self._keys = (key_extractor(spec.left.key_indexes), key_extractor(spec.right.key_indexes))
        self._never_matches = _null_filter(spec.filter_nulls)
        self._residual = spec.residual
        self._sides = (spec.left, spec.right)
        self._replace_retracts = spec.semantics == "correct"

    def key_of(self, input_index: int, row: tuple) -> tuple:
        return self._keys[input_index](row)

    def key_selector(self, input_index: int) -> Callable[[tuple], tuple]:
        return self._keys[input_index]

    def _open_views(self, ctx: OperatorContext) -> None:
        s = self.spec
        self.views = (
            create_view(ctx.state, "left-records", s.left.spec, s.left.side, outer=self.left_outer, ttl=s.left.ttl_ms),
            create_view(ctx.state, "right-records", s.right.spec, s.right.side, outer=self.right_outer,
                        ttl=s.right.ttl_ms),
        )

    def open(self, ctx: OperatorContext) -> None:
        self._open_views(ctx)

    def _associated(self, row: tuple, is_left: bool, key: tuple, other_outer: bool) -> list:
        """Matching records of the other side ((row, associations) when it is outer)."""
        if self._never_matches(key):
            return []
        other = self.views[1 if is_left else 0]
        cond = self._residual
        if other_outer:
            recs = other.records_and_associations()  # type: ignore[attr-defined]
            if cond is None:
                return list(recs)
            if is_left:
                return [r for r in recs if cond(row, r[0])]
            return [r for r in recs if cond(r[0], row)]
        recs = other.records()
        if cond is None:
            return list(recs)
        if is_left:
            return [r for r in recs if cond(row, r)]
        return [r for r in recs if cond(r, row)]

    def _replacement(self, index: int, change: Change) -> tuple[Change | None, Change]:
        """Under semantics=correct, for a unique-key input: the retraction of the record `change`
        replaces (a bare +U or a duplicate +I), and the change with the stored full image when a
        raw upsert -D carries only the key. Under semantics=flink: (None, change) unchanged."""
        if not self._replace_retracts:
            return None, change
        view = self.views[index]
        if not view.side_spec.has_unique_key:
            return None, change
        kind, row = change
        old = view.stored_for(row)
        if old is None:
            return None, change
        if kind == "+I" or kind == "+U":
            return Change("-U" if kind == "+U" else "-D", old), change
        if self._sides[index].spec.changelog_mode == "upsert":
            return None, Change(kind, old)
        return None, change

    def _check_retraction(self, index: int, kind: str, row: tuple) -> None:
        check_retraction(self._sides[index], self.views[index], kind, row)


class PaddingSuppression:
    """How the mini-batch join processes a folded retraction/accumulate pair of one unique key
    (engine/operators/minibatch_join.py): which other-side padding changes it emits, and whether
    the retraction leaves the input's state alone (the accumulate then overwrites it)."""

    keeps_state = False

    def retracted_to_zero(self, other: tuple) -> bool:
        """An outer other-side record lost its last match: emit +I padding now?"""
        return True

    def matched_from_zero(self, other: tuple) -> bool:
        """An outer other-side record got its first match: emit -D padding now?"""
        return True


class StreamingJoinOperator(_JoinBase):
    """INNER / LEFT / RIGHT / FULL join; see the module docstring for the algorithm."""

    def __init__(self, spec: BinaryJoinSpec) -> None:
        if spec.join_type not in ("inner", "left", "right", "full"):
            raise InternalError(f"StreamingJoinOperator does not run {spec.join_type!r} joins")
        super().__init__(spec)
        self.left_outer = spec.join_type in ("left", "full")
        self.right_outer = spec.join_type in ("right", "full")
        self._left_nulls = (None,) * len(spec.left.spec.columns)
        self._right_nulls = (None,) * len(spec.right.spec.columns)

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list[Change]:
        out: list[Change] = []
        self._process_into(input_index, change, ctx, out)
        return out

    def _process_into(self, input_index: int, change: Change, ctx: OperatorContext, out: list,
                      *, check: bool = True) -> None:
        replaced, change = self._replacement(input_index, change)
        kind, row = change
        if replaced is not None:
            self._retract(input_index, replaced.kind, replaced.row, ctx, out)
        if kind == "+I" or kind == "+U":
            self._accumulate(input_index, kind, row, ctx, out)
        else:
            if check:
                self._check_retraction(input_index, kind, row)
            self._retract(input_index, kind, row, ctx, out)

    def _joined(self, is_left: bool, row: tuple, other: tuple) -> tuple:
        return row + other if is_left else other + row

    def _padded(self, is_left: bool, row: tuple) -> tuple:
        return row + self._right_nulls if is_left else self._left_nulls + row

    def _accumulate(self, index: int, kind: str, row: tuple, ctx: OperatorContext, out: list,
                    pad: PaddingSuppression | None = None) -> None:
        is_left = index == 0
        in_outer = self.left_outer if is_left else self.right_outer
        other_outer = self.right_outer if is_left else self.left_outer
        in_view = self.views[index]
        other_view = self.views[1 - index]
        assoc = self._associated(row, is_left, ctx.state.current_key, other_outer)
        append = out.append
        if in_outer:
            if not assoc:
                append(Change("+I", self._padded(is_left, row)))
                in_view.add_record(row, 0)  # type: ignore[call-arg]
                return
            if other_outer:
                self._meet_padded(is_left, row, assoc, other_view, pad, append)
            else:
                for other in assoc:
                    append(Change("+I", self._joined(is_left, row, other)))
            in_view.add_record(row, len(assoc))  # type: ignore[call-arg]
            return
        if other_outer:
            self._meet_padded(is_left, row, assoc, other_view, pad, append)
        elif is_left:
            for other in assoc:
                append(Change(kind, row + other))
        else:
            for other in assoc:
                append(Change(kind, other + row))
        in_view.add_record(row)

    def _meet_padded(self, is_left: bool, row: tuple, assoc: list, other_view: object,
                     pad: PaddingSuppression | None, append: Callable[[Change], None]) -> None:
        """A record meeting the matches of an outer other side: each match's padding retraction where it had
        none, and the joined row; per match (Flink 2.2+), or every retraction first (1.19-2.1: the module doc)."""
        grouped = self.spec.grouped_padding
        for other, n in assoc:
            if n == 0 and (pad is None or pad.matched_from_zero(other)):
                append(Change("-D", self._padded(not is_left, other)))
            other_view.update_num_of_associations(other, n + 1)  # type: ignore[attr-defined]
            if not grouped:
                append(Change("+I", self._joined(is_left, row, other)))
        if grouped:
            for other, _ in assoc:
                append(Change("+I", self._joined(is_left, row, other)))

    def _retract(self, index: int, kind: str, row: tuple, ctx: OperatorContext, out: list,
                 pad: PaddingSuppression | None = None) -> None:
        is_left = index == 0
        in_outer = self.left_outer if is_left else self.right_outer
        other_outer = self.right_outer if is_left else self.left_outer
        other_view = self.views[1 - index]
        assoc = self._associated(row, is_left, ctx.state.current_key, other_outer)
        if pad is None or not pad.keeps_state:
            self.views[index].retract_record(row)
        append = out.append
        if not assoc:
            if in_outer:
                append(Change("-D", self._padded(is_left, row)))
            return
        out_kind = "-D" if in_outer else kind
        if other_outer and self.spec.grouped_padding:  # Flink 1.19-2.1: every joined row's retraction first
            for other, _ in assoc:
                append(Change(out_kind, self._joined(is_left, row, other)))
            for other, n in assoc:
                if n == 1 and (pad is None or pad.retracted_to_zero(other)):
                    append(Change("+I", self._padded(not is_left, other)))
                other_view.update_num_of_associations(other, n - 1)  # type: ignore[attr-defined]
        elif other_outer:  # per matched record: the joined row's retraction, then its padding (Flink 2.2+)
            for other, n in assoc:
                append(Change(out_kind, self._joined(is_left, row, other)))
                if n == 1 and (pad is None or pad.retracted_to_zero(other)):
                    append(Change("+I", self._padded(not is_left, other)))
                other_view.update_num_of_associations(other, n - 1)  # type: ignore[attr-defined]
        else:
            for other in assoc:
                append(Change(out_kind, self._joined(is_left, row, other)))

