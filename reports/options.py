"""What the commands take, as typed objects: the command line fills them, Python callers build them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.scenario import RuntimeName
from converge.oracle import ORACLES, OracleName

__all__ = ["ORACLES", "RUNTIMES", "BenchConfig", "OracleName", "RunOptions", "RuntimeName"]

RUNTIMES: tuple[RuntimeName, ...] = ("local", "spark")


@dataclass(frozen=True)
class RunOptions:
    """A property campaign (`converge run`)."""

    examples: int | None = None        # per property; None: each property's own default
    seed: int | None = None            # Hypothesis seed; None: one is drawn and printed
    family: str | None = None
    property: str | None = None
    runtime: RuntimeName = "local"
    reports: Path | None = None        # where reports and the summary go; None: nowhere
    system: str | None = None          # `--system SPEC` (converge/systems/registry.py); None: the property campaign
    system_timeout: float | None = None  # `--system-timeout`: the base of a run request's limit (adapter systems)
    known: tuple[Path, ...] = ()       # `--known FILE`s: known divergences added to the built-in list (docs/systems.md)
    builtin_known: bool = True         # apply the built-in known divergences (`--no-known`: off)
    repro: bool = True                 # write a standalone repro beside each failure report of a system that has a
                                       # generator (Flink: converge/systems/flink/campaign_repro.py; `--no-repro`: off)
    batch: int | None = None           # cases per run request of a system campaign; None: the system's default
                                       # (SystemType.default_batch). A batch holds shapes of at most 10 cases
                                       # (properties/systems/specs.py CASES_PER_SHAPE): 200 cases send 20 shapes
    stats: bool = False                # print the special-case coverage table per family (properties/coverage.py)
    oracle: OracleName = "duckdb"      # `--oracle`: who computes final answers (spark: with --runtime spark only)
    shrink_budget: float | None = None  # `--shrink-budget`: seconds of shrinking per failure; None: the default (120)
    only: tuple[str, ...] | None = None  # just these family/property names (the command line resolves -k EXPR and
                                       # --last-failed into them, converge/cli/selection.py); None: all
    seeds: tuple[tuple[str, int], ...] = ()  # `--last-failed`: (family/property, seed) run with that seed
    examples_each: tuple[tuple[str, int], ...] = ()  # `--last-failed`: (family/property, examples) it failed with
                                       # (`examples` wins; then each property's default)
    maxfail: int | None = None         # `--maxfail N` / `-x`: stop after N properties failed; the rest are not run
    junit: Path | None = None          # `--junit-xml FILE` (reports/junit.py)
    quiet: bool = False                # `--quiet`: no progress lines on stderr

    def examples_of(self, key: str, default: int) -> int:
        """The examples property `key` (family/property) runs: --examples, else what it failed with last time
        (--last-failed), else `default`, its own."""
        if self.examples is not None:
            return self.examples
        return dict(self.examples_each).get(key, default)


@dataclass(frozen=True)
class BenchConfig:
    """A benchmark run (`converge bench`)."""

    events: int = 1_000_000
    keys: int = 100_000
    examples: int = 300                # examples per property benchmark
    rounds: int = 3                    # property benchmarks repeat (same seed); median and best are reported
    runtime: RuntimeName = "local"
    only: tuple[str, ...] | None = None
    out: Path | None = Path("converge-bench.json")
    batches: int = 5                   # micro-batches of the Spark benchmark (it also runs with one)
    verify: bool = True                # the Spark benchmark checks its answer against the local runtime
    buckets: int | None = None         # key buckets per node of the Spark runtime; None: its default
    verify_records: int = 100_000      # input records of the verify_1m capture (its budget is for 1,000,000)
    system: str | None = None          # `--system flink[:VERSION]`: the Flink flink_map_order measures; None: newest
