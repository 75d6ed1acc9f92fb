"""Shape variants: one logical input, fed in every changelog shape Flink accepts, gives one answer.

A generated retract stream is read back as logical operations per input
(insert a row, update a row, delete a row) and encoded again as:

* `insert_delete`: an update becomes `-D old, +I new` (no update kinds at all);
* `retract`: `-U old, +U new` pairs (the stream as generated);
* `upsert_normalize` (inputs with a unique key): `+I`, `+U new`, `-D` (every
  other one carrying the key only), behind ChangelogNormalize;
* `upsert_raw`: the same upsert stream reaching the join directly;
* `all`: a raw changelog mixing `-U/+U` pairs and bare `+U`;
* `duplicates` (inputs without a unique key): each insert arrives as
  `+I r, +I r, -D r`, so the no-unique-key view counts a copy up and down.

An update that moves a row to another join key is sent by the raw shapes as
`-D old, +I new` (keyed state cannot retract a row a bare `+U` moved away),
and a raw upsert `-D` carries only the unique key only where that key holds
the join key: the join routes a change by its join key, so a key-only delete
of a row whose join key lies outside the unique key reaches the NULL key's
state and deletes nothing — in Flink as here (docs/wellformedness.md).

After every logical operation the folded output must be the same in every
shape under `semantics: correct`. Under `semantics: flink` a replaced row is
not retracted first (FLINK-40681), so the raw shapes with bare `+U`
(`upsert_raw`, `all`) may differ and are left out; the others must still
agree (tests/scenarios/regular/all_mode_bare_update_after_pair_flink.json
shows the difference event by event).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from converge.engine.materialize import clean, fold
from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, Event, InputSpec, Scenario
from converge.engine.runtime.local import run_scenario
from converge.properties.divergence import fail, require
from converge.properties.reference import equality_keys

SHAPES = ("insert_delete", "retract", "upsert_normalize", "upsert_raw", "all", "duplicates")
_BARE_UPDATE_SHAPES = frozenset({"upsert_raw", "all"})

Op = tuple[str, tuple, tuple | None]   # (insert | update | delete, row or old row, new row)


def logical_ops(scenario: Scenario) -> list[tuple[str, Op]]:
    """(input, operation) read back from a retract stream whose updates are adjacent `-U old, +U new`."""
    events = scenario.events
    out: list[tuple[str, Op]] = []
    i = 0
    while i < len(events):
        e = events[i]
        require(isinstance(e, ChangeEvent), "shape_variants", "changes only (no time or watermark events)")
        assert isinstance(e, ChangeEvent)
        if e.kind == "-U":
            nxt = events[i + 1]
            require(isinstance(nxt, ChangeEvent) and nxt.kind == "+U" and nxt.input == e.input, "shape_variants",
                    "every -U directly followed by its +U")
            out.append((e.input, ("update", e.row, nxt.row)))  # type: ignore[union-attr]
            i += 2
            continue
        require(e.kind in ("+I", "-D"), "shape_variants", "a retract stream of +I, -U/+U pairs and -D")
        out.append((e.input, ("insert" if e.kind == "+I" else "delete", e.row, None)))
        i += 1
    return out


def _encoder(spec: InputSpec, shape: str, key_idx: list[int]) -> tuple[InputSpec, Callable[[Op, int], list]]:
    """The input as the shape declares it, and how one operation becomes its changes (n: the op's number)."""
    keyed = spec.unique_key is not None
    uk = [spec.index_of(c) for c in spec.unique_key or ()]

    def key_only(row: tuple) -> tuple:
        return tuple(v if i in uk else None for i, v in enumerate(row))

    def moves(old: tuple, new: tuple) -> bool:
        return any(old[i] != new[i] for i in key_idx)

    if shape == "insert_delete":
        def enc(op: Op, n: int) -> list:
            kind, row, new = op
            if kind == "update":
                return [("-D", row), ("+I", new)]
            return [("+I" if kind == "insert" else "-D", row)]
        return replace(spec, changelog_mode="retract"), enc
    if shape in ("upsert_normalize", "upsert_raw") and keyed:
        def enc(op: Op, n: int) -> list:
            kind, row, new = op
            if kind == "insert":
                return [("+I", row)]
            if kind == "delete":  # key only: behind the normalize, or where the unique key holds the join key
                routable = shape == "upsert_normalize" or set(key_idx) <= set(uk)
                return [("-D", key_only(row) if n % 2 and routable else row)]
            if shape == "upsert_raw" and moves(row, new):  # type: ignore[arg-type]
                return [("-D", row), ("+I", new)]
            return [("+U", new)]
        return replace(spec, changelog_mode="upsert"), enc
    if shape == "all" and keyed:
        def enc(op: Op, n: int) -> list:
            kind, row, new = op
            if kind != "update":
                return [("+I" if kind == "insert" else "-D", row)]
            if n % 2 and not moves(row, new):  # type: ignore[arg-type]
                return [("+U", new)]
            return [("-U", row), ("+U", new)]
        return replace(spec, changelog_mode="all"), enc
    if shape == "duplicates" and not keyed:
        def enc(op: Op, n: int) -> list:
            kind, row, new = op
            if kind == "insert":
                return [("+I", row), ("+I", row), ("-D", row)]
            if kind == "update":
                return [("-U", row), ("+U", new)]
            return [("-D", row)]
        return replace(spec, changelog_mode="retract"), enc

    def as_retract(op: Op, n: int) -> list:
        kind, row, new = op
        if kind == "update":
            return [("-U", row), ("+U", new)]
        return [("+I" if kind == "insert" else "-D", row)]
    return replace(spec, changelog_mode="retract"), as_retract


def shape_variant(scenario: Scenario, shape: str) -> tuple[Scenario, list[int]]:
    """The scenario in `shape`, and the event index ending each logical operation."""
    left, right = scenario.chain
    keys = equality_keys(scenario.join.conditions[0], [left.name], right.name)
    key_cols = {left.name: [lc for _, lc, _, _ in keys], right.name: [rc for _, _, rc, _ in keys]}
    encoders = {}
    specs = []
    for spec in scenario.inputs:
        new_spec, enc = _encoder(spec, shape, [spec.index_of(c) for c in key_cols.get(spec.name, ())])
        encoders[spec.name] = enc
        specs.append(new_spec)
    events: list[Event] = []
    ends: list[int] = []
    for n, (name, op) in enumerate(logical_ops(scenario)):
        events += [ChangeEvent(name, kind, row) for kind, row in encoders[name](op, n)]
        ends.append(len(events) - 1)
    normalize = shape != "upsert_raw"
    config = replace(scenario.config, changelog_normalize=normalize)
    return replace(scenario, name=f"{scenario.name} [{shape}]", inputs=tuple(specs), config=config,
                   events=tuple(events)), ends


def _folded_at(scenario: Scenario, ends: list[int]) -> list[Counter]:
    per_event = run_scenario(scenario).per_event
    bag: Counter = Counter()
    out = []
    wanted = set(ends)
    for i, items in enumerate(per_event):
        fold([c for c in items if isinstance(c, Change)], bag)
        if i in wanted:
            out.append(clean(bag))
    return out


def shape_variants_agree(scenario: Scenario) -> None:
    """After every logical operation, every shape Flink's semantics equate gives the same folded output."""
    prop = "shape_variants_agree"
    require(len(scenario.join.inputs) == 2 and scenario.join.interval is None and
            scenario.config.state_ttl_ms is None, prop, "a binary regular join without TTL")
    shapes = [s for s in SHAPES if scenario.config.semantics == "correct" or s not in _BARE_UPDATE_SHAPES]
    base, base_ends = shape_variant(scenario, "retract")
    want = _folded_at(base, base_ends)
    for shape in shapes:
        if shape == "retract":
            continue
        variant, ends = shape_variant(scenario, shape)
        got = _folded_at(variant, ends)
        for n, (g, w) in enumerate(zip(got, want, strict=True)):
            if g != w:
                fail(prop, variant, f"the {shape} shape differs from the retract shape after logical operation {n}",
                      event_index=ends[n], engine=g, expected=w, extra={"retract_shape": base})
