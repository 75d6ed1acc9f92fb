"""converge's layers, bottom to top, as module prefixes (docs/architecture.md): the layering test enforces them,
the README layout test lists a folder for each."""

from __future__ import annotations

# (layer, the module prefix that makes it), bottom to top; a module belongs to the longest prefix it has
LAYERS = (("model", "converge.engine.model"), ("engine", "converge.engine"), ("oracle", "converge.oracle"),
          ("generators", "converge.generators"), ("properties", "converge.properties"),
          ("reports", "converge.reports"), ("systems", "converge.systems"),
          ("cli", "converge.cli"))
