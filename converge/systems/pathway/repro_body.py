"""The fixed part of a generated Pathway repro (`converge repro --system pathway`): the code after the data block.

Kept as text, not imported: the generated script must need Pathway alone. It is the adapter's dataflow
(program/graph.py, program/keys.py) re-stated for one case, without case numbers, for equi-join chains: each input
a stream table of JSON texts, each step Pathway's `join` on key texts (a NULL in an `=` key gives no key, so the
row pairs with nothing), outer rows padded by `difference`, SEMI/ANTI by `intersect`/`difference`.
"""

from __future__ import annotations

BODY = '''

class InputSchema(pw.Schema):
    rid: int = pw.column_definition(primary_key=True)
    row: str


def input_table(name):
    """The input as Pathway reads it: one row per change, (row id, values as JSON text, time, diff)."""
    if not ROWS[name]:
        return pw.Table.empty(rid=int, row=str)
    return pw.debug.table_from_rows(InputSchema, [tuple(r) for r in ROWS[name]], is_stream=True)


def normal(value, as_double):
    """A key value whose JSON text is equal exactly when SQL says the values are equal."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if as_double or isinstance(value, float):
        value = float(value)
        if math.isnan(value):
            return "NaN:"
        if math.isinf(value):
            return "inf:" if value > 0 else "-inf:"
        return value + 0.0
    return value


def key_function(names, refs, keys):
    """(JSON texts of the inputs `names`) -> the key text of the columns `refs`, None when an `=` key is NULL."""
    picks = [(names.index(name), [c for c, _ in INPUTS[name]["columns"]].index(column)) for name, column in refs]
    doubles = [kind_of(k[0]) == "DOUBLE" or kind_of(k[1]) == "DOUBLE" for k in keys]

    def key(*texts):
        rows = [json.loads(t) if t is not None else None for t in texts]
        out = []
        for (at, index), (_, _, null_safe), double in zip(picks, keys, doubles, strict=True):
            value = None if rows[at] is None else rows[at][index]
            if value is None and not null_safe:
                return None
            out.append(normal(value, double))
        return json.dumps(out, separators=(",", ":"))
    return key


def kind_of(ref):
    name, column = ref
    return dict(INPUTS[name]["columns"])[column]


def step(left, carried, name, how, keys):
    """One join of the chain: the table so far (a column r<i> per carried input) with the input `name`."""
    right = input_table(name)
    cols = [left[f"r{i}"] for i in range(len(carried))]
    lkey = key_function(carried, [k[0] for k in keys], keys)
    rkey = key_function([name], [k[1] for k in keys], keys)
    lk = left.with_columns(_key=pw.apply_with_type(lkey, str | None, *cols))
    rk = right.with_columns(_key=pw.apply_with_type(rkey, str | None, right.row))
    lk, rk = lk.filter(lk._key.is_not_none()), rk.filter(rk._key.is_not_none())
    kept = {f"r{i}": lk[f"r{i}"] for i in range(len(carried))}
    pairs = lk.join(rk, lk._key == rk._key).select(_lid=lk.id, _rid=rk.id, _right=rk.row, **kept)
    if how in ("semi", "anti"):
        matched = pairs.groupby(id=pairs._lid).reduce()
        return left.intersect(matched) if how == "semi" else left.difference(matched)
    slot = f"r{len(carried)}"
    same = {f"r{i}": pairs[f"r{i}"] for i in range(len(carried))}
    parts = [pairs.select(**same, **{slot: pairs._right})]
    if how in ("left", "full"):
        lone = left.difference(pairs.groupby(id=pairs._lid).reduce())
        parts.append(lone.select(**{f"r{i}": lone[f"r{i}"] for i in range(len(carried))}, **{slot: None}))
    if how in ("right", "full"):
        lone = right.difference(pairs.groupby(id=pairs._rid).reduce())
        parts.append(lone.select(**{f"r{i}": None for i in range(len(carried))}, **{slot: lone.row}))
    return pw.Table.concat_reindex(*parts) if len(parts) > 1 else parts[0]


def run():
    """The chain as Pathway joins, run to the end of its input: the final rows, one per copy."""
    carried = [FIRST]
    table = input_table(FIRST).select(r0=pw.this.row)
    for name, how, keys in STEPS:
        table = step(table, carried, name, how, keys)
        if how not in ("semi", "anti"):
            carried.append(name)
    _, columns = pw.debug.table_to_dicts(table)
    rows = []
    for rid in columns["r0"]:
        values = []
        for i, name in enumerate(carried):
            text = columns[f"r{i}"][rid]
            values += json.loads(text) if text is not None else [None] * len(INPUTS[name]["columns"])
        rows.append(tuple(values))
    return rows


def main():
    print("query:", QUERY)
    try:
        answer = sorted(run(), key=repr)
    except Exception as exc:  # noqa: BLE001 - Pathway failed the dataflow: that is an outcome too
        print("Pathway failed:", f"{type(exc).__name__}: {exc}"[:500])
        return 2
    expected = sorted(EXPECTED, key=repr)
    print("final answer:", answer)
    print("expected:    ", expected)
    if Counter(answer) != Counter(expected):
        print("DIVERGED: the final answer differs from the expected one")
        return 1
    print("AGREED: the final answer is the expected one")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.exit(code)
'''
