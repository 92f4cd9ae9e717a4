"""The chunk plan and per-vnode checkpoints of the cycle in progress.

The plan (contiguous vnode ranges covering every vnode, sized by changed rows, so chunk
count follows how much changed) is fixed when staging and the change set are whole, and
travels in the cycle's plan (``cycle_plan``: the change set's commit, or FINISHING). A
vnode is the unit of atomicity: it is merged entirely within one chunk commit or not at all.

A chunk's own commit to main is its first checkpoint: it carries the chunk's tag, which a
resume finds in main's history (``merge.MainHistory.committed_chunks``). The progress table
makes that durable and cheap to read: every ``checkpoint_interval`` seconds of merging, the
chunks merged since are recorded in one blind append, one row per vnode (cycle, vnode,
chunk, staged rows, what its merge inserted, updated and deleted, main's version after). A
cycle's first checkpoint replaces the rows of the cycles before it (one commit either way),
so the table is never emptied on the way to IDLE. The state's move to IDLE records the whole
cycle, so a cycle that merges within the interval, the common case, writes no progress row,
and a long one about one per interval, not one per chunk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.sql import literal
from dbt.adapters.spark_refreshable.engine.tables import (
    BOOKKEEPING_PROPERTIES,
    create_or_replace,
    location_taken,
    properties_sql,
)

PROGRESS_SCHEMA = (
    "refresh_id STRING, vnode INT, chunk INT, staged_rows BIGINT, rows_inserted BIGINT, "
    "rows_updated BIGINT, rows_deleted BIGINT, main_version BIGINT, finished_at DOUBLE"
)


@dataclass(frozen=True)
class Chunk:
    index: int
    first_vnode: int
    last_vnode: int
    rows: int  # changed rows planned

    @property
    def vnode_range(self) -> str:
        """SQL: `<vnode> BETWEEN first AND last`, less the vnode expression."""
        return f"BETWEEN {self.first_vnode} AND {self.last_vnode}"

    def to_json(self) -> list[int]:
        return [self.first_vnode, self.last_vnode, self.rows]

    @classmethod
    def from_json(cls, index: int, value: list[int]) -> Chunk:
        return cls(index, *value)


@dataclass(frozen=True)
class Checkpoint:
    """What the merged chunks of a cycle changed, summed."""

    chunks: frozenset[int]
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0

    def counts(self) -> dict[str, int]:
        """Its rows per op ('I', 'U', 'D'), in a dict of their own."""
        return {"I": self.rows_inserted, "U": self.rows_updated, "D": self.rows_deleted}


def plan_chunks(vnode_rows: dict[int, int], vnodes: int, chunk_rows: int) -> list[Chunk]:
    """Contiguous vnode ranges of at most ``chunk_rows`` rows each (a single vnode larger
    than that is a chunk of its own), covering every vnode."""
    chunks: list[Chunk] = []
    first, rows = 0, 0
    for vnode in range(vnodes):
        here = vnode_rows.get(vnode, 0)
        if rows and rows + here > chunk_rows:
            chunks.append(Chunk(len(chunks), first, vnode - 1, rows))
            first, rows = vnode, 0
        rows += here
    chunks.append(Chunk(len(chunks), first, vnodes - 1, rows))
    return chunks


def ensure_table(spark: Any, tables: ModelTables) -> None:
    """Create the progress table unless it exists. Files in its folder that the catalog
    lists no table for are left by a run stopped while it created the table (the lock is
    held): they are replaced, as staging's are."""
    try:
        spark.sql(
            f"CREATE TABLE IF NOT EXISTS {tables.progress} ({PROGRESS_SCHEMA}) USING delta "
            f"TBLPROPERTIES ({properties_sql(BOOKKEEPING_PROPERTIES)})"
        )
    except Exception as error:
        if not location_taken(error):
            raise
        frame = spark.createDataFrame([], PROGRESS_SCHEMA)
        create_or_replace(frame, tables.progress, BOOKKEEPING_PROPERTIES)


@dataclass(frozen=True)
class MergedChunk:
    """A chunk as its merge left it: rows per op and vnode, main's version after."""

    chunk: Chunk
    per_vnode: dict[str, dict[int, int]]
    main_version: int


def record_chunks(
    spark: Any,
    tables: ModelTables,
    refresh_id: str,
    merged: list[MergedChunk],
    vnode_rows: dict[int, int],
    first_of_cycle: bool,
) -> None:
    """Checkpoint merged chunks: one row per vnode, one commit (an append, or for the
    cycle's first checkpoint an overwrite of the previous cycles' rows)."""
    now = literal(time.time())
    rows = ", ".join(
        f"({literal(refresh_id)}, {vnode}, {m.chunk.index}, {vnode_rows.get(vnode, 0)}, "
        f"{m.per_vnode.get('I', {}).get(vnode, 0)}, {m.per_vnode.get('U', {}).get(vnode, 0)}, "
        f"{m.per_vnode.get('D', {}).get(vnode, 0)}, {int(m.main_version)}, {now})"
        for m in merged
        for vnode in range(m.chunk.first_vnode, m.chunk.last_vnode + 1)
    )
    verb = "INSERT OVERWRITE" if first_of_cycle else "INSERT INTO"
    spark.sql(f"{verb} {tables.progress} VALUES {rows}")


def read_checkpoint(spark: Any, tables: ModelTables, refresh_id: str) -> Checkpoint:
    row = spark.sql(
        f"SELECT collect_set(chunk) AS chunks, sum(rows_inserted) AS i, sum(rows_updated) AS u, "
        f"sum(rows_deleted) AS d FROM {tables.progress} WHERE refresh_id = {literal(refresh_id)}"
    ).collect()[0]
    return Checkpoint(frozenset(row["chunks"]), row["i"] or 0, row["u"] or 0, row["d"] or 0)
