"""Systems under test: the reference engine, and any streaming engine behind the adapter protocol.

docs/systems.md says what a system is and what it declares; docs/adapter-protocol.md is the protocol.
"""

from converge.engine.model.system import Capabilities, CaseResult, System, applicability, family_of
from converge.engine.model.system_cases import case_to_json, changelogs_of, shape_key

__all__ = ["Capabilities", "CaseResult", "System", "applicability", "case_to_json", "changelogs_of", "family_of",
           "shape_key"]
