"""The final check on Spark: the sink decoded and folded by Spark's workers, compared with the oracle on Spark."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from converge.cli.benches.regular import inner_join_stream
from converge.cli.spark_final_check import compare_counts, final_check, output_types
from converge.engine.runtime.spark.output import signed_counts, sink_changes

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _sink(folder: Path, items_per_row: list[list[tuple]]) -> Path:
    """A sink as SparkJoinJob writes it: batch_id=N folders of (key, data = pickled items)."""
    for b, items in enumerate(items_per_row):
        table = pa.table({"key": pa.array([f"-1|{b}"], pa.string()),
                          "data": pa.array([pickle.dumps(items)], pa.binary())})
        (folder / f"batch_id={b:06d}").mkdir(parents=True)
        pq.write_table(table, folder / f"batch_id={b:06d}" / "part-0.parquet")
    return folder


def test_decoded_sink_folds_to_multiplicities_and_a_planted_difference_is_found(spark, tmp_path: Path) -> None:
    sink = _sink(tmp_path / "sink", [
        [(0, 0, "+I", (1, "a")), (1, 0, "+I", (2, None))],
        [(2, 0, "-U", (1, "a")), (2, 1, "+U", (1, "b")), (3, 0, "+I", (2, None))],
    ])
    changes = sink_changes(spark, sink, ["BIGINT", "VARCHAR"])
    counts = signed_counts(changes, 2)
    assert sorted(tuple(r) for r in counts.collect()) == [(1, "b", 1), (2, None, 2)]
    right = spark.createDataFrame([(1, "b"), (2, None), (2, None)], "o0 bigint, o1 string")
    assert compare_counts(counts, right, 2) == (0, [])
    planted = spark.createDataFrame([(1, "a"), (2, None)], "o0 bigint, o1 string")   # wrong row, one copy short
    n, sample = compare_counts(counts, planted, 2)
    assert n == 3
    assert sorted((tuple(s["row"]), s["runtime"], s["oracle"]) for s in sample) == [
        ((1, "a"), 0, 1), ((1, "b"), 1, 0), ((2, None), 2, 1)]


def test_error_items_are_decoded_with_their_message(spark, tmp_path: Path) -> None:
    sink = _sink(tmp_path / "sink", [[(4, 0, "!error", "input 'a': bad row")]])
    rows = sink_changes(spark, sink, ["BIGINT"]).collect()
    assert [(r["seq"], r["kind"], r["message"], r["o0"]) for r in rows] == [(4, "!error", "input 'a': bad row", None)]


@pytest.mark.slow
def test_a_small_stream_passes_the_final_check_end_to_end(spark, tmp_path: Path) -> None:
    scenario = inner_join_stream(3_000, 300, unique_keys=True)
    result = final_check(spark, scenario, tmp_path, batches=2, echo=lambda line: None)
    assert result["matches"] and result["oracle_answer_rows"] == 300
    assert output_types(scenario) == ["BIGINT"] * 4
