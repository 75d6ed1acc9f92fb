"""A configurable fake adapter for the client's tests: `python fake.py MODE [MARK]`; it misbehaves as MODE says.

`slow-first MARK`: the first run request of the first process (the one that finds no file MARK; it creates it)
never gets an answer, as a cold engine's first job on a loaded machine; every other request is answered.
`hang-later`: answers run request 1, never answers request 2. `paced-hang-later`: the same, from an adapter that
declares paced rounds (two per event, as Flink's).
`slow-hello MARK`: greets only once the file MARK exists (at most 60 s), as an engine that starts at the hello
(Flink's MiniCluster): the test creates MARK when it has seen what it waits for.
`flink-VERSION`: greets with the settings and `lacks` the Flink adapter declares for that version (its own
functions, loaded from converge's package as tests load them), as a stand-in for an old Flink without Java.
"""

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
MARK = sys.argv[2] if len(sys.argv) > 2 else None
CAPS = {"families": ["regular"], "join_types": ["inner", "left"], "changelog_modes": ["insert_only", "retract"],
        "column_types": ["BIGINT", "VARCHAR"], "time_domains": [], "state_ttl": False, "output": "final",
        "deterministic_order": False, "max_batch": 2}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if MODE == "banner":
        print("Starting the engine ...", flush=True)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            if MODE == "slow-hello":
                deadline = time.monotonic() + 60
                while not os.path.exists(MARK) and time.monotonic() < deadline:
                    time.sleep(0.02)
            hello = {"type": "hello", "protocol": "converge-adapter", "version": 1,
                     "system": {"name": "fake", "version": "0"}, "capabilities": dict(CAPS)}
            if MODE.startswith("flink-"):
                from converge.systems.flink.environment import program_module

                version = MODE.removeprefix("flink-")
                flink = program_module("adapter")
                hello["system"] = {"name": "flink", "version": version}
                hello["capabilities"].update(families=["regular", "multiway"],
                                             settings=flink.honoured_settings(version),
                                             lacks=flink.lacked_settings(version))
            if MODE.startswith("paced-"):
                hello["capabilities"]["rounds_per_event"] = 2
            if MODE == "unknown-key":
                hello["capabilities"]["colour"] = "blue"
            send(hello)
        elif msg["type"] == "run":
            print(f"request {msg['request']}: {len(msg['cases'])} cases", file=sys.stderr, flush=True)
            if MODE == "hang" or (MODE.endswith("hang-later") and msg["request"] == 2):
                time.sleep(600)
            if MODE == "slow-first" and not os.path.exists(MARK):
                with open(MARK, "w") as mark:
                    mark.write(str(os.getpid()))
                time.sleep(600)
            if MODE == "die":
                print("engine exploded", file=sys.stderr, flush=True)
                sys.exit(7)
            results = []
            for i, case in enumerate(msg["cases"]):
                width = sum(len(s["columns"]) for s in case["scenario"]["inputs"])
                row = [None] * width
                if MODE == "wrong-width":
                    row = row[1:]
                if MODE == "wrong-type":
                    row[0] = "one"
                results.append({"id": case["id"] if MODE != "wrong-id" else f"x{i}", "status": "ok",
                                "final": [row]})
            send({"type": "results", "request": msg["request"], "results": results})
        elif msg["type"] == "shutdown":
            return


main()
