"""A stub adapter for protocol version 2 (tests/systems/adapters/test_adapter_protocol_v2.py):
`python v2.py MODE [DUMP]`.

It answers the version MODE names (`v2`: 2, `v1`: 1, `v3`: 3, which converge never offers; `v2-only`: an error
unless 2 is offered; `v2-nullmatch`: 2, with every key matched null-safely, a wrong answer), writes every CASE it receives to the file DUMP (one JSON line each) when given, and in
version 2 computes the final answer from the plan alone: each input's change events folded into a table, then
the steps joined by their keys and residual tree (tests/support/adapters/tree_eval.py). It declares no setting, and
a `lacks` sentence for mini_batch only.
"""

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.support.adapters.tree_eval import evaluate  # noqa: E402

MODE = sys.argv[1]
DUMP = sys.argv[2] if len(sys.argv) > 2 else None
CAPS = {"families": ["regular", "multiway"], "join_types": ["inner", "left", "right", "full", "semi", "anti"],
        "changelog_modes": ["insert_only", "retract", "upsert"],
        "column_types": ["BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"], "time_domains": [],
        "state_ttl": False, "output": "final", "deterministic_order": False, "max_batch": 50, "settings": [],
        "lacks": {"mini_batch": "the v2 stub has no mini-batch join"}}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def table(spec, events):
    """The input's final rows: its change events folded (an upsert input by its unique key)."""
    columns = [c for c, _ in spec["columns"]]
    key = [columns.index(c) for c in spec["unique_key"] or []]
    rows, keyed = Counter(), {}
    for e in events:
        if e.get("input") != spec["name"] or "kind" not in e:
            continue
        row = tuple(e["row"])
        if spec["changelog_mode"] == "upsert":
            k = tuple(row[i] for i in key)
            if e["kind"] == "-D":
                keyed.pop(k, None)  # a -D carries the key; the other columns may be null
            else:
                keyed[k] = row
        else:
            rows[row] += 1 if e["kind"] in ("+I", "+U") else -1
    if spec["changelog_mode"] == "upsert":
        return list(keyed.values())
    return [row for row, n in rows.items() for _ in range(n)]


def env(spec, row):
    return {(spec["name"], c): (None if row is None else row[i]) for i, (c, _) in enumerate(spec["columns"])}


def matches(step, left, right):
    for k in step["keys"]:
        x, y = left[k["left"]["input"], k["left"]["column"]], right[k["right"]["input"], k["right"]["column"]]
        null_safe = k["null_safe"] or MODE == "v2-nullmatch"  # the mistake a native NULL-matching join makes
        if not (x == y and x is not None or (null_safe and x is None and y is None)):
            return False
    return step["residual"] is None or evaluate(step["residual"], {**left, **right}) is True


def final_answer(case):
    scenario, plan = case["scenario"], case["plan"]
    specs = {s["name"]: s for s in scenario["inputs"]}
    shown = [plan["first"]]
    result = [env(specs[plan["first"]], r) for r in table(specs[plan["first"]], scenario["events"])]
    for step in plan["steps"]:
        spec = specs[step["input"]]
        rights = [env(spec, r) for r in table(spec, scenario["events"])]
        pads = {name: env(specs[name], None) for name in shown}
        out, used = [], set()
        for left in result:
            hits = [j for j, right in enumerate(rights) if matches(step, left, right)]
            used.update(hits)
            if step["type"] in ("semi", "anti"):
                if bool(hits) == (step["type"] == "semi"):
                    out.append(left)
                continue
            out += [{**left, **rights[j]} for j in hits]
            if not hits and step["type"] in ("left", "full"):
                out.append({**left, **env(spec, None)})
        if step["type"] in ("right", "full"):
            padding = {k: v for p in pads.values() for k, v in p.items()}
            out += [{**padding, **right} for j, right in enumerate(rights) if j not in used]
        result = out
        if step["type"] not in ("semi", "anti"):
            shown.append(step["input"])
    return [[r[name, c] for name in shown for c, _ in specs[name]["columns"]] for r in result]


def main():
    version = None
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            offered = msg["versions"]
            if MODE == "v2-only" and 2 not in offered:
                send({"type": "error", "message": "this stub speaks protocol version 2 only"})
                return
            version = {"v1": 1, "v2": 2, "v2-only": 2, "v2-nullmatch": 2, "v3": 3}[MODE]
            send({"type": "hello", "protocol": "converge-adapter", "version": version,
                  "system": {"name": "v2-stub", "version": "0"}, "capabilities": CAPS})
        elif msg["type"] == "run":
            if DUMP:
                with open(DUMP, "a", encoding="utf-8") as dump:
                    for case in msg["cases"]:
                        dump.write(json.dumps(case) + "\n")
            results = []
            for case in msg["cases"]:
                final = final_answer(case) if version == 2 else []
                results.append({"id": case["id"], "status": "ok", "final": final})
            send({"type": "results", "request": msg["request"], "results": results})
        elif msg["type"] == "shutdown":
            return


main()
