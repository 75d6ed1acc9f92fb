"""The Apache Flink system: its environment (converge side) and its adapter (run by the Flink venv)."""
