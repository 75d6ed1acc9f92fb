"""State TTL on Flink's wall clock: a case's logical processing time laid out on a grid of paced rounds.

Standard library only (the adapter runs it in the Flink environment; the tests import it without Java).

Flink's state TTL reads `TtlTimeProvider.DEFAULT` (System.currentTimeMillis on the TaskManager), which no job
option replaces; the join stamps an entry when it writes it (StateTtlConfig.UpdateType.OnCreateAndWrite, set by
the table runtime's StateConfigUtil.createTtlConfig) and hides it once `stamp + ttl <= now`
(StateVisibility.NeverReturnExpired; TtlUtils.expired). converge's TTL model runs on a logical clock that only
`processing_time` events move. So the adapter maps logical time onto the wall clock:

* checkpoints are triggered every `round_ms` (CheckpointCoordinator's ScheduledTrigger plans each trigger one
  interval after the last planned one) and the gated source releases one round per completed checkpoint
  (arrival.py), so round r reaches the join about r * round_ms after the first;
* logical instant t is round LEAD_ROUNDS + 1 + t * rounds_per_ms: one logical ms is `ms_per_logical_ms` of
  wall clock, and the rounds between two instants are fillers;
* every change of a case at one instant must be ONE run (consecutive changes of one input): the run is one
  round, which the join reads in the source's order, so all its changes are stamped within the same round;
* the TTL sent to Flink is half a logical ms short of the case's: (ttl - 1/2) * ms_per_logical_ms. An entry
  written at instant w and read at instant r is then compared with (r - w) * L against (ttl - 1/2) * L on the
  wall clock: every expiry decision lies half a logical ms (L / 2 wall ms) away from Flink's boundary, on the
  side of converge's (visible up to w + ttl - 1, gone at w + ttl). It holds while the rounds of the write and
  of the read are each processed within L / 2 of the grid relative to one another: the margin, measured in
  docs/flink.md ("State TTL on a paced wall clock").

Under load a round can come late (measured: up to half a second at load 8), which would move a decision across
Flink's boundary. So every TTL job measures its own clock: each round of changes also holds a PROBE record on
input 0, and one more branch of the job's query (`probe_sql`) sends it through a LEFT join of its own with
CURRENT_TIMESTAMP, which the Calc behind that join evaluates when the join reads the record: the wall time of
each round at a join, read at the same moment as the case's join reads its records (both are fed by the same
source, whose round reaches them with the same barrier). `undecided` then compares, for every pair of a case's
instants, how far the measured clock slipped between them with how far the pair's decision lies from the
boundary; a case where the slip (plus MARGIN_MS) reaches that distance is answered unsupported, "not decided",
and never compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arrival import LEAD, Event, Slot  # the program's folder is on sys.path

ROUND_MS = 100           # the checkpoint interval of a TTL job: one round per interval
ROUNDS_PER_MS = 8        # rounds per logical ms: a logical ms is 800 ms of wall clock
LEAD_ROUNDS = 2          # arrival.rounds' lead: a dummy per input, then fillers
PROBE = -3000            # the probe record's case id (no case, lead dummy or restart marker has it)
STAMPED = -3001          # the case id of the probe branch's rows (the case's join emits the probe's padding as -3000)
MARGIN_MS = 200          # what the probe's stamp may differ from the case's join's own reading of a round (measured: -120 to +154 ms)
UNDECIDED = "state TTL not decided"


class ClockError(ValueError):
    """The case's changes cannot be laid out on the wall clock (the adapter answers it unsupported)."""


@dataclass(frozen=True)
class TtlClock:
    round_ms: int = ROUND_MS
    rounds_per_ms: int = ROUNDS_PER_MS

    @property
    def ms_per_logical_ms(self) -> int:
        return self.round_ms * self.rounds_per_ms

    def wall_ttl(self, ttl: int) -> int:
        """The TTL sent to Flink (ms) for a case's logical TTL: half a logical ms short of it."""
        if ttl < 1:
            raise ClockError(f"a state TTL of {ttl} ms expires nothing converge can model")
        return ttl * self.ms_per_logical_ms - self.ms_per_logical_ms // 2

    def logical_ttl(self, wall_ttl: int) -> int:
        """The case's TTL from the one wall_ttl sent to Flink."""
        return (wall_ttl + self.ms_per_logical_ms // 2) // self.ms_per_logical_ms

    def round_of(self, instant: int) -> int:
        """The round (from the job's first) that holds the changes of logical instant `instant`."""
        return LEAD_ROUNDS + 1 + instant * self.rounds_per_ms


CLOCK = TtlClock()


def instants(events: Any, chain: list[str]) -> list[int]:
    """The logical processing time of each change event of the scenario, in order (processing time starts at 0 and
    moves only with `processing_time` events, as in converge's engine)."""
    now = 0
    out: list[int] = []
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict):
            continue
        if "processing_time" in event:
            value = event["processing_time"]
            if not isinstance(value, int) or isinstance(value, bool) or value < now:
                raise ClockError(f"processing time {value!r} after {now}: it must be a whole number that never "
                                 "goes back")
            now = value
        elif event.get("input") in chain and isinstance(event.get("row"), list):
            out.append(now)
    return out


def check_runs(order: list[Event], times: list[int]) -> None:
    """ClockError unless every instant's changes are one run of one input (the module's docstring says why)."""
    if len(order) != len(times):
        raise ClockError("the scenario's events do not spell out its changelogs, so their times are unknown")
    for n in range(1, len(order)):
        if times[n] == times[n - 1] and order[n][0] != order[n - 1][0]:
            raise ClockError(f"changes {n - 1} and {n} share processing time {times[n]} on two inputs: the paced "
                             "wall clock gives an instant one round, and one round one input per case")


def timed_rounds(orders: list[list[Event]], times: list[list[int]], inputs: int,
                 clock: TtlClock = CLOCK) -> list[list[Slot | None]]:
    """The job's rounds on the wall-clock grid: the lead (arrival.rounds'), a filler round, then round
    clock.round_of(t) holds every case's run at instant t; every other round is fillers."""
    for order, at in zip(orders, times):
        check_runs(order, at)
    last = max((t for at in times for t in at), default=0)
    laid: list[list[Slot]] = [[] for _ in range(clock.round_of(last) + 1)]
    for t in probed(times):
        laid[clock.round_of(t)].append((PROBE, 0, ["+I"]))
    for c, (order, at) in enumerate(zip(orders, times)):
        for (view, row), t in zip(order, at):
            laid[clock.round_of(t)].append((c, view, row))
    width = max([inputs, *(len(r) for r in laid)])
    lead: list[Slot | None] = [(LEAD, view, ["+I"]) for view in range(inputs)]
    out: list[list[Slot | None]] = [lead + [None] * (width - inputs)]
    out.extend(list(members) + [None] * (width - len(members)) for members in laid[1:])
    return out


def probed(times: list[list[int]]) -> list[int]:
    """The instants whose rounds hold a change of some case, in order: each round's probe stamp is one of them."""
    return sorted({t for at in times for t in at})


def probe_sql(view0: str, view1: str) -> str:
    """The query branch that stamps each PROBE record when a join of its own reads it (the module's docstring):
    a LEFT join with no partner (the probe has no row on input 1), so each probe record emits one padded row, whose
    case id is STAMPED (the case's own LEFT or FULL join emits the probe's padding too, as PROBE)."""
    return (f"SELECT JSON_ARRAY(t0cid - 1, CAST(CURRENT_TIMESTAMP AS STRING) NULL ON NULL) FROM "
            f"(SELECT t0cid FROM {view0} WHERE t0cid = {PROBE}) LEFT JOIN "
            f"(SELECT t1cid FROM {view1} WHERE t1cid = {PROBE}) ON t0cid = t1cid")


def slips(stamps: list[float], instants: list[int], clock: TtlClock = CLOCK) -> dict[int, float]:
    """Each probed instant's deviation from the grid (ms), measured from the first: stamp - first stamp - the
    grid's distance between the two."""
    if not stamps:
        return {}
    first = instants[0]
    return {t: stamp - stamps[0] - (t - first) * clock.ms_per_logical_ms for t, stamp in zip(instants, stamps)}


def undecided(at: list[int], ttl: int, slip: dict[int, float], clock: TtlClock = CLOCK) -> str | None:
    """Why the case's expiry is not decided on the measured clock (None: every decision is): for a pair of its
    instants w < r, an entry written at w and read at r is decided half a logical ms or more from Flink's
    boundary on the grid, |r - w - ttl + 1/2| * L; the measured clock moved r against w by |slip(r) - slip(w)|.
    A pair where that slip plus MARGIN_MS reaches the distance is undecided (whether or not the case reads that
    entry: the adapter does not model the join)."""
    distinct = sorted(set(at))
    if any(t not in slip for t in distinct):
        return f"{UNDECIDED}: the probe stamped {len(slip)} of the job's rounds, not every one of this case's"
    for i, w in enumerate(distinct):
        for r in distinct[i + 1:]:
            distance = abs(r - w - ttl + 0.5) * clock.ms_per_logical_ms
            moved = abs(slip[r] - slip[w])
            if moved + MARGIN_MS >= distance:
                return (f"{UNDECIDED}: the wall clock slipped {moved:.0f} ms between logical instants {w} and {r}, "
                        f"within {MARGIN_MS} ms of the {distance:.0f} ms that keep their expiry decision from "
                        "Flink's TTL boundary (docs/flink.md, \"State TTL on a paced wall clock\")")
    return None
