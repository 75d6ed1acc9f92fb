"""Flink SQL files (CREATE TABLE statements and one SELECT) read onto converge's scenario model.

`load_query(path)` gives a `MappedQuery`: the declared tables, the join chain
as a `JoinSpec`, the projection and the WHERE filter. docs/check-your-query.md
says which part of Flink SQL is supported and how each type is represented.
"""

from converge.engine.model.flinksql.query import MappedQuery, OutputColumn, load_query, parse_query
from converge.engine.model.flinksql.types import FlinkType, flink_type

__all__ = ["FlinkType", "MappedQuery", "OutputColumn", "flink_type", "load_query", "parse_query"]
