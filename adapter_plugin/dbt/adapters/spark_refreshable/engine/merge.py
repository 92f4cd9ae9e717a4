"""Merging: one chunk of vnodes, staging against main, applied as one atomic Delta commit.

For a chunk (a range of vnodes) the diff joins the chunk's staging slice with the chunk's
slice of main *as of one pinned version*: a key only in staging is an insert, only in main
a delete, in both with any column different (null-safe) an update; unchanged rows are
left out. The diff is then applied with one ``MERGE`` whose join carries the chunk's vnode
predicate and no ``WHEN NOT MATCHED BY SOURCE`` clause (which would scan all of main).

The diff is computed against main as it is, so applying a chunk twice changes nothing the
second time: a crash between the main commit and the progress write is harmless. If
another writer committed to main after the pinned version, the chunk is diffed again
against the new main and applied again (the other writer's rows are corrected toward the
snapshot); a Delta conflict during the commit is handled the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.spark_refreshable.engine.errors import RefreshError
from dbt.adapters.spark_refreshable.engine.naming import OP_COLUMN, VNODE_COLUMN, ModelTables
from dbt.adapters.spark_refreshable.engine.progress import Chunk
from dbt.adapters.spark_refreshable.engine.sql import ident, qualified, vnode_expression
from dbt.adapters.spark_refreshable.engine.state import is_commit_conflict

MAX_ATTEMPTS = 5
USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
OPERATIONS = {
    "I": "numTargetRowsInserted",
    "U": "numTargetRowsUpdated",
    "D": "numTargetRowsDeleted",
}


def chunk_tag(refresh_id: str, chunk: int) -> str:
    """The userMetadata of a chunk's commit to main: ties the commit to its cycle and chunk."""
    return f"dbt-refreshable:{refresh_id}:chunk:{chunk}"


def committed_chunks(
    spark: Any, tables: ModelTables, refresh_id: str, recent: int
) -> dict[int, tuple[int, dict[str, int]]]:
    """Chunks of a cycle already committed to main, per main's recent history: chunk ->
    (version, rows per op). A crash between a chunk's commit and its checkpoint leaves one."""
    prefix = chunk_tag(refresh_id, 0).rsplit(":", 1)[0] + ":"
    rows = spark.sql(f"DESCRIBE HISTORY {tables.main} LIMIT {int(recent)}").collect()
    found = {}
    for row in rows:
        tag = row["userMetadata"] or ""
        if tag.startswith(prefix):
            metrics = row["operationMetrics"] or {}
            counts = {op: int(metrics.get(name, 0)) for op, name in OPERATIONS.items()}
            found[int(tag[len(prefix) :])] = (int(row["version"]), counts)
    return found


@dataclass(frozen=True)
class Cycle:
    """What every chunk of one cycle merges with: the tables, keys, columns and vnodes."""

    tables: ModelTables
    keys: tuple[str, ...]
    columns: list[str]
    vnodes: int


@dataclass
class ChunkResult:
    per_vnode: dict[str, dict[int, int]] = field(default_factory=dict)  # op -> vnode -> rows
    main_version: int = 0
    attempts: int = 0

    def total(self, op: str) -> int:
        return sum(self.per_vnode.get(op, {}).values())


def main_version(spark: Any, tables: ModelTables) -> int:
    return int(spark.sql(f"DESCRIBE HISTORY {tables.main} LIMIT 1").collect()[0]["version"])


def diff_sql(cycle: Cycle, chunk: Chunk, version: int) -> str:
    """Inserts, updates and deletes of one chunk, as rows of (op, vnode, columns)."""
    tables, keys, columns = cycle.tables, cycle.keys, cycle.columns
    values = [c for c in columns if c not in keys]
    in_chunk = chunk.vnode_range
    same = " AND ".join(f"s.{ident(c)} <=> m.{ident(c)}" for c in values) or "TRUE"
    join = " AND ".join(f"s.{ident(k)} = m.{ident(k)}" for k in keys)
    chosen = ", ".join(
        f"CASE WHEN s.__present THEN {qualified('s', c)} ELSE {qualified('m', c)} END AS {ident(c)}"
        if c in keys
        else f"{qualified('s', c)} AS {ident(c)}"
        for c in columns
    )
    cols = ", ".join(ident(c) for c in columns)
    main_vnode = vnode_expression(keys, cycle.vnodes)
    return f"""
        SELECT CASE WHEN m.__present IS NULL THEN 'I'
                    WHEN s.__present IS NULL THEN 'D'
                    ELSE 'U' END AS {OP_COLUMN},
               coalesce(s.{ident(VNODE_COLUMN)}, m.{ident(VNODE_COLUMN)}) AS {ident(VNODE_COLUMN)},
               {chosen}
        FROM (SELECT {cols}, {ident(VNODE_COLUMN)}, TRUE AS __present FROM {tables.staging}
              WHERE {ident(VNODE_COLUMN)} {in_chunk}) s
        FULL OUTER JOIN
             (SELECT * FROM (SELECT {cols}, {main_vnode} AS {ident(VNODE_COLUMN)}, TRUE AS __present
                             FROM {tables.main} VERSION AS OF {int(version)})
              WHERE {ident(VNODE_COLUMN)} {in_chunk}) m
        ON {join}
        WHERE m.__present IS NULL OR s.__present IS NULL OR NOT ({same})
    """


def merge_sql(cycle: Cycle, chunk: Chunk, view: str) -> str:
    """Apply a chunk's diff. Robust to the target having moved since the diff: an insert
    or update upserts, a delete deletes."""
    keys, columns = cycle.keys, cycle.columns
    on = " AND ".join(f"t.{ident(k)} = c.{ident(k)}" for k in keys)
    in_chunk = f"{vnode_expression(keys, cycle.vnodes, 't')} {chunk.vnode_range}"
    updates = ", ".join(f"t.{ident(c)} = c.{ident(c)}" for c in columns if c not in keys)
    update_clause = (
        f"WHEN MATCHED AND c.{OP_COLUMN} <> 'D' THEN UPDATE SET {updates}" if updates else ""
    )
    cols = ", ".join(ident(c) for c in columns)
    values = ", ".join(f"c.{ident(c)}" for c in columns)
    return f"""
        MERGE INTO {cycle.tables.main} t
        USING {view} c
        ON {on} AND {in_chunk}
        WHEN MATCHED AND c.{OP_COLUMN} = 'D' THEN DELETE
        {update_clause}
        WHEN NOT MATCHED AND c.{OP_COLUMN} <> 'D' THEN INSERT ({cols}) VALUES ({values})
    """


def merge_chunk(spark: Any, cycle: Cycle, chunk: Chunk, view: str, tag: str) -> ChunkResult:
    """Diff and apply one chunk, its commit tagged ``tag``; retried against the newer main
    when another writer committed in between. Returns what the committed diffs changed."""
    from pyspark import StorageLevel

    applied: dict[str, dict[int, int]] = {}  # summed over the attempts that committed
    for attempt in range(1, MAX_ATTEMPTS + 1):
        version = main_version(spark, cycle.tables)
        changes = spark.sql(diff_sql(cycle, chunk, version))
        changes = changes.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            counts = changes.groupBy(OP_COLUMN, VNODE_COLUMN).count().collect()
            if not counts:
                return ChunkResult(applied, version, attempt)
            changes.createOrReplaceTempView(view)
            # session confs reach every Delta write of the session: set only around this one
            spark.conf.set(USER_METADATA_CONF, tag)
            try:
                spark.sql(merge_sql(cycle, chunk, view))
            except Exception as exc:
                if is_commit_conflict(exc):
                    continue
                raise
            finally:
                spark.conf.unset(USER_METADATA_CONF)
                spark.catalog.dropTempView(view)
        finally:
            changes.unpersist()
        for row in counts:
            by_vnode = applied.setdefault(row[OP_COLUMN], {})
            vnode = int(row[VNODE_COLUMN])
            by_vnode[vnode] = by_vnode.get(vnode, 0) + int(row["count"])
        committed = main_version(spark, cycle.tables)
        if committed == version + 1:
            return ChunkResult(applied, committed, attempt)
        # another writer committed around ours: diff again against main as it is now
    raise RefreshError(
        f"{cycle.tables.display} kept changing under the merge of chunk {chunk.index} "
        f"(vnodes {chunk.first_vnode}-{chunk.last_vnode}) through {MAX_ATTEMPTS} attempts. "
        f"Another job writes to it continually; pause it and run again (the refresh resumes)."
    )
