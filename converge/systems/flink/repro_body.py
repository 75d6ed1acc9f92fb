"""The fixed part of a generated Flink repro (`converge repro --system flink`): the code after the data block.

Kept as text, not imported: the generated program must need PyFlink alone. The paced arrival is the adapter's
(program/arrival.py, program/session.py `_paced_streams`), re-stated in plain PyFlink without case ids: one
checkpoint-gated source (Flink's DataGeneratorSource with RateLimiterStrategy.perCheckpoint) emits one round per
checkpoint, so the join has processed a round before the next exists; a mini-batch round is one bundle.
"""

from __future__ import annotations

BODY = '''
KINDS = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}
SIGNS = {RowKind.INSERT: "+I", RowKind.UPDATE_BEFORE: "-U", RowKind.UPDATE_AFTER: "+U", RowKind.DELETE: "-D"}
TYPE_INFOS = {"BIGINT": Types.LONG, "INTEGER": Types.INT, "DOUBLE": Types.DOUBLE, "VARCHAR": Types.STRING,
              "BOOLEAN": Types.BOOLEAN}
DATA_TYPES = {"BIGINT": DataTypes.BIGINT, "INTEGER": DataTypes.INT, "DOUBLE": DataTypes.DOUBLE,
              "VARCHAR": DataTypes.STRING, "BOOLEAN": DataTypes.BOOLEAN}
FILLERS = {"BIGINT": 0, "INTEGER": 0, "DOUBLE": 0.0, "VARCHAR": "", "BOOLEAN": False}
MODES = {"insert_only": ChangelogMode.insert_only, "retract": ChangelogMode.all, "upsert": ChangelogMode.upsert}


def rounds():
    """The events in rounds of ROUND_SIZE, each followed by a filler round. Two rounds lead: under mini-batch one
    lead record per input (its first record, whose mini-batch watermark would otherwise flush a bundle of real
    events at a time that depends on which input the join reads first), else fillers, then fillers."""
    width = max(ROUND_SIZE, len(INPUTS))
    laid = [EVENTS[start:start + ROUND_SIZE] for start in range(0, len(EVENTS), ROUND_SIZE)]
    lead = [(name, "lead", LEAD[name]) for name in LEAD]
    out = [lead + [None] * (width - len(lead)), [None] * width]
    for n, members in enumerate(laid):
        if n:
            out.append([None] * width)
        out.append(list(members) + [None] * (width - len(members)))
    return out


def java_rows(env, rows, type_info):
    """The rows as a Java list of Rows with their row kinds (PyFlink's own from_collection route)."""
    internal = [type_info.to_internal_type(row) for row in rows]
    folder = tempfile.mkdtemp(prefix="repro-")
    path = os.path.join(folder, "rows")
    try:
        with open(path, "wb") as handle:
            env.serializer.serialize(internal, handle)
        objects = get_gateway().jvm.PythonBridgeUtils.readPythonObjects(path)
    finally:
        os.unlink(path)
        os.rmdir(folder)
    j_env = env._j_stream_execution_environment
    fmt = get_gateway().jvm.org.apache.flink.streaming.api.utils.PythonTypeUtils.getCollectionInputFormat(
        objects, type_info.get_java_type_info(), j_env.getConfig())
    field = fmt.getClass().getDeclaredField("dataSet")
    field.setAccessible(True)
    return field.get(fmt)


def paced_source(env, t_env):
    """One table per input, all fed from one checkpoint-gated source in EVENTS order (see the docstring)."""
    jvm = get_gateway().jvm
    names = list(INPUTS)
    types = [t for name in names for _, t in INPUTS[name]["columns"]]
    offsets = {}
    for name in names:
        offsets[name] = sum(len(INPUTS[n]["columns"]) for n in names[:names.index(name)])
    fillers = [FILLERS[t] for t in types]
    laid = rounds()
    rows = []
    for members in laid:
        for slot in members:
            values = list(fillers)
            if slot is None:  # a filler record: tag -1, dropped before the join
                rows.append(Row.of_kind(RowKind.INSERT, -1, False, *values))
                continue
            name, kind, row = slot
            values[offsets[name]:offsets[name] + len(row)] = row
            rows.append(Row.of_kind(KINDS.get(kind, RowKind.INSERT), names.index(name), kind == "lead", *values))
    wide_names = ["tag", "repro_lead"] + [f"c{i}" for i in range(len(types))]
    type_info = Types.ROW_NAMED(wide_names, [Types.INT(), Types.BOOLEAN()] + [TYPE_INFOS[t]() for t in types])
    width = len(laid[0])
    gated = jvm.org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy.perCheckpoint(width)
    env.get_checkpoint_config().set_min_pause_between_checkpoints(int(20 + 0.5 * width))
    function = jvm.org.apache.flink.connector.datagen.functions.FromElementsGeneratorFunction(
        type_info.get_java_type_info(), env._j_stream_execution_environment.getConfig(),
        java_rows(env, rows, type_info))
    source = jvm.org.apache.flink.connector.datagen.source.DataGeneratorSource(
        function, len(rows), gated, type_info.get_java_type_info())
    no_watermarks = jvm.org.apache.flink.api.common.eventtime.WatermarkStrategy.noWatermarks()
    wide = t_env.from_changelog_stream(DataStream(env._j_stream_execution_environment.fromSource(
        source, no_watermarks, "paced arrival")))
    streams = {}
    for tag, name in enumerate(names):
        picked = [col(f"c{offsets[name] + j}").alias(c) for j, (c, _) in enumerate(INPUTS[name]["columns"])]
        if LEAD:
            picked.append(col("repro_lead"))
        streams[name] = t_env.to_changelog_stream(wide.filter(col("tag") == tag).select(*picked))
    return streams


def register_inputs(t_env, streams):
    """Each input as a view of its own name: its changelog mode, primary key and rowtime (ROWTIMES)."""
    for name, spec in INPUTS.items():
        schema = Schema.new_builder()
        for column, ctype in spec["columns"]:
            dtype = DATA_TYPES[ctype]()
            schema.column(column, dtype.not_null() if column in spec["primary_key"] else dtype)
        if LEAD:
            schema.column("repro_lead", DataTypes.BOOLEAN().not_null())
        if name in ROWTIMES:
            column, delay, _ = ROWTIMES[name]
            schema.column_by_expression(f"{name}_rowtime", f"TO_TIMESTAMP_LTZ(`{column}`, 3)")
            schema.watermark(f"{name}_rowtime", f"TO_TIMESTAMP_LTZ(`{column}` - {delay}, 3)")
        if spec["primary_key"]:
            schema.primary_key(*spec["primary_key"])
        table = t_env.from_changelog_stream(streams[name], schema.build(), MODES[spec["mode"]]())
        if not LEAD and name not in ROWTIMES:  # nothing between the input and the join, as in the adapter's job
            t_env.create_temporary_view(name, table)
            continue
        # The lead record passes the mini-batch assigner (placed right after the scan) and stops here, before
        # the join: the input as the query sees it holds only the case's rows. The rowtime is declared on the
        # input (its watermark assigner stays in the plan) and left out of the view: the query reads no rowtime.
        t_env.create_temporary_view(f"{name}__arrival", table)
        columns = ", ".join(f"`{c}`" for c, _ in spec["columns"])
        if name in ROWTIMES and ROWTIMES[name][2]:  # a condition compares this rowtime: the view carries it
            columns += f", `{name}_rowtime`"
        where = " WHERE NOT repro_lead" if LEAD else ""
        t_env.create_temporary_view(name, t_env.sql_query(f"SELECT {columns} FROM `{name}__arrival`{where}"))


def plan_query(env, t_env):
    """The query's result as a table to collect: the join's own changelog, or what the upsert sink received."""
    if SINK is None:
        return t_env.execute_sql(QUERY)
    key = Schema.new_builder().primary_key(*SINK["primary_key"]).build()
    sunk = t_env.to_changelog_stream(t_env.sql_query(QUERY), key, ChangelogMode.upsert())
    graph = env.get_execution_plan()
    print("job graph:", ", ".join(f"{op} {'present' if op in graph else 'absent'}"
                                  for op in ("ChangelogNormalize", "SinkMaterializer")))
    return t_env.from_changelog_stream(sunk).execute()


def cause(exc):
    """The innermost exception line of Flink's error, and the first Java frames under it (where it was thrown)."""
    lines = str(exc).splitlines()
    causes = [n for n, line in enumerate(lines) if "Exception:" in line]
    if not causes:
        return lines[0].strip()[:500] if lines else type(exc).__name__
    frames = [line.strip() for line in lines[causes[-1] + 1:causes[-1] + 9] if line.strip().startswith("at ")]
    return "\\n  ".join([lines[causes[-1]].strip(" :")[:500]] + frames)


def run_once():
    """One job: the changelog it emitted (or the sink received), or None when Flink refused or failed it."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.enable_checkpointing(10)
    t_env = StreamTableEnvironment.create(env)
    config = t_env.get_config()
    config.set("restart-strategy.type", "none")
    config.set("pipeline.auto-watermark-interval", "0 ms")
    config.set("table.local-time-zone", "UTC")
    for key, value in OPTIONS.items():
        config.set(key, value)
    config.set("table.exec.resource.default-parallelism", "1")  # the arrival's split keeps one channel
    streams = paced_source(env, t_env)
    config.set("table.exec.resource.default-parallelism", str(PARALLELISM))
    register_inputs(t_env, streams)
    try:
        result = plan_query(env, t_env)
    except Exception as exc:  # noqa: BLE001 - Flink refused to plan the query: that is an outcome too
        print("Flink could not plan the query:", cause(exc))
        return None
    changelog = []
    try:
        with result.collect() as rows:
            for row in rows:
                changelog.append((SIGNS[row.get_row_kind()], tuple(row)))
    except Exception as exc:  # noqa: BLE001 - the job failed: that is an outcome too
        print("Flink failed the job:", cause(exc))
        return None
    return changelog


def sink_table(changelog):
    """The table an upsert sink keeps: +I/+U write the row of its key, -D and -U delete the key."""
    positions = [SINK["columns"].index(c) for c in SINK["primary_key"]]
    table = {}
    for kind, row in changelog:
        key = tuple(row[p] for p in positions)
        if kind in ("+I", "+U"):
            table[key] = row
        else:
            table.pop(key, None)
    return list(table.values())


def judge(changelog):
    """0 when the answer is the expected one and the changelog well formed, 1 otherwise (why, printed)."""
    print("the upsert sink received:" if SINK else "changelog:")
    for kind, row in changelog:
        print(f"  {kind}{list(row)}")
    final = Counter()
    updates_nothing = []  # +U with no -U open and no row live: an update-after of nothing
    open_updates = 0  # -U not yet followed by their +U
    for kind, row in changelog:
        if kind == "+U" and open_updates == 0 and not any(n > 0 for n in final.values()):
            updates_nothing.append(row)
        open_updates = max(open_updates + {"-U": 1, "+U": -1}.get(kind, 0), 0)
        final[row] += 1 if kind[0] == "+" else -1
    if SINK:
        answer = sorted(sink_table(changelog), key=repr)
        print(f"the sink's table (primary key {', '.join(SINK['primary_key'])}):", answer)
    else:
        answer = sorted((row for row, n in final.items() for _ in range(max(n, 0))), key=repr)
        print("final answer:", answer)
    expected = sorted(EXPECTED, key=repr)
    print("expected:    ", expected)
    if updates_nothing and not SINK:
        print(f"DIVERGED: the changelog is not well formed: +U{list(updates_nothing[0])} updates nothing (no row "
              "is live and no -U precedes it)")
        return 1
    if any(n < 0 for n in final.values()) and not SINK:
        print("DIVERGED: the changelog retracts rows it never emitted")
        return 1
    if Counter(answer) != Counter(expected):
        print("DIVERGED: the " + ("sink's table" if SINK else "final answer") + " differs from the expected one")
        return 1
    print("AGREED: the " + ("sink's table" if SINK else "final answer") + " is the expected one")
    return 0


def main():
    print("query:", QUERY)
    print("options:", ", ".join(f"{k}={v}" for k, v in OPTIONS.items()), f"(join parallelism {PARALLELISM})")
    for attempt in range(1, RUNS + 1):
        if RUNS > 1:
            print(f"run {attempt} of at most {RUNS}:")
        changelog = run_once()
        if changelog is None:
            print("expected:    ", sorted(EXPECTED, key=repr))
            print("FAILED: Flink did not answer a query whose batch answer is the expected one above")
            return 2
        code = judge(changelog)
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # PyFlink's py4j threads would otherwise keep the process alive
'''
