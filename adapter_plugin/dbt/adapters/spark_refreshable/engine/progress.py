"""The chunk plan and per-vnode checkpoints of the cycle in progress.

The progress table has one row per vnode: the cycle (refresh id), the chunk it belongs to,
its staged rows, whether it is merged, what its merge changed, and main's version after.
The plan is written whole before the state moves to FINISHING; a chunk's rows are marked
done in one commit right after the chunk's main commit. A vnode is the unit of atomicity:
it is merged entirely within one chunk commit or not at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.sql import literal
from dbt.adapters.spark_refreshable.engine.tables import BOOKKEEPING_PROPERTIES, properties_sql

PROGRESS_SCHEMA = (
    "refresh_id STRING, vnode INT, chunk INT, staged_rows BIGINT, done BOOLEAN, "
    "rows_inserted BIGINT, rows_updated BIGINT, rows_deleted BIGINT, main_version BIGINT, "
    "finished_at DOUBLE"
)


@dataclass(frozen=True)
class Chunk:
    index: int
    first_vnode: int
    last_vnode: int
    staged_rows: int
    done: bool = False
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0


def plan_chunks(vnode_rows: dict[int, int], vnodes: int, chunk_rows: int) -> list[Chunk]:
    """Contiguous vnode ranges of at most ``chunk_rows`` staged rows each (a single vnode
    larger than that is a chunk of its own). Chunk count follows table size."""
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


def write_plan(
    spark: Any,
    tables: ModelTables,
    refresh_id: str,
    chunks: list[Chunk],
    vnode_rows: dict[int, int],
) -> None:
    rows = [
        (refresh_id, vnode, chunk.index, vnode_rows.get(vnode, 0), False, 0, 0, 0, None, None)
        for chunk in chunks
        for vnode in range(chunk.first_vnode, chunk.last_vnode + 1)
    ]
    frame = spark.createDataFrame(rows, PROGRESS_SCHEMA)
    if not spark.catalog.tableExists(tables.progress):
        spark.sql(
            f"CREATE TABLE IF NOT EXISTS {tables.progress} ({PROGRESS_SCHEMA}) USING delta "
            f"TBLPROPERTIES ({properties_sql(BOOKKEEPING_PROPERTIES)})"
        )
    frame.write.format("delta").mode("overwrite").saveAsTable(tables.progress)


def read_plan(spark: Any, tables: ModelTables, refresh_id: str) -> list[Chunk]:
    rows = spark.sql(
        f"SELECT chunk, min(vnode) AS first_vnode, max(vnode) AS last_vnode, "
        f"sum(staged_rows) AS staged_rows, bool_and(done) AS done, "
        f"sum(rows_inserted) AS rows_inserted, sum(rows_updated) AS rows_updated, "
        f"sum(rows_deleted) AS rows_deleted FROM {tables.progress} "
        f"WHERE refresh_id = {literal(refresh_id)} GROUP BY chunk ORDER BY chunk"
    ).collect()
    return [
        Chunk(
            index=r["chunk"],
            first_vnode=r["first_vnode"],
            last_vnode=r["last_vnode"],
            staged_rows=r["staged_rows"],
            done=r["done"],
            rows_inserted=r["rows_inserted"],
            rows_updated=r["rows_updated"],
            rows_deleted=r["rows_deleted"],
        )
        for r in rows
    ]


def mark_done(
    spark: Any,
    tables: ModelTables,
    refresh_id: str,
    chunk: Chunk,
    per_vnode: dict[str, dict[int, int]],
    main_version: int,
) -> None:
    """Checkpoint a merged chunk: its vnodes are done, with what their merge changed."""

    def per_vnode_sql(counts: dict[int, int]) -> str:
        if not counts:
            return "CAST(0 AS BIGINT)"
        pairs = ", ".join(f"{int(v)}, CAST({int(n)} AS BIGINT)" for v, n in counts.items())
        return f"coalesce(try_element_at(map({pairs}), vnode), CAST(0 AS BIGINT))"

    spark.sql(
        f"UPDATE {tables.progress} SET done = TRUE, "
        f"rows_inserted = {per_vnode_sql(per_vnode.get('I', {}))}, "
        f"rows_updated = {per_vnode_sql(per_vnode.get('U', {}))}, "
        f"rows_deleted = {per_vnode_sql(per_vnode.get('D', {}))}, "
        f"main_version = {int(main_version)}, finished_at = {literal(time.time())} "
        f"WHERE refresh_id = {literal(refresh_id)} AND chunk = {chunk.index}"
    )


def reset(spark: Any, tables: ModelTables) -> None:
    if spark.catalog.tableExists(tables.progress):
        spark.sql(f"DELETE FROM {tables.progress}")
