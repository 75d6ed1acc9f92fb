"""How much a loaded, shared CI machine may add to a wall-clock bound in a test.

A few tests check that converge gives up on a hanging adapter, or ends a process
it was told to end, within its own stated time limit. The stated limit is checked
exactly where converge prints it (its messages name it); the wall clock only
guards against a wait that never ends. That guard allows `SLACK` seconds more
than the limit, for the work around the wait (a short campaign, a process's
start and end), which a two-core machine beside eight busy processes
(`.ci/under-load`) runs about five times slower than an idle one.
"""

from __future__ import annotations

SLACK = 60.0
