"""One root exception and a small hierarchy, so callers can tell bad input from a real divergence."""

from __future__ import annotations


class ConvergeError(Exception):
    """Root of every error converge raises on purpose."""


class BadInputError(ConvergeError):
    """The scenario, stream or spec is not valid; the message names what and where."""

    def __init__(self, message: str, *, event_index: int | None = None) -> None:
        self.event_index = event_index
        self.detail = message
        where = f"event {event_index}: " if event_index is not None else ""
        super().__init__(where + message)

    def at_event(self, index: int) -> "BadInputError":
        """The same error, now naming the event that caused it."""
        if self.event_index is not None:
            return self
        return type(self)(self.detail, event_index=index)


class DivergenceError(ConvergeError):
    """The engine's answer differs from what a property requires."""


class OracleError(ConvergeError):
    """The batch oracle (DuckDB) failed to produce an answer."""
