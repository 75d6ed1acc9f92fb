"""The long fuzz campaign: `python -m tests.fuzz.campaign --examples 30000 --seed 1`.

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    set_hypothesis_home_dir(HYPOTHESIS_HOME)  # nothing written into the checkout
    started = time.perf_counter()
    counts = run_campaign(args.examples, args.seed)
    print(json.dumps({"examples": sum(counts.values()), "seed": args.seed,
                      "seconds": round(time.perf_counter() - started, 1), "outcomes": dict(counts.most_common())},
                     indent=1))


if __name__ == "__main__":
    main()
