"""What this adapter declares, and why it answers `unsupported` for a case outside it."""

from __future__ import annotations

PATHWAY_LACKS = {
    "multi_join": "Pathway has no multi-way join operator: a chain runs as binary joins, so multi_join=on would change "
                  "nothing",
    "mini_batch": "Pathway has no mini-batch join setting: its dataflow batches by logical time on its own, so a "
                  "mini-batch size would change nothing",
    "state_backend": "Pathway keeps join state in its own in-memory arrangements; there is no state backend to choose",
    "parallelism": "the adapter runs Pathway with its default worker count; a parallelism option is not mapped",
    "upsert_sink": "the adapter answers the final multiset of the join; it has no upsert sink",
    "restart": "the adapter runs each request's dataflow once, without persistence, so a stop-and-restore is not "
               "exercised",
}


def capabilities() -> dict:
    return {"families": ["regular", "interval", "multiway"],
            "join_types": ["inner", "left", "right", "full", "semi", "anti"],
            "changelog_modes": ["insert_only", "retract", "upsert"],
            "column_types": ["BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"],
            "time_domains": ["event_time"], "state_ttl": False,
            "output": "final", "deterministic_order": False, "max_batch": 500,
            "settings": [], "lacks": PATHWAY_LACKS}


# Case options whose non-default value changes the answer in a way this adapter does not model.
_DEFAULTS = {"state_ttl_ms": None, "multi_join": "off", "changelog_normalize": True, "semantics": "correct",
             "dedupe_before_join": {}, "unique_key_lost": [], "per_key_order": "kept", "mini_batch_size": None,
             "state_backend": None, "parallelism": None, "sink": "retract", "restart_after": None}


def unsupported(case: dict) -> str | None:
    """Why this adapter cannot run `case` exactly (None: it can)."""
    scenario, plan = case["scenario"], case.get("plan")
    if not isinstance(plan, dict):
        return "the case has no plan (protocol version 2)"
    for spec in scenario["inputs"]:
        if spec.get("changelog_mode", "retract") not in ("insert_only", "retract", "upsert"):
            return f"input {spec['name']}: changelog mode {spec.get('changelog_mode')} (a raw changelog) is not mapped"
    interval = plan.get("interval")
    if interval is not None and interval.get("time") != "event":
        return "processing-time interval joins: the adapter feeds Pathway no processing-time clock"
    config = scenario.get("config") or {}
    for key, default in _DEFAULTS.items():
        value = config.get(key, default)
        if value != default and not (isinstance(default, (dict, list)) and not value):
            return f"config.{key} = {value!r} is not mapped onto Pathway"
    return None
