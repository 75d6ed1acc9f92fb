"""Python's cyclic garbage collector paused around work that allocates many long-lived objects.

Bulk work (a Spark bucket's unpickled state, a long stream's rendered
rows) allocates millions of containers that all stay alive until it ends;
every collection triggered meanwhile rescans them, a cost that grows with
the work (measured: half of the Spark processor's time at a few hundred keys
per bucket, three quarters of the history oracle's rendering of 1M events).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_collector_paused() -> Iterator[None]:
    """The collector off for the block (if it was on), back on afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
