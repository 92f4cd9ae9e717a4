"""Merging: the change set applied to main chunk by chunk, each chunk (a range of
vnodes) one atomic, tagged Delta commit.

A chunk's source is its slice of the change set (``diff``), computed against main as of
one version. Before each chunk the merge checks that every commit to main since that
version is one of this cycle's own: its chunk commits touch only their own vnodes, and its
schema changes only add columns the change set already hashed as NULL, so the change set
is still exactly the difference from main as it is now. Otherwise (another writer moved
main, or raced a chunk's commit) the chunk is diffed again, staging's slice against main
as it is, and so are the chunks after it: the other writer's rows are corrected toward
the snapshot.

Applying a chunk twice changes nothing the second time: inserts and updates upsert (a
chunk of inserts alone inserts only the keys main lacks, and finds its rows there the
second time), deletes delete, and ``MERGE`` has no ``WHEN NOT MATCHED BY SOURCE`` clause
(which would scan all of main); the join carries the chunk's slice of main instead
(``VnodeLayout.slice_predicate``): for range vnodes a range of the first key column, which
Delta's file statistics skip on, so the chunk reads only the files holding its keys. A
chunk of every vnode carries none: every row is in it, and evaluating a hash predicate on
each row of main cost its ``MERGE`` ~13% at SF 1 (bench/results/history/2026-11-26-sf1.md).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.spark_refreshable.engine.commits import (
    commits_in_history,
    commits_in_log,
    is_commit_conflict,
    latest_snapshot,
    recent_commits,
    table_version,
)
from dbt.adapters.spark_refreshable.engine.diff import (
    changed_rows_sql,
    diff_sql,
    refuse_bad_keys,
    rows_per_op_and_vnode,
)
from dbt.adapters.spark_refreshable.engine.errors import RefreshError
from dbt.adapters.spark_refreshable.engine.naming import OP_COLUMN, VNODE_COLUMN, ModelTables
from dbt.adapters.spark_refreshable.engine.progress import Chunk
from dbt.adapters.spark_refreshable.engine.sql import as_of, column_list, ident, temp_view
from dbt.adapters.spark_refreshable.engine.tables import (
    SchemaPlan,
)
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout

MAX_ATTEMPTS = 5
# main's commits read at once when looking for those after a version (MainHistory.since)
HISTORY_WINDOW = 32
# Opens one tagged, fenced commit to main (``commits.engine_commit``), a fresh fence each time.
ChunkCommit = Callable[[], AbstractContextManager[None]]
# A chunk's MERGE into a main smaller than this rewrites the files it touches instead of
# marking their old rows deleted in deletion vectors: a small file is cheaper to rewrite
# than to give a vector that every later read applies. A 40-row cycle took 5.5-5.8 s
# against 6.5-6.7, its MERGE 0.7-0.8 s less (bench/small_cycles.py); into TPC-H lineitem of
# 0.9 MB the merge step took 2.4-2.7 s against 2.6-3.0, and of 3.8 MB rewriting took 0.6 s
# more (make bench at SF 0.005, two runs each, and 0.02). A larger main keeps the vectors:
# a chunk writes its changed rows, not the files they are in.
REWRITE_FILES_BELOW_BYTES = 1024**2
MERGE_DELETION_VECTORS_CONF = "spark.databricks.delta.merge.deletionVectors.persistent"
OPERATIONS = {
    "I": "numTargetRowsInserted",
    "U": "numTargetRowsUpdated",
    "D": "numTargetRowsDeleted",
}


def cycle_tag(refresh_id: str) -> str:
    """The userMetadata prefix of every commit a cycle makes to main."""
    return f"dbt-refreshable:{refresh_id}:"


def chunk_tag(refresh_id: str, chunk: int) -> str:
    """The userMetadata of a chunk's commit to main: ties the commit to its cycle and chunk."""
    return f"{chunk_tag_prefix(refresh_id)}{chunk}"


def chunk_tag_prefix(refresh_id: str) -> str:
    return f"{cycle_tag(refresh_id)}chunk:"


def schema_tag(refresh_id: str) -> str:
    """The userMetadata of a cycle's commits that create main or change its schema."""
    return f"{cycle_tag(refresh_id)}schema"


@dataclass(frozen=True)
class MainHistory:
    """Main's commits after a version, newest first (``commits.commits_in_log`` or DESCRIBE
    HISTORY's rows)."""

    latest: int
    commits: list[Any]

    @classmethod
    def since(cls, spark: Any, tables: ModelTables, version: int | None) -> MainHistory:
        """Nothing when ``version`` is still main's latest; else, while no more than
        ``HISTORY_WINDOW`` commits came after ``version`` (None: all of them, as for a main
        that the cycle created), the usual case, read from main's log
        (``commits.commits_in_log``) or where it cannot be, in one DESCRIBE HISTORY; in two
        otherwise."""
        after = -1 if version is None else version
        if (snapshot := latest_snapshot(spark, tables.main)) is not None:
            latest = int(snapshot.version())
            if latest == after:
                return cls(latest, [])
            found = None
            if latest - after <= HISTORY_WINDOW:
                found = commits_in_log(spark, snapshot, latest - after)
            if found is not None:  # the commits up to that very snapshot
                return cls(latest, found)
        found = commits_in_history(spark, tables.main, HISTORY_WINDOW)
        if len(found) == HISTORY_WINDOW and int(found[-1]["version"]) > after + 1:
            found = commits_in_history(spark, tables.main, None)
        return cls(int(found[0]["version"]), [c for c in found if int(c["version"]) > after])

    def only_cycle(self, refresh_id: str) -> bool:
        """Whether every commit is one of the cycle's own."""
        prefix = cycle_tag(refresh_id)
        return all((c["userMetadata"] or "").startswith(prefix) for c in self.commits)

    def committed_chunks(self, refresh_id: str) -> dict[int, tuple[int, dict[str, int]]]:
        """The cycle's chunks committed to main: chunk -> (version, rows per op). A crash
        between a chunk's commit and its checkpoint leaves one."""
        prefix = chunk_tag_prefix(refresh_id)
        found = {}
        for commit in self.commits:
            tag = commit["userMetadata"] or ""
            if tag.startswith(prefix):
                metrics = commit["operationMetrics"] or {}
                counts = {op: int(metrics.get(name, 0)) for op, name in OPERATIONS.items()}
                found[int(tag[len(prefix) :])] = (int(commit["version"]), counts)
        return found


@dataclass(frozen=True)
class Cycle:
    """What every chunk of one cycle merges with: the tables, the schema plan (columns and
    keys) and vnode layout; ``inserts_only``: main did not exist at the diff, staging itself is
    the change set; ``changes``: the change set's rows per op and vnode, as the diff counted
    them (None for a cycle planned by a version that did not store them). Staging and the
    changes table are read at the versions the cycle wrote (``staging_version``,
    ``changes_version``): a run that lost its lease, or another cycle that rewrote them
    since, cannot change what a chunk merges."""

    tables: ModelTables
    plan: SchemaPlan
    layout: VnodeLayout
    inserts_only: bool = False
    changes: dict[str, dict[int, int]] | None = None
    staging_version: int | None = None
    changes_version: int | None = None

    def changes_in(self, chunk: Chunk) -> dict[str, dict[int, int]] | None:
        """The change set's rows per op and vnode within ``chunk``, if the cycle knows them."""
        if self.changes is None:
            return None
        found = {
            op: {v: n for v, n in by_vnode.items() if chunk.first_vnode <= v <= chunk.last_vnode}
            for op, by_vnode in self.changes.items()
        }
        return {op: by_vnode for op, by_vnode in found.items() if by_vnode}


@dataclass
class ChunkResult:
    per_vnode: dict[str, dict[int, int]] = field(default_factory=dict)  # op -> vnode -> rows
    main_version: int = 0
    attempts: int = 0
    current: int | None = None  # main's version the change set is still exact for, if any
    # the operationMetrics of the chunk's commit, when it is main's next version (None: no
    # commit, or one among other writers' commits)
    commit_metrics: dict[str, Any] | None = None

    def total(self, op: str) -> int:
        return sum(self.per_vnode.get(op, {}).values())


def chunk_write_settings(main_bytes: int | None) -> dict[str, str]:
    """Session confs for a chunk's MERGE into a main of ``main_bytes`` bytes (None: not
    known, Delta's defaults): see ``REWRITE_FILES_BELOW_BYTES``."""
    if main_bytes is None or main_bytes >= REWRITE_FILES_BELOW_BYTES:
        return {}
    return {MERGE_DELETION_VECTORS_CONF: "false"}


def main_version(spark: Any, tables: ModelTables) -> int:
    return table_version(spark, tables.main)


def change_slice_sql(cycle: Cycle, chunk: Chunk) -> str:
    """A chunk's slice of the change set, as rows of (op, vnode, columns)."""
    columns = column_list(cycle.plan.columns)
    if cycle.inserts_only:
        source, op = as_of(cycle.tables.staging, cycle.staging_version), "'I'"
    else:
        source, op = as_of(cycle.tables.changes, cycle.changes_version), OP_COLUMN
    return (
        f"SELECT {op} AS {OP_COLUMN}, {ident(VNODE_COLUMN)}, {columns} FROM {source} "
        f"WHERE {ident(VNODE_COLUMN)} {chunk.vnode_range}"
    )


def rediff_sql(cycle: Cycle, chunk: Chunk, version: int) -> str:
    """A chunk's changes against main as of ``version`` (main moved under the cycle): the
    cycle's diff for the chunk's vnodes, with staging's content."""
    tables, plan = cycle.tables, cycle.plan
    pinned = cycle.staging_version
    found = diff_sql(tables, plan, cycle.layout, version, chunk.vnode_range, staging_version=pinned)
    return changed_rows_sql(f"({found})", tables, plan, chunk.vnode_range, pinned)


def merge_sql(
    cycle: Cycle, chunk: Chunk, view: str, ops: Collection[str] = tuple(OPERATIONS)
) -> str:
    """Apply a chunk's diff. Robust to the target having moved since the diff: an insert
    or update upserts, a delete deletes. A chunk whose changes are inserts alone (``ops``,
    as counted) has the insert clause alone, which Delta runs in one pass without first
    materializing the source: a key that main gained after the version the chunk was
    diffed against is another writer's commit, which makes the chunk diff again
    (:func:`merge_chunk`), and applied twice such a chunk finds its rows already there."""
    keys, columns = cycle.plan.keys, cycle.plan.columns
    on = " AND ".join(f"t.{ident(k)} = c.{ident(k)}" for k in keys)
    in_chunk = cycle.layout.slice_predicate(keys, chunk.first_vnode, chunk.last_vnode, "t")
    if in_chunk is not None:
        on += f" AND {in_chunk}"
    # key columns too: a key equal to main's may be spelled otherwise (-0.0 for 0.0)
    updates = ", ".join(f"t.{ident(c)} = c.{ident(c)}" for c in columns)
    cols = ", ".join(ident(c) for c in columns)
    values = ", ".join(f"c.{ident(c)}" for c in columns)
    matched = (
        ""
        if set(ops) == {"I"}
        else f"""
        WHEN MATCHED AND c.{OP_COLUMN} = 'D' THEN DELETE
        WHEN MATCHED AND c.{OP_COLUMN} <> 'D' THEN UPDATE SET {updates}"""
    )
    return f"""
        MERGE INTO {cycle.tables.main} t
        USING {view} c
        ON {on}{matched}
        WHEN NOT MATCHED AND c.{OP_COLUMN} <> 'D' THEN INSERT ({cols}) VALUES ({values})
    """


def merge_chunk(
    spark: Any,
    cycle: Cycle,
    chunk: Chunk,
    view: str,
    commit: ChunkCommit,
    current: int | None,
    ensure_held: Callable[[], None],
) -> ChunkResult:
    """Apply one chunk in a commit opened by ``commit``: tagged with the chunk, and fenced,
    so that it is a no-op once another run took the lease over. ``current``: main's version
    the change set is exact for, as just read (None: it is not, diff the chunk again). A
    commit of another writer around ours (or none of ours: a fenced write) makes the chunk
    diff again against main as it is; ``ensure_held`` raises before such a retry if this
    run lost its lease meanwhile. Returns what the committed changes did and the version
    the change set is exact for afterwards."""
    applied: dict[str, dict[int, int]] = {}  # summed over the attempts that committed
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if attempt > 1:
            ensure_held()
        # ``current`` is trusted as main's version: a commit of another writer since shows
        # as ours not being the next version, below, and the chunk is diffed again
        version = current if current is not None else main_version(spark, cycle.tables)
        exact = current is not None
        if exact and chunk.rows == 0:
            return ChunkResult(applied, version, attempt, current)
        known = cycle.changes_in(chunk) if exact else None
        if known is not None:  # the change set's slice, as the cycle's diff counted it
            counts, missed = known, _merge(spark, cycle, chunk, view, commit, None, known)
        else:
            counts, missed = _diff_and_merge(spark, cycle, chunk, view, commit, version, exact)
            if counts is None:
                return ChunkResult(applied, version, attempt, current)
        if missed:  # the retry checks the lease first: a fenced-off write means it is lost
            current = None
            continue
        _add_counts(applied, counts)
        latest = recent_commits(spark, cycle.tables.main, 1)[0]
        committed = int(latest["version"])
        if committed == version + 1:
            metrics = dict(latest["operationMetrics"] or {})
            return ChunkResult(applied, committed, attempt, committed if exact else None, metrics)
        current = None  # another writer committed around ours: diff again against main now
    raise RefreshError(
        f"{cycle.tables.display} kept changing under the merge of chunk {chunk.index} "
        f"(vnodes {chunk.first_vnode}-{chunk.last_vnode}) through {MAX_ATTEMPTS} attempts. "
        f"Another job writes to it continually; pause it and run again (the refresh resumes)."
    )


def _add_counts(total: dict[str, dict[int, int]], counts: dict[str, dict[int, int]]) -> None:
    """Add ``counts`` (op -> vnode -> rows) into ``total``."""
    for op, by_vnode in counts.items():
        into = total.setdefault(op, {})
        for vnode, rows in by_vnode.items():
            into[vnode] = into.get(vnode, 0) + rows


def _diff_and_merge(
    spark: Any,
    cycle: Cycle,
    chunk: Chunk,
    view: str,
    commit: ChunkCommit,
    version: int,
    exact: bool,
) -> tuple[dict[str, dict[int, int]] | None, bool]:
    """Count the chunk's changes (its slice of the change set, or diffed again against main
    as of ``version``), refuse bad keys, merge them. (counts, whether the MERGE did not
    commit: see ``_merge``); counts None: nothing to merge."""
    from pyspark import StorageLevel

    changes = spark.sql(
        change_slice_sql(cycle, chunk) if exact else rediff_sql(cycle, chunk, version)
    )
    changes = changes.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counts = rows_per_op_and_vnode(changes)
        if not counts:
            return None, False
        refuse_bad_keys(changes, cycle.tables, cycle.plan.keys, counts)
        return counts, _merge(spark, cycle, chunk, view, commit, changes, counts)
    finally:
        changes.unpersist()


def _merge(
    spark: Any,
    cycle: Cycle,
    chunk: Chunk,
    view: str,
    commit: ChunkCommit,
    changes: Any,
    counts: dict[str, dict[int, int]],
) -> bool:
    """One tagged, fenced MERGE of ``changes`` (a DataFrame; None: the chunk's slice of the
    change set, read by the MERGE itself), whose rows per op are ``counts``. Whether it did
    not commit: it lost a commit conflict, or Delta skipped it as fenced off (a newer owner
    wrote to main; a skipped MERGE returns no metrics row), so that a commit of another
    writer is never taken for ours."""
    source = spark.sql(change_slice_sql(cycle, chunk)) if changes is None else changes
    try:
        with temp_view(source, view), commit():
            metrics = spark.sql(merge_sql(cycle, chunk, view, counts)).collect()
    except Exception as exc:
        if is_commit_conflict(exc):
            return True
        raise
    return not metrics
