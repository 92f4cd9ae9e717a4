"""Main compacted after a cycle that left it with `compact_after_files` small files or more:
main stays a few files, equal to each day's snapshot, and the next cycle still reads main's
keys and hashes from staging (OPTIMIZE changes no row). `compact_after_files: 0` and the
policy's other cases: tests/unit/test_compaction.py."""

from __future__ import annotations

from dbt.adapters.spark_refreshable.engine.tables import table_detail
from tests.functional.refreshable.engine_harness import EngineModel

DDL = "id INT, value STRING"


def day(n: int) -> list[tuple]:
    """40 rows; each day changes the 8 rows with an id divisible by 5."""
    return [(i, f"v{i}-{n}" if i % 5 == 0 else f"v{i}") for i in range(40)]


def files(model: EngineModel) -> int:
    return int(table_detail(model.spark, model.tables.main)["numFiles"])


def test_main_is_compacted_once_its_cycles_added_enough_files(spark):
    # chunks of 3 changed rows: each day's 8 changes merge in 3 commits, 3 files or more
    model = EngineModel(spark, DDL, unique_key="id", merge_chunk_rows=3, compact_after_files=4)
    model.refresh(day(0))
    compactions = []
    for n in (1, 2):  # day 1 compacts; day 2 diffs after a compaction, and compacts again
        result = model.refresh(day(n))
        assert model.main() == sorted(day(n))
        assert files(model) < 4, f"day {n}: main was left with {files(model)} files"
        assert result["diff_read_main"] is False, f"day {n}: main's keys were not read from staging"
        if "main_compacted" in result:
            compactions.append(result["main_compacted"])
    assert len(compactions) == 2, f"main was compacted after {len(compactions)} of 2 days"
    for before, after in compactions:
        assert before >= 4 and after < before, compactions
    operations = [commit["operation"] for commit in model.history()]
    assert "OPTIMIZE" in operations, operations


def files_at(model: EngineModel, version: int) -> int:
    frame = model.spark.sql(f"SELECT * FROM {model.tables.main} VERSION AS OF {version}")
    return len(frame.inputFiles())


def test_the_file_count_that_decides_is_mains_own(spark):
    """The run counts main's files from the load's DESCRIBE DETAIL and its chunks' commit
    metrics (deletion vectors, files removed by deletes, inserts), not by reading main again:
    the count it compacted at is the count main had."""
    model = EngineModel(spark, DDL, unique_key="id", merge_chunk_rows=4, compact_after_files=1)
    model.refresh(day(0))
    days = [
        [(i, f"w{i}") for i in range(0, 40, 2)] + [(i, "new") for i in range(100, 106)],
        [(i, "x") for i in range(100, 110)],  # every row of the day before deleted or new
        [(i, "x" if i % 3 else "y") for i in range(100, 130)],
    ]
    for n, rows in enumerate(days, 1):
        last_cycle = model.version()
        result = model.refresh(rows)
        assert model.main() == sorted(rows)
        # the cycle's last commit: before its OPTIMIZE, or the last if OPTIMIZE had nothing to do
        optimized = [
            c["version"]
            for c in model.history()
            if c["operation"] == "OPTIMIZE" and c["version"] > last_cycle
        ]
        merged = optimized[0] - 1 if optimized else model.version()
        before, _ = result["main_compacted"]
        assert before == files_at(model, merged) > 0, f"day {n}"
