"""A TTL-aware reference model of a binary regular / SEMI / ANTI join.

With state TTL the streaming answer is no longer a batch answer: what a record
joins with depends on which state entries are still visible when it arrives.
This model states that directly, in the plainest form: per join key and side,
a table of state entries (identity -> row, copies, associations, last write);
an entry written at t with TTL T is visible while now < t + T (so at t+T-1,
not at t+T). Every add, copy-count change and association-count update is a
write. The output is the fold of everything emitted (expiry emits nothing),
so a row may stay in the output after its inputs expired, and a retraction of
an expired record still retracts the joined rows built from visible partners.

It shares no code with the engine: the join key and the state view come from
the properties' own reference model (properties/reference.py), and whether
two rows satisfy the condition is decided by DuckDB (`PairMatcher`), not by
the engine's condition compiler.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from converge.engine.model.changelog import ACCUMULATE_KINDS
from converge.engine.model.scenario import ChangeEvent, ProcessingTimeEvent, Scenario
from converge.properties.reference import PairMatcher, equality_keys, view_kind


class TtlJoinModel:
    def __init__(self, scenario: Scenario) -> None:
        left, right = scenario.chain
        self.jtype = scenario.join.types[0]
        keys = equality_keys(scenario.join.conditions[0], [left.name], right.name)
        self.key_idx = (
            [left.index_of(lc) for _, lc, _, _ in keys],
            [right.index_of(rc) for _, _, rc, _ in keys],
        )
        self.pred = PairMatcher(scenario).matches
        self.ttl = [scenario.config.ttl_for(left.name), scenario.config.ttl_for(right.name)]
        self.names = [left.name, right.name]
        self.widths = [len(left.columns), len(right.columns)]
        kinds = [view_kind(left, [lc for _, lc, _, _ in keys]), view_kind(right, [rc for _, _, rc, _ in keys])]
        self.ident = [self._ident_fn(kinds[0], left), self._ident_fn(kinds[1], right)]
        self.counts_copies = [k == "InputSideHasNoUniqueKey" for k in kinds]
        semi = self.jtype in ("semi", "anti")
        self.outer = [self.jtype in ("left", "full") or semi, self.jtype in ("right", "full")]
        self.tables: list[dict] = [defaultdict(dict), defaultdict(dict)]
        self.now = 0
        self.emitted: Counter = Counter()

    @staticmethod
    def _ident_fn(kind: str, spec):
        if kind == "JoinKeyContainsUniqueKey":
            return lambda row: "the-row"
        if kind == "InputSideHasUniqueKey":
            idx = [spec.index_of(c) for c in spec.unique_key]
            return lambda row: tuple(row[i] for i in idx)
        return lambda row: row

    # -- state entries -----------------------------------------------------
    def _live(self, side: int, key: tuple) -> dict:
        table = self.tables[side][key]
        for ident in [i for i, e in table.items() if self.now >= e["expires"]]:
            del table[ident]
        return table

    def _write(self, side: int, key: tuple, ident, row: tuple, copies: int, assoc: int) -> None:
        ttl = self.ttl[side]
        expires = self.now + ttl if ttl is not None else float("inf")
        self.tables[side][key][ident] = {"row": row, "copies": copies, "assoc": assoc, "expires": expires}

    def _visible_records(self, side: int, key: tuple) -> list[dict]:
        out = []
        for entry in self._live(side, key).values():
            out.extend([entry] * entry["copies"])
        return out

    def _add(self, side: int, key: tuple, row: tuple, assoc: int) -> None:
        ident = self.ident[side](row)
        table = self._live(side, key)
        copies = table[ident]["copies"] + 1 if self.counts_copies[side] and ident in table else 1
        self._write(side, key, ident, row, copies, assoc)

    def _remove(self, side: int, key: tuple, row: tuple) -> None:
        ident = self.ident[side](row)
        table = self._live(side, key)
        if ident not in table:
            return
        entry = table[ident]
        if self.counts_copies[side] and entry["copies"] > 1:
            self._write(side, key, ident, entry["row"], entry["copies"] - 1, entry["assoc"])
        else:
            del table[ident]

    def _set_assoc(self, side: int, key: tuple, row: tuple, assoc: int) -> None:
        ident = self.ident[side](row)
        table = self._live(side, key)
        copies = table[ident]["copies"] if ident in table else 1
        self._write(side, key, ident, row, copies, assoc)

    # -- the join -----------------------------------------------------------
    def _emit(self, sign: int, row: tuple) -> None:
        self.emitted[row] += sign

    def _joined(self, side: int, row: tuple, other: tuple) -> tuple:
        return row + other if side == 0 else other + row

    def _pad(self, side: int, row: tuple) -> tuple:
        if self.jtype in ("semi", "anti"):
            return row
        return row + (None,) * self.widths[1] if side == 0 else (None,) * self.widths[0] + row

    def _matches(self, side: int, key: tuple, row: tuple) -> list[dict]:
        other = 1 - side
        recs = self._visible_records(other, key)
        if side == 0:
            return [e for e in recs if self.pred(row, e["row"])]
        return [e for e in recs if self.pred(e["row"], row)]

    def change(self, name: str, kind: str, row: tuple) -> None:
        side = self.names.index(name)
        key = tuple(row[i] for i in self.key_idx[side])
        matches = self._matches(side, key, row)
        acc = kind in ACCUMULATE_KINDS
        if self.jtype in ("semi", "anti"):
            self._semi_anti(side, key, row, acc, matches)
            return
        other = 1 - side
        sign = 1 if acc else -1
        for e in matches:
            self._emit(sign, self._joined(side, row, e["row"]))
        if self.outer[side] and not matches:
            self._emit(sign, self._pad(side, row))
        if self.outer[other]:
            for e in matches:
                before = e["assoc"]
                after = before + sign
                if before == 0 and after == 1:
                    self._emit(-1, self._pad(other, e["row"]))
                if before == 1 and after == 0:
                    self._emit(1, self._pad(other, e["row"]))
                self._set_assoc(other, key, e["row"], after)
        if acc:
            self._add(side, key, row, len(matches))
        else:
            self._remove(side, key, row)

    def _semi_anti(self, side: int, key: tuple, row: tuple, acc: bool, matches: list[dict]) -> None:
        anti = self.jtype == "anti"
        sign = 1 if acc else -1
        if side == 0:
            if bool(matches) != anti:
                self._emit(sign, row)
            if acc:
                self._add(0, key, row, len(matches))
            else:
                self._remove(0, key, row)
            return
        for e in matches:
            before = e["assoc"]
            after = before + sign
            if before == 0 and after == 1:
                self._emit(-1 if anti else 1, e["row"])
            if before == 1 and after == 0:
                self._emit(1 if anti else -1, e["row"])
            self._set_assoc(0, key, e["row"], after)
        if acc:
            self._add(1, key, row, 0)
        else:
            self._remove(1, key, row)

    def run(self, scenario: Scenario) -> list[Counter]:
        """The folded output after every event."""
        history = []
        for event in scenario.events:
            if isinstance(event, ProcessingTimeEvent):
                self.now = event.processing_time
            elif isinstance(event, ChangeEvent):
                self.change(event.input, event.kind, tuple(event.row))
            history.append(Counter({r: n for r, n in self.emitted.items() if n != 0}))
        return history
