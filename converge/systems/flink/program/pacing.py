"""How fast the paced arrival releases its rounds, and how many shapes share one job (part of the Flink adapter).

Standard library only (the tests import it without Java). The paced source (arrival.py) emits one round per
completed checkpoint; what a round costs is the checkpoint cycle: Flink triggers the next checkpoint no sooner
than `interval_ms` after the last trigger and `pause_ms + pause_per_record_ms * width` after the last
completion (CheckpointCoordinator's checkpoint interval and min pause between checkpoints). The pause is the
time the source has to emit a whole round before the next barrier can come (a barrier inside a round is the
fault the `guard` filler rounds absorb, arrival.py). `jobs` says which cases share a job: "request", every
case of a request whose job settings agree (several shapes: one source, one statement), or "shape", a job per
shape as before. `runs`: "merge" puts a run of one input's consecutive events of a case in one round (at
parallelism 1; arrival.rounds), "event" gives every event a round of its own.

The defaults are the levers measured in docs/flink.md ("Paced arrival: its cost, lever by lever");
`CONVERGE_FLINK_PACING="pause_ms=20,pause_per_record_ms=0.5"` in the adapter's environment sets any of them,
for measuring (unknown keys and bad values are refused at start-up).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

ENV = "CONVERGE_FLINK_PACING"
JOBS = ("request", "shape")
RUNS = ("merge", "event")
MIN_INTERVAL_MS = 10     # Flink's smallest checkpoint interval (CheckpointConfig's MINIMAL_CHECKPOINT_TIME)


class PacingError(ValueError):
    """CONVERGE_FLINK_PACING cannot be read; the adapter says so and exits."""


@dataclass(frozen=True)
class Pacing:
    interval_ms: int = MIN_INTERVAL_MS
    pause_ms: float = 5.0
    pause_per_record_ms: float = 0.05
    bundle_pause_ms: float = 40.0   # pause_ms of a mini-batch job (see pause)
    guard: int = 1
    jobs: str = "request"
    runs: str = "merge"

    def merges_runs(self, parallelism: int) -> bool:
        """Whether a job's rounds hold runs of one input's events (arrival.rounds) rather than one event each."""
        return self.runs == "merge" and parallelism == 1

    def pause(self, width: int, bundles: bool = False) -> int:
        """Milliseconds between a checkpoint's completion and the next trigger, for rounds `width` records wide.
        A mini-batch job (`bundles`) pauses longer: its bundles end at checkpoints, so a barrier inside a round
        splits a bundle, which no guard round undoes (measured: a mini-batch restart case's changelog differed
        once in a campaign at load 7 to 10 with 5 ms, and its replays agreed; with 20 ms a FLINK-34380 case of
        the test suite's smoke campaign once came back with a bundle cut early on a loaded machine, and agreed
        when rerun)."""
        return int((self.bundle_pause_ms if bundles else self.pause_ms) + self.pause_per_record_ms * width)

    def text(self) -> str:
        return ",".join(f"{f.name}={value:g}" if isinstance(value := getattr(self, f.name), (int, float))
                        else f"{f.name}={value}" for f in fields(self))


DEFAULT = Pacing()


def parse(text: str | None) -> Pacing:
    """The pacing `text` ("key=value,...") sets over the defaults; PacingError naming what is wrong."""
    pacing = Pacing()
    if not text or not text.strip():
        return pacing
    known = {f.name: f for f in fields(Pacing)}
    changes: dict[str, Any] = {}
    for item in text.split(","):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or key not in known:
            raise PacingError(f"{ENV}: {item.strip()!r}: expected key=value with a key of {', '.join(known)}")
        if key in ("jobs", "runs"):
            choices = JOBS if key == "jobs" else RUNS
            if value not in choices:
                raise PacingError(f"{ENV}: {key}={value!r}: expected one of {', '.join(choices)}")
            changes[key] = value
            continue
        try:
            number = float(value)
        except ValueError:
            raise PacingError(f"{ENV}: {key}={value!r} is not a number") from None
        if not 0 <= number <= 60_000 or (key in ("interval_ms", "guard") and number != int(number)):
            raise PacingError(f"{ENV}: {key}={value!r}: expected a whole number of 0 to 60000" if key in
                              ("interval_ms", "guard") else f"{ENV}: {key}={value!r}: expected 0 to 60000")
        changes[key] = int(number) if key in ("interval_ms", "guard") else number
    pacing = replace(pacing, **changes)
    if pacing.interval_ms < MIN_INTERVAL_MS:
        raise PacingError(f"{ENV}: interval_ms below Flink's least checkpoint interval, {MIN_INTERVAL_MS} ms")
    return pacing
