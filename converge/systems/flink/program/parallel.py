"""The job's parallelism (part of the Flink adapter program): the join runs at `config.parallelism`, the arrival at 1.

Standard library only. `table.exec.resource.default-parallelism` is the parallelism of the operators
the SQL planner creates; the planner reads it when it translates a query, so it is set twice per job:

* to 1 before the arrival's split (session._paced_streams plans its per-input filters through
  to_changelog_stream): the one checkpoint-gated source (arrival.py), its split and the stream of each
  input keep one channel each, in the scenario's order;
* to the case's parallelism before the join's query is planned: every exchange the planner puts in front
  of a join (or ChangelogNormalize, or a mini-batch assigner) hashes on its key at that parallelism, and
  an operator after a parallelism-1 scan that needs no exchange takes its input's parallelism. So the
  records of one key still reach their join subtask over one channel, in the order the source sent them.

Planning at `parallelism` also sets the environment's own parallelism (Flink's PlannerBase), which the next
job's source would take: `before_arrival` sets it back to 1 (reset_environment).

Rounds stay rounds: a checkpoint completes only when its barrier has passed every subtask, so round k
has been joined on all subtasks before round k+1 is emitted (arrival.py). The collect sink runs at 1.
"""

from __future__ import annotations

from typing import Any

PARALLELISM = "table.exec.resource.default-parallelism"
SLOTS = 4   # the MiniCluster's task slots (session.py): a job needs as many as its highest parallelism


def check(parallelism: int) -> None:
    """Refuse (untranslatable) a parallelism the MiniCluster has no slots for, rather than fail the job."""
    if parallelism > SLOTS:
        from condition_sql import Untranslatable  # the program's folder is on sys.path

        raise Untranslatable(f"parallelism {parallelism}: the adapter's MiniCluster has {SLOTS} task slots")


def before_arrival(config: Any) -> None:
    """The arrival's split is planned at parallelism 1, and the environment that creates the arrival's source is
    set back to 1 (each job sets both: the config and the environment outlive the job)."""
    config.set(PARALLELISM, "1")
    reset_environment(config)


def reset_environment(config: Any) -> None:
    """Set the environment's parallelism back to 1 through `config` (a PyFlink TableConfig).

    Flink's PlannerBase.beforeTranslation copies `table.exec.resource.default-parallelism` into the
    environment's parallelism at every translation (getExecEnv.getConfig.setParallelism) and never restores it,
    while the arrival's source takes the environment's parallelism when it is created (fromSource, before the
    job's first translation). Without this the source of every job after one at parallelism p ran at p: its
    DataGeneratorSource splits the rows by position over p readers, which emit at once, and the scenario's order
    was lost (measured on 2.3.0: the second job of a session at parallelism 2 joined rows that never coexisted,
    docs/flink.md "Parallelism"). The environment's configuration is the table config's root configuration
    (StreamTableEnvironment.create passes the executor's, which is the environment's own)."""
    from pyflink.java_gateway import get_gateway  # lazy: pyflink (the tests import this module without Java)

    jvm = get_gateway().jvm
    root = config._j_table_config.getRootConfiguration()
    root.set(jvm.org.apache.flink.configuration.CoreOptions.DEFAULT_PARALLELISM, jvm.java.lang.Integer.valueOf(1))


def before_join(config: Any, parallelism: int) -> None:
    """The join's query is planned at the case's parallelism."""
    config.set(PARALLELISM, str(parallelism))


def operator_parallelism(plan_json: str) -> dict[str, int]:
    """Each operator's parallelism in a job graph (StreamExecutionEnvironment.getExecutionPlan's JSON), by type;
    an operator type seen at two parallelisms keeps the highest."""
    import json  # lazy: only the checks read plans

    out: dict[str, int] = {}
    for node in json.loads(plan_json).get("nodes", []):
        name = str(node.get("type", ""))
        out[name] = max(out.get(name, 0), int(node.get("parallelism", 0)))
    return out
