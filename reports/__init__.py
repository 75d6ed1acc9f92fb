"""Failure reports (replayable scenario + readable Markdown) and campaign summaries."""

from reports.failure import failure_reporter, write_failure_report

__all__ = ["failure_reporter", "write_failure_report"]
