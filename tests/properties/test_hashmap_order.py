"""regular/hashmap_iteration_order: the engine's hashmap order held to the properties' own java.util.HashMap
(properties/reference.py), and killed by the two hashmap mutants (a bucket walked newest first; a table that
never grows past 16)."""

from __future__ import annotations

import pytest

from converge.cli.mutant_catalog import applied, by_name
from converge.properties.campaign import run_property
from converge.properties.families.state_order import PROPERTIES
from converge.properties.reference import binary_row_hash

SPEC = next(p for p in PROPERTIES if p.name == "hashmap_iteration_order")


def test_the_reference_hash_is_flinks_binary_row_hash_code() -> None:
    # BinaryRowData.hashCode printed by Flink 2.3.0 (tests/engine/test_javahash.py has more)
    assert binary_row_hash((0, 1, 256), ("INTEGER", "BIGINT", "BIGINT")) == 199221631
    assert binary_row_hash((5, "hello world!"), ("BIGINT", "VARCHAR")) == 96220595
    assert binary_row_hash((0, 1, 1), ("INTEGER", "BIGINT", "BIGINT")) == (-105380086) % 2**32


def test_the_engine_follows_the_hashmap_rule() -> None:
    result = run_property(SPEC, seed=3, max_examples=150, shrink=False)
    assert result.ok, result.failure or result.error
    assert result.exercised.compared == 150


@pytest.mark.parametrize("mutant", ["hashmap_bucket_in_reverse_insertion_order", "hashmap_table_never_grows"])
def test_each_hashmap_mutant_is_caught(mutant: str) -> None:
    with applied(by_name(mutant)[0]):
        result = run_property(SPEC, seed=3, max_examples=150, shrink=False)
    assert not result.ok and result.failure is not None
    assert "java.util.HashMap iterates" in str(result.failure)
