"""The command line: one module per command, and the tools behind them (benchmarks, seeded bugs, Spark).

main.py builds the parser from commands/ (one module per command, each with
its `register(subparsers)`) and maps errors to exit codes; arguments.py holds
the options the commands share. The benchmarks, the seeded-bug campaign, the
conformance kit and the Spark runtime's campaign are tools the commands call.
They sit above every other layer and are imported by nothing below them; the
Spark campaign and benchmark are imported only when a command asks for Spark.
"""
