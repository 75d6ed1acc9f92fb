"""One Flink SQL file (CREATE TABLEs and one SELECT) as converge's model: inputs, join chain, projection, filter.

Inputs are named by their alias in the query (`orders o` is input `o`), so
the conditions keep the user's own names. The FROM/JOIN chain becomes the
join chain in order; `EXISTS`, `NOT EXISTS` and `IN (SELECT ...)` in the WHERE
clause become SEMI/ANTI steps appended to it (they filter the rows the joins
produce, as Flink's planner rewrites them); `a.t BETWEEN b.t - INTERVAL ... AND
b.t + INTERVAL ...` on two rowtime attributes makes a binary join an
event-time interval join; the remaining WHERE conjuncts are a filter on the
join's output and the SELECT list a projection of it (both stateless: the
properties check the join below them, verify applies them to the oracle's
answer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ParamSpec

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql.allowed import Refusal, at, one_error, position, refusals
from converge.engine.model.flinksql.ddl import SourceTable, read_table
from converge.engine.model.flinksql.expressions import Renderer, Scope, did_you_mean
from converge.engine.model.flinksql.job import (
    JobSetting,
    SinkTable,
    check_consistent,
    insert_target,
    job_config,
    read_set,
    read_sink,
    sink_settings,
)
from converge.engine.model.flinksql.positions import SourceText, byte_line_col
from converge.engine.model.flinksql.reading import read_statements
from converge.engine.model.flinksql.streams import shared_streams, unshadow
from converge.engine.model.flinksql.time_bounds import TimeAttributes
from converge.engine.model.flinksql.types import FlinkType
from converge.engine.model.flinksql.views import (
    DerivedInput,
    computed_input,
    derived_input,
    inline_views,
    is_view,
    name_derived,
    read_view,
)
from converge.engine.model.flinksql.where_joins import (
    attach_where,
    comma_scope_problem,
    conjuncts,
    push_time_bounds,
    stray_keyword,
)
from converge.engine.model.paths import not_a_file
from converge.engine.model.scenario import Config, Event, InputSpec, IntervalSpec, JoinSpec, Scenario, short_repr

MAX_QUERY_BYTES = 256 << 10
_SIDES = {"": "inner", "INNER": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full"}


@dataclass(frozen=True)
class OutputColumn:
    """One column of the query's result: its name and where it comes from."""

    name: str
    alias: str
    column: str
    type: FlinkType


@dataclass(frozen=True)
class MappedQuery:
    """A query file read onto the model; `scenario(events)` makes a runnable scenario of it."""

    path: str
    tables: dict[str, SourceTable]
    aliases: tuple[tuple[str, str], ...]          # (alias, table) in chain order
    join: JoinSpec
    output: tuple[OutputColumn, ...]
    where_sql: str | None = None                  # a filter on the join's output (model SQL)
    notes: tuple[str, ...] = field(default_factory=tuple)
    text: str = ""                                # the file's text, for the query-as-written path
    # (key path in the scenario, file:line:col): where each input and join condition is written, so that a later
    # refusal naming `join.conditions[1]` or `inputs[0]` can name the clause in the file instead
    positions: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # the job options the file sets (SET statements, the INSERT's sink; engine/model/flinksql/job.py)
    job: tuple[JobSetting, ...] = field(default_factory=tuple)
    # inputs read through a view or derived table: alias -> its projection and filter (flinksql/views.py)
    derived: tuple[tuple[str, DerivedInput], ...] = field(default_factory=tuple)

    def job_config(self) -> dict:
        """The job options as Config fields (JOB_OPTION_KEYS), for every case of the query."""
        return job_config(self.job)

    def with_job(self, config: Config) -> Config:
        """`config` with the job options the file sets (every case of the query runs with them)."""
        return replace(config, **self.job_config()) if self.job else config

    @property
    def inputs(self) -> tuple[InputSpec, ...]:
        """The inputs: each declared table's columns (its events), with a view's projection and filter; a table
        read in several places is one stream input (declared before its first reader) that each reader names as
        its `source` (Flink scans the table once and feeds every use)."""
        derived = dict(self.derived)
        streams = shared_streams(self.aliases)
        out: list[InputSpec] = []
        for a, t in self.aliases:
            spec = self.tables[t].input_spec(a)
            if t in streams:
                if not any(s.name == streams[t] for s in out):
                    out.append(self.tables[t].input_spec(streams[t]))
                spec = replace(spec, source=streams[t])
            if a in derived:
                # a rowtime the table computes (flinksql/text_times.py) is the projection's column of that name
                time = self.tables[t].time_column
                kept = time if time in {c for c, _ in derived[a].columns} and time not in dict(
                    self.tables[t].columns) and derived[a].via == "computed columns" else None
                spec = replace(spec, project=derived[a].project, where=derived[a].where, time_column=kept)
            out.append(spec)
        return tuple(out)

    def stream_of(self, alias: str) -> str:
        """The input whose events the input `alias` reads: its own, or its table's shared stream."""
        return shared_streams(self.aliases).get(dict(self.aliases)[alias], alias)

    def streams(self) -> tuple[str, ...]:
        """The inputs the events name, in chain order (a shared table's stream once)."""
        return tuple(dict.fromkeys(self.stream_of(a) for a, _ in self.aliases))

    def source_of(self, alias: str) -> SourceTable:
        """The declared table the input (or a shared table's stream) reads (its rows are the input's events)."""
        tables = dict(self.aliases) | {s: t for t, s in shared_streams(self.aliases).items()}
        return self.tables[tables[alias]]

    def table_of(self, alias: str) -> SourceTable:
        """The input as the join sees it: the declared table, or the view's columns over it."""
        derived = dict(self.derived).get(alias)
        source = self.source_of(alias)
        return source if derived is None else derived.view_table(source)

    def types_of(self, alias: str) -> tuple[FlinkType, ...]:
        """The types of the input's rows (its declared table's columns)."""
        return tuple(t for _, t in self.source_of(alias).columns)

    def joined_aliases(self) -> tuple[str, ...]:
        """The aliases whose columns the join outputs (SEMI/ANTI inputs only filter)."""
        kept = [self.join.inputs[0]] + [a for a, t in zip(self.join.inputs[1:], self.join.types, strict=False)
                                        if t not in ("semi", "anti")]
        return tuple(kept)

    def join_columns(self) -> tuple[tuple[str, str, FlinkType], ...]:
        """(alias, column, type) of every column of the join's output row, in order."""
        return tuple((a, c, t) for a in self.joined_aliases() for c, t in self.table_of(a).columns)

    def output_picks(self) -> list[int]:
        """Where each SELECT-list column sits in the join's output row (`join_columns`)."""
        index = {(a, c): i for i, (a, c, _) in enumerate(self.join_columns())}
        return [index[(o.alias, o.column)] for o in self.output]

    def scenario(self, events: Sequence[Event] = (), config: Config | None = None, name: str = "") -> Scenario:
        return Scenario(name=name or f"query {Path(self.path).name}", inputs=self.inputs, join=self.join,
                        config=self.with_job(config or Config()), events=tuple(events))


def load_query(path: str | Path) -> MappedQuery:
    """Read and map a query file; a missing file or a wrong query is bad input, a clause converge cannot model
    yet unsupported."""
    p = Path(path)
    problem = not_a_file(p)
    if problem is not None:
        raise BadInputError(f"{p}: {problem}")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise BadInputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_QUERY_BYTES:  # sqlglot tokenizes about 300 KB a second: a bigger file is no query to wait on
        raise BadInputError(f"{p}:1:1: the file has {len(data):,} bytes; converge reads query files of at most "
                            f"{MAX_QUERY_BYTES:,}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = byte_line_col(data, exc.start)
        raise BadInputError(f"{p}:{line}:{col}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})") from None
    return parse_query(text, str(p))


def parse_query(text: str, path: str = "<query>") -> MappedQuery:
    source = SourceText(text, path)
    statements = read_statements(source)
    tables: dict[str, SourceTable] = {}
    selects = []
    inserts: list[exp.Insert] = []
    job: list[JobSetting] = []
    refused: list[Refusal] = []   # every refusal of the file, reported together
    skipped: set[str] = set()     # tables whose CREATE TABLE was refused: the SELECT's use of them is not
    sink_names = {insert_target(s)[0].casefold() for s in statements if isinstance(s, exp.Insert)}
    sinks: dict[str, SinkTable] = {}
    views: dict[str, exp.Select] = {}
    for stmt in statements:
        if is_view(stmt):
            try:
                name, body = read_view(stmt, source)
            except (BadInputError, UnsupportedError) as exc:
                refused.append(exc)
                if isinstance(stmt.this, exp.Table):  # its refusal covers the query's use of it
                    skipped.add(stmt.this.name.casefold())
                continue
            if name.casefold() in views or name.casefold() in {t.casefold() for t in tables}:
                refused.append(source.error(stmt, f"{short_repr(name)} is declared twice"))
            views[name.casefold()] = body
        elif isinstance(stmt, exp.Create) and isinstance(stmt.this, exp.Schema) \
                and stmt.this.this.name.casefold() in sink_names:
            try:
                sinks[stmt.this.this.name.casefold()] = read_sink(stmt, source)
            except (BadInputError, UnsupportedError) as exc:
                refused.append(exc)
        elif isinstance(stmt, exp.Create):
            try:
                table = read_table(stmt, source)
            except (BadInputError, UnsupportedError) as exc:
                refused.append(exc)
                if isinstance(stmt.this, exp.Schema):
                    skipped.add(stmt.this.this.name.casefold())
                elif isinstance(stmt.this, exp.Table):  # a view: its refusal covers the query's use of it
                    skipped.add(stmt.this.name.casefold())
                continue
            if table.name.casefold() in {t.casefold() for t in tables}:
                refused.append(source.error(stmt, f"table {short_repr(table.name)} is declared twice"))
                continue
            tables[table.name] = table
        elif isinstance(stmt, exp.Set):
            try:
                job += read_set(stmt, source)
            except (BadInputError, UnsupportedError) as exc:
                refused.append(exc)
        elif isinstance(stmt, exp.Insert) and isinstance(stmt.expression, exp.Select):
            inserts.append(stmt)
            selects.append(stmt.expression)
        elif isinstance(stmt, exp.Select):
            selects.append(stmt)
        else:
            refused.append(source.unsupported(stmt, "only SET, CREATE TABLE, CREATE VIEW statements and one SELECT "
                                              "(or INSERT INTO ... SELECT) are supported"))
    if not selects:
        raise one_error(refused + [source.error_at(len(text.rstrip()), "expected one SELECT after the CREATE TABLE "
                                                                      "statements, found none")], path)
    if len(selects) > 1:
        raise one_error(refused + [source.unsupported(selects[1], f"converge checks one SELECT a file, found "
                                                                  f"{len(selects)} (this is the second)")], path)
    if views:
        try:
            inline_views(selects[0], views, source)
        except UnsupportedError as exc:
            raise one_error(refused + [exc], path) from None
    mapper = _Mapper(tables, source, skipped)
    mapped = mapper.select(selects[0])
    denied = refusals(selects[0], source)  # deny by default: a node the translation does not map is refused
    taken = {at(r) for r in denied}  # where both refuse one clause, the allow-list's reason is the one shown
    refused += sorted(denied + [r for r in mapper.refused if at(r) not in taken], key=position)
    if refused or mapped is None:
        raise one_error(refused or [BadInputError(f"{path}: the query could not be mapped")], path)
    try:
        if inserts:
            target = insert_target(inserts[0])[0]
            if target.casefold() not in sinks:
                raise source.error(inserts[0].this, f"sink table {short_repr(target)} is not declared")
            job += sink_settings(inserts[0], sinks[target.casefold()], [(o.alias, o.column) for o in mapped.output],
                                 source)
        check_consistent(job, source)
    except (BadInputError, UnsupportedError) as exc:
        raise one_error([exc], path) from None
    return replace(mapped, job=tuple(job))


class _Skipped(Exception):
    """A table whose CREATE TABLE was refused (and reported): clauses that use it are not mapped."""


_P = ParamSpec("_P")


class _Mapper:
    def __init__(self, tables: dict[str, SourceTable], text: SourceText, skipped: set[str] | None = None) -> None:
        self.tables = tables
        self.text = text
        self.skipped = skipped or set()
        self.refused: list[Refusal] = []
        self.aliases: list[tuple[str, str]] = []
        self.types: list[str] = []
        self.conditions: list[str] = []
        self.interval: IntervalSpec | None = None
        self.positions: list[tuple[str, str]] = []
        self.derived: dict[str, DerivedInput] = {}
        self.notes: list[str] = []
        self.nested_subquery = False  # a subquery under OR / NOT was refused (it joins, through an aggregate)

    # ------------------------------------------------------------ FROM / JOIN

    def _table(self, node: exp.Expr) -> tuple[str, str]:
        if isinstance(node, exp.Subquery):
            return self._derived(node)
        if not isinstance(node, exp.Table) or node.args.get("db") or isinstance(node.this, exp.Func):
            raise self.text.unsupported(node, "only a declared table (optionally with an alias) can be joined here; "
                                              "subqueries and views are not supported")
        table = next((t for t in self.tables if t.casefold() == node.name.casefold()), None)
        if table is None and node.name.casefold() in self.skipped:
            raise _Skipped(node.name)
        if table is None and stray_keyword(node):
            raise self.text.error(node, f"{node.name} is read as a table name here: is there a stray comma before "
                                        f"it? (`FROM a, {node.name.upper()} JOIN b` puts a comma between a table and "
                                        f"its JOIN)")
        if table is None:
            raise self.text.error(node, f"table {node.name!r} is not declared{did_you_mean(node.name, self.tables)} "
                                        f"(declared: {', '.join(self.tables)})")
        alias = node.alias_or_name
        if not alias.isidentifier():  # valid Flink (a quoted name); the scenario names inputs with identifiers
            raise self.text.unsupported(node, f"alias {alias!r} is not an identifier: converge names inputs with "
                                              f"identifiers only (letters, digits, _); rename it")
        for a, _ in self.aliases:
            if a.casefold() == alias.casefold():
                raise self.text.error(node, f"alias {alias!r} is used twice")
        if self.tables[table].computed:  # computed columns: a Calc in front of the join, as a view's
            self.derived[alias] = computed_input(alias, self.tables[table], self.tables, self.text)
        self.positions.append((f"inputs[{len(self.aliases)}]", self.text.where(node)))
        return alias, table

    def _derived(self, node: exp.Subquery) -> tuple[str, str]:
        """A derived table (or an inlined view) over one declared table: the input and its Calc."""
        body = node.this.args.get("from_") if isinstance(node.this, exp.Select) else None
        named = body.this if body is not None else None
        if isinstance(named, exp.Table) and named.name.casefold() in self.skipped \
                and all(t.casefold() != named.name.casefold() for t in self.tables):
            raise _Skipped(named.name)  # its CREATE TABLE was refused: that refusal covers this use too
        derived = derived_input(node, self.tables, self.text)
        for a, _ in self.aliases:
            if a.casefold() == derived.alias.casefold():
                raise self.text.error(node, f"alias {derived.alias!r} is used twice")
        self.derived[derived.alias] = derived
        self.positions.append((f"inputs[{len(self.aliases)}]", self.text.where(node)))
        return derived.alias, derived.table

    def _scope(self, aliases: Sequence[str]) -> Scope:
        known = dict(self.aliases)
        proctime = {a: p for a in aliases
                    if (p := self.derived[a].proctime if a in self.derived else self.tables[known[a]].proctime)}
        renames = {a: r for a in aliases if a not in self.derived and (r := self.tables[known[a]].renamed)}
        return Scope({a: self.derived[a].columns if a in self.derived else self.tables[known[a]].columns
                      for a in aliases}, self.text, proctime, renames)

    def table_time(self, alias: str) -> str | None:
        """The time attribute of the table `alias` names (None: it has none)."""
        return self.tables[dict(self.aliases)[alias]].time_column

    def _attempt(self, step: Callable[_P, object], *args: _P.args, **kwargs: _P.kwargs) -> bool:
        """Run one clause's mapping, step(*args, **kwargs); a refusal is recorded (the next clause is still
        mapped)."""
        try:
            step(*args, **kwargs)
        except _Skipped:
            return False
        except (BadInputError, UnsupportedError) as exc:
            self.refused.append(exc)
            return False
        return True

    def _keep_in_step(self, jtype: str) -> None:
        """After a refused step whose input was already named: a placeholder, so later clauses still resolve."""
        while len(self.types) < len(self.aliases) - 1:
            self.types.append(jtype)
            self.conditions.append("TRUE")

    def select(self, node: exp.Select) -> MappedQuery | None:
        """The mapped query, or None when a clause was refused (`self.refused` says which, all of them)."""
        for key in ("group", "having", "order", "limit", "distinct", "with_", "qualify", "windows"):
            if node.args.get(key):
                self.refused.append(self.text.unsupported(
                    node.args[key] if isinstance(node.args[key], exp.Expr) else node,
                    f"{key.rstrip('_').upper()} is not supported: converge checks joins"))
        from_ = node.args.get("from_")
        if from_ is None:
            self.refused.append(self.text.unsupported(node, "the SELECT has no FROM: converge checks joins"))
            return None
        name_derived(node)
        node = self._comma_joins(node)
        from_ = node.args["from_"]
        if not self._attempt(lambda: self.aliases.append(self._table(from_.this))):
            return None
        for join in node.args.get("joins") or ():
            named = len(self.aliases)
            if not self._attempt(self._join, join):
                if len(self.aliases) == named:
                    return None  # the joined table itself is refused: nothing after it can be resolved
                self._keep_in_step("inner")
        where = node.args.get("where")
        filters: list[exp.Expr] = []

        def step_or_filter(conj: exp.Expr) -> None:
            """A conjunct of WHERE is a SEMI/ANTI step (a subquery) or else a filter on the output."""
            if not self._subquery_step(conj):
                filters.append(conj)

        for conj in conjuncts(where.this) if where is not None else []:
            if not self._attempt(step_or_filter, conj):
                self._keep_in_step("semi")
        output_aliases = [self.aliases[0][0]] + [a for (a, _), t in zip(self.aliases[1:], self.types, strict=False)
                                                 if t not in ("semi", "anti")]
        renderer = Renderer(self._scope(output_aliases))
        rendered: list[str] = []
        for f in filters:
            self._attempt(lambda f: rendered.append(renderer.boolean(f)), f)
        where_sql = " AND ".join(rendered) if rendered else None
        if len(self.aliases) < 2 and not self.nested_subquery:
            self.refused.append(self.text.unsupported(node, "the query joins nothing: converge checks joins of two or "
                                                      "more inputs"))
        output = self._projection(node, output_aliases)
        if self.refused:
            return None
        try:
            join = JoinSpec(tuple(a for a, _ in self.aliases), tuple(self.types), tuple(self.conditions),
                            self.interval)
        except BadInputError as exc:
            self.refused.append(self.text.error(node, str(exc)))
            return None
        return MappedQuery(self.text.path, dict(self.tables), tuple(self.aliases), join, output, where_sql,
                           text=self.text.text, positions=tuple(self.positions), derived=tuple(self.derived.items()),
                           notes=tuple(self.notes))

    def _comma_joins(self, node: exp.Select) -> exp.Select:
        """The SELECT with its comma joins given the WHERE conjuncts Flink pushes into them (where_joins)."""
        wrong = comma_scope_problem(node)
        if wrong is not None:
            self.refused.append(self.text.error(wrong, f"{wrong.text('table')!r} is not visible in this ON: a comma "
                                                       f"binds looser than JOIN, so the ON names only the tables "
                                                       f"joined since the last comma (move the condition to WHERE)"))
        tables = [node.args["from_"].this] + [j.this for j in node.args.get("joins") or ()]
        columns: dict[str, set[str]] = {}
        forwarded: dict[str, str] = {}  # a derived table's processing-time attribute, passed on unchanged
        for t in tables:
            declared = next((d for d in self.tables if isinstance(t, exp.Table) and d.casefold() == t.name.casefold()),
                            None)
            if declared is not None:
                columns[t.alias_or_name.casefold()] = {c.casefold() for c, _ in self.tables[declared].columns} | \
                    {n.casefold() for n, _, _ in self.tables[declared].renamed}
            elif isinstance(t, exp.Subquery) and t.alias_or_name:  # a derived table: the columns its SELECT makes
                try:
                    derived = derived_input(t, self.tables, self.text)
                except (BadInputError, UnsupportedError):
                    continue  # refused where it is mapped
                columns[t.alias_or_name.casefold()] = {c.casefold() for c, _ in derived.columns}
                if derived.proctime:
                    forwarded[t.alias_or_name.casefold()] = derived.proctime.casefold()
        if len(columns) != len(tables):  # an undeclared or unreadable table: refused where it is mapped
            return node
        out, notes = attach_where(node, columns, self.text)
        times = {t.alias_or_name.casefold(): time.casefold() for t in tables if isinstance(t, exp.Table)
                 for d in self.tables if d.casefold() == t.name.casefold()
                 and (time := self.tables[d].time_attribute or self.tables[d].proctime)} | forwarded
        out, moved = push_time_bounds(out, times, self.text)
        self.notes += notes + moved
        return out

    def _join(self, join: exp.Join) -> None:
        alias, table = self._table(join.this)
        self.aliases.append((alias, table))
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if kind not in ("", "INNER", "OUTER") or side not in _SIDES or join.args.get("using"):
            raise self.text.unsupported(join, "only [INNER] / LEFT / RIGHT / FULL [OUTER] JOIN ... ON ... are "
                                              "supported")
        on = join.args.get("on")
        if on is None:
            raise self.text.unsupported(join, "a join needs a condition: an ON, or for a comma join a WHERE "
                                              "conjunct naming both sides (a CROSS JOIN is not supported)")
        parts = conjuncts(on)
        if len(self.aliases) == 2:
            parts = self._interval_bounds(parts, join)
        elif any(self._times().is_bound(c) for c in parts):
            raise self.text.unsupported(on, "an interval join inside a chain of more than two inputs: converge models "
                                            "binary interval joins only")
        if self.interval is not None and len(self.aliases) > 2:
            raise self.text.unsupported(join, "an interval join inside a chain of more than two inputs: converge "
                                              "models binary interval joins only")
        renderer = Renderer(self._scope([a for a, _ in self.aliases]))
        self.types.append(_SIDES[side])
        self.positions.append((f"join.conditions[{len(self.conditions)}]", self.text.where(on)))
        self.conditions.append(" AND ".join(renderer.boolean(c) for c in parts) if parts else "TRUE")

    def _times(self) -> TimeAttributes:
        """The inputs so far and their time attributes, to find an interval join's window (time_bounds.py)."""
        return TimeAttributes(self._scope([a for a, _ in self.aliases]), self.table_time, self.text)

    def _interval_bounds(self, conjuncts: list[exp.Expr], join: exp.Join) -> list[exp.Expr]:
        """Take the time-bound conjuncts out of a binary join's ON; the window they make turns it into an interval
        join (time_bounds.py)."""
        left, right = (a for a, _ in self.aliases)
        window, rest = self._times().window(conjuncts, left, right, join.args["on"])
        if window is None:
            return conjuncts
        (lower, upper), time = window
        if time == "processing":  # each row's time is its arrival (Flink's ProcTimeIntervalJoin)
            self.interval = IntervalSpec(None, None, lower, upper, "processing", 0)
        else:
            lt, rt = self.tables[self.aliases[0][1]].time_column, self.tables[self.aliases[1][1]].time_column
            self.interval = IntervalSpec(f"{left}.{lt}", f"{right}.{rt}", lower, upper, "event", 0)
        return rest

    # ------------------------------------------------------------ WHERE: EXISTS / NOT EXISTS / IN

    def _subquery_step(self, conj: exp.Expr) -> bool:
        negated = isinstance(conj, exp.Not)
        inner = conj.this if negated else conj
        if isinstance(inner, exp.In) and inner.args.get("query") is not None:
            # NOT IN (SELECT ...) (also written NOT x IN (...)): FlinkSubQueryRemoveRule's null-aware ANTI join
            sub = inner.args["query"].this
            return self._semi_anti(sub, "anti" if negated else "semi", conj, in_value=inner.this)
        if isinstance(inner, exp.Exists):
            return self._semi_anti(inner.this, "anti" if negated else "semi", conj)
        nested = next((n for n in conj.walk() if isinstance(n, (exp.Exists, exp.In, exp.Subquery, exp.Select))
                       and (not isinstance(n, exp.In) or n.args.get("query") is not None)), None)
        if nested is not None:
            self.nested_subquery = True  # the query joins through it: "joins nothing" would be wrong
            raise self.text.unsupported(nested, "a subquery under OR or NOT: Flink's FlinkSubQueryRemoveRule turns a "
                                                "subquery into a SEMI/ANTI join only as a top-level [NOT] EXISTS / "
                                                "[NOT] IN conjunct of the WHERE clause; Calcite's SubQueryRemoveRule "
                                                "plans this one as a LEFT join with an aggregate of the subquery "
                                                "(DISTINCT or COUNT), an aggregation converge does not model")
        return False

    def _semi_anti(self, sub: exp.Expr, jtype: str, conj: exp.Expr, in_value: exp.Expr | None = None) -> bool:
        if self.interval is not None:
            raise self.text.unsupported(conj, "EXISTS / IN after an interval join is not supported")
        if not isinstance(sub, exp.Select) or sub.args.get("joins") or sub.args.get("group") \
                or sub.args.get("from_") is None:
            raise self.text.unsupported(sub, "converge reads a subquery of the form SELECT ... FROM one table "
                                             "[WHERE ...]")
        outer = [a for (a, _), t in zip(self.aliases, ["inner"] + self.types, strict=False) if t not in ("semi", "anti")]
        unshadow(sub, {a.casefold() for a, _ in self.aliases})
        alias, table = self._table(sub.args["from_"].this)
        self.aliases.append((alias, table))
        inner = {c.casefold() for c, _ in (self.derived[alias] if alias in self.derived else self.tables[table]).columns}
        for col in sub.find_all(exp.Column):  # SQL resolves a subquery's bare names in its own table first
            if not col.table and not isinstance(col.this, exp.Star) and col.name.casefold() in inner:
                col.set("table", exp.to_identifier(alias))
        renderer = Renderer(self._scope(outer + [alias]))
        parts = [] if in_value is None else self._in_conditions(in_value, sub, outer, renderer, null_aware=jtype == "anti")
        sub_where = sub.args.get("where")
        parts += [renderer.boolean(c) for c in (conjuncts(sub_where.this) if sub_where is not None else [])]
        self.types.append(jtype)
        self.positions.append((f"join.conditions[{len(self.conditions)}]", self.text.where(conj)))
        self.conditions.append(" AND ".join(parts) if parts else "TRUE")
        return True

    def _in_conditions(self, value: exp.Expr, sub: exp.Select, outer: list[str], renderer: Renderer, *,
                       null_aware: bool) -> list[str]:
        """The join conditions of `value [NOT] IN (SELECT ...)`, as FlinkSubQueryRemoveRule writes them: one
        `v = c` per operand (a row `(a, b)` has one per column); NOT IN's anti join is null-aware, each
        `v = c OR (v = c) IS NULL`, so a NULL on either side is a match and drops the left row, unless the
        subquery is empty (SQL: a row survives iff `v <> c` is TRUE for every row of the subquery)."""
        operands = value.expressions if isinstance(value, exp.Tuple) else [value]
        cols = [c.unalias() for c in sub.expressions]
        if any(isinstance(c, exp.Star) or (isinstance(c, exp.Column) and isinstance(c.this, exp.Star))
               for c in cols) or len(cols) != len(operands):
            raise self.text.error(sub, f"{'NOT ' if null_aware else ''}IN (SELECT ...) must select as many columns "
                                       f"as it is compared with ({len(operands)})")
        scope = self._scope(outer)
        parts = []
        for operand, col in zip(operands, cols, strict=True):
            operand = operand.copy()
            for ref in operand.find_all(exp.Column):  # the value is the outer query's: its bare names are too
                if not ref.table and not isinstance(ref.this, exp.Star):
                    ref.set("table", exp.to_identifier(scope.resolve(ref)[0]))
            equal = exp.EQ(this=operand, expression=col.copy())
            match: exp.Expr = equal if not null_aware else \
                exp.Or(this=exp.Paren(this=equal), expression=exp.Is(this=exp.Paren(this=equal.copy()),
                                                                      expression=exp.Null()))
            parts.append(renderer.boolean(match))
        return parts

    # ------------------------------------------------------------ SELECT list

    def _projection(self, node: exp.Select, aliases: list[str]) -> tuple[OutputColumn, ...]:
        scope = self._scope(aliases)
        out: list[OutputColumn] = []
        for item in node.expressions:
            self._attempt(lambda item: out.extend(self._output_item(item, scope, aliases)), item)
        seen: set[str] = set()
        for i, o in enumerate(out):  # Calcite names a repeated column k0, k1, ... as Flink prints them
            name, n = o.name, 0
            while name.casefold() in seen:
                name, n = f"{o.name}{n}", n + 1
            seen.add(name.casefold())
            if name != o.name:
                out[i] = OutputColumn(name, o.alias, o.column, o.type)
        return tuple(out)

    def _output_item(self, item: exp.Expr, scope: Scope, aliases: list[str]) -> list[OutputColumn]:
        """The output columns of one item of the SELECT list."""
        target = item.unalias() if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star) or (isinstance(target, exp.Column) and isinstance(target.this, exp.Star)):
            pick = [target.table] if isinstance(target, exp.Column) and target.table else aliases
            out = []
            for a in pick:
                real = Scope._pick(a, aliases)
                if real is None:
                    raise self.text.error(item, f"unknown alias {a!r}")
                proctime = self.derived[real].proctime if real in self.derived \
                    else self.tables[dict(self.aliases)[real]].proctime
                if proctime:
                    raise self.text.unsupported(item, f"{real}'s columns include its processing-time attribute "
                                                      f"{proctime!r} (the wall "
                                                      f"clock at each row's arrival), which converge does not hold; "
                                                      f"list the other columns")
                table = self.tables[dict(self.aliases)[real]]
                if real not in self.derived and table.renamed:  # every column as declared, a rename as its column
                    named = {n: (c, t) for n, c, t in table.renamed} | {c: (c, t) for c, t in table.columns}
                    out += [OutputColumn(n, real, *named[n]) for n in table.declared]
                    continue
                columns = self.derived[real].columns if real in self.derived else table.columns
                out += [OutputColumn(c, real, c, t) for c, t in columns]
            return out
        if not isinstance(target, exp.Column):
            raise self.text.unsupported(item, "the SELECT list may hold columns, `*` and `alias.*` only (converge "
                                              "checks the join; compute expressions downstream)")
        a, c, t = scope.resolve(target)
        return [OutputColumn(item.alias_or_name, a, c, t)]
