"""Checking a strategy's arguments when the strategy is built, as Hypothesis does (InvalidArgument).

A wrong argument is the caller's programming error, not bad scenario data, so
it is an ApiMisuseError raised at once, naming the strategy and the argument,
rather than a failure in the middle of a test run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, get_args

from converge.engine.model.errors import ApiMisuseError


def check_choices(strategy: str, argument: str, values: Iterable[Any], allowed: Any = None) -> tuple:
    """`values` as a non-empty tuple whose items are all `allowed` (a Literal type or a collection)."""
    if isinstance(values, (str, bytes)):
        raise ApiMisuseError(f"{strategy}({argument}=...): expected a sequence of choices, got the string "
                             f"{values!r}")
    try:
        items = tuple(values)
    except TypeError:
        raise ApiMisuseError(f"{strategy}({argument}=...): expected a sequence of choices, got {values!r}") from None
    if not items:
        raise ApiMisuseError(f"{strategy}({argument}=()): there must be at least one choice")
    if allowed is not None:
        known: Sequence[Any] = get_args(allowed) or tuple(allowed)
        for item in items:
            if item not in known:
                raise ApiMisuseError(f"{strategy}({argument}=...): {item!r} is not one of "
                                     f"{', '.join(map(repr, known))}")
    return items


def check_one(strategy: str, argument: str, value: Any, allowed: Any) -> Any:
    """One value of a Literal type (or a collection)."""
    known = get_args(allowed) or tuple(allowed)
    if value not in known:
        raise ApiMisuseError(f"{strategy}({argument}={value!r}): expected one of {', '.join(map(repr, known))}")
    return value


def check_count_range(strategy: str, low_name: str, low: Any, high_name: str, high: Any, *, floor: int = 0) -> None:
    """Integers with floor <= low <= high."""
    for name, value in ((low_name, low), (high_name, high)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ApiMisuseError(f"{strategy}({name}={value!r}): expected an integer")
    if not floor <= low <= high:
        raise ApiMisuseError(f"{strategy}: need {floor} <= {low_name} <= {high_name}, got {low_name}={low}, "
                             f"{high_name}={high}")
