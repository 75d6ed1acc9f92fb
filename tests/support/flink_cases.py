"""The Flink adapter tests' two inputs, A(k, x) and B(k, y), whose joins are worked out by hand in
tests/systems/flink/test_flink_adapter.py's docstring; the restart tests replay the same changes."""

from __future__ import annotations

from tests.support.flink_client import bigint_input

A_ROWS = [["+I", 1, 5], ["+I", 2, 7], ["+I", 3, 1], ["-U", 1, 5], ["+U", 1, 15], ["-D", 2, 7], ["+I", 4, 9]]
B_ROWS = [["+I", 1, 10], ["+I", 2, 3], ["+I", 3, 0], ["-U", 3, 0], ["+U", 3, 2], ["-D", 1, 10], ["+I", 1, 1],
          ["+I", 5, 5]]
AB = [bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"])]
N = None
