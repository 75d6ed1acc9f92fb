"""Real Apache Flink as a system: its managed environment, the `flink` system type, and the adapter program.

The program (program/: adapter.py, case_plan.py, condition_sql.py) is package data run by the Flink
environment's own Python; converge never imports it as one of its modules (environment.program_module
loads it by file for converge's own checks).
"""
