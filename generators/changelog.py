"""Changelog streams built by construction from operations on a model table.

Hypothesis draws abstract operations (which input, which action, which row,
which values); `build_events` interprets them against a model of each input's
current table, so every drawn (and every shrunk) list is a valid changelog:
a retraction always names a row that is present, a unique key is never
duplicated, an upsert delete may carry only the key. An operation that does
not apply (a delete on an empty table) degrades to an insert or is skipped.

Operations come from bytes (`_OpDecoder`) in one of two encodings: a list
with one draw per operation (`ops_strategy`), or one fixed-size byte string
per stream (`packed_ops`, the default of the regular-join scenarios).
Hypothesis's cost is per draw, so the packed encoding generates several
times faster; docs/generators.md says how each shrinks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from converge.engine.model.scenario import ChangeEvent, Event, InputSpec, ProcessingTimeEvent
from converge.generators.arguments import check_count_range

# Small domains so keys collide and joins match often. sampled_from shrinks
# towards the first element, so counterexamples shrink to 0 / "a" / false.
KEY_DOMAIN = (0, 1, 2, None)
INT_DOMAIN = (0, 1, 2, 3, None)
STR_DOMAIN = ("a", "b", "ab", "", None)
DOUBLE_DOMAIN = (0.0, 1.5, -1.0, 2.0, None)
BOOL_DOMAIN = (False, True, None)

_DOMAINS = {"BIGINT": INT_DOMAIN, "INTEGER": INT_DOMAIN, "VARCHAR": STR_DOMAIN, "DOUBLE": DOUBLE_DOMAIN,
            "BOOLEAN": BOOL_DOMAIN}

INSERT, UPDATE, DELETE, ADVANCE = 0, 1, 2, 3
# An insert's row pick (unused otherwise) of this value copies a present row of an input without a unique key:
# identical rows are what the no-unique-key state must count apart, and drawn value by value they are rare
# where domains are wide. The pick shrinks towards 0: a counterexample keeps a copy only where it matters.
_COPY = 7


@dataclass(frozen=True)
class Op:
    """One abstract operation: interpreted against the model table of `input`."""

    input: int
    action: int          # INSERT / UPDATE / DELETE / ADVANCE (processing time)
    pick: int            # which existing row (modulo the table size)
    values: tuple        # indexes into each column's domain
    flag: bool = False   # upsert delete: send the key only; `all` update: a bare +U (no -U before it)


def domain_for(spec: InputSpec, column: str, key_columns: Sequence[str], key_domain: tuple = KEY_DOMAIN) -> tuple:
    """The value domain of one column: key columns share a small domain; unique-key columns are non-null."""
    ctype = dict(spec.columns)[column]
    dom = key_domain if column in key_columns and ctype in ("BIGINT", "INTEGER") else _DOMAINS[ctype]
    if spec.unique_key and column in spec.unique_key:
        dom = tuple(v for v in dom if v is not None)
    return dom


class _OpDecoder:
    """Decodes one operation from bytes: byte 0 is the head, the rest is the body.

    The head picks (action, input); the body packs the key-only flag (bit 0),
    the row pick (bits 1-3) and one base-6 digit per column value. Every byte
    string decodes to a valid operation (or, with `skip_zero_head`, to
    nothing), and Hypothesis shrinks bytes towards zero: a body towards the
    first value of every domain, a head towards an insert on the first input.
    With `skip_zero_head`, head 0 means "no operation" and 1 is that insert,
    so a head byte falling to zero drops its operation in place.
    """

    def __init__(self, num_inputs: int, widths: Sequence[int], actions: Sequence[int], allow_advance: bool,
                 *, skip_zero_head: bool = False) -> None:
        acts = tuple(actions) + ((ADVANCE,) if allow_advance else ())
        self.heads = tuple((a, i) for a in acts for i in range(num_inputs))
        self.width = max(widths)
        self.body_max = 6 ** self.width * 16
        self.body_bytes = max(1, ((self.body_max - 1).bit_length() + 7) // 8)
        self.size = 1 + self.body_bytes
        self.skip = 1 if skip_zero_head else 0

    def decode(self, data: bytes, at: int = 0) -> Op | None:
        head = data[at] - self.skip
        if head < 0:
            return None
        action, i = self.heads[head % len(self.heads)]
        body = int.from_bytes(data[at + 1:at + self.size], "little") % self.body_max
        values = []
        v = body >> 4
        for _ in range(self.width):
            v, d = divmod(v, 6)
            values.append(d)
        return Op(i, action, (body >> 1) & 7, tuple(values), bool(body & 1))


def ops_strategy(num_inputs: int, widths: Sequence[int], *, max_ops: int, allow_advance: bool,
                 min_ops: int = 1, actions: Sequence[int] = (INSERT, UPDATE, DELETE)) -> st.SearchStrategy[list[Op]]:
    """Lists of abstract operations, one fixed-size byte-string draw each (see `_OpDecoder`).

    Hypothesis's cost is per draw, so an operation is one draw; the list
    shrinks by deleting whole operations.
    """
    dec = _OpDecoder(num_inputs, widths, actions, allow_advance)
    one = st.binary(min_size=dec.size, max_size=dec.size).map(dec.decode)
    return st.lists(one, min_size=min_ops, max_size=max(max_ops, min_ops))


def packed_decoder(num_inputs: int, widths: Sequence[int], *, max_ops: int, allow_advance: bool, min_ops: int = 1,
                   actions: Sequence[int] = (INSERT, UPDATE, DELETE), header: int = 0
                   ) -> tuple[int, Callable[[bytes], tuple[bytes, list[Op]]]]:
    """(size, decode) of the packed layout: `header` bytes, a count byte, max_ops operation slots.

    The count byte maps uniformly onto min_ops..max_ops; that many slots are
    read, and a slot whose head byte is zero is no operation (`_OpDecoder`).
    """
    check_count_range("packed_ops", "min_ops", min_ops, "max_ops", max_ops)
    dec = _OpDecoder(num_inputs, widths, actions, allow_advance, skip_zero_head=True)
    span = max_ops - min_ops + 1

    def decode(data: bytes) -> tuple[bytes, list[Op]]:
        n = min_ops + data[header] * span // 256
        ops = (dec.decode(data, header + 1 + j * dec.size) for j in range(n))
        return data[:header], [op for op in ops if op is not None]

    return header + 1 + dec.size * max_ops, decode


def packed_ops(num_inputs: int, widths: Sequence[int], *, max_ops: int, allow_advance: bool, min_ops: int = 1,
               actions: Sequence[int] = (INSERT, UPDATE, DELETE), header: int = 0
               ) -> st.SearchStrategy[tuple[bytes, list[Op]]]:
    """(header, operations) decoded from ONE fixed-size byte string (layout: `packed_decoder`).

    One draw per stream is the fastest to generate (Hypothesis's cost is per
    draw; with the header as a second draw, Hypothesis filled about a quarter
    of the streams with zero bytes). The string never changes length, so no
    byte deletion can shift operations against their slots: the stream
    shrinks by the count byte falling (dropping operations from the end) and
    by head bytes falling to zero (dropping one operation in place).
    """
    size, decode = packed_decoder(num_inputs, widths, max_ops=max_ops, allow_advance=allow_advance,
                                  min_ops=min_ops, actions=actions, header=header)
    return st.binary(min_size=size, max_size=size).map(decode)


_EQUALITY = re.compile(r"^\(?\s*(\w+)\.(\w+)\s*(?:=|IS NOT DISTINCT FROM)\s*(\w+)\.(\w+)\s*\)?$", re.IGNORECASE)


def equality_columns(conditions: Sequence[str], name: str) -> tuple[str, ...]:
    """Columns of input `name` in a top-level equality conjunct of any join condition (a join key of it).

    A bare +U on a raw `all` input must keep these: keyed state cannot retract a row that moved to another
    join key. Deliberately generous (a conjunct inside parentheses counts too): generating fewer bare +U
    costs nothing, generating one that moves is an invalid stream."""
    cols: list[str] = []
    for cond in conditions:
        for conjunct in re.split(r"\s+AND\s+", cond, flags=re.IGNORECASE):
            m = _EQUALITY.match(conjunct.strip())
            if m is None:
                continue
            for table, column in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
                if table == name and column not in cols:
                    cols.append(column)
    return tuple(cols)


def tie_pair(spec: InputSpec, key_columns: Sequence[str]) -> tuple[int, int] | None:
    """(source, target) indexes of the first two key columns of one type, or None where there are none.

    A planner that swaps two key columns gives the same answer on a row whose two columns hold one value, and
    a different one where they differ: so an insert whose otherwise unused flag bit is set copies the first
    into the second (a deliberate tie), and one without it keeps the values drawn (mostly different). The
    flag shrinks to unset: a shrunk counterexample keeps a tie only where it matters."""
    types = dict(spec.columns)
    cols = [c for c in key_columns if c in types]
    for i, first in enumerate(cols):
        for second in cols[i + 1:]:
            if types[first] == types[second]:
                return spec.index_of(first), spec.index_of(second)
    return None


class ModelTable:
    """The current contents of one input, as the stream has built it so far."""

    def __init__(self, spec: InputSpec, key_columns: Sequence[str], key_domain: tuple = KEY_DOMAIN,
                 fixed_columns: Sequence[str] = (), tie_keys: bool = False) -> None:
        self.spec = spec
        self.rows: list[tuple] = []
        self.domains = [domain_for(spec, c, key_columns, key_domain) for c in spec.column_names]
        self.uk_idx = [spec.index_of(c) for c in spec.unique_key] if spec.unique_key else None
        # columns a bare +U must keep (`all` inputs): the join key columns, as far as the generator knows them
        self.key_idx = [spec.index_of(c) for c in (*key_columns, *fixed_columns) if c in spec.column_names]
        self.tie = tie_pair(spec, key_columns) if tie_keys else None

    def tied(self, row: tuple) -> tuple:
        """`row` with its second tied key column set to the value of the first (see `tie_pair`)."""
        if self.tie is None or row[self.tie[0]] is None:  # (a NULL never equals anything: no tie to draw)
            return row
        src, dst = self.tie
        return row[:dst] + (row[src],) + row[dst + 1:]

    def _uk(self, row: tuple) -> tuple | None:
        return None if self.uk_idx is None else tuple(row[i] for i in self.uk_idx)

    def make_row(self, values: tuple) -> tuple:
        return tuple(dom[v % len(dom)] for dom, v in zip(self.domains, values, strict=False))

    def free_row(self, values: tuple, tie: bool = False) -> tuple | None:
        """A row built from `values` whose unique key is not taken (None if the domain is exhausted); with
        `tie`, its tied key columns hold one value."""
        row = self.tied(self.make_row(values)) if tie else self.make_row(values)
        if self.uk_idx is None:
            return row
        taken = {self._uk(r) for r in self.rows}
        if self._uk(row) not in taken:
            return row
        vals = list(values)
        for _ in range(len(self.domains[self.uk_idx[0]])):
            vals[self.uk_idx[0]] += 1
            row = self.tied(self.make_row(tuple(vals))) if tie else self.make_row(tuple(vals))
            if self._uk(row) not in taken:
                return row
        return None

    def updated(self, old: tuple, values: tuple) -> tuple:
        """A new version of `old`: the unique key stays, the rest is redrawn."""
        new = list(self.make_row(values))
        if self.uk_idx is not None:
            for i in self.uk_idx:
                new[i] = old[i]
        return tuple(new)

    def key_only(self, row: tuple) -> tuple:
        keep = set(self.uk_idx or ())
        return tuple(v if i in keep else None for i, v in enumerate(row))


def build_events(specs: Sequence[InputSpec], key_columns: Sequence[Sequence[str]], ops: Sequence[Op],
                 *, time_step: int = 1, key_domain: tuple = KEY_DOMAIN, conditions: Sequence[str] = (),
                 domains: Sequence[Sequence[tuple]] | None = None, tie_keys: bool = False) -> list[Event]:
    """Interpret operations against model tables; the result is always a valid changelog.

    `conditions` (the join's): a bare +U on an `all` input keeps every column they compare for equality.
    `domains` (one tuple of values per column, per input) replaces the default per-type domains
    (generators.schema uses it for NOT NULL columns and event times). `tie_keys`: an insert with its flag set
    gives two key columns of one type the same value (`tie_pair`)."""
    tables = [ModelTable(s, k, key_domain, equality_columns(conditions, s.name), tie_keys)
              for s, k in zip(specs, key_columns, strict=False)]
    if domains is not None:
        for table, doms in zip(tables, domains, strict=False):
            table.domains = [tuple(d) for d in doms]
    events: list[Event] = []
    now = 0
    for op in ops:
        if op.action == ADVANCE:
            now += time_step * (1 + op.pick)
            events.append(ProcessingTimeEvent(now))
            continue
        table = tables[op.input % len(tables)]
        spec = table.spec
        name = spec.name
        action = op.action
        if spec.changelog_mode == "insert_only" or not table.rows:
            action = INSERT
        if action == INSERT and op.pick == _COPY and table.uk_idx is None and table.rows:
            row = table.rows[op.values[0] % len(table.rows)]  # a second copy of a present row (no unique key)
            table.rows.append(row)
            events.append(ChangeEvent(name, "+I", row))
        elif action == INSERT:
            row = table.free_row(op.values, op.flag)
            if row is None:
                continue
            table.rows.append(row)
            events.append(ChangeEvent(name, "+I", row))
        elif action == UPDATE:
            idx = op.pick % len(table.rows)
            old = table.rows[idx]
            new = table.updated(old, op.values)  # may duplicate another row: fine without a unique key
            table.rows[idx] = new
            # `all`: a bare +U only where the row keeps its join key: keyed state cannot retract a row that
            # moved to another join key (docs/scenario-format.md, changelog modes)
            bare = spec.changelog_mode == "all" and op.flag and all(old[i] == new[i] for i in table.key_idx)
            if spec.changelog_mode == "upsert" or bare:
                events.append(ChangeEvent(name, "+U", new))  # the new row replaces the old by unique key
            else:
                events.append(ChangeEvent(name, "-U", old))
                events.append(ChangeEvent(name, "+U", new))
        else:
            idx = op.pick % len(table.rows)
            old = table.rows.pop(idx)
            if spec.changelog_mode == "upsert" and op.flag:
                events.append(ChangeEvent(name, "-D", table.key_only(old)))
            else:
                events.append(ChangeEvent(name, "-D", old))
    return events


def per_key_tokens(event: Event, specs: dict[str, InputSpec], key_idx: dict[str, Sequence[int]]) -> list:
    """The ordering constraints of a change: its join key, and its unique key on upsert inputs."""
    if not isinstance(event, ChangeEvent):
        return [("time",)]
    spec = specs[event.input]
    tokens: list = [("key", tuple(event.row[i] for i in key_idx[event.input]))]
    if spec.unique_key:
        tokens.append(("uk", event.input, tuple(event.row[spec.index_of(c)] for c in spec.unique_key)))
    return tokens


def interleave(events: Sequence[Event], tokens: Sequence[list], choices: Sequence[int]) -> list[Event]:
    """A reordering that keeps the relative order of events sharing a token (per-key order)."""
    remaining = list(range(len(events)))
    out: list[Event] = []
    c = 0
    while remaining:
        ready = []
        seen: set = set()
        for i in remaining:
            toks = tokens[i]
            if not any(t in seen for t in toks):
                ready.append(i)
            seen.update(toks)
        pick = ready[choices[c % len(choices)] % len(ready)] if choices else ready[0]
        c += 1
        remaining.remove(pick)
        out.append(events[pick])
    return out
