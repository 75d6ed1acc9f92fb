"""`converge check`: the properties that apply to a user's query, fed by streams of the query's own schema.

The first property, `reading_equals_query`, compares converge's reading of
the query with the query as written, run in DuckDB (properties/
query_reading.py); every other property's examples are compared the same way
before their own check, so no example is judged on a misread query. The next
property, `system_final_answer`, judges only a final answer
against the DuckDB oracle, so it runs on any system under test
(`converge check --system SPEC`, converge.systems): converge's local
engine by default, real Flink or an adapter otherwise. The other properties
check converge's model of Flink on the query's schema (they need the
engine's internals: per-event output, state), so they always run on
converge's engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import cast

from hypothesis import reject
from hypothesis import strategies as st

from converge.engine.materialize import clean, fold
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.scenario import Config, Scenario
from converge.engine.model.system import System
from converge.engine.runtime.local import RunResult, run_scenario
from converge.generators.schema import schema_scenarios
from converge.properties import exercise, interval, minibatch, multiway, projected_calc, regular
from converge.properties.divergence import fail
from converge.properties.empty_window import empty_window_equals_oracle, empty_window_matches_flink, is_empty_window
from converge.properties.query_plan import CheckOptions
from converge.properties.query_reading import oracle_final, reading_equals_query
from converge.properties.spec import PropertySpec
from converge.properties.systems.answers import answer_of, system_diverged

CaseRunner = Callable[[Scenario], RunResult]
FinalAnswer = Callable[[Scenario], Counter]   # a system's materialized final answer for one case


def query_strategy(query: MappedQuery, config: Config, *, late: bool = True, ttl: bool = False,
                   max_ops: int = 16) -> st.SearchStrategy[Scenario]:
    """Scenarios of the query's join over streams of its own schema (generators.schema)."""
    not_null = {a: {c for c, t in query.source_of(a).columns if not t.nullable} for a, _ in query.aliases}
    # watermarks where an input carries its time attribute (a view's input reads the source's columns with none)
    timed = {s.name for s in query.inputs if s.time_column is not None}
    delays = {a: delay for a, _ in query.aliases
              if a in timed and (delay := query.table_of(a).watermark_delay_ms) is not None}
    return schema_scenarios(query.inputs, query.join, config=query.with_job(config), not_null=not_null,
                            watermark_delays=delays,
                            late=late, ttl=ttl, max_ops=max_ops, name=f"check {query.path}")


def final_answer(scenario: Scenario, runner: CaseRunner = run_scenario) -> Counter:
    """The materialized output of one run (an interval join's after a final watermark on every input)."""
    if scenario.join.interval is not None:
        scenario = interval.with_final(scenario)
    return clean(fold(runner(scenario).changes))


def system_final_answer(scenario: Scenario, final: FinalAnswer | None = None) -> None:
    """What the system materializes (converge's engine by default) equals the batch answer (no TTL, no late rows)."""
    prop = "system_final_answer"
    got = final(scenario) if final is not None else final_answer(scenario)
    want = oracle_final(scenario)
    if got != want:
        fail(prop, scenario, "the final output differs from the DuckDB answer",
             event_index=len(scenario.events) - 1, engine=got, expected=want)


def system_final(system: System, spec: str) -> FinalAnswer:
    """The final answer of a system under test (`check --system SPEC`) for one case. A case the system
    cannot express is rejected (Hypothesis draws another; the run counts it as not applicable or unsupported,
    properties/exercise.py); a system error is the system's divergence, shown beside the oracle's and the
    reference engine's answers."""
    def final(scenario: Scenario) -> Counter:
        why_not = system.why_not(scenario)
        if why_not is not None:  # outside its declared capabilities: never sent
            exercise.not_applicable(why_not)
            reject()
        [result] = system.run_cases([scenario])
        if result.status == "unsupported":
            exercise.unsupported(result.message or f"{system.name} gave no reason")
            reject()
        want = oracle_final(scenario)
        # answer_of gives None only for an unsupported result, rejected above
        got = cast(Counter, answer_of("system_final_answer", system, scenario, result, want, spec))
        if got != want:  # the system's divergence, with the oracle's and the reference engine's answers beside it
            system_diverged("system_final_answer", system, scenario,
                            f"{system.name}'s final answer differs from the batch answer", got, want, oracle=want,
                            system_spec=spec)
        return got

    return final


def check_properties(query: MappedQuery, options: CheckOptions,
                     final: FinalAnswer | None = None) -> list[PropertySpec]:
    """The properties that apply to this query and these options, in the order `check` runs them;
    `final` is the system under test's final answer (None: converge's engine)."""
    def spec(family: str, name: str, strategy: Callable[[], st.SearchStrategy[Scenario]], check: Callable,
             what: str) -> PropertySpec:
        def checked(scenario: Scenario) -> None:
            reading_equals_query(query, scenario)  # every example: the reading is the query's before it is used
            check(scenario)

        return PropertySpec(family, name, lambda: strategy().map(lambda s: (s,)), checked, options.examples, what)

    exact = options.config(ttl=False, semantics="correct")
    n = options.max_ops
    reading = spec("check", "reading_equals_query",
                   lambda: query_strategy(query, exact, late=query.join.interval is None, max_ops=n),
                   lambda s: None, "converge's reading of the query = the query as written, run in DuckDB")
    at_join, seen = _at_the_join(query)
    calc = any(s.has_calc for s in query.inputs)
    if query.join.interval is not None and is_empty_window(query.scenario()):
        return [
            reading,
            spec("check", "system_final_answer",
                 lambda: query_strategy(query, exact, late=False, max_ops=n),
                 lambda s: system_final_answer(s, final), "no late rows: the system's final answer is DuckDB's"),
            spec("interval", "empty_window_matches_flink", lambda: query_strategy(query, exact, max_ops=n),
                 at_join(empty_window_matches_flink), f"an empty window (lower bound above upper): Flink joins "
                                                      f"nothing and pads every outer row as it arrives, at every "
                                                      f"event{seen}"),
            spec("interval", "empty_window_equals_oracle", lambda: query_strategy(query, exact, max_ops=n),
                 at_join(empty_window_equals_oracle), f"late rows too: the output is the batch interval join over "
                                                      f"every row{seen}"),
        ]
    if query.join.interval is not None:
        exact_answers = [] if self_pair_undecided(query) else [
            spec("check", "system_final_answer",
                 lambda: query_strategy(query, exact, late=False, max_ops=n),
                 lambda s: system_final_answer(s, final), "no late rows: the system's final answer is DuckDB's"),
            *([spec("interval", "calc_equals_lowered", lambda: query_strategy(query, exact, max_ops=n),
                    projected_calc.calc_equals_lowered, "late rows too: the engine's Calc in front of the join emits "
                                                        "what the join emits on DuckDB's projected rows, at every "
                                                        "event")] if calc else []),
            spec("interval", "no_late_equals_oracle", lambda: query_strategy(query, exact, late=False, max_ops=n),
                 at_join(interval.no_late_equals_oracle),
                 f"no late rows: after a final watermark, the batch interval join{seen}"),
        ]
        return [
            reading,
            *exact_answers,
            spec("interval", "late_records_bounded", lambda: query_strategy(query, exact, max_ops=n),
                 at_join(interval.late_records_bounded),
                 f"late rows (beyond the watermark delay): pairs between batch(non-late) and batch(all){seen}"),
            spec("interval", "matches_step_model",
                 lambda: query_strategy(query, options.config(ttl=False), max_ops=n),
                 at_join(interval.matches_step_model), f"semantics={options.semantics}: emitted rows and cached "
                                                       f"records equal the step model's at every event{seen}"),
            spec("interval", "pairs_and_padding_once", lambda: query_strategy(query, exact, max_ops=n),
                 at_join(interval.pairs_and_padding_once), f"every pair and every padded row is emitted once{seen}"),
        ]
    bundled = options.mini_batch_size is not None
    if bundled:  # the file's SET 'table.exec.mini-batch.*': the history is compared at bundle ends
        history = spec("minibatch", "prefix_consistency",
                       lambda: query_strategy(query, replace(exact, multi_join="off", mini_batch_latency_ms=None),
                                              max_ops=n),
                       minibatch.minibatch_prefix_consistency,
                       f"mini-batch of {options.mini_batch_size} rows: the DuckDB answer after every bundle (the "
                       f"drawn streams advance no processing time, so the latency trigger never fires)")
    else:
        history = spec("regular", "prefix_consistency", lambda: query_strategy(query, replace(exact, multi_join="off"),
                                                                             max_ops=n),
                       regular.prefix_consistency, "binary chain: the DuckDB answer after every event")
    out = [
        reading,
        spec("check", "system_final_answer", lambda: query_strategy(query, exact, max_ops=n),
             lambda s: system_final_answer(s, final), "the system's final answer is DuckDB's"),
        *([history] if not bundled or _one_minibatch_join(query) else []),
        spec("regular", "final_convergence",
             lambda: query_strategy(query, options.config(ttl=False), max_ops=n),
             regular.final_convergence, f"semantics={options.semantics}, {options.map_state_order} MapState "
                                        f"order: final answer = batch answer, no negative counts"),
    ]
    # the TTL model and the multi-way check read each input as declared, with a stream of its own
    views = any(s.has_calc or s.source is not None for s in query.inputs)
    if len(query.join.inputs) >= 3 and options.multi_join == "on" and not views and not bundled:
        out.append(spec("multiway", "prefix_consistency", lambda: query_strategy(query, exact, max_ops=n),
                        multiway.prefix_consistency, "multi-way plan = binary chain = DuckDB after every event"))
    if options.ttl_ms is not None and all(s.changelog_mode != "upsert" for s in query.inputs) \
            and len(query.join.inputs) == 2 and not views and not bundled:
        out.append(spec("regular", "ttl_matches_model",
                        lambda: query_strategy(query, options.config(), ttl=True, max_ops=n),
                        regular.ttl_matches_model, f"TTL {options.ttl_ms} ms: the TTL-aware model's answer at "
                                                   f"every event"))
    return out


def self_pair_undecided(query: MappedQuery) -> bool:
    """A processing-time self-join whose window is [0, U]: both copies of a row arrive at one time, the left one is
    not cached (its side has size 0), so whether a row pairs with itself depends on which input Flink's join task
    reads first, which Flink does not fix (docs/interval-joins.md "One source, both inputs"): no input is free of
    late rows, and no answer is the batch answer."""
    iv = query.join.interval
    if iv is None or iv.time != "processing" or not iv.lower_ms == 0 <= iv.upper_ms:
        return False
    sources = [s.source for s in query.inputs if s.name in query.join.inputs]
    return sources[0] is not None and sources[0] == sources[-1]


def _at_the_join(query: MappedQuery) -> tuple[Callable[[Callable[[Scenario], None]], Callable[[Scenario], None]],
                                               str]:
    """(a wrapper, the words it adds to a property's line) for the interval properties: with a Calc in front of
    the join (a view's projection and filter, a time attribute computed from a column) they judge the interval
    join operator on the rows the Calc passes, as Flink's IntervalJoin receives them, computed by DuckDB
    (oracle/projected.py), never by the engine's Calc under test; the Calc itself is judged by
    interval/calc_equals_lowered and, end to end, by check/system_final_answer and check/reading_equals_query."""
    if not any(s.has_calc for s in query.inputs):
        return (lambda check: check), ""
    return projected_calc.lowered, " (on the rows the Calc in front of the join passes, projected by DuckDB)"


def skipped_properties(query: MappedQuery, options: CheckOptions) -> list[tuple[str, str]]:
    """(property, why it does not apply) for the ones left out, so the output says what was not checked."""
    out = []
    if self_pair_undecided(query):
        why = ("a processing-time self-join with a window [0, U]: a row's two copies arrive at one time and the left "
               "one is not cached, so whether the row pairs with itself depends on which input Flink reads first")
        out += [("check/system_final_answer", why), ("interval/no_late_equals_oracle", why)]
    views = any(s.has_calc for s in query.inputs)
    shared = any(s.source is not None for s in query.inputs)
    if query.join.interval is None and options.ttl_ms is not None:
        if options.mini_batch_size is not None:
            out.append(("regular/ttl_matches_model", "mini-batch: the TTL model is record by record"))
        elif shared:
            out.append(("regular/ttl_matches_model", "the TTL model reads one stream per input, not a table read "
                                                     "in several places"))
        elif views:
            out.append(("regular/ttl_matches_model", "the TTL model reads the inputs as declared, without a view's "
                                                     "projection or filter"))
        elif len(query.join.inputs) != 2:
            out.append(("regular/ttl_matches_model", "the TTL model covers binary joins"))
        elif any(s.changelog_mode == "upsert" for s in query.inputs):
            out.append(("regular/ttl_matches_model", "the TTL model takes retract / insert-only inputs"))
    if query.join.interval is None and len(query.join.inputs) >= 3 and options.multi_join == "off":
        out.append(("multiway/prefix_consistency", "--multi-join off"))
    elif query.join.interval is None and len(query.join.inputs) >= 3 and shared:
        out.append(("multiway/prefix_consistency", "the multi-way check reads one stream per input, not a table "
                                                   "read in several places"))
    elif query.join.interval is None and len(query.join.inputs) >= 3 and views:
        out.append(("multiway/prefix_consistency", "the multi-way check reads the inputs as declared, without a "
                                                   "view's projection or filter"))
    bundled = query.join.interval is None and options.mini_batch_size is not None
    if bundled and len(query.join.inputs) >= 3 and options.multi_join == "on" and not views:
        out.append(("multiway/prefix_consistency", "mini-batch: the multi-way history is not compared per bundle"))
    if bundled and not _one_minibatch_join(query):
        out.append(("minibatch/prefix_consistency", "the mini-batch history covers one INNER / LEFT / RIGHT / FULL "
                                                    "join"))
    return out


def _one_minibatch_join(query: MappedQuery) -> bool:
    """A query the mini-batch properties take: one binary INNER / LEFT / RIGHT / FULL join."""
    return len(query.join.inputs) == 2 and query.join.types[0] in ("inner", "left", "right", "full")
