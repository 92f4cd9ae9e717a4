"""One refresh cycle, end to end on Spark + Delta: main ends equal to the snapshot, and
only inserted, updated and deleted rows are written."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse

import pytest

from dbt.adapters.spark_refreshable.engine import merge
from dbt.adapters.spark_refreshable.engine.commits import table_detail
from tests.functional.refreshable.engine_harness import EngineModel, record_messages

DDL = "id INT, name STRING, amount DECIMAL(10,2), note STRING"
FIRST = [
    (1, "Ada", Decimal("10.00"), None),
    (2, "Bram", Decimal("20.00"), "vip"),
    (3, "Chloé", Decimal("30.00"), None),
    (4, "Dmitri", Decimal("40.00"), "x"),
]


@pytest.fixture
def model(spark):
    return EngineModel(spark, DDL, unique_key="id")


def test_first_run_creates_the_tables_and_main_equals_the_snapshot(model, spark):
    result = model.refresh(FIRST)
    assert model.main() == sorted(FIRST)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (4, 0, 0)
    for name in (
        model.tables.main,
        model.tables.staging,
        model.tables.progress,
        model.tables.state,
    ):
        assert spark.catalog.tableExists(name), name
    detail = spark.sql(f"DESCRIBE DETAIL {model.tables.main}").collect()[0]
    assert detail["format"] == "delta"
    state = model.state()
    assert state.phase == "IDLE" and state.owner_id is None and state.last_rows == 4
    assert spark.table(model.tables.staging).count() == 4, "staging keeps the snapshot"


def test_a_refresh_writes_only_the_difference(model, monkeypatch):
    # as into a large main: a small one's touched files are rewritten whole, rows not
    # changed with them (test_compaction.py)
    monkeypatch.setattr(merge, "REWRITE_FILES_BELOW_BYTES", 0)
    model.refresh(FIRST)
    before = model.version()
    second = [
        (1, "Ada", Decimal("10.00"), None),  # unchanged
        (2, "Bram", Decimal("25.00"), "vip"),  # updated
        (3, "Chloé", Decimal("30.00"), "now set"),  # updated: a NULL became a value
        (5, "Eva", Decimal("50.00"), None),  # inserted; 4 is deleted
    ]
    result = model.refresh(second)
    assert model.main() == sorted(second)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 2, 1)
    assert result.rows_unchanged == 1 and result.resumed is False
    merges = model.history(before)
    assert [h["operation"] for h in merges] == ["MERGE"], "one atomic commit for one chunk"
    metrics = merges[0]["operationMetrics"]
    assert metrics["numTargetRowsInserted"] == "1"
    assert metrics["numTargetRowsUpdated"] == "2"
    assert metrics["numTargetRowsDeleted"] == "1"
    assert metrics["numTargetRowsCopied"] == "0", "unchanged rows are not rewritten"


def file_statistics(spark, table: str) -> list[dict]:
    """The statistics of the data files that the latest commit to ``table`` added."""
    location = table_detail(spark, table)["location"]
    log = sorted(Path(urlparse(location).path, "_delta_log").glob("*.json"))[-1]
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    return [json.loads(a["add"]["stats"]) for a in actions if "add" in a]


def test_staging_and_the_change_set_keep_statistics_on_the_vnode_only(model, spark):
    model.refresh(FIRST)
    model.refresh(FIRST[1:])
    vnodes = set(model.vnodes_of({2, 3, 4}).values())
    for table in (model.tables.staging, model.tables.changes):
        stats = file_statistics(spark, table)
        assert stats and all(s["numRecords"] > 0 for s in stats), (table, stats)
        for file in stats:
            # one column, under its physical name (column mapping): the vnode
            assert len(file["minValues"]) == 1 and len(file["maxValues"]) == 1, (table, file)
            (low,) = file["minValues"].values()
            (high,) = file["maxValues"].values()
            assert low <= high and (table == model.tables.changes or low in vnodes), file


def test_scratch_tables_are_overwritten_while_they_fit_and_replaced_when_not(spark):
    """Staging and the change set keep their tables while the snapshot's columns and the
    scratch properties fit (their rows overwritten), and are replaced, their properties
    set again, when a property went missing or a column was added."""
    model = EngineModel(spark, DDL, unique_key="id", on_schema_change="append_new_columns")
    staging, changes = model.tables.staging, model.tables.changes
    model.refresh(FIRST)
    model.refresh(FIRST[1:])
    model.refresh(FIRST[:3])
    assert [newest_operation(spark, t) for t in (staging, changes)] == ["WRITE", "WRITE"]

    stats = "delta.dataSkippingStatsColumns"
    spark.sql(f"ALTER TABLE {staging} UNSET TBLPROPERTIES ('{stats}')")
    model.refresh(FIRST[1:])
    assert "REPLACE" in newest_operation(spark, staging)
    assert newest_operation(spark, changes) == "WRITE"
    assert spark.sql(f"SHOW TBLPROPERTIES {staging} ('{stats}')").first()["value"] == (
        "__refreshable_vnode"
    )

    rows = ", ".join(f"({i}, 'n{i}', {i}.50, 'x')" for i in range(1, 6))
    added = (
        "SELECT id, name, CAST(amount AS DECIMAL(10,2)) AS amount, note, id * 2 AS twice "
        f"FROM VALUES {rows} AS t(id, name, amount, note)"
    )
    model.refresh(added)
    assert all("REPLACE" in newest_operation(spark, t) for t in (staging, changes))
    assert "twice" in spark.table(staging).columns
    assert model.main() == [(i, f"n{i}", Decimal(f"{i}.50"), "x", i * 2) for i in range(1, 6)]
    model.refresh(f"{added} WHERE id > 1")  # the columns as they were: staging overwritten
    assert newest_operation(spark, staging) == "WRITE"


def newest_operation(spark, table: str) -> str:
    return spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").first()["operation"]


def test_a_change_cycle_makes_two_state_commits_and_empties_nothing(model, spark):
    # ids 1-39 from the first build on: its range vnodes then cut them into several chunks
    first = [(i, "w", Decimal("1.00"), None) for i in range(1, 40)]
    model.refresh(first)
    # the state table is created holding the first run's claim: no IDLE row to claim first
    assert model.table_version("state") == 2, "created claimed (0), FINISHING, IDLE"
    model.refresh(first[1:])  # the first cycle with main to diff against writes changes
    versions = {t: model.table_version(t) for t in ("state", "changes", "progress")}
    result = model.refresh([(i, "x", Decimal("1.00"), None) for i in range(2, 9)])
    assert model.table_version("state") - versions["state"] == 2, "acquire, IDLE"
    assert model.table_version("changes") - versions["changes"] == 1, "overwritten once"
    # the cycle's plan rides on the change set's commit, not on a state commit
    tag = spark.sql(f"DESCRIBE HISTORY {model.tables.changes} LIMIT 1").collect()[0]
    assert tag["userMetadata"].startswith(f"dbt-refreshable:{result.refresh_id}:plan:"), tag
    assert model.table_version("progress") == versions["progress"], "the move to IDLE is it"

    # in chunks, merged within checkpoint_interval (an hour here: a slow machine may take
    # the default 30 s over three chunks): each chunk's own commit is its checkpoint
    result = model.refresh(
        [(i, "y", Decimal("2.00"), None) for i in range(1, 40)],
        merge_chunk_rows=16,
        checkpoint_interval=3600,
    )
    assert result.chunks_total >= 3
    assert model.table_version("progress") == versions["progress"], "one commit per chunk"

    # checkpoint_interval=0: every chunk but the last is recorded, the first replacing older rows
    result = model.refresh(
        [(i, "z", Decimal("3.00"), None) for i in range(1, 40)],
        merge_chunk_rows=16,
        checkpoint_interval=0,
    )
    assert result.chunks_total >= 3
    assert model.table_version("progress") - versions["progress"] == result.chunks_total - 1
    rows = spark.sql(f"SELECT refresh_id, chunk FROM {model.tables.progress}").collect()
    assert {r[0] for r in rows} == {result.refresh_id}, "the previous cycles' rows replaced"
    assert {r[1] for r in rows} == set(range(result.chunks_total - 1))


def test_an_unchanged_snapshot_commits_nothing_to_main_and_skips_finishing(model, monkeypatch):
    model.refresh(FIRST)
    before = {t: model.table_version(t) for t in ("main", "state", "progress")}
    said = record_messages(monkeypatch)
    result = model.refresh(list(reversed(FIRST)))
    assert result.rows_affected == 0 and result.rows_unchanged == 4
    assert any(m.endswith("none changed") for m in said), said
    assert not [m for m in said if m.startswith(("merging", "merged"))], "no merge to tell of"
    after = {t: model.table_version(t) for t in ("main", "state", "progress")}
    assert after["main"] == before["main"] and after["progress"] == before["progress"]
    assert after["state"] - before["state"] == 2, "acquire and IDLE: nothing to resume"
    assert model.state().last_refresh_id == result.refresh_id


def test_composite_keys_of_several_types_nulls_and_unicode(spark):
    ddl = "region STRING, day DATE, price DECIMAL(12,4), seq INT, label STRING, score DOUBLE"
    model = EngineModel(spark, ddl, unique_key=["region", "day", "price", "seq"])
    day = dt.date(2026, 11, 22)
    first = [
        ("北京", day, Decimal("1.5000"), 1, "ünïcødé ✓", None),
        ("北京", day, Decimal("1.5000"), 2, None, 1.0),
        ("Zürich", day, Decimal("0.0001"), 1, "a", 2.5),
        ("Zürich", day - dt.timedelta(days=1), Decimal("0.0001"), 1, "b", None),
    ]
    model.refresh(first)
    second = [
        ("北京", day, Decimal("1.5000"), 1, "ünïcødé ✓", 3.0),  # NULL -> value
        ("北京", day, Decimal("1.5000"), 2, None, 1.0),  # unchanged, NULL label
        ("Zürich", day, Decimal("0.0001"), 1, None, 2.5),  # value -> NULL
        ("🙂", day, Decimal("9.9999"), 7, "new", None),  # inserted; yesterday's row deleted
    ]
    result = model.refresh(second)
    assert model.main() == sorted(second)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 2, 1)


def test_null_patterns_are_not_confused_by_the_checksum(spark):
    """(NULL, 'x') and ('x', NULL) are different rows; the content checksum tells them apart."""
    model = EngineModel(spark, "id INT, a STRING, b STRING", unique_key="id")
    model.refresh([(1, None, "x")])
    first = model.state().last_checksum
    model.refresh([(1, "x", None)])
    assert model.main() == [(1, "x", None)]
    assert model.state().last_checksum != first
