"""converge: a differential, property-based correctness harness for streaming joins.

The installed package holds five subpackages (the repository's top-level
folders), in layers (docs/architecture.md): `converge.engine.model` (the data
model every layer shares), `converge.engine` (the reference engine),
`converge.oracle` (the batch oracles), `converge.generators` (Hypothesis
strategies), `converge.properties` (the properties, their registry, runner
and replay) and `converge.reports` (failure reports, summaries and the pytest
plugin; `converge.systems`, the systems under test; and
`converge.cli`, the command line).

This module's own surface is small: the scenario model, `run_scenario`, the
oracle, the main strategies and properties, what a custom property builds
its verdict from (`fail`, `require`, `Divergence`, `bag_diff`,
`check_expectations`), the error classes and the version. Names load on first use, so `import converge` (and the pytest
plugin, which every pytest run of a project with converge installed loads)
stays cheap: DuckDB and Hypothesis are imported only when asked for.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

__version__ = "0.3.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    # the scenario model
    "Scenario": "converge.engine.model.scenario",
    "InputSpec": "converge.engine.model.scenario",
    "JoinSpec": "converge.engine.model.scenario",
    "IntervalSpec": "converge.engine.model.scenario",
    "Config": "converge.engine.model.scenario",
    "ChangeEvent": "converge.engine.model.scenario",
    "WatermarkEvent": "converge.engine.model.scenario",
    "ProcessingTimeEvent": "converge.engine.model.scenario",
    "IdleEvent": "converge.engine.model.scenario",
    "load_scenario": "converge.engine.model.scenario_json",
    "scenario_from_dict": "converge.engine.model.scenario_json",
    "scenario_to_dict": "converge.engine.model.scenario_json",
    "dump_scenario": "converge.engine.model.scenario_json",
    # running a scenario on the embedded runtime
    "run_scenario": "converge.engine.runtime.local",
    "RunResult": "converge.engine.runtime.local",
    # the oracle
    "DuckDBOracle": "converge.oracle.duckdb_oracle",
    # the strategies
    "regular_join_scenarios": "converge.generators.scenarios",
    "interval_join_scenarios": "converge.generators.interval",
    "multiway_scenarios": "converge.generators.multiway",
    # the properties
    "prefix_consistency": "converge.properties.regular",
    "final_convergence": "converge.properties.regular",
    "run_property": "converge.properties.campaign",
    "PropertySpec": "converge.properties.spec",
    # the error classes
    "ConvergeError": "converge.engine.model.errors",
    "BadInputError": "converge.engine.model.errors",
    "DivergenceError": "converge.engine.model.errors",
    "OracleError": "converge.engine.model.errors",
    "ApiMisuseError": "converge.engine.model.errors",
    "UsageError": "converge.engine.model.errors",
    "UnsupportedError": "converge.engine.model.errors",
    "NotCheckedError": "converge.engine.model.errors",
    "MisreadQueryError": "converge.engine.model.errors",
    "SystemUnderTestError": "converge.engine.model.errors",
    "InternalError": "converge.engine.model.errors",
    "NonTerminationError": "converge.engine.model.errors",
    "PropertyFailure": "converge.properties.divergence",
    # writing your own property (README: "Writing your own property")
    "fail": "converge.properties.divergence",
    "require": "converge.properties.divergence",
    "Divergence": "converge.properties.divergence",
    "bag_diff": "converge.properties.divergence",
    "check_expectations": "converge.properties.expectations",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'converge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access does not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


# Import paths that moved in 0.3 (the systems and the command line left `converge/reports/`; modules renamed
# so that one word names one thing, docs/architecture.md "Vocabulary"), longest first.
# They keep working until 0.4, each with a DeprecationWarning: the old name is the new module object itself,
# never a second copy, so a class imported by either path is one class.
MOVED_MODULES: dict[str, str] = {
    "converge.reports.tooling.cli": "converge.cli.main",
    "converge.reports.tooling": "converge.cli",
    "converge.reports.systems": "converge.systems",
    # `converge.reports.systems.flink.kind` (pre-0.3) reaches its module through these, one rename at a time
    "converge.systems.adapter.kind": "converge.systems.adapter.system_type",
    "converge.systems.flink.kind": "converge.systems.flink.system_type",
    "converge.systems.pathway.kind": "converge.systems.pathway.system_type",
    "converge.systems.spark.kind": "converge.systems.spark.system_type",
    "converge.engine.model.native_case": "converge.engine.model.native_join_case",
    "converge.generators.spark_native": "converge.generators.native_join",
    "converge.properties.spark_native": "converge.properties.native_join",
}

# Names renamed in 0.3 so that one word names one thing (docs/architecture.md, "Vocabulary"): module -> {old
# name: new name}. Until 0.4 the old name answers with the object under its new name, and a DeprecationWarning.
RENAMED: dict[str, dict[str, str]] = {
    "converge.engine.model.system": {"Family": "JoinCategory", "family_of": "join_category_of"},
    "converge.systems.base": {"SystemKind": "SystemType"},
    "converge.systems.registry": {"KINDS": "SYSTEM_TYPES", "system_kind": "system_type_of"},
    "converge.systems.campaign": {"ConvergeCaseKind": "ScenarioSystemType"},
    "converge.systems.reference": {"ReferenceKind": "ReferenceSystemType"},
    "converge.systems.adapter.system_type": {"AdapterKind": "AdapterSystemType"},
    "converge.systems.flink.system_type": {"FlinkKind": "FlinkSystemType"},
    "converge.systems.pathway.system_type": {"PathwayKind": "PathwaySystemType"},
    "converge.systems.spark.system_type": {"SparkKind": "SparkSystemType"},
    "converge.systems.spark.system": {"SparkNativeSystem": "NativeJoinSystem"},
    "converge.systems.spark.campaign": {"run_spark_native_campaign": "run_native_join_campaign"},
}


def renamed(module: str) -> Callable[[str], Any]:
    """The module-level `__getattr__` of a module RENAMED lists: an old name gives the new one's object and warns.

    Each such module installs it under `if not TYPE_CHECKING:`, so that mypy still sees a misspelt name as one."""
    names = RENAMED[module]

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is called {new} since converge 0.3; the old name goes in 0.4",
                      DeprecationWarning, stacklevel=2)
        return getattr(sys.modules[module], new)

    return __getattr__


def moved_to(name: str) -> str | None:
    """Where a module imported by its pre-0.3 name lives now (None: the name did not move)."""
    for old, new in MOVED_MODULES.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old import path with the module at its new one."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = moved_to(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new} in converge 0.3; the old name goes in 0.4",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return sys.modules[moved_to(spec.name) or spec.name]

    def exec_module(self, module: ModuleType) -> None:
        """The module already ran under its new name."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())
