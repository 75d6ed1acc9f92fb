"""converge's reference engine: keyed state, Flink's join operators, the planner and the runtimes.

Its subpackage `model` is the data model every layer shares (scenarios, cases, changelogs, errors); the rest
is the code under test of converge's own campaigns, which the oracle and the generators never import.
"""
