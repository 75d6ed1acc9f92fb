"""The Spark runtime's sink read on Spark: its changelog as a DataFrame, for outputs too large for the driver.

`SparkJoinJob` writes its roots' output as Parquet rows ``(key string, data
binary)``, ``data`` being a pickled list of items ``(seq, pos, kind, row)``
(job.py, processor.py). `read_sink_rows`/`decode_changelog` decode them in
the driver; here the same items are decoded by Spark's Python workers
(``mapInArrow``), one output row per item, typed by the join's output
columns. What this module depends on is only that layout: the item tuple,
the change kinds ``+I -U +U -D`` and the error kinds of processor.ERROR_KINDS.
It reads every sink row as the output of one scenario (a job of one scenario).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F

from converge.engine.model.changelog import ACCUMULATE_KINDS, ROW_KINDS
from converge.engine.runtime.spark.processor import ERROR_KINDS

__all__ = ["CHANGE_KINDS", "DecodeItems", "sink_changes", "signed_counts"]

CHANGE_KINDS = ROW_KINDS

_ARROW = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "DOUBLE": pa.float64(), "VARCHAR": pa.string(),
          "BOOLEAN": pa.bool_()}
_SPARK = {"BIGINT": "BIGINT", "INTEGER": "INT", "DOUBLE": "DOUBLE", "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN"}


class DecodeItems:
    """mapInArrow function: sink batches (key, data) -> one row per item (seq, kind, message, o0..on).

    A change's row goes to the typed columns; an error item's message to ``message``."""

    def __init__(self, types: Sequence[str]) -> None:
        self.types = tuple(types)

    def schema(self) -> str:
        return ", ".join(["seq BIGINT", "kind STRING", "message STRING"]
                         + [f"o{i} {_SPARK[t]}" for i, t in enumerate(self.types)])

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        width = len(self.types)
        errors = set(ERROR_KINDS)
        for batch in batches:
            seqs: list[int] = []
            kinds: list[str] = []
            messages: list[str | None] = []
            columns: list[list[Any]] = [[] for _ in range(width)]
            for blob in batch.column("data").to_pylist():
                for seq, _pos, kind, row in pickle.loads(blob):
                    seqs.append(seq)
                    kinds.append(kind)
                    if kind in errors or kind not in CHANGE_KINDS:
                        messages.append(str(row))
                        for col in columns:
                            col.append(None)
                        continue
                    messages.append(None)
                    for col, value in zip(columns, row, strict=False):
                        col.append(value)
            arrays = {"seq": pa.array(seqs, pa.int64()), "kind": pa.array(kinds, pa.string()),
                      "message": pa.array(messages, pa.string())}
            for i, (t, col) in enumerate(zip(self.types, columns, strict=False)):
                arrays[f"o{i}"] = pa.array(col, _ARROW[t])
            yield pa.RecordBatch.from_pydict(arrays)


def sink_changes(spark: Any, sink_dir: Path, output_types: Sequence[str]) -> Any:
    """Every item of the sink's Parquet folders as a DataFrame (seq, kind, message, o0..on)."""
    decode = DecodeItems(output_types)
    data = spark.read.schema("key STRING, data BINARY").parquet(str(Path(sink_dir) / "batch_id=*"))
    return data.select("data").mapInArrow(decode, decode.schema())


def signed_counts(changes: Any, width: int) -> Any:
    """The changelog folded: per output row, its multiplicity (+1 for +I/+U, -1 for -U/-D), zeros dropped."""
    cols = [f"o{i}" for i in range(width)]
    sign = F.when(F.col("kind").isin(*sorted(ACCUMULATE_KINDS)), 1).otherwise(-1)
    return (changes.where(F.col("kind").isin(*CHANGE_KINDS)).groupBy(*cols).agg(F.sum(sign).alias("n"))
            .where(F.col("n") != 0))
