"""A correct protocol-v1 test adapter for the conformance kit, with switches that make it wrong in one way each.

`python sql_join.py [SWITCH ...]`. It folds each input's changelog into a table (a bag of rows; an upsert input
by its unique key, so a key-only -D deletes the key's row) and asks DuckDB for the join of the tables: the
chain's conditions as they come, an interval join's bounds as a range on the time columns, NULL padding by
SQL's outer joins. It answers a changelog (`deterministic_order: true`): after each event, or with
`config.mini_batch_size` N after each N events (one bundle), the difference between the join before and after,
as -D then +I rows. That is not how Flink emits a mini-batch bundle, but on the kit's settings case it gives the
same folded changelog, which is all the kit holds it to.

Switches, each a mistake the kit must catch:
  --flip-interval-sign  reads the bounds (L, U) as (-U, -L): the left input's time measured from the right's
  --null-keys-match     joins equi keys with `=` as if they were IS NOT DISTINCT FROM
  --ignore-residual     joins on the equi keys alone (a step with no key: a cross product)
  --ignore-mini-batch   declares mini_batch but emits record by record
  --carry-state         keeps each shape's input tables from one case to the next (state cached per shape)
  --swap-answers        answers a request's cases in reverse order, under the ids in order
  --answers-by-name     keeps a request's answers by the scenario's name and answers each case with its name's:
                        right whenever no two cases of a request share a name (a campaign's generated ones do)
  --keys-by-position    joins each step on the first column of each side instead of the named key columns: right
                        whenever every key is its input's first column
  --float-values        carries every number through a float (as a JSON library that reads numbers as doubles
                        does): right for every whole number up to 2^53
  --crash-on-malformed  exits (status 1) on a run request whose cases are not a list
  --final               answers the final table (`output: final`) instead of a changelog
  --v2                  speaks protocol version 2 as well: then it joins by the case's `plan` (keys, residual tree
                        turned back into SQL, interval) instead of the condition text; changes come from
                        `scenario.events` in either version
"""

import json
import sys
from collections import Counter

import duckdb

from converge.engine.condition import split_condition
from converge.engine.model.scenario import InputSpec

SWITCHES = {"--flip-interval-sign", "--null-keys-match", "--ignore-residual", "--ignore-mini-batch", "--carry-state",
            "--swap-answers", "--crash-on-malformed", "--final", "--v2", "--answers-by-name", "--keys-by-position",
            "--float-values"}
FLAGS = set(sys.argv[1:])
if FLAGS - SWITCHES:
    sys.exit(f"unknown switches {sorted(FLAGS - SWITCHES)}; known: {sorted(SWITCHES)}")
CAPABILITIES = {
    "families": ["regular", "interval", "multiway"],
    "join_types": ["inner", "left", "right", "full", "semi", "anti"],
    "changelog_modes": ["insert_only", "retract", "upsert"],
    "column_types": ["BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"],
    "time_domains": ["event_time"], "state_ttl": False,
    "output": "final" if "--final" in FLAGS else "changelog",
    "deterministic_order": "--final" not in FLAGS, "max_batch": 4,
    "settings": ["mini_batch"],
}
KEYWORDS = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN", "semi": "SEMI JOIN",
            "anti": "ANTI JOIN"}


CARRIED = {}  # --carry-state: the tables of each shape, kept across cases


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def column_sql(ref):
    return f"{quote(ref['input'])}.{quote(ref['column'])}"


def literal_sql(value, type_):
    if value is None:
        return "NULL" if type_ == "NULL" else f"CAST(NULL AS {type_})"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return f"CAST({value!r} AS {type_})"


INFIX = {"=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "//", "%", "||"}
PREFIX = {"not": "NOT ", "neg": "-"}
POSTFIX = {"is_null": " IS NULL", "is_not_null": " IS NOT NULL"}
NAMED = {"is_not_distinct_from": " IS NOT DISTINCT FROM ", "is_distinct_from": " IS DISTINCT FROM ", "and": " AND ",
         "or": " OR "}


def tree_sql(node):
    """A v2 expression tree back to DuckDB SQL: what the plan says, not the scenario's text."""
    if node["node"] == "column":
        return column_sql(node)
    if node["node"] == "literal":
        return literal_sql(node["value"], node["type"])
    op, args = node["op"], [tree_sql(a) for a in node["args"]]
    if op in INFIX:
        return f"({args[0]} {op} {args[1]})"
    if op in NAMED:
        return "(" + NAMED[op].join(args) + ")"
    if op in PREFIX:
        return f"({PREFIX[op]}{args[0]})"
    if op in POSTFIX:
        return f"({args[0]}{POSTFIX[op]})"
    if op == "cast":
        return f"CAST({args[0]} AS {node['type']})"
    return f"{op}({', '.join(args)})"  # abs, length, lower, upper, coalesce


def key_and_residual(case, step):
    """Join step `step`'s equi keys (left SQL, right SQL, null-safe) and residual SQL: from the v2 plan when the
    case has one, else split from the v1 condition text."""
    scenario = case["scenario"]
    if "plan" in case:
        plan = case["plan"]["steps"][step]
        keys = [(column_sql(k["left"]), column_sql(k["right"]), k["null_safe"]) for k in plan["keys"]]
        return keys, None if plan["residual"] is None else tree_sql(plan["residual"])
    join = scenario["join"]
    specs = {s["name"]: InputSpec(s["name"], tuple(tuple(c) for c in s["columns"])) for s in scenario["inputs"]}
    chain = [specs[name] for name in join["inputs"]]
    split = split_condition(join["conditions"][step], chain[: step + 1], chain[step + 1])
    keys = [(column_sql(vars(k.left)), column_sql(vars(k.right)), k.null_safe) for k in split.equi_keys]
    return keys, split.residual_sql


def condition(case, step):
    """The ON clause of join step `step` (joining chain input step + 1), with the switches applied."""
    scenario = case["scenario"]
    join = scenario["join"]
    sql = join["conditions"][step]
    if "plan" in case or FLAGS & {"--null-keys-match", "--ignore-residual", "--keys-by-position"}:
        keys, residual = key_and_residual(case, step)
        if "--keys-by-position" in FLAGS:
            columns = {s["name"]: s["columns"][0][0] for s in scenario["inputs"]}
            left, right = join["inputs"][step], join["inputs"][step + 1]
            keys = [(column_sql({"input": left, "column": columns[left]}),
                     column_sql({"input": right, "column": columns[right]}), keys[0][2])] if keys else []
        ons = [f"{left} {'IS NOT DISTINCT FROM' if safe or '--null-keys-match' in FLAGS else '='} {right}"
               for left, right, safe in keys]
        ons += [] if residual is None or "--ignore-residual" in FLAGS else [f"({residual})"]
        sql = " AND ".join(ons) or "TRUE"
    interval = case["plan"]["interval"] if "plan" in case else join["interval"]
    if interval is not None:
        low, high = interval["lower_ms"], interval["upper_ms"]
        if "--flip-interval-sign" in FLAGS:
            low, high = -high, -low
        left, right = interval["left_time"], interval["right_time"]
        if "plan" in case:
            left, right = column_sql(left), column_sql(right)
        sql = f"({sql}) AND {right} + ({low}) <= {left} AND {left} <= {right} + ({high})"
    return sql


def query(case):
    join = case["scenario"]["join"]
    sql = f"SELECT * FROM {quote(join['inputs'][0])}"
    for step, (name, jtype) in enumerate(zip(join["inputs"][1:], join["types"], strict=False)):
        sql += f" {KEYWORDS[jtype]} {quote(name)} ON {condition(case, step)}"
    return sql


def fold(tables, specs, event):
    """Apply one change event to its input's table: a bag of rows, or (upsert) a row per unique key."""
    spec = specs[event["input"]]
    row = tuple(event["row"])
    if "--float-values" in FLAGS:
        row = tuple(float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in row)
    table = tables[spec["name"]]
    if spec["changelog_mode"] == "upsert":
        names = [c[0] for c in spec["columns"]]
        key = tuple(row[names.index(k)] for k in spec["unique_key"])
        if event["kind"] == "-D":
            table.pop(key, None)
        else:
            table[key] = row
    else:
        table[row] += 1 if event["kind"] in ("+I", "+U") else -1


def join_now(db, case, specs, tables):
    """The join of the tables as they are: a Counter of output rows."""
    for spec in specs.values():
        name = quote(spec["name"])
        db.execute(f"DELETE FROM {name}")
        table = tables[spec["name"]]
        rows = [r for r, n in table.items() for _ in range(n)] if isinstance(table, Counter) else list(table.values())
        if rows:
            marks = ", ".join("?" for _ in spec["columns"])
            db.executemany(f"INSERT INTO {name} VALUES ({marks})", [list(r) for r in rows])
    return Counter(tuple(r) for r in db.execute(query(case)).fetchall())


def answer(case):
    scenario = case["scenario"]
    # the config's other settings are outside the declared `settings`, so converge never sends a case using one
    interval = scenario["join"]["interval"]
    if interval is not None and (interval["time"] != "event" or interval["allowed_lateness_ms"]):
        return {"status": "unsupported", "message": "only event-time interval joins without allowed lateness"}
    specs = {s["name"]: s for s in scenario["inputs"]}
    db = duckdb.connect()
    for spec in specs.values():
        columns = ", ".join(f"{quote(n)} {t}" for n, t in spec["columns"])
        db.execute(f"CREATE TABLE {quote(spec['name'])} ({columns})")
    tables = {name: ({} if spec["changelog_mode"] == "upsert" else Counter()) for name, spec in specs.items()}
    if "--carry-state" in FLAGS:
        tables = CARRIED.setdefault(json.dumps([scenario["inputs"], scenario["join"]], sort_keys=True), tables)
    changes = [e for e in scenario["events"] if "kind" in e]
    bundle = scenario["config"].get("mini_batch_size")
    step = 1 if bundle is None or "--ignore-mini-batch" in FLAGS else bundle
    before, changelog = Counter(), []
    try:
        for start in range(0, len(changes), step):
            for event in changes[start: start + step]:
                fold(tables, specs, event)
            after = join_now(db, case, specs, tables)
            changelog += [["-D", *row] for row, n in sorted((before - after).items(), key=repr) for _ in range(n)]
            changelog += [["+I", *row] for row, n in sorted((after - before).items(), key=repr) for _ in range(n)]
            before = after
    except duckdb.Error as exc:
        return {"status": "error", "message": f"DuckDB: {exc}"}
    if "--final" in FLAGS:
        return {"status": "ok", "final": [list(r) for r, n in before.items() for _ in range(n)]}
    return {"status": "ok", "changelog": changelog}


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            spoken = [v for v in message["versions"] if v in ((1, 2) if "--v2" in FLAGS else (1,))]
            if not spoken:
                send({"type": "error", "message": f"this adapter speaks none of {message['versions']}"})
                return
            send({"type": "hello", "protocol": "converge-adapter", "version": max(spoken),
                  "system": {"name": "sql-join", "version": duckdb.__version__}, "capabilities": CAPABILITIES})
        elif message["type"] == "run":
            if not isinstance(message.get("cases"), list):
                if "--crash-on-malformed" in FLAGS:
                    sys.exit(1)
                send({"type": "error", "request": message.get("request"), "message": "cases must be a list"})
                continue
            cases = message["cases"]
            answers = [answer(case) for case in cases]
            if "--answers-by-name" in FLAGS:
                by_name = {case["scenario"]["name"]: a for case, a in zip(cases, answers, strict=True)}
                answers = [by_name[case["scenario"]["name"]] for case in cases]
            if "--swap-answers" in FLAGS:
                answers.reverse()
            send({"type": "results", "request": message["request"],
                  "results": [{"id": case["id"], **a} for case, a in zip(message["cases"], answers, strict=False)]})
        elif message["type"] == "shutdown":
            return


if __name__ == "__main__":
    main()
