"""Main compacted after a cycle that left it with `compact_after_files` small files or more:
main stays a few files, equal to each day's snapshot, and the next cycle still reads main's
keys and hashes from staging (OPTIMIZE changes no row). The run counts main's files from the
load's DESCRIBE DETAIL and its chunks' commit metrics, not by reading main again: the count
it compacted at is the count main had. `compact_after_files: 0` and the policy's other
cases: tests/unit/test_compaction.py. A small main's chunks rewrite the files they touch
instead of giving them deletion vectors (``merge.REWRITE_FILES_BELOW_BYTES``), a large
main's do not: the last test. A few small files beside a large one are bin-packed alone, and
a crash before a compaction leaves a completed cycle: the second test."""

from __future__ import annotations

import hashlib
import re

import pytest

from dbt.adapters.spark_refreshable.engine import merge
from dbt.adapters.spark_refreshable.engine.commits import session_confs, table_detail
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault
from tests.functional.refreshable.engine_harness import EngineModel, record_messages
from tests.support.faults import injected

DDL = "id INT, value STRING"


def day(n: int) -> list[tuple]:
    """About 40 rows; each day updates the 8 with an id divisible by 5, deletes id 10 * n + 1
    and inserts id 100 + n: updates, deletes and inserts in every merge."""
    return [(i, f"v{i}-{n}" if i % 5 == 0 else f"v{i}") for i in range(40) if i != 10 * n + 1] + [
        (100 + n, "new")
    ]


def files(model: EngineModel) -> int:
    return int(table_detail(model.spark, model.tables.main)["numFiles"])


def files_merged(model: EngineModel, last_cycle: int) -> int:
    """Main's files after the chunks of the cycle that followed version ``last_cycle``: at
    the version before its OPTIMIZE, or the latest when OPTIMIZE had nothing to do."""
    optimized = [c["version"] for c in model.history(last_cycle) if c["operation"] == "OPTIMIZE"]
    version = optimized[0] - 1 if optimized else model.version()
    frame = model.spark.sql(f"SELECT * FROM {model.tables.main} VERSION AS OF {version}")
    return len(frame.inputFiles())


def test_main_is_compacted_once_its_cycles_added_enough_files(spark, monkeypatch):
    # chunks of 3 changed rows: each day's 10-11 changes merge in 4 commits, 4 files or more,
    # as into a large main (a small one's chunks rewrite the files they touch)
    monkeypatch.setattr(merge, "REWRITE_FILES_BELOW_BYTES", 0)
    model = EngineModel(spark, DDL, unique_key="id", merge_chunk_rows=3, compact_after_files=4)
    model.refresh(day(0))
    compactions = []
    for n in (1, 2):  # day 1 compacts; day 2 diffs after a compaction, and compacts again
        last_cycle = model.version()
        result = model.refresh(day(n))
        assert model.main() == sorted(day(n))
        assert files(model) < 4, f"day {n}: main was left with {files(model)} files"
        assert result.diff_read_main is False, f"day {n}: main's keys were not read from staging"
        if result.main_compacted is not None:
            compactions.append(result.main_compacted)
            before, _ = result.main_compacted
            assert before == files_merged(model, last_cycle), f"day {n}: main's files miscounted"
    assert len(compactions) == 2, f"main was compacted after {len(compactions)} of 2 days"
    for before, after in compactions:
        assert before >= 4 and after < before, compactions
    # every row deleted, others inserted: main's files removed whole (no deletion vector)
    rows = [(200 + i, "new") for i in range(5)]
    last_cycle = model.version()
    result = model.refresh(rows, merge_chunk_rows=1000, compact_after_files=1)
    assert model.main() == sorted(rows)
    before, _ = result.main_compacted
    assert before == files_merged(model, last_cycle), "main's files miscounted"


def built_then_added(added: int) -> list[tuple]:
    """3,000 rows of random-looking values (one file of well over 32 KiB, the least size
    beside which Delta's file-size histogram can tell a file small) and ``added`` rows more,
    a new key each, which a chunk's MERGE writes to a small file of its own."""
    built = [(i, hashlib.sha256(str(i).encode()).hexdigest()) for i in range(3000)]
    return built + [(10_000 + n, f"added {n}") for n in range(added)]


def test_a_few_small_files_beside_a_large_one_are_compacted_alone_after_a_crash_before_it(
    spark, monkeypatch
):
    """Cycles that each add a small file beside the build's: the third leaves three, but
    crashes before its compaction, after the cycle's move to IDLE: main equals the snapshot.
    The next cycle compacts the four small files alone (the build's file stays in main)."""
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh(built_then_added(0))
    (built_file,) = model.spark.table(model.tables.main).inputFiles()
    for added in (1, 2):
        assert model.refresh(built_then_added(added)).main_compacted is None, f"{added} added"
    with injected("compacting:raise"), pytest.raises(InjectedFault):
        model.refresh(built_then_added(3))
    assert model.main() == sorted(built_then_added(3))
    assert model.state().phase == "IDLE"
    said = record_messages(monkeypatch)
    assert model.refresh(built_then_added(4)).main_compacted == [5, 2]
    assert model.main() == sorted(built_then_added(4))
    told = r"compacted main \(files under [\d,]+ bytes, and files with many deleted rows\): "
    told += "5 files -> 2"
    assert [m for m in said if re.fullmatch(told, m)], said
    kept = model.spark.table(model.tables.main).inputFiles()
    assert built_file in kept and len(kept) == 2, kept


def chunk_merges(model: EngineModel, after: int) -> list[dict[str, str]]:
    """The operation metrics of main's MERGE commits after version ``after``."""
    return [c["operationMetrics"] for c in model.history(after) if c["operation"] == "MERGE"]


def test_a_small_mains_touched_files_are_rewritten_and_a_large_mains_get_deletion_vectors(
    spark, monkeypatch
):
    """Below ``REWRITE_FILES_BELOW_BYTES`` a chunk's MERGE rewrites the files it touches (no
    deletion vector: cheaper to write and to read); at or above it, it writes deletion
    vectors. Either way main equals each snapshot, also when a rewrite meets files that
    carry vectors, and the session's own value of the setting (none, or one) is kept."""
    conf = merge.MERGE_DELETION_VECTORS_CONF
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh(day(0))
    for n, large, own in ((1, False, None), (2, True, None), (3, False, "true")):
        if large:
            monkeypatch.setattr(merge, "REWRITE_FILES_BELOW_BYTES", 1)
        else:  # day 3: the engine's own threshold again, and main has vectors now
            monkeypatch.undo()
        last_cycle = model.version()
        with session_confs(spark, {} if own is None else {conf: own}):
            model.refresh(day(n))
            assert spark.conf.get(conf, None) == own, f"day {n}: the session's setting changed"
        assert model.main() == sorted(day(n)), f"day {n}"
        (metrics,) = chunk_merges(model, last_cycle)
        vectors, removed = (
            int(metrics[m]) for m in ("numTargetDeletionVectorsAdded", "numTargetFilesRemoved")
        )
        if large:
            assert vectors > 0, f"day {n}: a main over the threshold was given no vector"
        else:
            assert vectors == 0 and removed > 0, f"day {n}: a small main's files got vectors"
