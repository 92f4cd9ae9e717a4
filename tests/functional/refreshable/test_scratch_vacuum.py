"""Staging's and the change set's old files deleted by a vacuum after a completed cycle
(engine/scratch_vacuum.py): when a table's version is due, files removed over the retention
ago go, fresher ones stay, the last snapshot stays readable (the next cycle still diffs
against it instead of main, and the proof test reads it), and a crash before the vacuum
leaves a completed cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.spark_refreshable.engine import scratch_vacuum
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault
from tests.functional.refreshable.engine_harness import EngineModel, record_messages
from tests.functional.refreshable.test_divergence import content_difference
from tests.support.faults import injected


def day(n: int) -> list[tuple]:
    """20 rows, a few of them updated each day, one deleted and one inserted."""
    return [(i, f"v{i}-{n}" if i % 4 == n % 4 else f"v{i}") for i in range(20) if i != n] + [
        (100 + n, "new")
    ]


def data_files(folder: Path) -> set[str]:
    return {p.name for p in folder.rglob("*.parquet")}


def live_files(model: EngineModel) -> set[str]:
    """The files staging's newest version reads."""
    return {Path(f).name for f in model.spark.table(model.tables.staging).inputFiles()}


def test_old_scratch_files_are_deleted_when_due_and_the_last_snapshot_stays(spark, monkeypatch):
    monkeypatch.setattr(scratch_vacuum, "VACUUM_EVERY_VERSIONS", 2)
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    said = record_messages(monkeypatch)
    model.refresh(day(0))  # staging version 0
    model.refresh(day(1))  # staging 1, the change set 0
    with injected("vacuuming:raise"), pytest.raises(InjectedFault):
        model.refresh(day(2))  # staging 2: due, and the run stops before the vacuum
    assert model.state().phase == "IDLE"
    assert model.main() == sorted(day(2))
    assert not [m for m in said if m.startswith("vacuumed")], said

    # the change set's version 2: due; its files were removed just now
    assert model.refresh(day(3)).scratch_vacuumed == {"changes": 0}
    assert "vacuumed the change set: 0 files of its old versions deleted" in said, said
    staging = model.folder("staging")
    assert len(data_files(staging)) > len(live_files(model))

    monkeypatch.setattr(scratch_vacuum, "RETAIN_HOURS", 0)
    vacuumed = model.refresh(day(4)).scratch_vacuumed  # staging 4: due, its old files go
    assert vacuumed is not None and vacuumed["staging"] > 0, vacuumed
    assert f"vacuumed staging: {vacuumed['staging']:,} files of its old versions deleted" in said
    assert data_files(staging) == live_files(model)

    said.clear()
    result = model.refresh(day(5))  # reads main's keys and hashes from staging's version 4
    assert not result.diff_read_main, said
    assert (result.rows_inserted, result.rows_deleted) == (2, 2)  # 4 and 105 in, 5 and 104 out
    assert model.main() == sorted(day(5))
    assert content_difference(model) == (0, 0)
