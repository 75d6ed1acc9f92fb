"""Properties of Spark's native join (docs/spark.md, "Spark's native joins as a system")."""
