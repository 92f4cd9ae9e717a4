"""Main compacted after a cycle that left it with `compact_after_files` small files or more:
main stays a few files, equal to each day's snapshot, and the next cycle still reads main's
keys and hashes from staging (OPTIMIZE changes no row). The run counts main's files from the
load's DESCRIBE DETAIL and its chunks' commit metrics, not by reading main again: the count
it compacted at is the count main had. `compact_after_files: 0` and the policy's other
cases: tests/unit/test_compaction.py."""

from __future__ import annotations

from dbt.adapters.spark_refreshable.engine.commits import table_detail
from tests.functional.refreshable.engine_harness import EngineModel

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
    optimized = [
        c["version"]
        for c in model.history()
        if c["operation"] == "OPTIMIZE" and c["version"] > last_cycle
    ]
    version = optimized[0] - 1 if optimized else model.version()
    frame = model.spark.sql(f"SELECT * FROM {model.tables.main} VERSION AS OF {version}")
    return len(frame.inputFiles())


def test_main_is_compacted_once_its_cycles_added_enough_files(spark):
    # chunks of 3 changed rows: each day's 10-11 changes merge in 4 commits, 4 files or more
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
