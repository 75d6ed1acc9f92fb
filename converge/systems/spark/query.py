"""A native-join case as Spark inputs and one Spark streaming join (no Spark import here: plain text and arrays).

Each micro-batch is one Parquet file per input, in that input's folder, with
its own modification time (`maxFilesPerTrigger=1` takes files in mtime
order); an input with no rows in a batch still gets an empty file, so both
sources move one file per batch, in step. A last batch holds one sentinel row
per input: keys that match nothing (the two sides' sentinels differ) and an
event time past every row's range plus every delay, so the watermark that
follows it flushes every unmatched outer row. Sentinel rows have the hidden
ids after every real row's and their output is removed before any property
sees it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.native_join_case import SIDES, NativeJoinCase, Side, sentinel_row


@dataclass(frozen=True)
class Inputs:
    """What the query reads: per side, the folder and the column arrays of each batch file (sentinel last)."""

    folders: dict[str, Path]
    files: dict[str, list[dict[str, list]]]
    sentinel_ids: dict[str, int]


def build_inputs(case: NativeJoinCase, folder: Path) -> Inputs:
    files: dict[str, list[dict[str, list]]] = {}
    sentinel_ids: dict[str, int] = {}
    for side in SIDES:
        spec = case.input(side)
        rows = case.rows(side)
        sentinel_ids[side] = len(rows)
        per_batch: list[dict[str, list]] = [{"_id": [], **{c: [] for c in spec.columns}}
                                            for _ in range(len(case.batches) + 1)]
        for rid, j, row in rows + [(len(rows), len(case.batches), sentinel_row(case, side))]:
            per_batch[j]["_id"].append(rid)
            for c, v in zip(spec.columns, row, strict=False):
                per_batch[j][c].append(v)
        files[side] = per_batch
    return Inputs({s: folder / s for s in SIDES}, files, sentinel_ids)


def write_inputs(inputs: Inputs, mtime_base: float) -> None:
    """One Parquet file per batch and side, batch j's mtime `mtime_base + j` (whole seconds apart)."""
    import pyarrow as pa  # lazy: pyarrow comes with the spark extra
    import pyarrow.parquet as pq  # lazy: as above

    for side, batches in inputs.files.items():
        folder = inputs.folders[side]
        folder.mkdir(parents=True, exist_ok=True)
        for j, cols in enumerate(batches):
            table = pa.table({name: pa.array(values, pa.int64()) for name, values in cols.items()})
            path = folder / f"batch-{j:05d}.parquet"
            pq.write_table(table, path)
            os.utime(path, (mtime_base + j, mtime_base + j))


def column(side: Side, name: str) -> str:
    """The name a side's column has in the joined rows (`L_k`, `R_t`, `L__id`, `L__ts`)."""
    return ("L_" if side == "left" else "R_") + name


def join_condition(case: NativeJoinCase) -> str:
    """The join condition as Spark SQL over the renamed columns; the range is on the watermarked timestamps."""
    parts = [f"{column('left', lk)} = {column('right', rk)}" for lk, rk in case.keys]
    lt, rt = column("left", "_ts"), column("right", "_ts")
    parts.append(f"{rt} >= {lt} + INTERVAL {case.lower_ms} MILLISECONDS")
    parts.append(f"{rt} <= {lt} + INTERVAL {case.upper_ms} MILLISECONDS")
    if case.residual is not None:
        parts.append(f"{column('left', case.residual.left)} {case.residual.op} "
                     f"{column('right', case.residual.right)}")
    return " AND ".join(parts)


SPARK_JOIN = {"inner": "inner", "left": "left_outer", "right": "right_outer", "full": "full_outer",
              "left_semi": "left_semi", "left_anti": "left_anti"}
