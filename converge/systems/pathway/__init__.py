"""Pathway as a system under test: its environment, its `--system pathway` system type, and its adapter program."""
