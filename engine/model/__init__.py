"""The data model every layer shares: scenarios, native-join cases, changelogs, errors, systems, Flink SQL input.

What a scenario, a case, a change and an error are, their JSON formats and validation, what a system under
test declares and answers (`system`), and the readers that bring a user's Flink SQL and captured changelogs
into the model (`flinksql`). Nothing here computes a join's answer: the oracle and the generators import
only this part of `converge.engine`.
"""
