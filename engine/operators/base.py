"""The contract between operators and runtimes.

Operators are plain objects that never learn which runtime drives them. A
runtime owns the keyed state backend, the clocks and the timers, and hands the
operator an `OperatorContext` whose state is already scoped to the key of the
record (or timer) being processed.
"""

from __future__ import annotations

from typing import Any, Protocol

from converge.engine.model.changelog import Change
from converge.engine.state import KeyedStateBackend


class TimerService(Protocol):
    def register_event_time_timer(self, timestamp: int) -> None: ...
    def register_processing_time_timer(self, timestamp: int) -> None: ...
    def delete_event_time_timer(self, timestamp: int) -> None: ...
    def delete_processing_time_timer(self, timestamp: int) -> None: ...


class OperatorContext:
    """What an operator may see: keyed state, clocks and timers for the current key."""

    __slots__ = ("state", "timers", "watermark")

    def __init__(self, state: KeyedStateBackend, timers: TimerService | None = None) -> None:
        self.state = state
        self.timers = timers
        self.watermark: int | None = None

    @property
    def current_key(self) -> Any:
        return self.state.current_key

    @property
    def processing_time(self) -> int:
        return self.state.now


class Operator:
    """Base class: a keyed operator with one or more inputs."""

    num_inputs: int = 2
    # True when the operator holds records of many keys between calls (a mini-batch bundle): a runtime
    # must then give one instance all of the node's keys, and call finish() at the end of the input
    buffers_across_keys: bool = False

    def open(self, ctx: OperatorContext) -> None:
        """Register state; called once by the runtime before any record."""

    def key_of(self, input_index: int, row: tuple) -> Any:
        """The partition (join) key of a row arriving on `input_index`."""
        raise NotImplementedError

    def key_selector(self, input_index: int):
        """A function row -> key for one input (runtimes cache it for the hot path)."""
        return lambda row: self.key_of(input_index, row)

    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: OperatorContext, *, event_time: bool) -> list:
        return []

    def on_watermark(self, watermark: int, ctx: OperatorContext) -> list:
        """Called after the runtime fired the event-time timers up to `watermark`."""
        return []

    def on_processing_time(self, time: int, ctx: OperatorContext) -> list:
        """Called (not keyed) when processing time advances to `time`, after the processing-time timers."""
        return []

    def finish(self, ctx: OperatorContext) -> list:
        """Called (not keyed) once at the end of the input: emit what is still buffered (Flink's finish())."""
        return []

    def volatile_state(self) -> Any:
        """Fields the operator keeps outside keyed state (Flink's non-checkpointed fields), for a runtime
        that undoes a rejected event; None: there are none. Must be a copy, not a live reference."""
        return None

    def restore_volatile_state(self, saved: Any) -> None:
        """Put back what `volatile_state` returned."""

