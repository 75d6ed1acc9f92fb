"""Seeded generation that gives the same examples in any process.

Hypothesis (6.13x and later) mixes into generation the literals of every
local module loaded so far, so one seed drew different examples in a fresh
`converge run`, a pytest worker that had imported the whole suite, and a
process that had run other properties first. A failure's seed must find it
again anywhere, and a seeded search must find the same witness anywhere, so
runs and searches leave that pool out (Hypothesis's global constants stay).
tests/properties/test_existential.py runs one search in several processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def process_independent_generation() -> Iterator[None]:
    """For its duration Hypothesis's pool of local-module constants is empty (see the module docstring)."""
    try:
        from hypothesis.internal.conjecture import providers  # lazy: Hypothesis's internal API, kept off import
        empty, get, cache = providers.Constants(), providers._get_local_constants, providers.CONSTANTS_CACHE
    except (ImportError, AttributeError):  # another Hypothesis: tests/properties/test_existential.py says if it matters
        yield
        return
    cache.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.cache.clear()
