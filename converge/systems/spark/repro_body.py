"""The fixed part of a generated Spark repro (`converge repro --system spark`): the code after the data block.

Kept as text, not imported: the generated program must need PySpark alone. It is the query of
converge/systems/spark/system.py re-stated without converge: one file per input and micro-batch, read one file per
trigger with `availableNow`, `withWatermark` per input, the join, a `foreachBatch` sink that keeps each epoch's
rows. The files are JSON lines (written with the standard library) where converge writes Parquet (pyarrow), so
the program needs no package beyond pyspark; the schema is given, so the format changes no value.
"""

from __future__ import annotations

BODY = '''

def write_inputs(folder):
    """One JSON-lines file per input and micro-batch (an empty file when the input has no row in it, so both
    sources move one file per trigger, in step), the file of micro-batch j modified j seconds after the first:
    the file source takes files in modification-time order, and files of one second could come out swapped."""
    batches = list(BATCHES) + [{name: [row] for name, row in FLUSH.items()}]
    base = int(time.time()) - len(batches) - 10
    for name, spec in INPUTS.items():
        os.makedirs(os.path.join(folder, name))
        for j, batch in enumerate(batches):
            path = os.path.join(folder, name, f"batch-{j:05d}.json")
            with open(path, "w", encoding="utf-8") as handle:
                rows = batch.get(name, [])
                handle.writelines(json.dumps(dict(zip(spec["columns"], row, strict=True))) + "\\n" for row in rows)
            os.utime(path, (base + j, base + j))


def frame(spark, name, folder, streaming=True):
    """One input: its columns prefixed (L_, R_), its event time as a timestamp. Streaming: its files one per
    trigger, with the input's withWatermark delay. Not streaming: the rows of BATCHES at once (no FLUSH row)."""
    spec = INPUTS[name]
    prefix = PREFIX[name]
    schema = ", ".join(f"{c} BIGINT" for c in spec["columns"])
    if streaming:
        df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(os.path.join(folder, name))
    else:
        paths = [os.path.join(folder, name, f"batch-{j:05d}.json") for j in range(len(BATCHES))]
        df = spark.read.schema(schema).json(paths)
    df = df.select(*(F.col(c).alias(prefix + c) for c in spec["columns"]))
    df = df.withColumn(prefix + "_ts", F.timestamp_millis(F.col(prefix + spec["time"])))
    return df.withWatermark(prefix + "_ts", f"{spec['delay_ms']} milliseconds") if streaming else df


def run(spark, folder):
    """Run the query to the end of its files; (each epoch's rows by batch id, each epoch's watermark)."""
    joined = frame(spark, "left", folder).join(frame(spark, "right", folder), F.expr(CONDITION), JOIN)
    columns = [PREFIX[name] + c for name in OUTPUT for c in INPUTS[name]["columns"]]
    epochs = {}

    def sink(df, batch_id):
        epochs[batch_id] = [tuple(r) for r in df.collect()]

    query = (joined.select(*columns).writeStream.outputMode("append").foreachBatch(sink)
             .option("checkpointLocation", os.path.join(folder, "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    watermarks = {p.batchId: millis((p.eventTime or {}).get("watermark")) for p in query.recentProgress}
    return epochs, watermarks


def batch_answer(spark, folder):
    """Spark's own batch query of the same join over every row of BATCHES (late ones too), for comparison."""
    joined = frame(spark, "left", folder, False).join(frame(spark, "right", folder, False), F.expr(CONDITION), JOIN)
    columns = [PREFIX[name] + c for name in OUTPUT for c in INPUTS[name]["columns"]]
    return sorted((tuple(r) for r in joined.select(*columns).collect()), key=repr)


def millis(iso):
    """A progress timestamp (ISO, UTC) in ms since the epoch, as the case's event times are."""
    if not iso:
        return None
    return (datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ") - EPOCH) // timedelta(milliseconds=1)


def flushed(row):
    """Whether an output row holds a FLUSH row (by its _id): its output is not part of the case."""
    at = 0
    for name in OUTPUT:
        if row[at] is not None and row[at] == FLUSH[name][0]:
            return True
        at += len(INPUTS[name]["columns"])
    return False


def main():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[1]").appName("repro")
    for key, value in CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    folder = tempfile.mkdtemp(prefix="repro-")
    try:
        write_inputs(folder)
        print("join:", JOIN, "on", CONDITION)
        print("conf:", ", ".join(f"{k}={v}" for k, v in CONF.items() if k.startswith("spark.sql.")))
        try:
            epochs, watermarks = run(spark, folder)
            batch = batch_answer(spark, folder)
        except Exception as exc:  # noqa: BLE001 - Spark rejected or failed the query: that is an outcome too
            lines = [line for line in str(exc).strip().splitlines() if line.strip()]
            print("Spark failed the query:", (lines[0] if lines else type(exc).__name__)[:500])
            return 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        spark.stop()
    header = [PREFIX[name] + c for name in OUTPUT for c in INPUTS[name]["columns"]]
    print("output by epoch (micro-batch j is epoch j; the FLUSH micro-batch's own rows left out):")
    output = []
    for batch_id in sorted(epochs):
        rows = [row for row in epochs[batch_id] if not flushed(row)]
        output += rows
        print(f"  epoch {batch_id} (watermark {watermarks.get(batch_id)} ms): "
              + (", ".join(str(list(r)) for r in rows) or "no rows"))
    answer = sorted(output, key=repr)
    expected = sorted(EXPECTED, key=repr)
    print("columns:     ", header)
    print("final answer:", answer)
    print("expected:    ", expected)
    print("Spark's own batch query of the same join (every row of BATCHES, late ones too):", batch)
    if Counter(answer) != Counter(expected):
        print("DIVERGED: Spark's output differs from the expected one")
        return 1
    print("AGREED: Spark's output is the expected one")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.exit(code)
'''
