"""What a Hypothesis test drew in its last call: the scenarios a failure report of any failure is made from.

A test built on converge's strategies can fail in ways that carry no
evidence: a plain `assert`, a BadInputError, any crash. Its report needs the
scenario(s) the failing example drew. Hypothesis calls the test once per
example through `test.hypothesis.inner_test` (a documented, replaceable
attribute) and runs the shrunk failing example last, so wrapping that
function and keeping only the latest call's Scenario arguments gives the
final failing example's scenarios. Values drawn with `st.data()` are
recorded as they are drawn.

Loading this module imports nothing but pytest and the standard library (the
plugin loads it in every pytest run).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["DRAWN", "drawn_scenarios", "forget", "watch"]

#: (where it was drawn: the argument's name or "data.draw #n", the scenario), of the test's latest example
DRAWN = pytest.StashKey[list[tuple[str, Any]]]()
_SCENARIO_MODULE = "converge.engine.model.scenario"
_DEPTH = 3  # scenarios inside tuples, lists and dicts of arguments, this deep


def _collect(value: Any, where: str, out: list[tuple[str, Any]], depth: int = 0) -> None:
    module = sys.modules.get(_SCENARIO_MODULE)
    if module is None:
        return  # no Scenario can exist before its module is loaded
    if isinstance(value, module.Scenario):
        out.append((where, value))
    elif depth < _DEPTH and isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            _collect(v, f"{where}[{i}]", out, depth + 1)
    elif depth < _DEPTH and isinstance(value, dict):
        for k, v in value.items():
            _collect(v, f"{where}[{k!r}]", out, depth + 1)


def _recording_draws(data: Any, out: list[tuple[str, Any]]) -> None:
    """Record what `st.data()`'s object draws, in order."""
    draw = data.draw
    count = [0]

    def recorded(strategy: Any, label: Any = None) -> Any:
        value = draw(strategy, label)
        count[0] += 1
        _collect(value, f"data.draw #{count[0]}", out)
        return value

    data.draw = recorded


def watch(item: pytest.Item) -> Callable[[], None] | None:
    """Record the Scenario arguments of each call of `item`'s Hypothesis test; return the undo (None: not a
    Hypothesis test)."""
    func = getattr(item, "obj", None)
    func = getattr(func, "__func__", func)  # a method's function holds the handle
    handle = getattr(func, "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    if inner is None:
        return None
    drawn = item.stash.setdefault(DRAWN, [])

    @functools.wraps(inner)
    def recording(*args: Any, **kwargs: Any) -> Any:
        drawn.clear()  # only the latest example counts: Hypothesis runs the shrunk failing one last
        for where, value in [*((f"argument {i}", v) for i, v in enumerate(args)),
                            *((f"argument {k}", v) for k, v in kwargs.items())]:
            if type(value).__name__ == "DataObject" and callable(getattr(value, "draw", None)):
                _recording_draws(value, drawn)
            else:
                _collect(value, str(where), drawn)
        return inner(*args, **kwargs)

    handle.inner_test = recording

    def undo() -> None:
        handle.inner_test = inner

    return undo


def drawn_scenarios(item: pytest.Item) -> list[tuple[str, Any]]:
    """The scenarios `item`'s latest Hypothesis example drew (empty: none, or not a Hypothesis test)."""
    return list(item.stash.get(DRAWN, []))


def forget(item: pytest.Item) -> None:
    """Drop `item`'s recorded scenarios once its report is made (a long session keeps no examples alive)."""
    item.stash[DRAWN] = []
