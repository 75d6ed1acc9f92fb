"""`pytest -n auto` keeps each `xdist_group` on one worker: the Spark tests share one JVM, the Flink tests one cluster.

`-n auto` distributes with "load"; this plugin turns it into "loadgroup"
(nothing changes without xdist). A worker re-parses the command line (dist
"load"), so the controller tells each worker that tests are grouped, or the
loadgroup scheduler would see no groups at all.

`--dist loadgroup` learns a test's group from a suffix pytest-xdist's worker
appends to the test's node id (`...::test@spark`). Through xdist 3.8.0 it
appends it by assigning `item._nodeid`, which pytest 9.2 no longer reads
(node ids became structured, `item._id`): the suffix is silently lost and
grouped tests spread over every worker, each starting its own JVM
(pytest-dev/pytest-xdist#1386, open when this was written). This plugin
appends the suffix where xdist's did not take, and leaves it alone where it
did (older pytest, or a fixed xdist).
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    if getattr(config, "workerinput", {}).get("converge_loadgroup"):
        config.option.loadgroup = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist, controller side: tell each worker whether tests are grouped."""
    node.workerinput["converge_loadgroup"] = node.config.getvalue("dist") == "loadgroup"


def _group_suffix(item: pytest.Item) -> str | None:
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "@" + "_".join(sorted(names)) if names else None


def _set_nodeid(item: pytest.Item, nodeid: str) -> None:
    if hasattr(item, "_id"):  # pytest >= 9.2: the structured id; parsing keeps the exact string as its text
        from _pytest.nodeid import NodeId  # lazy: only pytest >= 9.2 has it
        item._id = NodeId.parse(nodeid)
    else:
        item._nodeid = nodeid


@pytest.hookimpl(trylast=True)  # after xdist's own suffixing, to see whether it took
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config, "workerinput", None) or not config.getvalue("loadgroup"):
        return
    for item in items:
        suffix = _group_suffix(item)
        if suffix is not None and not item.nodeid.endswith(suffix):
            _set_nodeid(item, item.nodeid + suffix)
