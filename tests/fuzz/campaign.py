"""The long fuzz campaigns: `python -m tests.fuzz.campaign --surface scenario|check|verify --examples N --seed S`.

Runs one surface's judge over that many damaged inputs and prints how many
ended in each outcome: `scenario` the damaged scenario files of
tests/fuzz/outcomes.py, `check` the hostile SQL files of
tests/fuzz/hostile_sql.py (`converge check`), `verify` the damaged captures of
tests/fuzz/hostile_captures.py (`converge verify`), `adapters` the hostile
adapters of tests/fuzz/adapters.py (a fault, the request it comes at, a
campaign's seed; `--examples 100` is a long run there). Anything that is not an
outcome (an untyped exception, a refusal that names no file:line:col, a state
change after a rejected event, a property failure, a hang) stops the campaign
with Hypothesis's shrunk example.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from tests.conftest import HYPOTHESIS_HOME

SURFACES = ("scenario", "check", "verify", "adapters")


def _surface(name: str, folder: Path) -> tuple[st.SearchStrategy, Callable[[Any], str]]:
    """The strategy of damaged inputs of one surface and its judge (one outcome word per input)."""
    if name == "scenario":
        from tests.fuzz.damage import damaged_files
        from tests.fuzz.outcomes import classify
        return damaged_files, lambda case: classify(case[1], case[0])
    if name == "check":
        from tests.fuzz.hostile_sql import classify_sql, hostile_sql
        return hostile_sql(), lambda case: classify_sql(case[0], folder / "query.sql")
    from tests.fuzz.hostile_captures import classify_capture, damaged_captures
    return damaged_captures(), lambda case: classify_capture(case, folder / "captures")


def run_campaign(examples: int, seed_value: int, surface: str = "scenario") -> Counter[str]:
    counts: Counter[str] = Counter()
    folder = Path(tempfile.mkdtemp(prefix=f"converge-fuzz-{surface}-"))
    strategy, judge = _surface(surface, folder)

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one(case: Any) -> None:
        counts[judge(case)] += 1

    try:
        one()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return counts


def run_adapter_campaign(examples: int, seed_value: int) -> Counter[str]:
    """Hostile adapters: each drawn fault's outcome, its claims checked (a broken one stops the campaign)."""
    from tests.fuzz.adapters import FAULT_DRAWS, judge  # lazy: the other surfaces need none of it

    counts: Counter[str] = Counter()

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(FAULT_DRAWS)
    def one(draw: tuple[str, int, int]) -> None:
        counts[f"{draw[0]}: {judge(*draw)}"] += 1

    one()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surface", choices=SURFACES, default="scenario", help="what is damaged (default: scenario)")
    parser.add_argument("--examples", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    set_hypothesis_home_dir(HYPOTHESIS_HOME)  # nothing written into the checkout
    started = time.perf_counter()
    counts = (run_adapter_campaign(args.examples, args.seed) if args.surface == "adapters"
              else run_campaign(args.examples, args.seed, args.surface))
    print(json.dumps({"surface": args.surface, "examples": sum(counts.values()), "seed": args.seed,
                      "seconds": round(time.perf_counter() - started, 1), "outcomes": dict(counts.most_common())},
                     indent=1))


if __name__ == "__main__":
    main()
