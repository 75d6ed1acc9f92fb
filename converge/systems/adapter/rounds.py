"""How many paced rounds a run request costs a paced adapter (capabilities.rounds_per_event), for its time limit.

Flink's adapter feeds each job from one source that releases one round per completed checkpoint
(docs/flink.md, "Arrival"): two lead rounds, then `rounds_per_event` rounds per event of the job's longest case
(the event's own and the guard rounds after it), or, for a mini-batch job of bundle size N, per bundle of every
case. The cases of a request that share their job options run as one job, whatever their shapes; converge
cannot see how the adapter groups them further, so it counts a job per distinct set of the options that belong
to a whole job, and a job per case for an upsert sink or a restart (neither shares a job; a restart's job also
pauses RESTART_GAP_ROUNDS rounds for its savepoint): an upper bound.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from converge.engine.model.scenario import ChangeEvent, Scenario

LEAD_ROUNDS = 2
RESTART_GAP_ROUNDS = 60   # the Flink adapter's restart.GAP: filler rounds while the savepoint is taken


def _job(n: int, scenario: Scenario) -> tuple:
    """The options of scenario.config that belong to the whole job (one job per distinct value); the case's
    position too where its job is its own."""
    config = scenario.config
    alone = n if config.sink != "retract" or config.restart_after is not None else None
    return (config.multi_join, config.mini_batch_size, config.state_backend, config.parallelism, alone)


def request_rounds(scenarios: Sequence[Scenario], rounds_per_event: int) -> int:
    """The rounds a paced adapter delivers for these cases; 0 for an adapter that is not paced."""
    if rounds_per_event <= 0 or not scenarios:
        return 0
    depth: dict[tuple, int] = defaultdict(int)
    gaps = 0
    for n, scenario in enumerate(scenarios):
        changes = sum(isinstance(event, ChangeEvent) for event in scenario.events)
        key = _job(n, scenario)
        gaps += RESTART_GAP_ROUNDS if scenario.config.restart_after is not None else 0
        bundle = scenario.config.mini_batch_size
        if bundle:
            depth[key] += -(-changes // bundle)
        else:
            depth[key] = max(depth[key], changes)
    return gaps + sum(LEAD_ROUNDS + rounds_per_event * rounds for rounds in depth.values())
