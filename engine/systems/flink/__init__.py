"""The Apache Flink system: its environment (converge side) and its adapter (a standalone program run by the Flink venv)."""
