"""Flink's join operators as plain objects: regular, SEMI/ANTI, interval and multi-way joins, normalize and dedupe."""
