"""Issue 11: `refresh_every` (a run refreshes only a model whose last completed cycle is
older than that), and `refreshable_status` with the last completed run's counts and
duration and the last failed run's error, as text and as JSON."""

from __future__ import annotations

import json
import time

import pytest

from dbt.adapters.spark_refreshable.engine import operations
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault, SnapshotRejectedError
from tests.functional.refreshable.engine_harness import EngineModel
from tests.support.faults import injected

DAY1 = [(i, f"one {i}") for i in range(30)]
DAY2 = [(i, f"two {i}") for i in range(10, 40)]


def must_not_run():
    pytest.fail("a skipped run must not evaluate the model")


@pytest.fixture
def model(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", refresh_every="1 hour")
    model.refresh(DAY1)
    return model


def test_a_fresh_model_is_skipped_and_a_due_one_refreshed(model, spark):
    versions = {role: model.table_version(role) for role in ("main", "state")}
    result = model.refresh(must_not_run)
    assert result.skipped is True and result.message.startswith("SKIPPED (fresh, next due at ")
    assert {role: model.table_version(role) for role in versions} == versions, "no commit"

    spark.sql(f"UPDATE {model.tables.state} SET last_completed_at = {time.time() - 3601}")
    result = model.refresh(DAY2)
    assert not result.skipped and model.main() == sorted(DAY2)


def test_full_refresh_and_a_resumable_merge_run_even_when_fresh(model):
    with injected("chunk_done@1:raise"), pytest.raises(InjectedFault):
        model.refresh(DAY2, refresh_every=None, merge_chunk_rows=10)  # crashed mid-merge
    result = model.refresh(must_not_run)  # left to merge: resumed, however fresh the last
    assert result.resumed is True and model.main() == sorted(DAY2)
    result = model.refresh(DAY1, full_refresh=True)
    assert not result.skipped and model.main() == sorted(DAY1)


def test_status_shows_the_last_result_and_the_last_failure(model):
    text = operations.status(model.spark, model.tables)
    assert "+30 ~0 -0 =0 in " in text and "last failed run" not in text, text
    with pytest.raises(SnapshotRejectedError):
        model.refresh(DAY2 + [(10, "again")], refresh_every=None)
    text = operations.status(model.spark, model.tables)
    assert "last failed run" in text and "in phase REFRESHING" in text, text
    assert "duplicate unique_key" in text, text
    found = json.loads(operations.status(model.spark, model.tables, as_json=True))
    assert found["phase"] == "IDLE"
    assert found["last_completed"]["inserted"] == 30 and found["last_completed"]["seconds"] > 0
    assert found["last_error"]["phase"] == "REFRESHING"
    assert "duplicate unique_key" in found["last_error"]["message"]
