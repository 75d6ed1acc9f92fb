"""Hypothesis prints a drawn scenario as its JSON, not as the byte string it was decoded from.

Hypothesis shows a falsifying example by how each value was built: for a
`.map` that is the mapping lambda applied to the bytes it drew, e.g.
`(lambda packed: assemble(_byte_picker(...)))(b'\\x00…')`, which nobody can
read or replay. Two pieces turn that into the scenario file's JSON:

* a pretty printer for `Scenario` registered with Hypothesis's printer (it is
  asked for a value that carries no record of how it was built), and
* `readable(strategy)`, which hands out a shallow copy of each drawn
  scenario: the copy is a new object, so Hypothesis has no construction record
  for it and prints it with that printer.

The JSON printed is the scenario format (docs/scenario-format.md): paste it
into a file and `converge replay` it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st
from hypothesis.vendor.pretty import for_type_by_name

from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import scenario_to_dict

__all__ = ["readable", "scenario_json_text"]


def scenario_json_text(s: Scenario) -> str:
    """The scenario as one line of JSON in the scenario format (what a scenario file holds)."""
    return json.dumps(scenario_to_dict(s), allow_nan=False, separators=(", ", ": "))


def _pretty(obj: Any, printer: Any, cycle: bool) -> None:
    try:
        printer.text(scenario_json_text(obj))
    except Exception:  # noqa: BLE001 - a scenario the format cannot write (a hand-built one): its plain repr
        printer.text(repr(obj))


for_type_by_name(Scenario.__module__, Scenario.__name__, _pretty)


@st.composite
def _copies(draw: st.DrawFn, inner: st.SearchStrategy[Scenario]) -> Scenario:
    return copy.copy(draw(inner))  # a new object: Hypothesis prints it with _pretty, not as the map that built it


def readable(strategy: st.SearchStrategy[Scenario]) -> st.SearchStrategy[Scenario]:
    """`strategy`, whose drawn scenarios Hypothesis prints as their JSON in a falsifying example."""
    return _copies(strategy)
