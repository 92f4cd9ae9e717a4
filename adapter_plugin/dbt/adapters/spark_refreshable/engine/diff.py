"""The change set: the snapshot's difference from main, computed once per cycle.

One narrow pass. Staging's keys, vnode and stored row hash, counted per key (which finds
duplicate keys on the way), are full-outer-joined with main's keys and row hashes as of
one pinned version: a key only in staging is an insert, only in main a delete, in both
with another hash an update. Only the changed rows are then read back from staging with
their content and written to the changes table, ordered by vnode so that a merge chunk
reads its own slice of a small table. Unchanged rows never leave staging.

The same job summarizes staging (rows, checksum and rows with a NULL key, per vnode) from
a narrow scan of it, unless its write counted its totals. Without those, with an index of
as many rows as staging's commit wrote, staging is summed first in a job of its own instead:
a snapshot with the last one's rows and checksum again is unchanged, and the diff does not
run (a no-change cycle is a load).

Main's side of the diff need not read main: while main still equals the last completed
snapshot row for row, that snapshot's keys, vnodes and row hashes are in staging as the
cycle that loaded it left it (a Delta version the state row records): a :class:`MainIndex`,
read narrow, instead of every column of main hashed again. The refresh decides when main
can be trusted so (``RefreshRun._main_index``); the index proves it is that snapshot by its
row count and content checksum before the diff is used, both worked out from staging's and
the diff's own rows (:meth:`MainIndex.paired`), not from a scan of their own.

A change set is only valid against main as of its version; ``merge`` checks that before
each chunk and, when another writer moved main, diffs the chunk's vnodes again with the
same :func:`diff_sql`: one change criterion for both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from dbt.adapters.spark_refreshable.engine.errors import RefreshError, SnapshotRejectedError
from dbt.adapters.spark_refreshable.engine.load import (
    StagedSnapshot,
    StagedTotals,
    duplicate_keys_refused,
    staging_totals_sql,
)
from dbt.adapters.spark_refreshable.engine.naming import (
    HASH_COLUMN,
    OP_COLUMN,
    RESERVED_PREFIX,
    VNODE_COLUMN,
    ModelTables,
    fold_name,
)
from dbt.adapters.spark_refreshable.engine.sql import (
    as_of,
    column_list,
    ident,
    qualified,
    row_hash_expression,
    showable,
    temp_view,
    type_sql,
)
from dbt.adapters.spark_refreshable.engine.tables import SchemaPlan, replace_scratch_table
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout

DUPLICATE = "X"  # the diff's op for a key that staging holds more than once
MAIN_DUPLICATE = "M"  # a key that main holds more than once (another writer inserted it)
MAIN_NULL_KEY = "N"  # a row of main with a NULL in the key (an adopted or written-to main)
BAD_KEYS = (DUPLICATE, MAIN_DUPLICATE, MAIN_NULL_KEY)
STAGING_SUMMARY = "S"  # a row of the cycle's diff job: staging's rows in one vnode, summed
EXAMPLES = 5
# the diff's own columns beside the keys, named so that no key column can take their names
COPIES = f"{RESERVED_PREFIX}copies"  # rows with the key on one side
PRESENT = f"{RESERVED_PREFIX}present"  # TRUE where the side has the key
FIRST = f"{RESERVED_PREFIX}first"  # a row's place among the rows with its key (1: kept)
HASH = ident(HASH_COLUMN)
# a diff row's row hashes: staging's and main's (NULL on the side that lacks the key)
STAGED_HASH = f"{RESERVED_PREFIX}staged_hash"
MAIN_HASH = f"{RESERVED_PREFIX}main_hash"
# the summary rows' own columns (NULL on the diff's rows)
ROWS = f"{RESERVED_PREFIX}rows"
CHECKSUM = f"{RESERVED_PREFIX}checksum"
NULL_KEYS = f"{RESERVED_PREFIX}null_keys"
# the cycle's diff job's sums: op -> vnode -> (rows, checksum, rows with a NULL key), and per
# op of the diff its rows and both sides' row hashes summed
Sums = dict[str, dict[Any, tuple[int, Any, int]]]
PairedSums = dict[str, tuple[int, int, int]]


@dataclass(frozen=True)
class ChangeCounts:
    """Rows per op ('I', 'U', 'D') and vnode."""

    per_vnode: dict[str, dict[int, int]]

    def total(self, op: str | None = None) -> int:
        ops = [op] if op else list(self.per_vnode)
        return sum(sum(self.per_vnode.get(o, {}).values()) for o in ops)

    def by_vnode(self) -> dict[int, int]:
        """Changed rows per vnode, all ops together: what sizes the merge chunks."""
        rows: dict[int, int] = {}
        for counts in self.per_vnode.values():
            for vnode, n in counts.items():
                rows[vnode] = rows.get(vnode, 0) + n
        return rows


@dataclass(frozen=True)
class MainIndex:
    """Main's rows as keys, vnodes and row hashes: the last completed snapshot in staging
    at ``staging_version``, of ``rows`` rows and content checksum ``checksum``."""

    staging_version: int
    rows: int
    checksum: str
    vnode_rows: tuple[int, ...]  # its rows per vnode, as the cycle that staged it summed
    # a temporary view of staging at that version, resolved before the load overwrote it
    # (:func:`pinned_index`); None: read by version
    view: str | None = None

    def sql(self, tables: ModelTables, keys: tuple[str, ...], vnode_range: str | None) -> str:
        """Main's side of the diff: the snapshot's keys are unique, one copy each."""
        return (
            f"SELECT {column_list(keys)}, {ident(VNODE_COLUMN)}, {HASH}, "
            f"1 AS {COPIES}, TRUE AS {PRESENT} "
            f"FROM {self.view or as_of(tables.staging, self.staging_version)} "
            f"{_in_vnodes(vnode_range)}"
        )

    def mismatch(self, found: tuple[int, Any] | Exception | None) -> str | None:
        """Why staging at the version is not the snapshot recorded (rewritten, vacuumed,
        recreated), from ``found``: its (row count, checksum) as the diff paired them
        (:meth:`paired`; None: it could not), or the error the diff raised reading it;
        None: it is that snapshot."""
        if isinstance(found, Exception):
            return f"staging's version {self.staging_version} cannot be read ({found})"[:300]
        if found is None:
            return (
                f"the diff found keys it could not pair one to one with staging's version "
                f"{self.staging_version}"
            )
        rows, checksum = found
        if rows != self.rows or str(int(checksum or 0)) != self.checksum:
            return f"staging's version {self.staging_version} is not the last snapshot"
        return None

    def paired(
        self, staged: StagedSnapshot | StagedTotals, ops: PairedSums
    ) -> tuple[int, int] | None:
        """The index's row count and checksum as the diff's rows account for them, from
        staging's totals (``staged``) and the diff's rows per op (rows, staging's and the
        index's row hashes summed): every row of the index is paired with staging's row of
        its key, equal, updated, or missing (deleted). So the index holds staging's rows
        less the inserts plus the deletes, and staging's checksum with each updated or
        inserted row's hash taken out and each updated or deleted row's hash of the index
        put in. None where the diff found a key not paired one to one (a bad key)."""
        if any(op in ops for op in BAD_KEYS):
            return None
        rows, checksum = staged.rows, int(staged.checksum or 0)
        for op, (n, staged_hashes, main_hashes) in ops.items():
            rows += {"I": -n, "D": n}.get(op, 0)
            checksum += main_hashes - staged_hashes
        return rows, checksum

    def is_snapshot_of(self, staged: StagedSnapshot | StagedTotals) -> bool:
        """Whether the snapshot just staged, summed as ``staged``, is this one again: the
        same rows, content checksum and no NULL key. Main holds this snapshot, so the diff
        would find nothing; it need not run (a multiset of the same 64-bit row hashes, the
        trust the diff itself puts in them, and the index's own proof)."""
        return staged.null_keys == 0 and self.mismatch((staged.rows, staged.checksum)) is None

    def staged_with(
        self, written: StagedTotals, counts: dict[str, dict[int, int]]
    ) -> StagedSnapshot | None:
        """Staging's summary where it holds this snapshot changed by ``counts`` (the diff's
        rows per op and vnode), with its totals as ``written``: per vnode, this snapshot's
        rows plus the inserts less the deletes (each of its keys once, in the same vnode).
        None where its rows per vnode are not known (recorded by an older version), the
        diff found a bad key, or they do not add up to the rows written."""
        vnode_rows = dict(enumerate(self.vnode_rows))
        for op, sign in (("I", 1), ("D", -1)):
            for vnode, n in counts.get(op, {}).items():
                vnode_rows[vnode] = vnode_rows.get(vnode, 0) + sign * n
        if (
            sum(self.vnode_rows) != self.rows
            or any(op in counts for op in BAD_KEYS)
            or any(n < 0 for n in vnode_rows.values())
            or sum(vnode_rows.values()) != written.rows
        ):
            return None
        rows = {vnode: n for vnode, n in vnode_rows.items() if n}
        return StagedSnapshot(written.rows, written.checksum, rows, written.null_keys)


@contextlib.contextmanager
def pinned_index(
    spark: Any, tables: ModelTables, index: MainIndex | None, view: str
) -> Iterator[MainIndex | None]:
    """``index`` read through ``view``, a view of staging at the index's version resolved
    now, while the block lasts. Resolved before the load overwrites staging, while that
    version is staging's newest, the view keeps the version's file list that the overwrite
    lists anyway; a read by version after the overwrite builds it again from the log, in
    three jobs (a 40-row change cycle's diff step 0.1-0.3 s longer,
    bench/results/history/2026-12-06-index-pinned-before-the-load.md). An index that
    cannot be resolved is read by version, whose error the diff reports."""
    with contextlib.ExitStack() as held:
        if index is not None:
            version = f"SELECT * FROM {as_of(tables.staging, index.staging_version)}"
            try:
                index = replace(index, view=held.enter_context(temp_view(spark.sql(version), view)))
            except Exception:  # read by version in the diff, which fails and says why
                pass
        # outside the handler: an error of the block is not chained to a failed resolution
        yield index


def main_hashes_sql(
    tables: ModelTables,
    plan: SchemaPlan,
    layout: VnodeLayout,
    version: int,
    main_lacks: frozenset[str],
) -> str:
    """Main's keys, vnodes and row hashes as of ``version``. A planned column that main
    lacks at that version (``main_lacks``, names folded by ``fold_name``: the snapshot adds
    it) is NULL there until the merge adds it, and is hashed as such."""
    columns = ", ".join(
        f"CAST(NULL AS {type_sql(f.dataType)}) AS {ident(f.name)}"
        if fold_name(f.name) in main_lacks
        else ident(f.name)
        for f in plan.schema.fields
    )
    return (
        f"SELECT {column_list(plan.keys)}, "
        f"{layout.expression(plan.keys)} AS {ident(VNODE_COLUMN)}, "
        f"{row_hash_expression(plan.schema)} AS {HASH}, TRUE AS {PRESENT} "
        f"FROM (SELECT {columns} FROM {tables.main} VERSION AS OF {int(version)})"
    )


def _in_vnodes(vnode_range: str | None) -> str:
    return f"WHERE {ident(VNODE_COLUMN)} {vnode_range}" if vnode_range else ""


def diff_sql(
    tables: ModelTables,
    plan: SchemaPlan,
    layout: VnodeLayout,
    main_version: int | None,
    vnode_range: str | None = None,
    main_lacks: frozenset[str] = frozenset(),
    staging_version: int | None = None,
    index: MainIndex | None = None,
    summarized: bool = False,
    staging_summed: bool = True,
) -> str:
    """(op, vnode, keys, copies, staging's and main's row hashes) of every changed or
    duplicate key: the one change criterion of the engine (staging's stored row hash
    against main's, computed alike), for all vnodes (the cycle's diff) or for
    ``vnode_range`` (a chunk's diff again, when main moved). ``main_version`` None: there
    is no main, every key is an insert. ``staging_version``: the cycle's staging, pinned
    (None: staging as it is). ``index``: main's keys and hashes without reading main (see
    :class:`MainIndex`). ``summarized``: with staging's summary (the cycle's diff): a first
    build's rows carry it (:func:`_as_staging_summary`), others gain summary rows
    (:func:`_with_summaries`) unless ``staging_summed`` is false (summed before, or counted
    by its write)."""
    keys = plan.keys
    staging = as_of(tables.staging, staging_version)
    staged = _per_key(staging, keys, vnode_range)
    index_rows = None if index is None else index.sql(tables, keys, vnode_range)
    if main_version is None:
        compared = (
            f"SELECT CASE WHEN {COPIES} > 1 THEN '{DUPLICATE}' ELSE 'I' END AS {OP_COLUMN}, "
            f"{ident(VNODE_COLUMN)}, {column_list(keys)}, {COPIES}, {HASH} AS {STAGED_HASH}, "
            f"CAST(NULL AS BIGINT) AS {MAIN_HASH} FROM ({staged})"
        )
        return _as_staging_summary(compared, keys) if summarized else compared
    main = index_rows or _per_key(
        f"({main_hashes_sql(tables, plan, layout, main_version, main_lacks)})", keys, vnode_range
    )
    compared = _compared_sql(staged, main, keys)
    if not summarized:
        return compared
    return _with_summaries(compared, staging if staging_summed else None, keys)


def _as_staging_summary(compared: str, keys: tuple[str, ...]) -> str:
    """A first build's diff rows (every key of staging once, its first row's hash) carrying
    staging's summary of them (``ROWS``, ``CHECKSUM``, ``NULL_KEYS``), which the diff's
    job sums per vnode: staging is not scanned again. Exact where no key is a duplicate
    (one row each); a duplicate refuses the snapshot."""
    null_key = " OR ".join(f"{ident(k)} IS NULL" for k in keys)
    return (
        f"SELECT *, {COPIES} AS {ROWS}, CAST({STAGED_HASH} AS DECIMAL(38,0)) AS {CHECKSUM}, "
        f"CASE WHEN {null_key} THEN {COPIES} ELSE 0 END AS {NULL_KEYS} FROM ({compared})"
    )


def _with_summaries(compared: str, staging: str | None, keys: tuple[str, ...]) -> str:
    """The diff's rows, then per vnode staging's rows, checksum and rows with a NULL key
    (op ``STAGING_SUMMARY``; none when ``staging`` is None): summed in the diff's job from
    staging's rows as read (a narrow scan, cheaper than summing the per-key rows after
    their sort)."""
    vnode, no_keys = ident(VNODE_COLUMN), ", ".join(f"NULL AS {ident(k)}" for k in keys)
    summed = [
        f"SELECT *, NULL AS {ROWS}, NULL AS {CHECKSUM}, NULL AS {NULL_KEYS} FROM ({compared})"
    ]
    if staging is not None:
        summed.append(
            f"SELECT '{STAGING_SUMMARY}', {vnode}, {no_keys}, NULL, NULL, NULL, {ROWS}, "
            f"{CHECKSUM}, {NULL_KEYS} FROM ({_staging_summary_sql(staging, keys)})"
        )
    return " UNION ALL ".join(summed)


def _staging_summary_sql(staging: str, keys: tuple[str, ...]) -> str:
    """Per vnode of ``staging``: its rows, content checksum and rows with a NULL key."""
    totals = staging_totals_sql(keys)
    return (
        f"SELECT {ident(VNODE_COLUMN)}, {totals['rows']} AS {ROWS}, "
        f"{totals['checksum']} AS {CHECKSUM}, {totals['null_keys']} AS {NULL_KEYS} "
        f"FROM {staging} GROUP BY {ident(VNODE_COLUMN)}"
    )


def summarize_staging(spark: Any, tables: ModelTables, keys: tuple[str, ...]) -> StagedSnapshot:
    """Staging as it is, summed in a job of its own (a narrow scan)."""
    rows = spark.sql(_staging_summary_sql(tables.staging, keys)).collect()
    return _staged_snapshot({int(r[0]): (int(r[1]), r[2] or 0, int(r[3])) for r in rows})


def _staged_snapshot(per_vnode: dict[int, tuple[int, Any, int]]) -> StagedSnapshot:
    """Staging's summary from its per-vnode (rows, checksum, rows with a NULL key)."""
    return StagedSnapshot(
        rows=sum(n for n, _, _ in per_vnode.values()),
        checksum=str(int(sum(c for _, c, _ in per_vnode.values()))),
        vnode_rows={vnode: n for vnode, (n, _, _) in per_vnode.items()},
        null_keys=sum(k for _, _, k in per_vnode.values()),
    )


def _compared_sql(staged: str, main: str, keys: tuple[str, ...]) -> str:
    """Staging's and main's rows per key (``_per_key``) joined: (op, vnode, keys, copies,
    both sides' hashes) of every key whose hashes differ, present on one side only,
    duplicate or null."""
    null_key = " OR ".join(f"{qualified('m', k)} IS NULL" for k in keys)
    chosen_keys = ", ".join(
        f"CASE WHEN s.{PRESENT} THEN {qualified('s', k)} ELSE {qualified('m', k)} END AS {ident(k)}"
        for k in keys
    )
    join = " AND ".join(f"{qualified('s', k)} = {qualified('m', k)}" for k in keys)
    return f"""
        SELECT CASE WHEN s.{COPIES} > 1 THEN '{DUPLICATE}'
                    WHEN s.{PRESENT} IS NULL AND ({null_key}) THEN '{MAIN_NULL_KEY}'
                    WHEN m.{COPIES} > 1 THEN '{MAIN_DUPLICATE}'
                    WHEN m.{PRESENT} IS NULL THEN 'I'
                    WHEN s.{PRESENT} IS NULL THEN 'D'
                    ELSE 'U' END AS {OP_COLUMN},
               coalesce(s.{ident(VNODE_COLUMN)}, m.{ident(VNODE_COLUMN)}) AS {ident(VNODE_COLUMN)},
               {chosen_keys}, greatest(s.{COPIES}, m.{COPIES}) AS {COPIES},
               s.{HASH} AS {STAGED_HASH}, m.{HASH} AS {MAIN_HASH}
        FROM ({staged}) s
        FULL OUTER JOIN ({main}) m
        ON {join}
        WHERE s.{PRESENT} IS NULL OR m.{PRESENT} IS NULL OR s.{COPIES} > 1 OR m.{COPIES} > 1
           OR s.{HASH} <> m.{HASH}
    """


def _per_key(source: str, keys: tuple[str, ...], vnode_range: str | None) -> str:
    """One row per key of ``source`` (in ``vnode_range``): the vnode and hash of its row
    with the lowest hash, and how many rows have the key. A window over the key rather than
    a GROUP BY: the join that follows needs its sides hashed and sorted by the key anyway,
    which the window's own exchange and sort provide, where an aggregation built two hash
    maps of every key before them (SF 1: the cycle's diff job 6.3-7.1 s against 8.7-10.6 s,
    ``bench/results/history/2026-11-30-diff-by-window.md``)."""
    window = f"PARTITION BY {column_list(keys)} ORDER BY {HASH}"
    narrow = f"{column_list(keys)}, {ident(VNODE_COLUMN)}, {HASH}"
    return (
        f"SELECT {narrow}, {COPIES}, TRUE AS {PRESENT} "
        f"FROM (SELECT {narrow}, count(*) OVER ({window} "
        f"ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS {COPIES}, "
        f"row_number() OVER ({window}) AS {FIRST} "
        f"FROM {source} {_in_vnodes(vnode_range)}) WHERE {FIRST} = 1"
    )


def changed_rows_sql(
    diff: str,
    tables: ModelTables,
    plan: SchemaPlan,
    vnode_range: str | None = None,
    staging_version: int | None = None,
) -> str:
    """The rows of a diff (a relation or subquery of :func:`diff_sql`) with their content
    from staging (pinned at ``staging_version``), as (op, vnode, columns); deletes carry
    only their keys. Staging meets the inserted and updated keys in an inner join, which
    broadcasts them when they are few: staging is streamed once, not shuffled. Keys too come
    from staging: the diff's went through the window over the key, which spells -0.0 as 0.0."""
    on = " AND ".join(f"{qualified('d', k)} = {qualified('s', k)}" for k in plan.keys)
    content = column_list(plan.columns, "s")
    keys_only = ", ".join(
        qualified("d", f.name)
        if f.name in plan.keys
        else f"CAST(NULL AS {type_sql(f.dataType)}) AS {ident(f.name)}"
        for f in plan.schema.fields
    )
    op, vnode = f"d.{OP_COLUMN}", f"d.{ident(VNODE_COLUMN)}"
    return (
        f"SELECT {op}, {vnode}, {content} "
        f"FROM (SELECT * FROM {as_of(tables.staging, staging_version)} "
        f"{_in_vnodes(vnode_range)}) s "
        f"JOIN (SELECT * FROM {diff} WHERE {OP_COLUMN} <> 'D') d ON {on} "
        f"UNION ALL SELECT {op}, {vnode}, {keys_only} FROM {diff} d WHERE d.{OP_COLUMN} = 'D'"
    )


@dataclass(frozen=True)
class ChangeSet:
    spark: Any
    tables: ModelTables
    plan: SchemaPlan
    diff: Any  # the persisted DataFrame of diff_sql; None when the snapshot was not diffed
    counts: ChangeCounts
    staged: StagedSnapshot  # staging, summed by the diff's job or in one before it
    index_refused: str | None  # why the index offered was not used (main was read), if so

    @property
    def diffed(self) -> bool:
        return self.diff is not None

    def write(self, files: int) -> None:
        """Write the changed rows, with staging's content (keys only for deletes), to the
        changes table, in about ``files`` files ordered by vnode."""
        with temp_view(self.diff, f"refreshable_diff_{id(self)}") as view:
            rows = self.spark.sql(changed_rows_sql(view, self.tables, self.plan))
            replace_scratch_table(
                rows.repartitionByRange(max(1, files), VNODE_COLUMN), self.tables.changes
            )

    def refuse_bad_keys(self) -> None:
        """Refuse keys the merge cannot apply (see :func:`refuse_bad_keys`)."""
        refuse_bad_keys(self.diff, self.tables, self.plan.keys, self.counts.per_vnode)


def rows_per_op_and_vnode(changes: Any) -> dict[str, dict[int, int]]:
    """Rows of a diff or change set per op and vnode (one narrow aggregate)."""
    per_vnode: dict[str, dict[int, int]] = {}
    for row in changes.groupBy(OP_COLUMN, VNODE_COLUMN).count().collect():
        per_vnode.setdefault(row[OP_COLUMN], {})[int(row[VNODE_COLUMN])] = int(row["count"])
    return per_vnode


@contextlib.contextmanager
def change_set(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    layout: VnodeLayout,
    main_version: int | None,
    index: MainIndex | None = None,
    staged_rows: int | None = None,
    written: StagedTotals | None = None,
) -> Iterator[ChangeSet]:
    """Diff staging against main as of ``main_version`` (read through ``index`` if given)
    and summarize staging. A snapshot that is the index's again
    (:meth:`MainIndex.is_snapshot_of`) has no changes and is not diffed. Staging's totals
    as its write counted them (``written``) tell it, and with the index's rows per vnode
    and the diff's counts give staging's summary (:meth:`MainIndex.staged_with`); without
    them, where staging's rows as its commit counted them (``staged_rows``) are the
    index's, a job of its own sums staging first, and otherwise the diff's job sums it. An
    index that is not the last snapshot, or cannot be read, is dropped and the diff read
    from main. The diff is held (narrow: keys and ops) until the block ends; bad keys are
    refused by :meth:`ChangeSet.refuse_bad_keys`."""
    staged = None  # staging summed in a job before the diff's
    if index is not None:
        if written is None and staged_rows in (None, index.rows):  # the last snapshot again?
            staged = summarize_staging(spark, tables, plan.keys)
        again = staged or (None if written is None else index.staged_with(written, {}))
        if again is not None and index.is_snapshot_of(again):
            yield ChangeSet(spark, tables, plan, None, ChangeCounts({}), again, None)
            return
    combined, summed, refused = _diff_job(
        spark, tables, plan, layout, main_version, index, staged, written
    )
    try:
        staging_sums = summed.pop(STAGING_SUMMARY, {})
        counts = {op: {vnode: n for vnode, (n, _, _) in by.items()} for op, by in summed.items()}
        if staged is None and index is not None and written is not None and refused is None:
            staged = index.staged_with(written, counts) or summarize_staging(
                spark, tables, plan.keys
            )
        elif main_version is None:  # a first build: its diff's rows summed staging
            staged = (
                summarize_staging(spark, tables, plan.keys)
                if DUPLICATE in summed
                else _staged_snapshot(summed.get("I", {}))
            )
        elif staged is None:
            staged = _staged_snapshot(staging_sums)
        diff = combined.where(f"{OP_COLUMN} <> '{STAGING_SUMMARY}'")
        yield ChangeSet(spark, tables, plan, diff, ChangeCounts(counts), staged, refused)
    finally:
        combined.unpersist()


def _diff_job(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    layout: VnodeLayout,
    main_version: int | None,
    index: MainIndex | None,
    staged: StagedSnapshot | None,
    written: StagedTotals | None,
) -> tuple[Any, Sums, str | None]:
    """The cycle's diff job (:func:`_held_and_summed`) through ``index``, or, where the
    index is not the last snapshot or cannot be read, again reading main: the held diff,
    its sums, and why the index was refused (None: used, or none offered). Staging is
    summed in it unless it was before (``staged``), or its write counted its totals
    (``written``: its summary follows from the index's) and the index is used."""
    main_lacks = frozenset(fold_name(name) for name, _ in plan.add)

    def run(through: MainIndex | None) -> tuple[Any, Sums, PairedSums]:
        sum_staging = staged is None and (written is None or through is None)
        query = diff_sql(
            tables,
            plan,
            layout,
            main_version,
            main_lacks=main_lacks,
            index=through,
            summarized=True,
            staging_summed=sum_staging,
        )
        return _held_and_summed(spark, query)

    refused = None
    try:
        combined, summed, ops = run(index)
    except Exception as error:  # the index's read: the diff reads main below
        if index is None:
            raise
        refused = index.mismatch(error)
    else:
        if index is not None:
            staging = staged or written or _staged_snapshot(summed.get(STAGING_SUMMARY, {}))
            paired = index.paired(staging, ops)
            if (refused := index.mismatch(paired)) is not None:
                combined.unpersist()
    if refused is not None:
        combined, summed, _ = run(None)
    return combined, summed, refused


def _held_and_summed(spark: Any, query: str) -> tuple[Any, Sums, PairedSums]:
    """The cycle's diff job: ``query`` persisted, and collected per op and vnode as the
    diff's rows (with the checksum and NULL keys a first build's rows carry), or a summary
    row's (rows, checksum, rows with a NULL key); and per op of the diff, its rows and both
    sides' row hashes summed (what :meth:`MainIndex.paired` reads)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    def summed_hashes(column: str) -> Any:
        return F.sum(F.col(column).cast("DECIMAL(38,0)"))

    combined = spark.sql(query).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        grouped = combined.groupBy(OP_COLUMN, VNODE_COLUMN).agg(
            F.count("*"),
            F.sum(ROWS),
            F.sum(CHECKSUM),
            F.sum(NULL_KEYS),
            summed_hashes(STAGED_HASH),
            summed_hashes(MAIN_HASH),
        )
        summed: Sums = {}
        ops: PairedSums = {}
        for op, vnode, n, rows, checksum, null_keys, staged, main in grouped.collect():
            counted = int(rows) if op == STAGING_SUMMARY else n
            at = None if vnode is None else int(vnode)
            summed.setdefault(op, {})[at] = (counted, checksum or 0, int(null_keys or 0))
            if op == STAGING_SUMMARY:
                continue
            before = ops.get(op, (0, 0, 0))
            ops[op] = (before[0] + n, before[1] + int(staged or 0), before[2] + int(main or 0))
    except BaseException:
        combined.unpersist()
        raise
    return combined, summed, ops


def refuse_bad_keys(
    diff: Any, tables: ModelTables, keys: tuple[str, ...], per_vnode: dict[str, dict[int, int]]
) -> None:
    """Refuse a diff (rows of :func:`diff_sql`) that found keys the merge cannot apply: a
    key twice in the snapshot, twice in main, or NULL in main, named with examples."""
    for op in BAD_KEYS:
        if op not in per_vnode:
            continue
        count = sum(per_vnode[op].values())
        examples = showable(diff.where(f"{OP_COLUMN} = '{op}'").limit(EXAMPLES)).collect()
        shown = "; ".join(
            ", ".join(f"{k}={row[k]!r}" for k in keys) + _copies(row.asDict()) for row in examples
        )
        if op == DUPLICATE:
            raise SnapshotRejectedError(duplicate_keys_refused(keys, shown, count))
        held = (
            f"holds {count} unique_key {list(keys)} value(s) more than once, e.g. {shown}"
            if op == MAIN_DUPLICATE
            else f"holds {count} row(s) with a NULL in unique_key {list(keys)}"
        )
        raise RefreshError(
            f"{tables.display} {held}: rows another writer put there, which a refresh "
            f"cannot match to the snapshot. Delete them from {tables.display} (or rebuild it "
            f"with `dbt run --full-refresh --select <model>`) and run again. This refresh "
            f"applied none of them."
        )


def _copies(row: dict[str, Any]) -> str:
    return f" ({row[COPIES]} rows)" if row.get(COPIES) else ""
