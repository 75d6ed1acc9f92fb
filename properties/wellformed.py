"""What Flink's join output guarantees as a changelog, checked change by change, without an oracle.

Written from the guarantees themselves (docs/wellformedness.md), sharing no
code with the engine: the output is read as the sequence of changes the
system emitted, and these must hold (no TTL, `semantics: correct`, per-key
order kept, the preconditions the families' generators meet):

1. **No retraction of an absent row.** Every `-U`/`-D` retracts a row the
   output holds at that moment (the bag of everything emitted so far), so
   `-U` only ever names a present row. Checked after every single change,
   not per event: a join that emitted a retraction before the accumulate it
   retracts, inside one event, is caught.
2. **Kinds follow the input.** A `+I` or `-D` change that reaches the join
   as it is yields only `+I` and `-D` output rows; `-U`/`+U` appear only for
   `-U`/`+U` changes (an interval join's output is append-only: `+I` alone).
   An input behind ChangelogNormalize or a dedupe is left out: those turn a
   `+I` that replaces a row into `-U old, +U new` before the join.
3. **Key locality** (binary regular / SEMI / ANTI joins): every row an event
   emits carries that event's join key on the side it came from or on the
   other side (its partners, or the padding they lose or regain) — or the key
   of the row it replaces under the same unique key (an update that moves a
   row to another join key reaches the join as a retraction there and an
   accumulate here, behind ChangelogNormalize or as a `-U/+U` pair).
4. **Padding excludes matches** (binary outer joins): after every event the
   output never holds a null-padded row of a record together with a joined
   row of that same record: padding is retracted before the first match is
   emitted and re-emitted only after the last match is retracted. Not after
   every change: with two identical rows on a side without a unique key,
   Flink handles the copies one after the other, so inside one event the
   first copy's joined row and the second copy's padding coexist.

Where Flink guarantees less than one might expect (a `-U` without a `+U`,
an outer input's update as `-D`/`+I`, a retraction of a never-emitted row
under TTL or raw upserts under `semantics: flink`), docs/wellformedness.md
says so with a scenario file for each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from converge.engine.model.changelog import ACCUMULATE_KINDS, Change
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.runtime.local import run_scenario
from converge.properties.divergence import fail, require
from converge.properties.reference import equality_keys, inputs_as_joined

_INSERT_DELETE = frozenset({"+I", "-D"})


def _no_ttl(scenario: Scenario) -> bool:
    ttl = scenario.config.state_ttl_ms
    return ttl is None or (isinstance(ttl, dict) and not ttl)


def changelog_wellformed(scenario: Scenario) -> None:
    """The output changelog keeps guarantees 1-4 of the module docstring."""
    prop = "changelog_wellformed"
    interval = scenario.join.interval is not None
    require(_no_ttl(scenario) and (scenario.config.semantics == "correct" or interval)
            and scenario.config.per_key_order == "kept", prop,
            "needs no TTL, semantics=correct (any, for an interval join) and per-key order kept "
            "(docs/wellformedness.md: what is weaker)")
    binary = len(scenario.join.inputs) == 2
    # a mini-batch join emits at a bundle's end, for every key the bundle holds, with folded kinds: the
    # per-event rules (kind follows the input change, key locality) do not apply; the others hold per flush
    bundled = scenario.config.mini_batch_size is not None
    locality = _key_locality(scenario) if binary and not interval and not bundled else None
    padding = _padding_rule(scenario) if binary and not interval else None
    cfg = scenario.config
    rewritten = {spec.name for spec in scenario.inputs if spec.name in cfg.dedupe_before_join
                 or (spec.changelog_mode == "upsert" and cfg.changelog_normalize)}
    held: Counter = Counter()
    emitted = run_scenario(scenario).per_event  # the evidence of a failure, as well as what is checked
    for i, (event, items) in enumerate(zip(scenario.events, emitted, strict=False)):
        changes = [c for c in items if isinstance(c, Change)]
        for change in changes:
            kind, row = change.kind, change.row
            if kind in ACCUMULATE_KINDS:
                held[row] += 1
            elif held[row] <= 0:
                fail(prop, scenario, f"{kind}{list(row)} retracts a row the output does not hold", event_index=i,
                     emitted=emitted)
            else:
                held[row] -= 1
                if not held[row]:
                    del held[row]
        if padding is not None:
            for row in {c.row for c in changes}:
                clash = padding(held, row)
                if clash:
                    fail(prop, scenario, f"after this event the output holds both {clash}", event_index=i,
                         emitted=emitted)
        if not isinstance(event, ChangeEvent) or bundled:
            continue
        kinds = {c.kind for c in changes}
        allowed = {"+I"} if interval else (
            _INSERT_DELETE if event.kind in _INSERT_DELETE and event.input not in rewritten else None)
        if allowed is not None and not kinds <= allowed:
            fail(prop, scenario, f"a {event.kind} input change emitted {sorted(kinds - allowed)} rows "
                  f"({' '.join(f'{c.kind}{list(c.row)}' for c in changes)})", event_index=i, emitted=emitted)
        if locality is not None:
            stray = locality(event, [c.row for c in changes])
            if stray is not None:
                fail(prop, scenario, f"{event.input} {event.kind}{list(event.row)} emitted {list(stray)}, which "
                      f"carries another join key", event_index=i, emitted=emitted)


def _key_locality(scenario: Scenario):
    """For an event and its output rows: the first row carrying neither side's key equal to the event's."""
    left, right = scenario.chain
    keys = equality_keys(scenario.join.conditions[0], [left.name], right.name)
    if not keys:
        return None
    width = len(left.columns)
    semi = scenario.join.types[0] in ("semi", "anti")
    lidx = [left.index_of(lc) for _, lc, _, _ in keys]
    ridx = [right.index_of(rc) for _, _, rc, _ in keys]

    # the last row per unique key of each input as the join sees it (a dedupe's key included), as the events
    # say: the row an update or a deduplicated row replaces, possibly under another join key
    last: dict[tuple, tuple] = {}
    uk_idx = {spec.name: [spec.index_of(c) for c in spec.unique_key] if spec.unique_key else None
              for spec in inputs_as_joined(scenario)}

    def stray(event: ChangeEvent, rows: Sequence[tuple]) -> tuple | None:
        idx = lidx if event.input == left.name else ridx
        wanted = {tuple(event.row[i] for i in idx)}
        uk = uk_idx[event.input]
        if uk is not None:
            slot = (event.input, tuple(event.row[i] for i in uk))
            if slot in last:
                wanted.add(tuple(last[slot][i] for i in idx))
            if event.kind in ACCUMULATE_KINDS:
                last[slot] = event.row
            else:
                last.pop(slot, None)
        own = 0 if event.input == left.name else 1
        for row in rows:
            parts = [(row[:width], lidx, 0)] if semi else [(row[:width], lidx, 0), (row[width:], ridx, 1)]
            # the event's own side may be all NULL (a row of NULLs); the other side's part then must be a partner
            if not any((side == own or any(v is not None for v in part)) and tuple(part[i] for i in ix) in wanted
                       for part, ix, side in parts):
                return row
        return None

    return stray


def _padding_rule(scenario: Scenario):
    """For the output bag after a change: a (padded row, joined row) pair of one record, if the bag holds one."""
    jtype = scenario.join.types[0]
    if jtype not in ("left", "right", "full"):
        return None
    left, right = scenario.chain
    width = len(left.columns)
    sides = [s for s, outer in ((0, jtype in ("left", "full")), (1, jtype in ("right", "full"))) if outer]
    # an all-NULL partner row would look like padding: such streams are left out of this guarantee
    all_null = {e.input for e in scenario.events if isinstance(e, ChangeEvent) and all(v is None for v in e.row)}
    if all_null:
        return None

    nulls = ((None,) * len(right.columns), (None,) * width)

    def parts(row: tuple) -> tuple[tuple, tuple]:
        return row[:width], row[width:]

    def padded(own: tuple, side: int) -> tuple:
        return own + nulls[0] if side == 0 else nulls[1] + own

    def clash(held: Counter, changed: tuple) -> str | None:
        for side in sides:
            own = parts(changed)[side]
            if all(v is None for v in own) or held.get(padded(own, side), 0) <= 0:
                continue
            for row in held:
                mine, other = parts(row)[side], parts(row)[1 - side]
                if mine == own and any(v is not None for v in other):
                    return f"{list(padded(own, side))} and {list(row)}"
        return None

    return clash
