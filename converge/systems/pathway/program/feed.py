"""A case's change events as Pathway input rows: (row id, case, values as JSON text, time, diff).

Pathway tables are keyed by row id, so every copy of a row gets an id of its own and a `-U`/`-D`
retracts one live copy of the same values (the newest). An upsert input is first normalized by its
unique key, as Flink's ChangelogNormalize does: an insert or update of a held key retracts the held
row; a `-D` (which may carry only the key, the other columns NULL) retracts the row held for that key;
a `-D` of an unknown key changes nothing. Values travel as JSON text so that no layer between the
case and the join (pandas, in Pathway's static reader) can turn 1 into 1.0.
"""

from __future__ import annotations

import json
from collections import defaultdict


def _text(row: list) -> str:
    return json.dumps(row, separators=(",", ":"))


class Feed:
    """The rows of every input of one request; row ids are unique within the request."""

    def __init__(self, inputs: list[dict]) -> None:
        self.rows: dict[str, list[tuple]] = {spec["name"]: [] for spec in inputs}
        self.specs = {spec["name"]: spec for spec in inputs}
        self.next_id = 0

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def add_case(self, case_no: int, events: list[dict]) -> None:
        """Append one case's change events; the i-th event happens at Pathway time 2(i+1) (times must be even)."""
        copies: dict[str, dict[str, list[int]]] = {name: defaultdict(list) for name in self.rows}
        held: dict[str, dict[str, tuple[int, list]]] = {name: {} for name in self.rows}
        for index, event in enumerate(events):
            if "kind" not in event:
                continue  # watermarks, idleness, processing time: the answer at the end does not depend on them
            name, kind, row = event["input"], event["kind"], event["row"]
            time = 2 * (index + 1)
            out = self.rows[name]
            spec = self.specs[name]
            if spec.get("changelog_mode") == "upsert":
                columns = [c[0] for c in spec["columns"]]
                key = _text([row[columns.index(k)] for k in spec["unique_key"]])
                old = held[name].pop(key, None)
                if old is not None:
                    out.append((old[0], case_no, _text(old[1]), time, -1))
                if kind != "-D":
                    rid = self._new_id()
                    held[name][key] = (rid, row)
                    out.append((rid, case_no, _text(row), time, 1))
                continue
            text = _text(row)
            if kind in ("+I", "+U"):
                rid = self._new_id()
                copies[name][text].append(rid)
                out.append((rid, case_no, text, time, 1))
            elif copies[name][text]:
                out.append((copies[name][text].pop(), case_no, text, time, -1))
            # a retraction of a row the input does not hold retracts nothing
