"""Runtimes drive the same operator objects; the local one is the embedded default."""

from converge.engine.runtime.local import LocalRuntime, RunResult, run_scenario

__all__ = ["LocalRuntime", "RunResult", "run_scenario"]
