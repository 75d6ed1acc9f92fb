"""The systems under test, by kind: what each runs, how it starts, its campaign and its replay.

A kind is what the command line names with `--system SCHEME[:ARGUMENT]`.

registry.py maps a scheme to its kind: `reference` (converge's own engine), `cmd` (any engine behind the
adapter protocol, adapter/), `flink` (real Apache Flink through its adapter program, flink/) and `spark`
(Spark's own stream-stream join on native-join cases, spark/). What a system is to the properties (its
capabilities, its answers) is data model: converge.engine.model.system. docs/systems.md says what a system
declares; docs/adapter-protocol.md is the protocol.
"""
