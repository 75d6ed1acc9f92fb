"""The commands: the CLI (cli.py, a module per command in commands/, their shared options in arguments.py), the
benchmarks, the seeded-bug campaign and the Spark campaign.

They sit above the properties and the reports and are imported by nothing
below them; the Spark campaign and benchmark are imported only when a
command asks for Spark.
"""
