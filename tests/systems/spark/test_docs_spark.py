"""The Spark example of docs/spark.md runs as printed, on the suite's shared SparkSession."""

from __future__ import annotations

import pytest

from tests.support.doc_examples import code_blocks, run_block

SPARK_BLOCKS = [b for b in code_blocks() if b.needs_spark]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("block", SPARK_BLOCKS, ids=[b.name for b in SPARK_BLOCKS])
def test_spark_example_runs(block, spark) -> None:
    run_block(block)
