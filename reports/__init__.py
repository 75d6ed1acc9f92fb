"""Failure reports (replayable scenario + readable Markdown + picture), campaign summaries, the pytest plugin.

Import the modules themselves (`converge.reports.failure`, `.summary`,
`.location`): this package imports nothing, so that the pytest plugin,
loaded in every pytest run where converge is installed, stays cheap.
"""
