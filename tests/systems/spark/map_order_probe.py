"""A processor that measures Spark's own RocksDB MapState iteration order (imported by Spark's workers).

Each key group's rows name map keys in a scrambled insertion order (`pos`);
the processor puts them into a MapState<long, long> or MapState<string, long>
and emits the keys in the order Spark's `keys()` iterates them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

INPUT_SCHEMA = "grp string, pos int, lkey long, skey string"
OUTPUT_SCHEMA = "grp string, rank int, lkey long, skey string"


class MapOrderProbe(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.longs = handle.getMapState("longs", "k long", "v long")
        self.strings = handle.getMapState("strings", "k string", "v long")

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        (grp,) = key
        for row in sorted(rows, key=lambda r: r.pos):
            if grp == "long":
                self.longs.updateValue((row.lkey,), (row.pos,))
            else:
                self.strings.updateValue((row.skey,), (row.pos,))
        state = self.longs if grp == "long" else self.strings
        for rank, (k,) in enumerate(state.keys()):
            yield Row(grp=grp, rank=rank, lkey=k if grp == "long" else None, skey=k if grp != "long" else None)

    def close(self) -> None:
        pass
