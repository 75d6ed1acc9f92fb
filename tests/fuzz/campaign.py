"""The long fuzz campaign: `python -m tests.fuzz.campaign --examples 30000 --seed 1`.

`--surface adapters` draws hostile adapters instead (tests/fuzz/adapters.py: a fault, the request it
comes at, a campaign's seed) and counts what each fault ended as; `--examples 100` is a long run there.

Runs the suite's judge (tests/fuzz/outcomes.py) over that many damaged files
and prints how many ended in each outcome. Anything that is not an outcome
(an untyped exception, a state change after a rejected event, a property
failure, a hang) stops the campaign with Hypothesis's shrunk example.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.configuration import set_hypothesis_home_dir

from tests.conftest import HYPOTHESIS_HOME
from tests.fuzz.damage import damaged_files
from tests.fuzz.outcomes import classify


def run_campaign(examples: int, seed_value: int) -> Counter[str]:
    counts: Counter[str] = Counter()

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(damaged_files)
    def one(case: tuple[str, bytes, list]) -> None:
        counts[classify(case[1], case[0])] += 1

    one()
    return counts


def run_adapter_campaign(examples: int, seed_value: int) -> Counter[str]:
    """Hostile adapters: each drawn fault's outcome, its claims checked (a broken one stops the campaign)."""
    from tests.fuzz.adapters import FAULT_DRAWS, judge  # lazy: the files surface needs none of it

    counts: Counter[str] = Counter()

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(FAULT_DRAWS)
    def one(draw: tuple[str, int, int]) -> None:
        counts[f"{draw[0]}: {judge(*draw)}"] += 1

    one()
    return counts


SURFACES = {"files": run_campaign, "adapters": run_adapter_campaign}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--surface", choices=sorted(SURFACES), default="files",
                        help="damaged scenario files (default) or hostile adapters")
    args = parser.parse_args()
    set_hypothesis_home_dir(HYPOTHESIS_HOME)  # nothing written into the checkout
    started = time.perf_counter()
    counts = SURFACES[args.surface](args.examples, args.seed)
    print(json.dumps({"surface": args.surface, "examples": sum(counts.values()), "seed": args.seed,
                      "seconds": round(time.perf_counter() - started, 1), "outcomes": dict(counts.most_common())},
                     indent=1))


if __name__ == "__main__":
    main()
