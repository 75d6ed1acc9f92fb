"""Spark's native join as a system: the native-join query, its runs, its campaign and replay."""
