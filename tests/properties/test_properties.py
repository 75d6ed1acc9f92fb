"""Every registered property, every family, under Hypothesis (CONVERGE_EXAMPLES scales the count)."""

from __future__ import annotations

import pytest

from converge.properties.campaign import run_property
from converge.properties.registry import PROPERTIES
from tests.conftest import examples


@pytest.mark.parametrize("spec", PROPERTIES, ids=[f"{p.family}/{p.name}" for p in PROPERTIES])
def test_property_holds(spec) -> None:
    result = run_property(spec, max_examples=examples(spec.suite_examples))
    assert result.examples > 0, "Hypothesis ran no example"
    if not result.ok:
        raise result.failure or result.error  # converge's pytest plugin writes the failure's report


@pytest.mark.slow
@pytest.mark.parametrize("spec", PROPERTIES, ids=[f"{p.family}/{p.name}" for p in PROPERTIES])
def test_property_long_campaign(spec) -> None:
    result = run_property(spec, max_examples=examples(spec.examples * 10))
    if not result.ok:
        raise result.failure or result.error  # converge's pytest plugin writes the failure's report
