"""`verify_1m`: `converge verify` on a long positioned capture of the engine's own run, seconds and peak RSS.

The capture is the three-way example query (docs/examples/three_way_common_key.sql)
run on converge's engine: orders upserted, payments retracted and re-paid,
shipments appended, about three output records per input record. Writing it
happens in one child process, verifying it in another, so the peak RSS
(resource.getrusage) is verify's own.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from converge.cli.bench_machine import machine_line
from converge.engine.model.changelog import Change
from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import ChangeEvent
from converge.reports.options import BenchConfig

QUERY = Path(__file__).resolve().parents[3] / "docs" / "examples" / "three_way_common_key.sql"
SECONDS_BUDGET = 90.0          # issue 29: 1M input records on an idle 2-core machine
RSS_BUDGET_MB = 2048.0
FULL_RECORDS = 1_000_000


def capture_events(n: int, seed: int = 7) -> Iterator[ChangeEvent]:
    """n source events of the three-way query: per order an insert, payments, shipments and later changes."""
    rnd = random.Random(seed)
    orders: dict[int, tuple] = {}
    payments: dict[int, tuple] = {}
    next_order = next_payment = next_shipment = 0
    for _ in range(n):
        roll = rnd.random()
        if roll < 0.1 or not orders:
            row = (next_order, rnd.randrange(1000), rnd.randrange(1, 100_000))
            orders[next_order] = row
            next_order += 1
            yield ChangeEvent("o", "+I", row)
        elif roll < 0.2:
            k = rnd.randrange(max(0, next_order - 8), next_order)
            if k in orders:
                row = (k, orders[k][1], rnd.randrange(1, 100_000))
                orders[k] = row
                yield ChangeEvent("o", "+U", row)
            else:
                row = (k, rnd.randrange(1000), rnd.randrange(1, 100_000))
                orders[k] = row
                yield ChangeEvent("o", "+I", row)
        elif roll < 0.5:
            row = (next_payment, rnd.randrange(max(0, next_order - 8), next_order), rnd.randrange(1, 100_000))
            payments[next_payment] = row
            next_payment += 1
            yield ChangeEvent("p", "+I", row)
        elif roll < 0.6 and payments:
            pid = rnd.randrange(max(0, next_payment - 8), next_payment)
            old = payments.pop(pid, None)
            if old is None:
                row = (pid, rnd.randrange(max(0, next_order - 8), next_order), rnd.randrange(1, 100_000))
                payments[pid] = row
                yield ChangeEvent("p", "+I", row)
            else:
                yield ChangeEvent("p", "-D", old)
        else:
            row = (next_shipment, rnd.randrange(max(0, next_order - 8), next_order), rnd.choice(("ups", "dhl", "post")))
            next_shipment += 1
            yield ChangeEvent("s", "+I", row)


def write_capture(folder: Path, n: int) -> tuple[dict[str, Path], Path, int]:
    """Sources and output of the engine's run over n events, JSON lines with `pos`; (sources, output, outputs)."""
    from converge.engine.model.flinksql import load_query  # lazy: sqlglot loads only when a capture is written
    from converge.engine.runtime.local import LocalRuntime  # lazy: as above
    query = load_query(QUERY)
    events = list(capture_events(n))
    scenario = query.scenario(events)
    picks = query.output_picks()
    plain = [_plain(o.type) for o in query.output]
    names = [o.name for o in query.output]
    files = {table: (folder / f"{table}.jsonl").open("w") for _, table in query.aliases}
    table_of = dict(query.aliases)
    col_names = {alias: [c for c, _ in query.source_of(alias).columns] for alias, _ in query.aliases}
    col_plain = {alias: [_plain(t) for t in query.types_of(alias)] for alias, _ in query.aliases}
    out_path = folder / "output.jsonl"
    outputs = 0
    rt = LocalRuntime(scenario)
    with out_path.open("w") as out:
        for i, e in enumerate(scenario.events):
            assert isinstance(e, ChangeEvent)
            rec = {"op": e.kind, "pos": i}
            rec.update({c: f(v) for c, f, v in zip(col_names[e.input], col_plain[e.input], e.row, strict=False)})
            files[table_of[e.input]].write(json.dumps(rec) + "\n")
            items = rt.process_event(e)
            if i == len(scenario.events) - 1:
                items = items + rt.finish()  # the end of the input flushes a mini-batch bundle
            for item in items:
                if isinstance(item, Change):
                    o = {"op": item.kind, "pos": i}
                    o.update({nm: f(item.row[j]) for nm, f, j in zip(names, plain, picks, strict=False)})
                    out.write(json.dumps(o) + "\n")
                    outputs += 1
    for fh in files.values():
        fh.close()
    return {table: folder / f"{table}.jsonl" for table in files}, out_path, outputs


def _plain(ftype) -> Callable[[object], object]:
    if ftype.kind == "decimal":
        return lambda v: None if v is None else ftype.display(v)
    return lambda v: v


def _verify_child(folder: str) -> None:
    """Run in a child: verify the capture in `folder`, print seconds and this process's peak RSS as JSON."""
    from converge.engine.model.flinksql import load_query  # lazy: in the child only
    from converge.properties.verify_capture import verify_capture  # lazy: as above
    base = Path(folder)
    sources = {p.stem: p for p in base.glob("*.jsonl") if p.stem != "output"}
    start = time.perf_counter()
    result = verify_capture(load_query(QUERY), sources, base / "output.jsonl")
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": round(seconds, 1), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
                      "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "mode": result.mode,
                      "input_records": result.input_events, "output_records": result.output_records,
                      "checkpoints": result.checkpoints}))


def _child(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise InternalError(f"the benchmark's child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout


def verify_speed(records: int) -> dict:
    """Write a capture of `records` input records, verify it in a child, and set the figures beside the budgets."""
    with tempfile.TemporaryDirectory(prefix="converge-verify-bench-") as tmp:
        _child("import sys; from pathlib import Path; from converge.cli.benches.verify_capture "
               "import write_capture; write_capture(Path(sys.argv[1]), int(sys.argv[2]))", tmp, str(records))
        out = json.loads(_child("import sys; from converge.cli.benches.verify_capture import "
                                "_verify_child; _verify_child(sys.argv[1])", tmp).strip().splitlines()[-1])
    share = records / FULL_RECORDS  # the budgets are for 1M records: a smaller run is held to its share of time
    out["budget_seconds"] = round(SECONDS_BUDGET * share, 3)
    out["budget_peak_rss_mb"] = RSS_BUDGET_MB
    out["within_budget"] = out["seconds"] <= out["budget_seconds"] and out["peak_rss_mb"] <= RSS_BUDGET_MB
    out["machine"] = machine_line()
    return out


def _bench(config: BenchConfig) -> dict:
    return verify_speed(config.verify_records)


BENCHES: dict[str, Callable[[BenchConfig], dict]] = {"verify_1m": _bench}
