"""Properties of Spark's native stream-stream joins (docs/spark.md, "Spark's native joins as a system")."""
