"""Developer tools run from the checkout, never installed: the mypy baseline check (mypy_baseline.py)."""
