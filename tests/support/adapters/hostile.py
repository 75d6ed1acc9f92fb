"""A hostile adapter for the fault suite: `python hostile.py FAULT AT TAG`, standard library only.

"daemon" is no fault of the protocol: at the hello it starts a process in its own session that keeps its
stdout open and outlives it (a daemonized engine), then answers every case "unsupported" and exits when told.
Every other FAULT greets like a good adapter and answers every run request before request AT with "unsupported"
for each case (so nothing diverges first); at request AT (0: the handshake itself) it commits FAULT.
Just before the fault it writes `hostile TAG: FAULT at request N` to stderr, which the error must show.
TAG is on the command line of every process it starts, so a test finds them all in /proc.

HOSTILE_SIZE sets the length of the `huge` and `endless` lines (default 100 MB and 300 MB).
"""

import json
import os
import subprocess
import sys
import time

FAULTS = ("garbage", "huge", "endless", "nan", "wrong-id", "duplicate-id", "missing-result", "reordered",
          "wrong-request", "request-error", "exit-mid-line", "crash", "hang", "deaf", "grandchild-exit",
          "grandchild-hang", "ignore-shutdown", "unsupported", "daemon")
CAPS = {"families": ["regular"], "join_types": ["inner", "left"], "changelog_modes": ["insert_only", "retract"],
        "column_types": ["BIGINT", "VARCHAR"], "time_domains": [], "state_ttl": False, "output": "final",
        "deterministic_order": False, "max_batch": 4}


def send_raw(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def send(obj: dict) -> None:
    send_raw(json.dumps(obj) + "\n")


def grandchild(tag: str) -> None:
    """A process in its own session that keeps the adapter's stdout and stderr open (a daemonized engine)."""
    subprocess.Popen([sys.executable, os.path.abspath(__file__), "grandchild", "0", tag], start_new_session=True,
                     stdin=subprocess.DEVNULL)


def width(case: dict) -> int:
    scenario = case["scenario"]
    types = dict(zip(scenario["join"]["inputs"][1:], scenario["join"]["types"], strict=False))
    return sum(len(s["columns"]) for s in scenario["inputs"] if types.get(s["name"]) not in ("semi", "anti"))


def results_of(fault: str, request: int, cases: list) -> dict | None:
    """The results message of a fault that breaks the contract in its content (None: not such a fault); at the
    handshake (no cases yet) the results of a case c0, in place of the hello."""
    cases = cases or [{"id": "c0"}]
    ok = [{"id": c["id"], "status": "ok", "final": []} for c in cases]
    if fault == "wrong-id":
        ok[0]["id"] = "not-" + ok[0]["id"]
    elif fault == "duplicate-id":
        ok[-1]["id"] = ok[0]["id"] if len(ok) > 1 else ok[0]["id"] + "-again"
        ok.append(dict(ok[0]))
    elif fault == "missing-result":
        ok = ok[:-1]
    elif fault == "reordered":
        ok = ok[::-1] if len(ok) > 1 else [{"id": "c1", "status": "ok", "final": []}]
    elif fault == "wrong-request":
        request += 1
    else:
        return None
    return {"type": "results", "request": request, "results": ok}


def commit(fault: str, request: int, cases: list, tag: str) -> None:
    print(f"hostile {tag}: {fault} at request {request}", file=sys.stderr, flush=True)
    size = int(os.environ.get("HOSTILE_SIZE") or (100_000_000 if fault == "huge" else 300_000_000))
    message = results_of(fault, request, cases)
    if message is not None:
        send(message)
    elif fault == "garbage":
        send_raw("Exception in thread main: not a protocol line {\n")
    elif fault in ("huge", "endless"):
        chunk = "x" * (1 << 20)
        for _ in range(size >> 20):
            sys.stdout.write(chunk)
        send_raw("\n" if fault == "huge" else "")
        if fault == "endless":
            time.sleep(3600)
    elif fault == "nan":
        row = ", ".join(["NaN"] + ["null"] * (width(cases[0]) - 1)) if cases else "NaN"
        send_raw(f'{{"type": "results", "request": {request}, "results": [{{"id": "c0", "status": "ok", '
                 f'"final": [[{row}]]}}]}}\n')
    elif fault == "request-error":
        send({"type": "error", "request": request, "message": "hostile: cannot read this request"})
    elif fault == "exit-mid-line":
        send_raw(f'{{"type": "results", "request": {request}, "results": [{{"id": "c0", "sta')
        os._exit(7)
    elif fault == "crash":
        print("Traceback (most recent call last):\nhostile.EngineExploded: the engine exploded", file=sys.stderr,
              flush=True)
        os._exit(9)
    elif fault in ("hang", "deaf"):
        time.sleep(3600)  # "deaf" is committed at the handshake's end: it never reads stdin again
    elif fault in ("grandchild-exit", "grandchild-hang"):
        grandchild(tag)
        if fault == "grandchild-exit":
            os._exit(5)
        time.sleep(3600)


def main() -> None:
    fault, at, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if fault == "grandchild":
        time.sleep(3600)
        return
    if fault not in FAULTS:
        sys.exit(f"hostile: unknown fault {fault!r}")
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            if at == 0 and fault not in ("unsupported", "ignore-shutdown", "deaf", "daemon"):
                commit(fault, 0, [], tag)
                continue
            if fault == "daemon":  # a daemonized engine: it outlives the adapter, holding its output
                grandchild(tag)
            send({"type": "hello", "protocol": "converge-adapter", "version": 1,
                  "system": {"name": "hostile", "version": fault}, "capabilities": CAPS})
            if fault == "deaf":
                commit(fault, 0, [], tag)
        elif message["type"] == "run":
            request, cases = message["request"], message["cases"]
            if request >= at and fault not in ("unsupported", "ignore-shutdown", "daemon") \
                    and (fault != "reordered" or len(cases) > 1):
                commit(fault, request, cases, tag)
                continue
            send({"type": "results", "request": request,
                  "results": [{"id": c["id"], "status": "unsupported", "message": "hostile: not yet"}
                              for c in cases]})
        elif message["type"] == "shutdown":
            if fault == "ignore-shutdown":
                print(f"hostile {tag}: ignore-shutdown at shutdown", file=sys.stderr, flush=True)
                time.sleep(3600)
            return


if __name__ == "__main__":
    main()
