"""The `converge` Hypothesis settings profile: the settings converge's strategies and properties want.

Registered when `converge.generators` is imported; use it for one test with
`@settings(settings.get_profile("converge"))`, or for a whole suite with
`settings.load_profile("converge")` in a conftest.py. converge's own runner
(`converge run`, `run_property`) runs every property under it.

* `deadline=None`: the first example of a process pays one-off costs (DuckDB's
  connection, the condition compiler's first compile through DuckDB: about
  500 ms, then about 1 ms), which a deadline would report as a slow test and
  then as a flaky one.
* `HealthCheck.nested_given` is suppressed, and no other health check: the
  anomaly-reproduction properties (converge.properties.anomalies) search for
  a witness with `hypothesis.find` inside the property on purpose. Measured
  on every registered property: no converge strategy trips any other health
  check (tests/generators/test_generators.py keeps that true).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "PROFILE_NAME", "SUPPRESSED_HEALTH_CHECKS"]

PROFILE_NAME = "converge"
SUPPRESSED_HEALTH_CHECKS: tuple[HealthCheck, ...] = (HealthCheck.nested_given,)

settings.register_profile(PROFILE_NAME, deadline=None, suppress_health_check=SUPPRESSED_HEALTH_CHECKS)
PROFILE: settings = settings.get_profile(PROFILE_NAME)
