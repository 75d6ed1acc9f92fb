"""The properties converge checks, their reference models, the registry, the runner and replay."""
