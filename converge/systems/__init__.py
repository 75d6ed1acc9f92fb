"""The systems under test, by system type: what each runs, how it starts, its campaign and its replay.

A system type is what the command line names with `--system SCHEME[:ARGUMENT]`.

registry.py maps a scheme to its system type: `reference` (converge's own engine), `cmd` (any engine behind the
adapter protocol, adapter/), `flink` (real Apache Flink through its adapter program, flink/) and `spark`
(Spark's native join, on native-join cases, spark/). What a system is to the properties (its
capabilities, its answers) is data model: converge.engine.model.system. docs/systems.md says what a system
declares; docs/adapter-protocol.md is the protocol.
"""
