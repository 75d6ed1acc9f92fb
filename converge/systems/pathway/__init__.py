"""Pathway as a system under test: its environment, its `--system pathway` kind, and its adapter program."""
