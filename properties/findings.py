"""Findings of `converge check`: what the query will do, in plain words, each with a minimal example.

Each finding searches with Hypothesis (`find`, which shrinks what it finds)
for the smallest stream of the query's schema that shows the behaviour:
output reordered by the RocksDB MapState, an answer changed by the TTL,
late rows dropped under the declared watermark. When none is found in the
budget the finding says so, with the number of streams tried. A behaviour is
the query's: the join's output with the query's WHERE filter and SELECT list
applied, as `converge verify` applies them, so an example never rests on a
row the query filters out, and its rows print as the SELECT list names them.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from hypothesis import HealthCheck, find, settings
from hypothesis.errors import NoSuchExample

from converge.engine.condition import split_condition
from converge.engine.materialize import clean, fold
from converge.engine.model.changelog import Change
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.scenario import ChangeEvent, IdleEvent, ProcessingTimeEvent, Scenario, WatermarkEvent
from converge.engine.planner import plan
from converge.engine.planner.multi import multi_join_nodes
from converge.engine.runtime.local import run_scenario
from converge.engine.views import analyze_join_input
from converge.properties.query_check import CaseRunner, CheckOptions, final_answer, oracle_final, query_strategy
from converge.properties.verify_capture import _shaper


@dataclass(frozen=True)
class Finding:
    topic: str
    text: str
    example: Scenario | None = None
    detail: tuple[str, ...] = ()


def _search(strategy, condition: Callable[[Scenario], bool], options: CheckOptions) -> Scenario | None:
    try:
        return find(strategy, condition,
                    settings=settings(max_examples=max(options.examples, 50), database=None, deadline=None,
                                      suppress_health_check=list(HealthCheck)),
                    random=random.Random(options.seed if options.seed is not None else 0))
    except NoSuchExample:
        return None


def show_event(query: MappedQuery, e: object) -> str:
    if isinstance(e, ChangeEvent):
        types = query.types_of(e.input)
        cols = [c for c, _ in query.table_of(e.input).columns]
        return f"{e.kind} {e.input}(" + ", ".join(f"{c}={t.display(v)}" for c, t, v in zip(cols, types, e.row)) + ")"
    if isinstance(e, WatermarkEvent):
        return f"watermark {e.input} {e.watermark}"
    if isinstance(e, ProcessingTimeEvent):
        return f"processing time -> {e.processing_time} ms"
    if isinstance(e, IdleEvent):
        return f"{e.input} idle"
    return repr(e)


def show_row(query: MappedQuery, row: tuple) -> str:
    """A row of the query's output, by the SELECT list's names."""
    return "(" + ", ".join(f"{o.name}={o.type.display(v)}" for o, v in zip(query.output, row)) + ")"


def show_bag(query: MappedQuery, bag: Counter) -> list[str]:
    return [f"{n} x {show_row(query, r)}" if n != 1 else show_row(query, r)
            for r, n in sorted(bag.items(), key=repr)] or ["(empty)"]


def query_answer(query: MappedQuery, bag: Counter) -> Counter:
    """A join answer as the query's answer: the rows its WHERE keeps, projected on its SELECT list."""
    shape = _shaper(query)
    out: Counter = Counter()
    for row, n in bag.items():
        shaped = shape(row)
        if shaped is not None:
            out[shaped] += n
    return +out


def query_changes(query: MappedQuery, changes: Sequence[Change]) -> list[tuple[str, tuple]]:
    """A join changelog as the query's changelog: (kind, output row) of the rows its WHERE keeps."""
    shape = _shaper(query)
    return [(c.kind, shaped) for c in changes if (shaped := shape(c.row)) is not None]


def _changes(query: MappedQuery, changes: Sequence[Change]) -> list[str]:
    return [f"{kind} {show_row(query, row)}" for kind, row in query_changes(query, changes)]


def _events(query: MappedQuery, s: Scenario) -> list[str]:
    return [f"{i}: {show_event(query, e)}" for i, e in enumerate(s.events)]


# ---------------------------------------------------------------- the findings


def state_views(query: MappedQuery) -> list[str]:
    """Per binary step: the state view each side gets (what Flink's StreamingJoinOperator would choose)."""
    if query.join.interval is not None:
        return ["interval join: each side's rows are cached by time until the other side's watermark passes them"]
    lines = []
    chain = query.inputs
    specs = {s.name: s for s in chain}
    names = query.join.inputs
    for i, (name, cond) in enumerate(zip(names[1:], query.join.conditions), 1):
        left = [specs[n] for n in names[:i]]
        split = split_condition(cond, left, specs[name])
        right_keys = [k.right.column for k in split.equi_keys]
        right_view = analyze_join_input(specs[name], right_keys).kind
        left_view = analyze_join_input(left[0], [k.left.column for k in split.equi_keys
                                                 if k.left.input == left[0].name]).kind if i == 1 else "joined rows"
        lines.append(f"step {i} ({query.join.types[i - 1].upper()} {name}): left {left_view}, right {right_view}")
    return lines


def order_finding(query: MappedQuery, options: CheckOptions, runner: CaseRunner) -> Finding:
    topic = "MapState order"
    if query.join.interval is not None:
        return Finding(topic, "an interval join emits in arrival order per probe; not checked here")
    base = options.config(ttl=False)
    strategy = query_strategy(query, replace(base, map_state_order="rocksdb"), max_ops=options.max_ops)

    def reorders(s: Scenario) -> bool:
        arrival = replace(s, config=replace(s.config, map_state_order="arrival"))
        return query_changes(query, runner(s).changes) != query_changes(query, runner(arrival).changes)

    found = _search(strategy, reorders, options)
    if found is None:
        return Finding(topic, f"no stream of {max(options.examples, 50)} tried had its output reordered by the "
                              f"RocksDB MapState (a side whose view is JoinKeyContainsUniqueKey holds one row "
                              f"per key, which cannot reorder)")
    rocks = runner(found).changes
    arrival = runner(replace(found, config=replace(found.config, map_state_order="arrival"))).changes
    return Finding(topic, "with the RocksDB state backend, rows matched by one probe come out in the byte order "
                          "of their serialized MapState key, not in arrival order: a consumer that depends on "
                          "the order of the changelog can see a different sequence (the final answer is the same)",
                   found, ("input:", *_events(query, found), "output with rocksdb:", *_changes(query, rocks),
                           "output in arrival order (heap-like):", *_changes(query, arrival)))


def ttl_finding(query: MappedQuery, options: CheckOptions, runner: CaseRunner) -> Finding:
    topic = "state TTL"
    if options.ttl_ms is None:
        return Finding(topic, "no TTL given (--ttl MS): state is kept forever, so the answers above are exact; "
                              "give the job's table.exec.state.ttl to see whether it changes answers")
    if query.join.interval is not None:
        return Finding(topic, "an interval join cleans its state by watermark, not by TTL")
    strategy = query_strategy(query, options.config(), ttl=True, max_ops=options.max_ops)

    def changes_answer(s: Scenario) -> bool:
        return query_answer(query, final_answer(s, runner)) != query_answer(query, oracle_final(s))

    found = _search(strategy, changes_answer, options)
    if found is None:
        return Finding(topic, f"a TTL of {options.ttl_ms} ms changed no answer in the streams tried")
    with_ttl = runner(found).per_event
    without = runner(replace(found, config=replace(found.config, state_ttl_ms=None))).per_event
    first, now, a, b = None, 0, Counter(), Counter()
    for i, (x, y) in enumerate(zip(with_ttl, without)):
        e = found.events[i]
        if isinstance(e, ProcessingTimeEvent):
            now = e.processing_time
        fold([c for c in x if isinstance(c, Change)], a)
        fold([c for c in y if isinstance(c, Change)], b)
        if query_answer(query, clean(a)) != query_answer(query, clean(b)):
            first = (i, now)
            break
    when = f" from event {first[0]} on (processing time {first[1]} ms)" if first else ""
    return Finding(topic, f"a TTL of {options.ttl_ms} ms changes the answer{when}: a row whose state expired "
                          f"no longer matches, so its partner's output is missing or padded",
                   found, ("input:", *_events(query, found), "final output with the TTL:",
                           *show_bag(query, query_answer(query, final_answer(found, runner))),
                           "the answer without TTL:", *show_bag(query, query_answer(query, oracle_final(found)))))


def late_finding(query: MappedQuery, options: CheckOptions, runner: CaseRunner) -> Finding:
    topic = "late rows"
    marked = [(a, query.table_of(a)) for a, _ in query.aliases if query.table_of(a).watermark_delay_ms is not None]
    if not marked:
        return Finding(topic, "no input declares a WATERMARK: no row is ever late")
    decl = "; ".join(f"{a}: {t.time_column} - {t.watermark_delay_ms} ms" for a, t in marked)
    if query.join.interval is None:
        return Finding(topic, f"watermarks ({decl}) do not drop rows in a regular join: it keeps every row in "
                              f"state (until a TTL), so late rows join like any other")
    strategy = query_strategy(query, options.config(ttl=False, semantics="correct"), max_ops=options.max_ops)

    def dropped(s: Scenario) -> bool:
        return query_answer(query, final_answer(s, runner)) != query_answer(query, oracle_final(s))

    found = _search(strategy, dropped, options)
    if found is None:
        return Finding(topic, f"watermarks {decl}: no stream tried lost a row to lateness")
    return Finding(topic, f"with the declared watermarks ({decl}), a row whose time is not above the join's "
                          f"watermark (the smaller of the inputs' largest time seen minus their delay) is late: the "
                          f"interval join drops it (no pair, no padding), so the streaming answer differs from the "
                          f"batch answer",
                   found, ("input:", *_events(query, found), "streaming output (after a final watermark):",
                           *show_bag(query, query_answer(query, final_answer(found, runner))), "batch answer:",
                           *show_bag(query, query_answer(query, oracle_final(found)))))


def multiway_finding(query: MappedQuery, options: CheckOptions) -> Finding:
    topic = "multi-way join"
    n = len(query.join.inputs)
    if query.join.interval is not None or n < 3:
        return Finding(topic, f"does not apply: Flink's multi-way join operator needs a chain of 3 or more regular "
                              f"joins (this query has {n} inputs{', an interval join' if query.join.interval else ''})")
    s = query.scenario(config=replace(options.config(ttl=False), multi_join="on"))
    nodes = multi_join_nodes(plan(s))
    if not nodes:
        return Finding(topic, "does not apply: no 3 or more inputs of the chain share a common join key, so even "
                              "with table.optimizer.multi-join.enabled the chain runs as binary joins")
    return Finding(topic, f"applies: with table.optimizer.multi-join.enabled, {len(nodes)} multi-way operator(s) "
                          f"replace the binary joins, keeping each input's rows once instead of every intermediate "
                          f"result" + ("" if options.multi_join == "on" else " (--multi-join on checks it)"),
                   None, tuple(node.describe for node in nodes))


def all_findings(query: MappedQuery, options: CheckOptions, runner: CaseRunner = run_scenario) -> list[Finding]:
    return [order_finding(query, options, runner), ttl_finding(query, options, runner),
            late_finding(query, options, runner), multiway_finding(query, options)]
