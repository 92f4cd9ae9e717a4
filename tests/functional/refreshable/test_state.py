"""The state table as a log: each change is a blind append of the next row, and the rule of
engine.state_log says which append won: a writer that read an older state loses and changes
nothing, of racing writers exactly one wins, a loser's row newer than the winner's is not
the state, and the log stays a few rows long. A read takes the state from the log, and scans
the table after a commit that changed rows without being an append."""

from __future__ import annotations

import threading

import pytest

from dbt.adapters.spark_refreshable.engine import lease as lease_module
from dbt.adapters.spark_refreshable.engine.errors import LockHeldError
from dbt.adapters.spark_refreshable.engine.lease import Lease
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.operations import newest_state
from dbt.adapters.spark_refreshable.engine.owners import Owner
from dbt.adapters.spark_refreshable.engine.state import STATE_COLUMNS, Phase, State
from dbt.adapters.spark_refreshable.engine.tables import (
    ensure_bookkeeping_schema,
    ensure_state_table,
)
from tests.functional.refreshable.engine_harness import EngineModel


@pytest.fixture
def tables(spark) -> ModelTables:
    tables = EngineModel(spark, "id INT").tables
    ensure_bookkeeping_schema(spark, tables)  # a refresh makes it; this file may run first
    ensure_state_table(spark, tables)
    return tables


def lease(spark, tables: ModelTables, who: str) -> Lease:
    return Lease(spark, tables.state, Owner.this_process(who), 300)


def test_a_writer_that_read_an_older_state_loses_and_changes_nothing(spark, tables):
    late, early = lease(spark, tables, "late"), lease(spark, tables, "early")
    seen = late.read()
    early.acquire()
    early.heartbeat()
    with pytest.raises(LockHeldError, match="is being refreshed by dbt invocation early"):
        late.acquire(attempts=1, just_read=seen)
    found = lease(spark, tables, "reader").read()
    assert found == early.state and found.current_phase is Phase.REFRESHING
    assert found.lease_version == seen.lease_version + 2
    early.heartbeat()  # the loser's row changes nothing for the owner either
    assert early.holds() and lease(spark, tables, "reader").read() == early.state


def test_a_losers_row_newer_than_the_winners_is_not_the_state(spark, tables, monkeypatch):
    """Two writers read one state; the first to append wins, and the second's append, the
    newest commit, loses: every reader, the proof test's included, takes the winner's."""
    monkeypatch.setattr(lease_module, "COMPACT_AT_ROWS", 5)  # compacts in the heartbeats below
    first, second = lease(spark, tables, "first"), lease(spark, tables, "second")
    seen = first.read()
    second.read()
    assert first._compare_and_set({"owner_id": first.me.owner_id}, require_owner=False)
    assert not second._compare_and_set({"owner_id": second.me.owner_id}, require_owner=False)
    newest = spark.sql(f"DESCRIBE HISTORY {tables.state} LIMIT 1").collect()[0]
    assert second.me.owner_id in newest["userMetadata"]  # the loser's commit is the newest
    assert lease(spark, tables, "reader").read().owner_id == first.me.owner_id
    assert newest_state(spark, tables)["owner_id"] == first.me.owner_id
    top = spark.table(tables.state).where(f"lease_version = {seen.lease_version + 1}")
    assert top.count() == 2  # both rows are there; only the log tells them apart
    # the winner goes on; a compaction keeps the newest row and the log still decides
    for _ in range(3):
        first.heartbeat()
    assert spark.table(tables.state).count() == 1
    assert lease(spark, tables, "reader").read() == first.state


def test_of_three_writers_that_read_the_same_state_exactly_one_wins(spark, tables):
    writers = [lease(spark, tables, f"writer{i}") for i in range(3)]
    seen = writers[0].read()
    # each reads the state itself: a writer's append names the version it read at, and one
    # that never read has a window back to the table's creation, which it loses to
    assert all(writer.read() == seen for writer in writers[1:])
    start = threading.Barrier(len(writers))
    won: dict[str, bool] = {}

    def claim(writer: Lease) -> None:
        start.wait()
        won[writer.me.invocation] = writer._compare_and_set(
            {"owner_id": writer.me.owner_id, "owner_invocation": writer.me.invocation},
            require_owner=False,
        )

    threads = [threading.Thread(target=claim, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [who for who, ok in won.items() if ok]
    assert len(won) == 3 and len(winners) == 1, won
    found = writers[0].read()
    assert found.owner_invocation == winners[0]
    assert found.lease_version == seen.lease_version + 1
    assert lease(spark, tables, "late").read() == found


def test_the_log_stays_short_and_its_newest_row_is_the_state(spark, tables, monkeypatch):
    monkeypatch.setattr(lease_module, "COMPACT_AT_ROWS", 3)  # compact after two changes, not 47
    holder = lease(spark, tables, "holder")
    holder.acquire()
    for _ in range(5):
        holder.heartbeat()
    rows = spark.table(tables.state).count()
    assert 1 <= rows < 3, rows
    newest = lease(spark, tables, "reader").read()
    assert newest == holder.state and newest.owner_id == holder.me.owner_id


def scanned(spark, tables: ModelTables) -> State:
    """The state as the table's newest row says."""
    newest = spark.sql(f"SELECT * FROM {tables.state} ORDER BY lease_version DESC LIMIT 1")
    row = newest.collect()[0].asDict()
    return State(**{name: row[name] for name in STATE_COLUMNS})


def test_a_read_takes_the_state_from_the_log_and_scans_after_rows_changed_otherwise(spark, tables):
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup
    holder = lease(spark, tables, "holder")
    holder.acquire()
    plan = '{"columns": ["ü", "a b", "🙂"], "quote": "\\"x\\""}'
    holder.transition(Phase.FINISHING, cycle_plan=plan, snapshot_rows=3, snapshot_checksum="-0")
    holder.heartbeat()
    before = set(jobs(None))
    read = lease(spark, tables, "reader").read()
    assert set(jobs(None)) == before  # from the newest commit: no Spark job
    assert read == holder.state == scanned(spark, tables)
    assert read.cycle_plan == plan
    # a commit that changes no row is passed by: still no Spark job
    spark.sql(f"ALTER TABLE {tables.state} SET TBLPROPERTIES ('refreshable.test' = 'x')")
    before = set(jobs(None))
    assert lease(spark, tables, "reader").read() == holder.state
    assert set(jobs(None)) == before
    # rows changed by another writer: the table is scanned, and says what it now holds
    spark.sql(f"UPDATE {tables.state} SET heartbeat_at = 1.5")
    before = set(jobs(None))
    assert lease(spark, tables, "reader").read().heartbeat_at == 1.5
    assert set(jobs(None)) != before


def test_rows_counted_through_reads_of_the_newest_commit_still_compact_the_log(
    spark, tables, monkeypatch
):
    """Each change by a lease that only read the newest commit: the row count that commit
    carried makes the log compact as if the lease had scanned it."""
    monkeypatch.setattr(lease_module, "COMPACT_AT_ROWS", 4)
    owner = Owner.this_process("holder")
    Lease(spark, tables.state, owner, 300).acquire()
    for _ in range(9):
        again = Lease(spark, tables.state, owner, 300)
        again.read()
        again.heartbeat()
    assert 1 <= spark.table(tables.state).count() < 4
    assert lease(spark, tables, "reader").read() == again.state == scanned(spark, tables)
