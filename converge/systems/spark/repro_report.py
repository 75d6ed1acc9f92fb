"""The bug report beside a Spark repro: Markdown in the style of an Apache Spark JIRA issue (Structured Streaming).

A one-line title, the versions, the inputs table by table and micro-batch by micro-batch, the query as DataFrame
code and as SQL, the expected answer with its SQL-semantics reason and the oracle's query, Spark's actual output as
the program printed it, and the one-line command.
"""

from __future__ import annotations

from pathlib import Path

from converge.engine.model.native_join_case import SIDES, NativeJoinCase, Side, load_case
from converge.properties.native_join.known import builtin_native_known
from converge.properties.systems.known import KnownDivergence
from converge.systems.flink.repro_report import Measured
from converge.systems.spark.query import SPARK_JOIN
from converge.systems.spark.repro import SparkRepro

_JOIN_WORDS = {"inner": "INNER", "left": "LEFT OUTER", "right": "RIGHT OUTER", "full": "FULL OUTER",
               "left_semi": "LEFT SEMI", "left_anti": "LEFT ANTI"}


def title(case: NativeJoinCase) -> str:
    """The case's own title (`meta.title`, written by hand for a confirmed finding), or one from its shape."""
    given = case.meta.get("title")
    if isinstance(given, str) and given.strip():
        return given.strip()
    return (f"Stream-stream {_JOIN_WORDS[case.join]} join with watermarks differs from the batch answer of the same "
            f"join ({case.name})")


def _value(v: object) -> str:
    return "NULL" if v is None else str(v)


def _table(case: NativeJoinCase, side: Side) -> str:
    spec = case.left if side == "left" else case.right
    lines = [f"`{side}` (`_id`, {', '.join(f'`{c}`' for c in spec.columns)}: BIGINT; event time `{spec.time}` in "
             f"ms, `withWatermark` delay {spec.delay_ms} ms):", "",
             "| micro-batch | _id | " + " | ".join(spec.columns) + " |", "|---|---|" + "---|" * len(spec.columns)]
    for rid, j, row in case.rows(side):
        lines.append(f"| {j} | {rid} | " + " | ".join(_value(v) for v in row) + " |")
    if len(lines) == 4:
        lines.append("| (no rows) | | " + " | " * len(spec.columns))
    return "\n".join(lines)


def _sql(case: NativeJoinCase) -> str:
    """The query as Spark SQL over the two streams (the program runs the DataFrame form)."""
    keys = " AND ".join(f"l.{lk} = r.{rk}" for lk, rk in case.keys)
    lt, rt = f"l.{case.left.time}", f"r.{case.right.time}"
    cond = (f"{keys}\n  AND timestamp_millis({rt}) BETWEEN timestamp_millis({lt}) + INTERVAL {case.lower_ms} "
            f"MILLISECONDS\n                               AND timestamp_millis({lt}) + INTERVAL {case.upper_ms} "
            "MILLISECONDS")
    if case.residual is not None:
        cond += f"\n  AND l.{case.residual.left} {case.residual.op} r.{case.residual.right}"
    what = "l.*" if case.join in ("left_semi", "left_anti") else "l.*, r.*"
    return f"SELECT {what}\nFROM left l {_JOIN_WORDS[case.join]} JOIN right r\n  ON {cond}"


def _same(a: NativeJoinCase, b: NativeJoinCase) -> bool:
    return {**a.to_json(), "name": "", "meta": {}} == {**b.to_json(), "name": "", "meta": {}}


def known_entry(case: NativeJoinCase) -> KnownDivergence | None:
    """The built-in known divergence whose minimal case is this case (its rows, join and settings), if any."""
    return next((k for k in builtin_native_known() if k.case is not None and _same(load_case(k.case), case)), None)


def _versions(entry: KnownDivergence | None, measured: Measured | None) -> str:
    lines = []
    if entry is not None and entry.versions:
        lines.append(f"- Diverges on: PySpark {', '.join(entry.versions)} (converge's known divergence `{entry.id}`).")
    if measured is None or measured.exit_code is None:
        lines.append("- Not measured here (`converge repro --no-run`); run the program below.")
    else:
        outcome = {0: "agrees with the expected answer", 1: "diverges", 2: "fails the query"}.get(
            measured.exit_code, f"exits {measured.exit_code}")
        lines.append(f"- Measured with the program below on PySpark {measured.version} (local[1], Java 17): it "
                     f"{outcome}.")
    lines.append("- Other versions: not measured by converge.")
    return "\n".join(lines)


def render(case: NativeJoinCase, repro: SparkRepro, measured: Measured | None) -> str:
    """The Markdown report."""
    program = f"repro_{repro.slug}.py"
    header = ", ".join(repro.output_columns)
    expected = "\n".join("(" + ", ".join(_value(v) for v in row) + ")" for row in repro.expected) or "(no rows)"
    late = ("No row is late by Spark's rule, so the expected answer is the batch join of all rows."
            if not any(repro.late.values()) else
            f"Rows late by Spark's documented rule (event time at or below the previous epoch's watermark) are "
            f"dropped first: {repro.late}.")
    reason = case.meta.get("description") or "(the case file gives no reason; see the oracle's query below)"
    actual = measured.output if measured is not None else "(not run: `converge repro --no-run`)"
    delays = ", ".join(f"{s} `{case.input(s).time}` {case.input(s).delay_ms} ms" for s in SIDES)
    return f"""# [SS] {title(case)}

Component: Structured Streaming

## Versions

{_versions(known_entry(case), measured)}

## Input

Two append-only streams, each a file source read one file per trigger (`maxFilesPerTrigger=1`,
`trigger(availableNow=True)`), so micro-batch j of the table below is epoch j. `_id` is a row id for reading
the output; it is in no condition. After the last micro-batch each stream gets one more row whose key matches
nothing and whose event time is past every range and delay, so the watermark flushes every outer row (its
output is left out).

Watermark delays: {delays}; `spark.sql.streaming.multipleWatermarkPolicy` = `{case.policy}`.

{_table(case, "left")}

{_table(case, "right")}

## Query

```python
left = stream("left").withWatermark("L__ts", "{case.left.delay_ms} milliseconds")   # L__ts = timestamp_millis(L_{case.left.time})
right = stream("right").withWatermark("R__ts", "{case.right.delay_ms} milliseconds")
joined = left.join(right, F.expr("{repro.condition}"), "{SPARK_JOIN[case.join]}")
```

The same query as SQL:

```sql
{_sql(case)}
```

## Expected

Columns: {header}

```
{expected}
```

Why: {reason}

{late} The expected answer is the batch answer of the same join (DuckDB; tables `l` and `r` hold the rows
with their `_id`):

```sql
{repro.oracle_sql}
```

## Actual

```
{actual}
```

## How to reproduce

`python {program}` with PySpark (`pip install pyspark=={repro.version}`, Java 17): it exits 1 when Spark's output
differs from the expected one, 0 when they agree, 2 when Spark rejects or fails the query.
"""


def write(out: Path, case: NativeJoinCase, repro: SparkRepro, measured: Measured | None) -> Path:
    """REPORT.md in `out`."""
    path = out / "REPORT.md"
    path.write_text(render(case, repro, measured), encoding="utf-8")
    return path
