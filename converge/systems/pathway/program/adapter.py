"""converge's adapter for Pathway (protocol version 2): run by the Pathway environment's own Python.

Standard library and pathway only; never imports converge. stdout carries protocol lines alone: the
real stdout is kept for them and file descriptor 1 is pointed at stderr, so nothing Pathway prints
can reach the protocol.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

PROTOCOL = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr
sys.path.append(str(Path(__file__).resolve().parent))  # the sibling modules, as top-level names
# No network: Pathway contacts its license and usage servers only with a license key, and a monitoring server only
# when one is named, so none of those reach it from the user's environment; nor do its worker settings.
for _name in ("PATHWAY_LICENSE_KEY", "PATHWAY_MONITORING_SERVER", "PATHWAY_MONITORING_HTTP_PORT", "PATHWAY_THREADS",
              "PATHWAY_PROCESSES", "PATHWAY_PERSISTENCE_MODE", "PATHWAY_REPLAY_STORAGE"):
    os.environ.pop(_name, None)

import pathway as pw  # noqa: E402
from expression import PlanError  # noqa: E402
from feed import Feed  # noqa: E402
from graph import build, final_rows  # noqa: E402
from pathway.internals.parse_graph import G  # noqa: E402
from support import capabilities, unsupported  # noqa: E402


def send(message: dict) -> None:
    PROTOCOL.write(json.dumps(message, allow_nan=False) + "\n")
    PROTOCOL.flush()


def _shape(case: dict) -> str:
    scenario = case["scenario"]
    return json.dumps([scenario["inputs"], scenario["join"], scenario.get("config"), case["plan"]], sort_keys=True)


def run_group(cases: list[dict]) -> list[dict]:
    """Cases of one shape through one dataflow; every case answered (an error for all when the run fails)."""
    G.clear()
    scenario, plan = cases[0]["scenario"], cases[0]["plan"]
    feed = Feed(scenario["inputs"])
    for number, case in enumerate(cases):
        feed.add_case(number, case["scenario"]["events"])
    try:
        table, layout = build(scenario, plan, feed)
        finals = final_rows(table, layout, len(cases))
    except PlanError:
        raise  # a malformed request: answered with a request error (main)
    except Exception as exc:  # the engine failed: each case of the group is an error, the adapter stays up
        traceback.print_exc(file=sys.stderr)
        return [{"id": c["id"], "status": "error", "message": f"Pathway: {type(exc).__name__}: {exc}"[:2000]}
                for c in cases]
    finally:
        G.clear()
    return [{"id": c["id"], "status": "ok", "final": rows} for c, rows in zip(cases, finals)]


def run(message: dict) -> dict:
    cases = message.get("cases")
    if not isinstance(cases, list):
        return {"type": "error", "request": message.get("request"), "message": "cases must be a list"}
    started = time.monotonic()
    answers: dict[str, dict] = {}
    groups: dict[str, list[dict]] = {}
    for case in cases:
        reason = unsupported(case)
        if reason is not None:
            answers[case["id"]] = {"id": case["id"], "status": "unsupported", "message": reason}
        else:
            groups.setdefault(_shape(case), []).append(case)
    for group in groups.values():
        for result in run_group(group):
            answers[result["id"]] = result
    print(f"request {message.get('request')}: {len(cases)} cases in {len(groups)} dataflow(s), "
          f"{time.monotonic() - started:.2f} s", file=sys.stderr, flush=True)
    return {"type": "results", "request": message["request"], "results": [answers[c["id"]] for c in cases]}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as exc:
            send({"type": "error", "message": f"not JSON: {exc}"})
            continue
        kind = message.get("type")
        if kind == "hello":
            if 2 not in message.get("versions", []):
                send({"type": "error", "message": "this adapter speaks protocol version 2 only (it reads the "
                                                  "structured join plan)"})
                return 0
            send({"type": "hello", "protocol": "converge-adapter", "version": 2,
                  "system": {"name": "pathway", "version": pw.__version__}, "capabilities": capabilities()})
        elif kind == "run":
            try:
                send(run(message))
            except Exception as exc:  # a request it cannot read: a request error, and the adapter stays up
                traceback.print_exc(file=sys.stderr)
                send({"type": "error", "request": message.get("request"), "message": f"{type(exc).__name__}: {exc}"})
        elif kind == "shutdown":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
