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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hypothesis import HealthCheck, find, settings
from hypothesis.errors import NoSuchExample

from converge.engine.materialize import clean, fold
from converge.engine.model.changelog import Change
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.scenario import ChangeEvent, IdleEvent, ProcessingTimeEvent, Scenario, WatermarkEvent
from converge.engine.planner import plan
from converge.engine.planner.multi import multi_join_nodes
from converge.engine.runtime.local import run_scenario
from converge.oracle.interval import batch_interval_join
from converge.oracle.projected import projected_scenario
from converge.properties import interval
from converge.properties.query_check import CaseRunner, CheckOptions, final_answer, oracle_final, query_strategy
from converge.properties.verify_capture import _shaper, show_row

# One block of a finding's example output: its title and its rows, each (mark, row): the row kind of a change
# ("+I", "-U", ...) or a bag's count ("2 x", "" for one), and the row as the query's SELECT list holds it.
Output = tuple[str, tuple[tuple[str, tuple], ...]]


@dataclass(frozen=True)
class Finding:
    topic: str
    text: str
    example: Scenario | None = None
    detail: tuple[str, ...] = ()
    outputs: tuple[Output, ...] = ()   # the example's output blocks (`detail` prints them), for --format json


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
        cols = [c for c, _ in query.source_of(e.input).columns]
        return f"{e.kind} {e.input}(" + ", ".join(f"{c}={t.display(v)}" for c, t, v in zip(cols, types, e.row, strict=False)) + ")"
    if isinstance(e, WatermarkEvent):
        return f"watermark {e.input} {e.watermark}"
    if isinstance(e, ProcessingTimeEvent):
        return f"processing time -> {e.processing_time} ms"
    if isinstance(e, IdleEvent):
        return f"{e.input} idle"
    return repr(e)


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


def _changes(query: MappedQuery, changes: Sequence[Change]) -> tuple[tuple[str, tuple], ...]:
    return tuple(query_changes(query, changes))


def _bag(bag: Counter) -> tuple[tuple[str, tuple], ...]:
    return tuple((f"{n} x" if n != 1 else "", r) for r, n in sorted(bag.items(), key=repr))


def _events(query: MappedQuery, s: Scenario) -> list[str]:
    return [f"{i}: {show_event(query, e)}" for i, e in enumerate(s.events)]


def _example(topic: str, text: str, query: MappedQuery, found: Scenario, *outputs: Output) -> Finding:
    """A finding with its example: the input events, then each output block by the SELECT list's names."""
    lines = ["input:", *_events(query, found)]
    for title, rows in outputs:
        lines.append(title)
        lines += [f"{mark} {show_row(query, row)}" if mark else show_row(query, row) for mark, row in rows] \
            or ["(empty)"]
    return Finding(topic, text, found, tuple(lines), outputs)


# ---------------------------------------------------------------- the findings


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
    return _example(topic, "with the RocksDB state backend, rows matched by one probe come out in the byte order "
                           "of their serialized MapState key, not in arrival order: a consumer that depends on "
                           "the order of the changelog can see a different sequence (the final answer is the same)",
                    query, found, ("output with rocksdb:", _changes(query, rocks)),
                    ("output in arrival order:", _changes(query, arrival)))


def ttl_finding(query: MappedQuery, options: CheckOptions, runner: CaseRunner) -> Finding:
    topic = "state TTL"
    if options.ttl_ms is None:
        return Finding(topic, "no TTL given (--ttl MS): state is kept forever, so the answers above are exact; "
                              "give the job's table.exec.state.ttl to see whether it changes answers")
    if query.join.interval is not None:
        by = "processing time" if query.join.interval.time == "processing" else "watermark"
        return Finding(topic, f"an interval join cleans its state by {by}, not by TTL")
    strategy = query_strategy(query, options.config(), ttl=True, max_ops=options.max_ops)

    def changes_answer(s: Scenario) -> bool:
        return query_answer(query, final_answer(s, runner)) != query_answer(query, oracle_final(s))

    found = _search(strategy, changes_answer, options)
    if found is None:
        return Finding(topic, f"a TTL of {options.ttl_ms} ms changed no answer in the streams tried")
    with_ttl = runner(found).per_event
    without = runner(replace(found, config=replace(found.config, state_ttl_ms=None))).per_event
    first, now = None, 0
    a: Counter = Counter()
    b: Counter = Counter()
    for i, (x, y) in enumerate(zip(with_ttl, without, strict=False)):
        e = found.events[i]
        if isinstance(e, ProcessingTimeEvent):
            now = e.processing_time
        fold([c for c in x if isinstance(c, Change)], a)
        fold([c for c in y if isinstance(c, Change)], b)
        if query_answer(query, clean(a)) != query_answer(query, clean(b)):
            first = (i, now)
            break
    when = f" from event {first[0]} on (processing time {first[1]} ms)" if first else ""
    return _example(topic, f"a TTL of {options.ttl_ms} ms changes the answer{when}: a row whose state expired "
                           f"no longer matches, so its partner's output is missing or padded",
                    query, found, ("final output with the TTL:", _bag(query_answer(query, final_answer(found, runner)))),
                    ("the answer without TTL:", _bag(query_answer(query, oracle_final(found)))))


def late_finding(query: MappedQuery, options: CheckOptions, runner: CaseRunner) -> Finding:
    topic = "late rows"
    marked = [(a, query.table_of(a)) for a, _ in query.aliases if query.table_of(a).watermark_delay_ms is not None]
    if query.join.interval is not None and query.join.interval.time == "processing":
        return Finding(topic, "a processing-time interval join: a row's time is its arrival, so no row is late "
                              "by a watermark; a row arriving in the millisecond of an earlier row of the other "
                              "input can miss it on a zero-size side (checked by interval/late_records_bounded, "
                              "docs/interval-joins.md)")
    if not marked:
        return Finding(topic, "no input declares a WATERMARK: no row is ever late")
    decl = "; ".join(f"{a}: {t.time_attribute or t.time_column} - {t.watermark_delay_ms} ms" for a, t in marked)
    if query.join.interval is None:
        return Finding(topic, f"watermarks ({decl}) do not drop rows in a regular join: it keeps every row in "
                              f"state (until a TTL), so late rows join like any other")
    strategy = query_strategy(query, options.config(ttl=False, semantics="correct"), max_ops=options.max_ops)

    def dropped(s: Scenario) -> bool:
        return query_answer(query, final_answer(s, runner)) != query_answer(query, oracle_final(s))

    found = _search(strategy, dropped, options)
    if found is None:
        return Finding(topic, f"watermarks {decl}: no stream tried lost a row to lateness")
    return _example(topic, f"with the declared watermarks ({decl}), a row whose time is not above the join's "
                           f"watermark (the smaller of the inputs' largest time seen minus their delay) is late: the "
                           f"interval join does not cache it, so it pairs only with the other side's rows still "
                           f"cached when it arrives, never with a row already cleaned up nor with one that arrives "
                           f"after it, and on an outer side it is padded at once when it pairs with none; so the "
                           f"streaming answer differs from the batch answer. In the example: "
                           f"{late_story(query, found, runner)}",
                    query, found,
                    ("streaming output (after a final watermark):",
                     _bag(query_answer(query, final_answer(found, runner)))),
                    ("batch answer:", _bag(query_answer(query, oracle_final(found)))))


def late_story(query: MappedQuery, found: Scenario, runner: CaseRunner = run_scenario) -> str:
    """What each late row of an interval join's example did, read from the run itself: the partners it was
    paired with when it arrived, whether it was padded, and its partners in the batch answer."""
    found = projected_scenario(found)  # a time attribute computed in front of the join: the rows the join sees
    model = interval.model_of(found)  # decides which rows are late, as Flink does at their arrival
    tagged = interval.with_positions(interval.with_final(found))
    streamed: Counter = Counter()
    for items in runner(tagged).per_event:
        streamed += interval.items_of(tagged, [c for c in items if isinstance(c, Change)])
    batch = interval.items_of(tagged, [Change("+I", r) for r in batch_interval_join(tagged).elements()])
    parts = []
    for pos in sorted(model.late):
        e = found.events[pos]
        table = query.table_of(e.input)
        spec = found.input(e.input)
        attribute = spec.time_column or ""
        time = dict(table.columns)[attribute].display(e.row[spec.index_of(attribute)])
        before = model.clocks[pos - 1] if pos > 0 else None
        paired = sum(n for it, n in streamed.items() if it[0] == "join" and pos in it[1:])
        partners = sum(n for it, n in batch.items() if it[0] == "join" and pos in it[1:])
        padded = any(it[0] == "pad" and it[2] == pos for it in streamed)
        parts.append(f"event {pos} ({e.input}, {attribute} {time}) arrives behind the join's watermark "
                     f"({before} ms) and is late: the streaming join pairs it with {_rows(paired)} still cached"
                     f"{' and pads it' if padded else ''}, the batch answer pairs it with {_rows(partners)}")
    return "; ".join(parts) if parts else "no row is late, yet the answers differ (see below)"


def _rows(n: int) -> str:
    return "no row" if n == 0 else "1 row" if n == 1 else f"{n} rows"


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
