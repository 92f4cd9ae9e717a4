"""The lock: two refreshes of one model never run at once; a stale lock is taken over only
after lock_timeout; a run whose lease was taken over stops, and commits nothing to main once
another run wrote to it."""

from __future__ import annotations

import shutil
import threading
import time

import pytest

from dbt.adapters.spark_refreshable.engine import faults, merge, progress, tables
from dbt.adapters.spark_refreshable.engine.commits import engine_commit, fence_app_id
from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    LeaseLostError,
    LockHeldError,
)
from dbt.adapters.spark_refreshable.engine.job import RefreshResult
from dbt.adapters.spark_refreshable.engine.lease import Lease
from dbt.adapters.spark_refreshable.engine.owners import Owner, clock_margin
from dbt.adapters.spark_refreshable.engine.tables import create_state_table
from tests.functional.refreshable.engine_harness import EngineModel

ROWS = [(i, f"v{i}") for i in range(60)]


@pytest.fixture
def model(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", lock_timeout=30)
    model.refresh(ROWS)
    return model


def race_two_refreshes(model: EngineModel, round_: int) -> None:
    """Two threads start a refresh of ``model`` at the same moment: exactly one refreshes
    (main then holds its rows), the other is refused, naming the lock's holder."""
    start = threading.Barrier(2)
    outcomes: list[object] = []

    def refresh(tag: str) -> None:
        def slow_snapshot():
            time.sleep(2)  # hold the lock long enough for the other to meet it
            return model.frame([(i, f"{tag}{round_}") for i in range(60)])

        start.wait()
        try:
            outcomes.append(model.refresh(slow_snapshot))
        except Exception as exc:  # the refusal, or a failure for the assertion to show
            outcomes.append(exc)

    threads = [threading.Thread(target=refresh, args=(t,)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    refused = [o for o in outcomes if isinstance(o, LockHeldError)]
    succeeded = [o for o in outcomes if isinstance(o, RefreshResult)]
    assert len(refused) == 1 and len(succeeded) == 1, outcomes
    message = str(refused[0])
    assert "is being refreshed by dbt invocation pytest" in message
    assert "phase REFRESHING since" in message and "refreshable_unlock" in message
    winner = {v for _, v in model.main()}
    assert len(winner) == 1 and winner.pop()[1:] == str(round_)
    assert model.state().phase == "IDLE"


def test_two_racing_refreshes_exactly_one_runs(model):
    for round_ in range(3):
        race_two_refreshes(model, round_)


def test_two_racing_first_builds_exactly_one_runs(spark):
    """Neither finds a state table: one creates it holding its claim, the other finds it
    claimed."""
    race_two_refreshes(EngineModel(spark, "id INT, value STRING", unique_key="id"), 0)


def test_a_first_build_that_meets_a_create_in_flight_waits_for_it(spark):
    """The other run's CREATE has written its files and not yet registered the table: this
    run waits for the table and finds it claimed, and refreshes nothing."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    folder = model.leave_files_of_a_create("state")
    other = Lease(spark, model.tables.state, Owner("remote", "other-host", 4242, "1", "inv"), 30)

    def register_after_a_while():
        time.sleep(1.5)
        shutil.rmtree(folder)
        other.own_new_table(lambda claimed: create_state_table(spark, model.tables, claimed))
        other.forget()

    creator = threading.Thread(target=register_after_a_while)
    creator.start()
    try:
        with pytest.raises(LockHeldError, match=r"other-host, pid 4242\): phase REFRESHING"):
            model.refresh(ROWS)
    finally:
        creator.join()
    assert not spark.catalog.tableExists(model.tables.main)


def test_files_a_stopped_create_left_are_named_and_nothing_changes(spark, monkeypatch):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    folder = model.leave_files_of_a_create("state")
    monkeypatch.setattr(tables, "CREATOR_WAIT_SECONDS", 1.0)
    with pytest.raises(ConfigError) as refused:
        model.refresh(ROWS)
    message = str(refused.value)
    assert model.tables.role_display("state") in message and str(folder) in message
    assert "delete that folder and run again" in message
    assert not spark.catalog.tableExists(model.tables.main)
    assert (folder / "part-00000-unregistered.snappy.parquet").exists()
    shutil.rmtree(folder)  # as the message says
    model.refresh(ROWS)
    assert model.main() == ROWS and model.state().phase == "IDLE"


def hold_lock_from_elsewhere(model, heartbeat_age: float) -> None:
    """A run on another host holds the lock, its last heartbeat `heartbeat_age` ago."""
    lease = Lease(
        model.spark, model.tables.state, Owner("remote", "other-host", 4242, "1", "remote-inv"), 30
    )
    lease.acquire()
    lease.forget()
    model.spark.sql(f"UPDATE {model.tables.state} SET heartbeat_at = {time.time() - heartbeat_age}")


def test_a_live_remote_owner_is_refused_a_stale_one_taken_over(model):
    hold_lock_from_elsewhere(model, heartbeat_age=5)
    with pytest.raises(LockHeldError, match=r"other-host, pid 4242\): phase REFRESHING"):
        model.refresh(ROWS)
    assert model.state().owner_host == "other-host", "refusing changes nothing"
    hold_stale = model.state()
    stale = time.time() - 30 - clock_margin(30) - 1  # past the owner's lease and the margin
    model.spark.sql(f"UPDATE {model.tables.state} SET heartbeat_at = {stale}")
    new_rows = [(i, "after takeover") for i in range(10)]
    model.refresh(new_rows, allow_empty_snapshot=True)
    assert model.main() == sorted(new_rows)
    assert model.state().phase == "IDLE" and hold_stale.refresh_id != model.state().last_refresh_id


def force_unlock(model) -> None:
    """An operator's `refreshable_unlock force`, while the owner's heartbeat may commit."""
    operator = Lease(model.spark, model.tables.state, Owner.this_process("operator"), 30)
    for _ in range(5):  # the owner's heartbeat may commit in between: try again
        operator.read()
        try:
            operator.force_release()
            return
        except LeaseLostError:
            continue
    pytest.fail("the lease could not be released in 5 attempts")


def test_a_run_whose_lease_was_taken_over_stops_and_the_next_run_completes_its_cycle(
    model, monkeypatch
):
    record_chunks = progress.record_chunks
    taken_over = []

    def record_then_lose_the_lease(*args, **kwargs):
        record_chunks(*args, **kwargs)
        if not taken_over:  # after the first chunk, an operator force-unlocks
            force_unlock(model)
            taken_over.append(True)

    monkeypatch.setattr(progress, "record_chunks", record_then_lose_the_lease)
    changed = [(i, "changed") for i in range(60)]
    with pytest.raises(LeaseLostError, match="lost the refresh lock"):
        model.refresh(changed, merge_chunk_rows=30, checkpoint_interval=0)
    state = model.state()
    assert state.owner_id is None and model.cycle_to_resume() is not None, "left to resume"
    monkeypatch.undo()
    result = model.refresh(lambda: pytest.fail("resumes, does not reload"))
    assert result.resumed is True and model.main() == sorted(changed)


def test_another_writer_mid_merge_is_corrected_toward_the_snapshot(model, monkeypatch):
    """After the first chunk, another job rewrites rows of the last chunk's vnodes, rows
    the snapshot leaves unchanged among them. The change set computed before is no longer
    exact: the remaining chunks diff again against main as it is, and main still ends
    equal to the snapshot."""
    record_chunks = progress.record_chunks
    vandalised: list[int] = []

    def record_then_interfere(*args, **kwargs):
        record_chunks(*args, **kwargs)
        if vandalised:
            return
        last = model.cycle_to_resume().plan.chunks[-1]
        vnode_of = model.vnodes_of({r[0] for r in ROWS})
        ids = [i for i, v in vnode_of.items() if last.first_vnode <= v <= last.last_vnode]
        model.spark.sql(
            f"UPDATE {model.tables.main} SET value = 'vandalised' "
            f"WHERE id IN ({', '.join(map(str, ids))})"
        )
        vandalised.extend(ids)

    monkeypatch.setattr(progress, "record_chunks", record_then_interfere)
    snapshot = [(i, "changed" if i % 2 else f"v{i}") for i in range(60)]
    result = model.refresh(snapshot, merge_chunk_rows=8, checkpoint_interval=0)
    assert vandalised and result.chunks_total >= 3
    assert any(i % 2 == 0 for i in vandalised), "unchanged rows were overwritten too"
    assert model.main() == sorted(snapshot), "the other writer's rows are corrected"


def test_a_key_another_writer_inserts_mid_merge_is_corrected_in_a_chunk_of_inserts(
    spark, monkeypatch
):
    """Every chunk of the cycle only inserts (merge_sql's insert clause alone): the even
    keys built first, the odd ones added, spread over every vnode. After the first chunk,
    another job inserts keys the last chunk inserts, with other values: that chunk diffs
    again, finds them as updates, and main ends equal to the snapshot. Fails when an
    insert-only MERGE trusts the change set whatever main's history holds."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", lock_timeout=30)
    model.refresh([(i, f"v{i}") for i in range(0, 120, 2)])
    record_chunks = progress.record_chunks
    inserted: list[int] = []
    snapshot = [(i, f"v{i}") for i in range(120)]

    def record_then_insert(*args, **kwargs):
        record_chunks(*args, **kwargs)
        if inserted:
            return
        last = model.cycle_to_resume().plan.chunks[-1]
        vnode_of = model.vnodes_of({i for i, _ in snapshot if i % 2})
        ids = [i for i, v in vnode_of.items() if last.first_vnode <= v <= last.last_vnode]
        values = ", ".join(f"({i}, 'another writer')" for i in ids)
        model.spark.sql(f"INSERT INTO {model.tables.main} VALUES {values}")
        inserted.extend(ids)

    monkeypatch.setattr(progress, "record_chunks", record_then_insert)
    result = model.refresh(snapshot, merge_chunk_rows=16, checkpoint_interval=0)
    assert inserted and result.chunks_total >= 3
    assert result.rows_inserted + result.rows_updated == 60, result.message
    assert model.main() == sorted(snapshot), "the other writer's rows are corrected"


@pytest.mark.parametrize("changed", [False, True], ids=["the last snapshot again", "changed"])
def test_another_writer_while_the_snapshot_loads_is_corrected_toward_it(model, changed):
    """A cycle reads main's version before the load, so a write to main while the snapshot
    loads lands after it. The snapshot of the last cycle again (its diff skipped: main's
    index says nothing changed) or a changed one: the merge finds that write in main's
    history, every chunk diffs again against main as it is, and main ends equal to the
    snapshot."""
    snapshot = [(i, f"changed{i}" if changed and i % 7 == 0 else v) for i, v in ROWS]
    writes = []

    class WriteWhileLoading:
        def reached(self, point: str) -> None:
            if point == "loading" and not writes:
                model.spark.sql(
                    f"UPDATE {model.tables.main} SET value = 'written' WHERE id % 5 = 0"
                )
                writes.append(point)

    faults.install(WriteWhileLoading)
    try:
        result = model.refresh(snapshot, merge_chunk_rows=20)
    finally:
        faults.install(None)
    assert writes and result.diff_skipped is not changed
    assert model.main() == sorted(snapshot), "the other writer's rows are corrected"


class StoppedRun:
    """A refresh in a thread that stops right before its second chunk's MERGE, after its
    lease check, until :meth:`go_on`: in a long GC its heartbeat goes on (``'runs'``); in
    a stopped process (SIGSTOP) it stops too, for good (``'stopped'``) or, once the run
    goes on, waking before the MERGE (``'wakes first'``)."""

    def __init__(self, model, monkeypatch, rows, heartbeat: str = "runs", **config) -> None:
        self.model = model
        self.paused, self.released, self.beat = (threading.Event() for _ in range(3))
        self.owner: str | None = None  # the run's owner id, once it stopped
        self.outcome: list[object] = []
        merge_slice, renew = merge._merge, Lease.heartbeat

        def pause(spark, cycle, chunk, *args):
            if threading.current_thread() is self.thread and chunk.index == 1:
                self.owner = model.state().owner_id
                self.paused.set()
                self.released.wait(300)
                if heartbeat == "wakes first":
                    self.beat.wait(60)
            return merge_slice(spark, cycle, chunk, *args)

        def stoppable_heartbeat(lease):
            if heartbeat == "runs" or lease.me.owner_id != self.owner:
                return renew(lease)
            if heartbeat == "stopped" or not self.released.is_set():
                return None
            try:
                return renew(lease)
            finally:
                self.beat.set()

        monkeypatch.setattr(merge, "_merge", pause)
        monkeypatch.setattr(Lease, "heartbeat", stoppable_heartbeat)
        self.thread = threading.Thread(target=self._run, args=(rows, config), name="stopped")
        self.thread.start()

    def _run(self, rows, config) -> None:
        try:
            self.outcome.append(self.model.refresh(rows, **config))
        except BaseException as exc:
            self.outcome.append(exc)

    def wait_until_stopped(self) -> None:
        assert self.paused.wait(300), "the run never reached its second chunk"

    def go_on(self) -> object:
        """Let it go on; what it returned or raised."""
        self.released.set()
        self.thread.join(300)
        assert len(self.outcome) == 1, self.outcome
        return self.outcome[0]


def take_over_and_refresh_again(model, rows) -> None:
    """An operator unlocks the stopped run, a second run finishes its cycle, a third
    refreshes to ``rows``."""
    force_unlock(model)
    assert model.refresh(lambda: pytest.fail("resumes, does not reload")).resumed is True
    model.refresh(rows)


DAY_2 = [(i, "day 2") for i in range(60)]
DAY_3 = [(i, "day 3") for i in range(60)]


def test_a_paused_run_that_lost_its_lease_commits_nothing_to_main(model, monkeypatch):
    """A run pauses right before a chunk's MERGE, after its lease check (a long GC). An
    operator unlocks it, a second run finishes its cycle and a third refreshes again. When
    the paused run goes on, its MERGE of the old cycle's rows is fenced off (Delta's
    txnVersion below the newer owners'): main stays the last snapshot."""
    stopped = StoppedRun(model, monkeypatch, DAY_2, merge_chunk_rows=30)
    try:
        stopped.wait_until_stopped()
        take_over_and_refresh_again(model, DAY_3)
    finally:
        outcome = stopped.go_on()
    assert isinstance(outcome, LeaseLostError), outcome
    assert model.main() == sorted(DAY_3), "the paused run's MERGE changed main"
    assert model.state().phase == "IDLE"


def test_a_stopped_run_whose_heartbeat_read_the_newer_owners_state_commits_nothing(
    model, monkeypatch
):
    """The same with the whole run stopped (SIGSTOP), its heartbeat too. When it goes on,
    its heartbeat first finds the lease lost, reading the newest owner's state row: the
    MERGE after that must still be fenced off, never carry a token derived from the lease
    version it read (the Spark Connect suite once saw that MERGE land)."""
    # a heartbeat every second, so that it beats soon after the run goes on
    stopped = StoppedRun(
        model, monkeypatch, DAY_2, heartbeat="wakes first", merge_chunk_rows=30, lock_timeout=3
    )
    try:
        stopped.wait_until_stopped()
        take_over_and_refresh_again(model, DAY_3)
    finally:
        outcome = stopped.go_on()
    assert stopped.beat.is_set(), "the stopped run's heartbeat never ran after it went on"
    assert isinstance(outcome, LeaseLostError), outcome
    assert model.main() == sorted(DAY_3), "the stopped run's MERGE changed main"
    assert model.state().phase == "IDLE"


def test_a_fenced_off_merge_is_never_taken_for_the_runs_own_commit(model, monkeypatch):
    """A run stops (its heartbeat too) before a chunk's MERGE; another owner takes the lease
    over and makes exactly one fenced commit to main. The stopped run's MERGE is skipped by
    Delta, and main's version is then one above the one it knew, as if the commit were its
    own: it must not checkpoint the chunk as merged. Else the run that resumes the cycle
    skips that chunk and main keeps its old rows."""
    stopped = StoppedRun(model, monkeypatch, DAY_2, heartbeat="stopped", merge_chunk_rows=30)
    try:
        stopped.wait_until_stopped()
        force_unlock(model)
        other = Lease(model.spark, model.tables.state, Owner.this_process("other"), 30)
        other.acquire()
        main = model.tables.main
        with engine_commit(model.spark, "another owner", (fence_app_id(main), other.fence())):
            model.spark.sql(f"INSERT INTO {main} SELECT * FROM {main} WHERE false")
    finally:
        outcome = stopped.go_on()
    assert isinstance(outcome, LeaseLostError), outcome
    other.release()
    monkeypatch.undo()
    resumed = model.refresh(lambda: pytest.fail("resumes, does not reload"))
    assert resumed.resumed is True
    assert model.main() == sorted(DAY_2), "a chunk was checkpointed but never merged"


def test_a_full_refresh_whose_replace_is_fenced_off_keeps_main_and_the_bookkeeping(model):
    """A newer owner's fenced write to main (here a fence above any this run can hold) makes
    Delta skip a --full-refresh's replace of main without an error: the run must stop,
    with main and the bookkeeping tables as they were, not take main for replaced and drop
    the bookkeeping."""
    main = model.tables.main
    with engine_commit(model.spark, "a newer owner", (fence_app_id(main), 2**62)):
        model.spark.sql(f"INSERT INTO {main} SELECT * FROM {main} WHERE false")
    with pytest.raises(LeaseLostError, match="was not replaced"):
        model.refresh([(1, "replaced")], full_refresh=True)
    assert model.main() == sorted(ROWS)
    assert tables.table_exists(model.spark, model.tables.staging), "bookkeeping dropped"
