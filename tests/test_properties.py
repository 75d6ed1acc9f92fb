"""Every registered property, every family, under Hypothesis (CONVERGE_EXAMPLES scales the count)."""

from __future__ import annotations

import pytest

from properties.campaign import run_property
from properties.registry import PROPERTIES
from tests.conftest import examples


@pytest.mark.parametrize("spec", PROPERTIES, ids=[f"{p.family}/{p.name}" for p in PROPERTIES])
def test_property_holds(spec) -> None:
    result = run_property(spec, max_examples=examples(spec.suite_examples))
    assert result.examples > 0, "Hypothesis ran no example"
    if result.error is not None:
        raise result.error
    assert result.failure is None, str(result.failure)


@pytest.mark.slow
@pytest.mark.parametrize("spec", PROPERTIES, ids=[f"{p.family}/{p.name}" for p in PROPERTIES])
def test_property_long_campaign(spec) -> None:
    result = run_property(spec, max_examples=examples(spec.examples * 10))
    if result.error is not None:
        raise result.error
    assert result.failure is None, str(result.failure)
