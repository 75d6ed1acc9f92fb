"""CREATE TABLE statements: columns and types, primary key, watermark, and the changelog mode of the source.

The changelog mode follows the connector and format options, as Flink's
planner derives it: `upsert-kafka` produces an upsert stream (+I/+U/-D keyed
by the primary key); a CDC format (`debezium-json`, `canal-json`,
`maxwell-json`, `ogg-json`, ...) or a CDC connector (`mysql-cdc`, ...)
produces every row kind (retract); the `values` test connector says its own
`changelog-mode`; any other connector with a plain format (kafka with json,
filesystem, datagen) is append-only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql.calc_expressions import CalcRenderer
from converge.engine.model.flinksql.expressions import COMPUTED_KINDS, Scope, interval_ms
from converge.engine.model.flinksql.positions import SourceText
from converge.engine.model.flinksql.renames import read_renames
from converge.engine.model.flinksql.text_times import TEXT_TIME_FORMS, computed_time
from converge.engine.model.flinksql.types import FlinkType, flink_type, is_structured
from converge.engine.model.scenario import ChangelogMode, InputSpec, short_repr

CDC_FORMATS = frozenset({"debezium-json", "canal-json", "maxwell-json", "ogg-json", "debezium-avro-confluent",
                         "debezium-protobuf"})
CDC_CONNECTORS = frozenset({"mysql-cdc", "postgres-cdc", "oracle-cdc", "sqlserver-cdc", "mongodb-cdc",
                            "tidb-cdc", "db2-cdc", "oceanbase-cdc"})
APPEND_CONNECTORS = frozenset({"kafka", "filesystem", "datagen", "kinesis", "pulsar", "socket"})


@dataclass(frozen=True)
class SourceTable:
    """One declared table, as the join sees it."""

    name: str
    columns: tuple[tuple[str, FlinkType], ...]
    primary_key: tuple[str, ...] | None
    changelog_mode: ChangelogMode
    connector: str
    time_column: str | None = None          # the rowtime attribute (WATERMARK FOR ...)
    watermark_delay_ms: int | None = None   # WATERMARK FOR t AS t - INTERVAL ...
    # computed columns (`c AS a + 1`), name -> expression over the physical columns, and every column's name in
    # declared order; `columns` holds the physical ones (the rows a source produces); the join sees them all
    computed: tuple[tuple[str, exp.Expr], ...] = ()
    declared: tuple[str, ...] = ()
    # `p AS PROCTIME()`: a processing-time attribute, no value of the row (the wall clock at its arrival); the
    # join reads it only as an interval join's time (flinksql/time_bounds.py)
    proctime: str | None = None
    # computed columns that only name a physical column's held value (flinksql/renames.py): (name, physical,
    # type), read without a Calc; `time_attribute` is the rowtime's declared name where it is one of them
    renamed: tuple[tuple[str, str, FlinkType], ...] = ()
    time_attribute: str | None = None

    def input_spec(self, name: str) -> InputSpec:
        """The model input for this table under the name (alias) the query gives it."""
        physical = self.time_column in {c for c, _ in self.columns}  # else computed: the projection's column
        return InputSpec(name, tuple((c, t.model) for c, t in self.columns), self.primary_key,
                         self.changelog_mode, self.time_column if physical else None)

    def type_of(self, column: str) -> FlinkType:
        return dict(self.columns)[column]


def _options(node: exp.Create, text: SourceText) -> dict[str, str]:
    props = node.args.get("properties")
    out: dict[str, str] = {}
    for prop in props.expressions if props is not None else ():
        if isinstance(prop, exp.TemporaryProperty):  # CREATE TEMPORARY TABLE: the session's, the same source
            continue
        if not isinstance(prop, exp.Property) or not isinstance(prop.this, exp.Literal) \
                or not isinstance(prop.args.get("value"), exp.Literal):
            raise text.error(prop, "table options must be 'key' = 'value' pairs")
        out[prop.this.name.lower()] = prop.args["value"].name
    return out


def changelog_mode(options: dict[str, str], has_key: bool, node: exp.Expr, text: SourceText) -> ChangelogMode:
    connector = options.get("connector")
    if connector is None:
        raise text.error(node, "WITH ('connector' = ...) is missing: converge reads the changelog mode of a "
                               "source from its connector and format")
    fmt = options.get("value.format", options.get("format", "")).lower()
    if connector == "upsert-kafka":
        if not has_key:
            raise text.error(node, "an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED")
        return "upsert"
    if connector in CDC_CONNECTORS or fmt in CDC_FORMATS:
        return "retract"
    if connector == "values":
        kinds = {k.strip().upper() for k in options.get("changelog-mode", "I").split(",")}
        if "UB" in kinds:
            return "retract"
        if "UA" in kinds or "D" in kinds:
            if not has_key:
                raise text.error(node, "a values table with changelog-mode without UB is an upsert source and "
                                       "needs a PRIMARY KEY")
            return "upsert"
        return "insert_only"
    if connector in APPEND_CONNECTORS:
        return "insert_only"
    raise text.unsupported(node, f"connector {connector!r} is not one converge knows the changelog mode of (known: "
                                 f"upsert-kafka, values, {', '.join(sorted(CDC_CONNECTORS | APPEND_CONNECTORS))}; "
                                 f"CDC formats: {', '.join(sorted(CDC_FORMATS))})")


def read_table(node: exp.Create, text: SourceText) -> SourceTable:
    """A CREATE TABLE as a SourceTable; anything outside the subset is refused with its position."""
    schema = node.this
    if node.kind != "TABLE" or not isinstance(schema, exp.Schema):
        raise text.unsupported(node, "only CREATE TABLE name (columns ...) WITH (...) is supported")
    name = schema.this.name
    columns: list[tuple[str, FlinkType]] = []
    computed: list[tuple[str, exp.ColumnDef]] = []
    declared: list[str] = []
    proctime: str | None = None
    key: tuple[str, ...] | None = None
    watermark: exp.WatermarkColumnConstraint | None = None
    for item in schema.expressions:
        if isinstance(item, exp.Constraint) and len(item.expressions) == 1 \
                and isinstance(item.expressions[0], exp.PrimaryKey):  # CONSTRAINT name PRIMARY KEY (...)
            item = item.expressions[0]
        if isinstance(item, exp.ColumnDef):
            kinds = [c.args.get("kind") for c in item.args.get("constraints") or ()]
            if item.args.get("kind") is None and len(kinds) == 1 and isinstance(kinds[0], exp.ComputedColumnConstraint):
                if any(c.casefold() == item.name.casefold() for c in declared + [proctime or ""]):
                    raise text.error(item, f"column {short_repr(item.name)} is declared twice")
                if is_proctime(kinds[0].this):
                    if proctime is not None:
                        raise text.unsupported(item, f"a second processing-time attribute ({proctime!r} is one): "
                                                     f"converge reads one a table")
                    proctime = item.name
                    continue
                computed.append((item.name, item))
                declared.append(item.name)
                continue
            others = [k for k in kinds if not isinstance(k, (exp.NotNullColumnConstraint, exp.PrimaryKeyColumnConstraint,
                                                             exp.CommentColumnConstraint))]  # a COMMENT means nothing
            if any(isinstance(k, exp.Tags) for k in others):  # METADATA (flinksql/dialect.py), named at the column
                raise text.unsupported(item.this, f"{item.name!r} is a metadata column (METADATA [FROM ...] "
                                                  f"[VIRTUAL]): converge does not model a connector's metadata; "
                                                  f"declare it as a physical column")
            if others or item.args.get("kind") is None:
                raise text.unsupported(item, "metadata columns (and a computed column with other constraints) are "
                                             "not supported; declare physical columns or `name AS expression`")
            not_null = any(isinstance(k, exp.NotNullColumnConstraint) and not k.args.get("allow_null") for k in kinds)
            try:
                ftype = flink_type(item.args["kind"], nullable=not not_null, written=_written_type(item, text))
            except UnsupportedError as exc:  # a structured type is named at the column (sqlglot spells ROW as STRUCT)
                raise text.unsupported(item.this if is_structured(item.args["kind"]) else item, str(exc)) from None
            except BadInputError as exc:
                raise text.error(item, str(exc)) from None
            twin = next((c for c, _ in columns if c.casefold() == item.name.casefold()), None)
            if twin is not None:
                raise text.error(item, f"column {short_repr(item.name)} is declared twice" if twin == item.name else
                                 f"columns {short_repr(twin)} and {short_repr(item.name)} differ only in case; Flink "
                                 f"SQL identifiers are case-insensitive")
            twin = next((c for c in declared if c.casefold() == item.name.casefold()), None)
            if twin is not None or (proctime or "").casefold() == item.name.casefold():
                raise text.error(item, f"column {short_repr(item.name)} is declared twice")
            columns.append((item.name, ftype))
            declared.append(item.name)
            if any(isinstance(k, exp.PrimaryKeyColumnConstraint) for k in kinds):
                key = (item.name,)
        elif isinstance(item, exp.PrimaryKey):
            if not any("NOT ENFORCED" in (o if isinstance(o, str) else o.sql()).upper() for o in item.args.get("options") or ()):
                raise text.error(item, "Flink requires PRIMARY KEY (...) NOT ENFORCED")
            key = tuple(i.name for i in item.expressions)
        elif isinstance(item, exp.WatermarkColumnConstraint):
            watermark = item
        else:
            raise text.unsupported(item, "only columns, PRIMARY KEY (...) NOT ENFORCED and WATERMARK FOR are "
                                         "supported in a table's schema")
    names = [c for c, _ in columns]
    if key is not None:
        for k in key:
            if k in {c for c, _ in computed}:
                raise text.error(schema, f"primary key column {k!r} is a computed column; Flink declares a PRIMARY "
                                         f"KEY on physical columns")
            if k not in names:
                raise text.error(schema, f"primary key column {k!r} is not a column of {name!r}")
        # Flink makes primary key columns NOT NULL
        columns = [(c, FlinkType(t.name, t.kind, t.model, t.scale, False) if c in key else t) for c, t in columns]
    renamed = read_renames([(c, d.args["constraints"][0].args["kind"].this) for c, d in computed], dict(columns)) \
        if computed else None
    time_column, delay, time_attribute = None, None, None
    if watermark is not None and renamed and isinstance(watermark.this, exp.Column) \
            and watermark.this.name in {r[0] for r in renamed}:
        named = {r[0]: r for r in renamed}
        time_attribute, delay = _watermark(watermark, [*names, *named], {**dict(columns), **{r[0]: r[2] for r in renamed}},
                                           text)
        time_column = named[time_attribute][1]  # the rowtime is the physical column's held value
    elif watermark is not None:
        if isinstance(watermark.this, exp.Column) and watermark.this.name == proctime:
            raise text.error(watermark, f"{proctime!r} is a processing-time attribute (PROCTIME()): Flink declares a "
                                        f"WATERMARK on an event-time column only")
        if isinstance(watermark.this, exp.Column) and watermark.this.name in dict(computed):
            rowtime, time_type = _computed_rowtime(watermark.this.name, computed, dict(columns), watermark, text)
            time_column, delay = _watermark(watermark, [*names, rowtime], {**dict(columns), rowtime: time_type},
                                            text)
        else:
            time_column, delay = _watermark(watermark, names, dict(columns), text)
    mode = changelog_mode(_options(node, text), key is not None, node, text)
    table = SourceTable(name, tuple(columns), key, mode, (_options(node, text) or {}).get("connector", ""),
                        time_column, delay,
                        () if renamed else tuple((c, d.args["constraints"][0].args["kind"].this if c == time_column
                                                  else _computed(d, tuple(columns), text)) for c, d in computed),
                        tuple(declared) if computed else (), proctime, renamed or (), time_attribute or time_column)
    _check_model(table, [i for i in schema.expressions if isinstance(i, exp.ColumnDef) and i.args.get("kind")],
                 schema, text)
    return table


def _computed_rowtime(name: str, computed: list[tuple[str, exp.ColumnDef]], physical: dict[str, FlinkType],
               node: exp.Expr, text: SourceText) -> tuple[str, FlinkType]:
    """The computed rowtime `name` and its type when converge computes it (flinksql/text_times.py); unsupported
    else."""
    column = dict(computed)[name]
    expr = column.args["constraints"][0].args["kind"].this
    found = computed_time(expr, physical)
    if found is None:
        raise text.unsupported(node, f"the rowtime attribute {name!r} is computed as `{expr.sql()}`: converge "
                                     f"computes a rowtime parsed from a STRING column s or from seconds n "
                                     f"({', '.join(TEXT_TIME_FORMS)}) "
                                     f"or one that names a column's value (TO_TIMESTAMP_LTZ(millis, 3)); declare "
                                     f"another as a physical TIMESTAMP(3) column")
    return column.name, found[2]


def is_proctime(expr: exp.Expr) -> bool:
    """`PROCTIME()`: Flink's processing-time attribute."""
    return isinstance(expr, exp.Anonymous) and str(expr.this).upper() == "PROCTIME" and not expr.expressions


def _written_type(item: exp.ColumnDef, text: SourceText) -> str | None:
    """A column's type as the file spells it (`ROW<id INT, region STRING>`, where sqlglot says STRUCT): the text
    after the column's name up to the `,` or `)` that ends the column, without its NOT NULL / PRIMARY KEY."""
    start = item.this.meta.get("end") if isinstance(item.this, exp.Identifier) else None
    if start is None:
        return None
    depth, end = 0, start + 1
    while end < len(text.text):
        char = text.text[end]
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        if depth < 0 or (depth == 0 and char == ","):
            break
        end += 1
    spelled = " ".join(text.text[start + 1:end].replace("`", " ").split())
    return _CONSTRAINTS.sub("", spelled) or None


_CONSTRAINTS = re.compile(r"\s+(NOT\s+NULL|NULL|PRIMARY\s+KEY|COMMENT)\b.*$", re.IGNORECASE | re.DOTALL)


def _computed(item: exp.ColumnDef, physical: tuple[tuple[str, FlinkType], ...], text: SourceText) -> exp.Expr:
    """The expression of a computed column, refused (naming the column) unless converge can compute it: an INT,
    BIGINT, DOUBLE or BOOLEAN value in the expression subset (engine/model/flinksql/expressions.py) over the
    table's physical columns (Flink computes it in the scan's projection, a Calc in front of the join)."""
    expr = item.args["constraints"][0].args["kind"].this
    try:
        typed = CalcRenderer(Scope({"t": physical}, text)).render(expr)
    except (BadInputError, UnsupportedError) as exc:
        reason = f"computed column {item.name!r} = `{expr.sql()}`: {getattr(exc, 'reason', None) or exc}"
        raise (text.error if isinstance(exc, BadInputError) else text.unsupported)(item, reason) from None
    if typed.kind not in COMPUTED_KINDS:
        raise text.unsupported(item, f"computed column {item.name!r} is a {typed.kind.upper()} value: converge "
                                     f"computes INT, BIGINT, DOUBLE and BOOLEAN columns")
    return expr


def _check_model(table: SourceTable, defs: list[exp.ColumnDef], schema: exp.Schema, text: SourceText) -> None:
    """The model's own checks of the table as an input, refused here at the column they name (the model names
    a key path such as columns[1][0], which means nothing in a SQL file)."""
    try:
        table.input_spec("t")  # the input's name is the query's alias, checked where the query names it
    except BadInputError as exc:
        at = re.match(r"columns\[(\d+)\]", exc.path or "")
        column = int(at.group(1)) if at and int(at.group(1)) < len(defs) else None
        node = defs[column] if column is not None else schema
        what = f"column {short_repr(table.columns[column][0])}" if column is not None else \
            f"table {short_repr(table.name)}"
        raise text.error(node, f"{what}: {exc.detail}") from None


def _watermark(node: exp.WatermarkColumnConstraint, names: list[str], types: dict[str, FlinkType],
               text: SourceText) -> tuple[str, int]:
    """(rowtime column, delay ms) of `WATERMARK FOR t AS t [- INTERVAL ...]`."""
    column = node.this.name if isinstance(node.this, exp.Column) else None
    if column not in names:
        raise text.error(node, f"the watermark's column {column!r} is not a column of the table")
    if types[column].kind != "timestamp":
        raise text.error(node, f"the rowtime attribute {column!r} must be a TIMESTAMP(3) or TIMESTAMP_LTZ(3)")
    expr = node.expression
    if isinstance(expr, exp.Column) and expr.name == column:
        return column, 0
    if isinstance(expr, exp.Sub) and isinstance(expr.this, exp.Column) and expr.this.name == column \
            and isinstance(expr.expression, exp.Interval):
        return column, interval_ms(expr.expression, text)
    raise text.unsupported(node, "converge reads a watermark `col` or `col - INTERVAL 'n' unit` (bounded "
                                 "out-of-orderness) only")
