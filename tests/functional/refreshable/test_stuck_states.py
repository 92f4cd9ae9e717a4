"""Issue 10 items 4 (the owner's lease duration), 5-9, 12 and 13: states a run could not
get out of, repairs that did not repair, tables it must not touch. Each test drives the
engine on the shared session into the state, then checks the way out works and main ends
equal to the snapshot."""

from __future__ import annotations

import json
import shutil
from contextlib import AbstractContextManager

import pytest

from dbt.adapters.spark_refreshable.engine import operations
from dbt.adapters.spark_refreshable.engine.commits import engine_commit
from dbt.adapters.spark_refreshable.engine.errors import (
    InjectedFault,
    LeaseLostError,
    LockHeldError,
    RefreshError,
)
from dbt.adapters.spark_refreshable.engine.lease import Lease
from dbt.adapters.spark_refreshable.engine.merge import schema_tag
from dbt.adapters.spark_refreshable.engine.owners import _ACTIVE_OWNERS, Owner
from tests.functional.refreshable.engine_harness import EngineModel
from tests.support.faults import acting_at, injected

DAY1 = [(i, f"one {i}") for i in range(40)]
DAY2 = [(i, f"two {i}" if i % 2 else f"one {i}") for i in range(10, 60)]
# every cycle merges in one chunk, but a crashed one: day 2 in chunks of 10 rows, so that the
# crash leaves chunks to resume (each chunk is a MERGE: one costs a second or more)
CRASHED_CHUNK_ROWS = 10


@pytest.fixture
def model(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.refresh(DAY1)
    return model


def crash(model: EngineModel, point: str, rows) -> None:
    with injected(f"{point}:raise"), pytest.raises(InjectedFault):
        model.refresh(rows, merge_chunk_rows=CRASHED_CHUNK_ROWS)


@pytest.mark.parametrize("how", ["dropped", "replaced"])
def test_item5_main_dropped_or_replaced_while_finishing(model, spark, how):
    crash(model, "chunk_done@1", DAY2)
    assert model.cycle_to_resume() is not None
    spark.sql(f"DROP TABLE {model.tables.main}")
    if how == "replaced":
        spark.sql(
            f"CREATE TABLE {model.tables.main} USING delta AS "
            f"SELECT CAST(id AS INT) AS id, concat('other ', id) AS value FROM range(5, 25)"
        )
    result = model.refresh(DAY2)
    assert result.resumed is False, "a fresh load, not a resume over another table"
    assert model.main() == sorted(DAY2)
    assert model.state().phase == "IDLE"


def add_constraint_while_loading(
    model: EngineModel, constraint: str
) -> AbstractContextManager[None]:
    """A CHECK constraint that a user adds to main once the cycle's snapshot was checked
    against main's constraints, before its merge: Delta then refuses the merge."""
    main = model.tables.main
    return acting_at("finishing", lambda: model.spark.sql(f"ALTER TABLE {main} {constraint}"))


def test_item6_a_merge_error_that_repeats_discards_the_cycle_after_a_failed_resume(model, spark):
    constraint = "ADD CONSTRAINT short CHECK (value NOT LIKE 'two%')"
    added = add_constraint_while_loading(model, constraint)
    with added, pytest.raises(RefreshError, match="the next `dbt run` resumes it") as failed:
        model.refresh(DAY2)
    assert "CHECK constraint short" in str(failed.value) and "\tat " not in str(failed.value)
    assert model.state().phase == "FINISHING"
    with pytest.raises(RefreshError, match="discards this cycle and loads a fresh snapshot"):
        model.refresh(DAY2)
    spark.sql(f"ALTER TABLE {model.tables.main} DROP CONSTRAINT short")
    day3 = [(i, f"three {i}") for i in range(0, 30)]
    result = model.refresh(day3)
    assert result.resumed is False, "the failed cycle was discarded, day 3 loaded"
    assert model.main() == sorted(day3)


def test_item6_duplicate_or_null_keys_in_main_are_named(model, spark):
    """Each is named; once the rows are removed, the next run succeeds."""
    bad_rows = [
        (
            "(12, 'sneaked in')",
            r"holds 1 unique_key \['id'\] value\(s\) more than once, e\.g\. id=12",
        ),
        ("(NULL, 'no key')", r"holds 1 row\(s\) with a NULL in unique_key \['id'\]"),
    ]
    for row, match in bad_rows:
        spark.sql(f"INSERT INTO {model.tables.main} VALUES {row}")
        with pytest.raises(RefreshError, match=match):
            model.refresh(DAY2)
        spark.sql(f"DELETE FROM {model.tables.main} WHERE value IN ('sneaked in', 'no key')")
    model.refresh(DAY2)
    assert model.main() == sorted(DAY2)


def status(model: EngineModel) -> str:
    return operations.status(model.spark, model.tables)


def test_item7_status_in_every_phase(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    assert "not built yet" in status(model)
    model.refresh(DAY1)
    assert f"{model.tables.display}: IDLE" in status(model)
    crash(model, "loading", DAY2)
    assert ": REFRESHING" in status(model)
    crash(model, "chunk_done@2", DAY2)
    text = status(model)
    assert ": REFRESHING, merging" in text
    assert f"merge progress: 2/{model.chunks_planned()} chunks done" in text
    crash(model, "merged", DAY2)
    chunks = model.chunks_planned()
    text = status(model)
    assert ": REFRESHING, merging" in text and f"{chunks}/{chunks} chunks done" in text
    as_json = json.loads(operations.status(model.spark, model.tables, as_json=True))
    assert as_json["cycle"]["merging"] and as_json["cycle"]["chunks_done"] == chunks
    model.refresh(DAY2)
    assert ": IDLE" in status(model)
    # a merge that failed is recorded as FINISHING, its plan moved into the state row
    added = add_constraint_while_loading(model, "ADD CONSTRAINT c CHECK (value NOT LIKE 'three%')")
    with added, pytest.raises(RefreshError, match="the next `dbt run` resumes it"):
        model.refresh([(i, f"three {i}") for i in range(10, 60)])
    text = status(model)
    assert ": FINISHING, merging" in text, text
    assert f"merge progress: 0/{model.chunks_planned()} chunks done" in text, text


def test_item8_full_refresh_repairs_a_state_table_with_two_rows(model, spark):
    spark.sql(f"INSERT INTO {model.tables.state} SELECT * FROM {model.tables.state}")
    with pytest.raises(LeaseLostError, match="holds 2"):
        model.refresh(DAY2)
    model.refresh(DAY2, full_refresh=True)
    assert model.main() == sorted(DAY2)
    assert model.state().phase == "IDLE"


def test_item9_a_failed_lock_claim_leaves_no_live_owner_behind(model, monkeypatch):
    lease = Lease(model.spark, model.tables.state, Owner.this_process("pytest"), 300)

    def failing(changes, require_owner):
        raise RuntimeError("the metastore went away")

    monkeypatch.setattr(lease, "_compare_and_set", failing)
    with pytest.raises(RuntimeError):
        lease.acquire()
    assert lease.me.owner_id not in _ACTIVE_OWNERS
    model.refresh(DAY2)  # the same process refreshes the model afterwards
    assert model.main() == sorted(DAY2)


def test_item12_full_refresh_takes_the_lease_before_dropping(model):
    holder = Lease(model.spark, model.tables.state, Owner.this_process("holder"), 300)
    holder.acquire()
    try:
        with pytest.raises(LockHeldError):
            model.refresh(DAY2, full_refresh=True)
        assert model.main() == sorted(DAY1), "nothing dropped"
    finally:
        holder.release()
    model.refresh(DAY2, full_refresh=True)
    assert model.main() == sorted(DAY2)


def test_item13_a_user_table_named_like_a_bookkeeping_table_is_never_touched(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    staging = model.tables.staging
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {model.tables.bookkeeping}")
    spark.sql(f"CREATE TABLE {staging} (note STRING) USING delta")
    spark.sql(f"INSERT INTO {staging} VALUES ('mine')")
    for full_refresh in (False, True):
        with pytest.raises(RefreshError, match="is not a bookkeeping table of dbt-refreshable"):
            model.refresh(DAY1, full_refresh=full_refresh)
        assert [tuple(r) for r in spark.table(staging).collect()] == [("mine",)]


@pytest.mark.extended  # an upgrade from an earlier layout, once per table: `make test-all`
def test_item13_tables_of_0_1_0_without_the_marker_are_recognized(model, spark):
    for name in (model.tables.staging, model.tables.progress, model.tables.state):
        spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES ('dbt_refreshable.bookkeeping')")
    model.refresh(DAY2)
    assert model.main() == sorted(DAY2)


@pytest.mark.extended  # an upgrade from an earlier layout, once per table: `make test-all`
def test_item4_a_state_table_of_0_1_0_gains_the_owners_lease_timeout(model, spark):
    """The state row stores the owner's lock_timeout; older state tables get the column."""
    old_columns = ", ".join(
        c for c in spark.table(model.tables.state).columns if c != "lease_timeout"
    )
    spark.sql(
        f"CREATE OR REPLACE TABLE {model.tables.state} USING delta "
        f"TBLPROPERTIES ('dbt_refreshable.bookkeeping' = 'true') "
        f"AS SELECT {old_columns} FROM {model.tables.state}"
    )
    assert "lease_timeout" not in spark.table(model.tables.state).columns
    crash(model, "chunk_done@1", DAY2)
    assert model.state().lease_timeout == 300.0  # the harness's default lock_timeout
    model.refresh(DAY2)
    assert model.main() == sorted(DAY2)


@pytest.mark.parametrize(
    "rewritten", [pytest.param("changes", marks=pytest.mark.extended), "staging"]
)
def test_item4_a_resume_reads_staging_and_changes_as_its_cycle_wrote_them(model, spark, rewritten):
    """A run that lost its lease (or a later cycle) rewrites staging or the change set
    under a cycle left to merge: the chunks still merge what the cycle planned (a resume
    finds its plan in an earlier commit of the change set). With staging
    rewritten, another writer moved main so that the pending chunks are diffed again."""
    crash(model, "chunk_done@1", DAY2)
    spark.sql(f"DELETE FROM {getattr(model.tables, rewritten)}")
    if rewritten == "staging":
        last_chunk = model.cycle_to_resume().plan.chunks[-1]
        first, last = last_chunk.first_vnode, last_chunk.last_vnode
        vnode_of = model.vnodes_of({i for i, _ in DAY1})
        pending = next(i for i, _ in DAY1[10:] if first <= vnode_of[i] <= last)  # in main
        spark.sql(f"UPDATE {model.tables.main} SET value = 'other' WHERE id = {pending}")
    result = model.refresh(lambda: pytest.fail("a resume does not run the model"))
    assert result.resumed is True
    assert model.main() == sorted(DAY2)


@pytest.mark.parametrize(("role", "written"), [("staging", "data"), ("progress", "log")])
def test_a_first_build_replaces_bookkeeping_files_a_stopped_create_left(spark, role, written):
    """A run stopped inside the CREATE of a bookkeeping table leaves files in its folder
    that the catalog lists no table for; the next run, holding the lock, replaces them."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.leave_files_of_a_create(role, written)
    model.refresh(DAY1)
    assert model.main() == sorted(DAY1) and model.state().phase == "IDLE"
    assert spark.catalog.tableExists(getattr(model.tables, role))


def test_files_in_mains_folder_are_named_and_kept_and_the_cycle_resumes(spark):
    """Main's folder holds files the catalog lists no table for (a table dropped while its
    files stayed, or a CREATE stopped midway): they may be the user's, so the run names the
    folder and keeps them; once they are moved away, the next run completes the cycle."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    folder = model.leave_files_of_a_create("main", "log")
    with pytest.raises(RefreshError) as refused:
        model.refresh(DAY1)
    message = str(refused.value)
    assert str(folder) in message and "delete or move that folder, and run again" in message
    assert (folder / "_delta_log").is_dir() and not spark.catalog.tableExists(model.tables.main)
    shutil.rmtree(folder)
    model.refresh(DAY1)
    assert model.main() == sorted(DAY1) and model.state().phase == "IDLE"


@pytest.mark.parametrize("by", ["this cycle", "another cycle", "this cycle, and a file"])
def test_a_create_of_main_stopped_before_the_catalog_listed_it(spark, by):
    """A run stopped between the commit of main's CREATE and the catalog listing main leaves
    that one commit, tagged with its cycle, alone in main's folder. The resume of that cycle
    deletes it and creates main; a commit of another cycle's there, or a file beside the
    log, is named and kept."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    with injected("finishing:raise"), pytest.raises(InjectedFault):
        model.refresh(DAY1)  # a first build: main is created by the merge that follows
    cycle = model.state().refresh_id if by.startswith("this cycle") else "0123456789abcdef"
    folder = model.folder("main")
    with engine_commit(spark, schema_tag(cycle)):
        spark.sql(f"CREATE TABLE delta.`{folder.as_uri()}` (id INT, value STRING) USING delta")
    if by.endswith("a file"):
        (folder / "notes.txt").write_text("someone's")
    if by != "this cycle":
        with pytest.raises(RefreshError, match="delete or move that folder"):
            model.refresh(lambda: pytest.fail("a resume does not run the model"))
        assert (folder / "_delta_log").is_dir()
        shutil.rmtree(folder)  # the next run discards the cycle whose merge failed
        model.refresh(DAY1)
    else:
        result = model.refresh(lambda: pytest.fail("a resume does not run the model"))
        assert result.resumed is True
    assert model.main() == sorted(DAY1) and model.state().phase == "IDLE"
