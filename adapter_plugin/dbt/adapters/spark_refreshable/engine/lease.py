"""The lease: who may refresh a model, held through compare-and-set changes of its state.

Every change of a model's state is a compare-and-set: a blind append of the next row of its
state table, whose commit carries the row and the table version its writer read the state
at. Which of two appends from one read wins, and so which commit holds the state, is the
rule of ``state_log``, which writers and readers apply alike; a writer reads its own append
back in the log to learn whether it won. Reads take the state from the log, without a Spark
job; when a commit that is not the engine's changed the table's rows, a read scans the
table. Once the log holds ``COMPACT_AT_ROWS`` rows, a change deletes the rows below its own.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pyspark.errors import AnalysisException

from dbt.adapters.spark_refreshable.engine.commits import (
    SESSION_CONF_LOCK,
    USER_METADATA_OPTION,
    engine_commit,
    is_commit_conflict,
)
from dbt.adapters.spark_refreshable.engine.errors import LeaseLostError, LockHeldError
from dbt.adapters.spark_refreshable.engine.owners import (
    Owner,
    mark_running,
    mark_stopped,
    owner_is_alive,
)
from dbt.adapters.spark_refreshable.engine.state import (
    RELEASED_OWNER,
    STATE_COLUMNS,
    TRANSITIONS,
    Phase,
    State,
    state_row_select,
)
from dbt.adapters.spark_refreshable.engine.state_log import (
    COMPACTION_TAG,
    LogWindow,
    Mark,
    StateAppend,
    append_tag,
    read_log,
)

# Rows the log may hold before a change deletes the rows below its own. Reads take the
# state from the log, so rows cost only a scan after a foreign commit; a compaction (a
# DELETE, ~2 s of a tiny cycle's bookkeeping) came every fifth or sixth cycle at 12 rows.
COMPACT_AT_ROWS = 48

# Fences per lease version; a new state table starts its lease version at the epoch in
# milliseconds, above those of a dropped one, and the product stays a 64-bit integer.
FENCE_STRIDE = 2**20


@dataclass(frozen=True)
class StateRead:
    """A model's state as read, with what a writer that goes on from it needs."""

    state: State
    rows: int  # rows in the state table
    read_at: int  # the table version it was read at (-1: the log could not be read)


def read_state(spark: Any, table: str) -> StateRead:
    """A model's state: from the log's newest winner (no Spark job), or a scan of the
    table when a commit that is not the engine's changed its rows."""
    try:
        window, winner = read_log(spark, table, LogWindow.newest_winner)
    except AnalysisException:  # not a Delta table, or its files gone: the scan says which
        window, winner = None, None
    # read_at no newer than what was read: a later commit falls in the next append's
    # window (a needless loss at worst), never out of it
    read_at = window.newest if window is not None else -1
    if isinstance(winner, StateAppend) and winner.state is not None:
        return StateRead(winner.state, winner.rows, read_at)
    rows = [row.asDict() for row in spark.table(table).collect()]
    newest = max((row["lease_version"] for row in rows), default=None)
    current = [row for row in rows if row["lease_version"] == newest]
    if len(current) != 1:
        raise LeaseLostError(
            f"{table} should hold exactly one state row at its newest lease version "
            f"({newest}) and holds {len(current)}. Repair with `dbt run --full-refresh` "
            f"on the model."
        )
    state = State(**{name: current[0].get(name) for name in STATE_COLUMNS})
    return StateRead(state, len(rows), read_at)


class Lease:
    """This run's hold on a model's state. All state writes go through here, serialized by
    a lock, so the heartbeat thread and the refresh never race each other."""

    def __init__(self, spark: Any, table: str, me: Owner, lock_timeout: float) -> None:
        self.spark = spark
        self.table = table
        self.me = me
        self.lock_timeout = lock_timeout
        self.state = State()
        self.lost: str | None = None
        self._lock = threading.RLock()
        self._fences = 0  # fences handed out by this lease
        # the lease version of our last state commit: ``state`` may be a newer owner's, once
        # a read found the lease taken over
        self._held_version: int | None = None
        self._log_rows = 1  # rows in the state table at our last read or write
        self._read_at = -1  # the table version ``state`` was read at (or we committed it)

    # -- reading ---------------------------------------------------------------------
    def read(self) -> State:
        found = read_state(self.spark, self.table)
        with self._lock:
            self.state, self._log_rows, self._read_at = found.state, found.rows, found.read_at
            return self.state

    def fence(self) -> int:
        """A fencing token for one write to main (Delta's ``txnVersion``), above every token
        of the owners before us and below every token of the owners after us: it grows with
        the lease version of our own last state commit, and a takeover commits a higher one.
        Never from a lease version merely read, which may be a newer owner's. Raises
        :class:`LeaseLostError` once the lease is known lost."""
        with self._lock:
            if self.lost is not None:
                raise LeaseLostError(self.lost)
            if self._held_version is None:
                raise LeaseLostError(f"{self.table}: this run never held the lease")
            self._fences += 1
            return self._held_version * FENCE_STRIDE + self._fences

    def holds(self) -> bool:
        return self.state.owner_id == self.me.owner_id and self.lost is None

    # -- compare-and-set -------------------------------------------------------------
    def _compare_and_set(self, changes: dict[str, Any], require_owner: bool) -> bool:
        """Apply ``changes`` if nobody changed the state since we read it."""
        with self._lock:
            expected = self.state
            if require_owner and expected.owner_id != self.me.owner_id:
                return False
            new = replace(expected, lease_version=expected.lease_version + 1, **changes)
            try:
                won = self._append(new)
            except Exception as exc:
                if not is_commit_conflict(exc):
                    raise
                won = None
            if won is not None:
                self._read_at = won.version  # our commit holds the state we go on from
                self.state = new
                self._held_version = new.lease_version
                self._log_rows += 1
                if self._log_rows >= COMPACT_AT_ROWS:
                    self._compact(new.lease_version)
            return won is not None

    def _append(self, new: State) -> StateAppend | None:
        """Append ``new`` as the state's next row; the append if it won (see
        ``state_log``), None if it lost."""
        token = uuid.uuid4().hex
        writer = (
            self.spark.sql(state_row_select(new))
            .write.format("delta")
            .mode("append")
            .option(USER_METADATA_OPTION, append_tag(token, new, self._log_rows + 1, self._read_at))
        )
        with SESSION_CONF_LOCK:  # no chunk's tag or fence from the session on a state commit
            writer.saveAsTable(self.table)

        def outcome(window: LogWindow) -> StateAppend | Mark | None:
            mine = window.find(token)
            if mine is None:  # not read back yet (or, read back to our read, never committed)
                return Mark.UNDECIDED if window.oldest > self._read_at + 1 else None
            won = window.won(mine)
            return won if won is Mark.UNDECIDED else mine if won else None

        won = read_log(self.spark, self.table, outcome)[1]
        return won if isinstance(won, StateAppend) else None

    def _compact(self, newest: int) -> None:
        """Delete the rows below the newest; a conflict leaves them for a later change."""
        try:
            with engine_commit(self.spark, COMPACTION_TAG):
                self.spark.sql(f"DELETE FROM {self.table} WHERE lease_version < {newest}")
            self._log_rows = 1
        except Exception as exc:
            if not is_commit_conflict(exc):
                raise

    def _claim(self, **changes: Any) -> dict[str, Any]:
        now = time.time()
        return {
            "owner_id": self.me.owner_id,
            "owner_host": self.me.host,
            "owner_pid": self.me.pid,
            "owner_pid_started": self.me.pid_started,
            "owner_invocation": self.me.invocation,
            "heartbeat_at": now,
            "lease_timeout": float(self.lock_timeout),
            **changes,
        }

    def _claim_new_cycle(self) -> dict[str, Any]:
        return self._claim(
            phase=Phase.REFRESHING.value, refresh_id=uuid.uuid4().hex, started_at=time.time()
        )

    def own_new_table(self, create: Callable[[State], bool]) -> State | None:
        """Own a state table that does not exist yet: ``create`` makes it with this run's
        claim on a new cycle as its one row, in one commit, and says whether it did (of two
        runs that race to create it, one does). Returns the state as it was before we owned
        it (``State.initial``), or None when another run created the table first."""
        initial = State.initial()
        claimed = replace(
            initial,
            lease_version=initial.lease_version + 1,
            **self._claim_new_cycle(),
        )
        mark_running(self.me)  # as in acquire: alive before the claim can be seen
        try:
            created = create(claimed)
        except BaseException:
            self.forget()
            raise
        if not created:
            self.forget()
            return None
        with self._lock:
            self.state = claimed
            self._held_version = claimed.lease_version
            self._log_rows = 1
            self._read_at = 0  # the table's first commit holds it
        return initial

    def acquire(self, attempts: int = 5, just_read: State | None = None) -> State:
        """Own the state: start a cycle from IDLE, or take over from a gone owner.
        ``just_read``: the state as this run has just read it, to try first (the
        compare-and-set fails if it changed since).

        Returns the state as it was before we owned it (its phase tells what to recover).
        Raises :class:`LockHeldError` when a live owner holds it."""
        for attempt in range(attempts):
            if attempt == 0 and just_read is not None:
                with self._lock:
                    self.state = found = just_read
            else:
                found = self.read()
            if found.current_phase is Phase.IDLE:
                changes = self._claim_new_cycle()
            elif owner_is_alive(found, self.me, self.lock_timeout, time.time()):
                raise self.held_error(found)
            else:
                changes = self._claim()
            # counted as active before the claim can be seen: a thread of this process that
            # reads the state right after our commit must find us alive, not gone
            mark_running(self.me)
            try:
                won = self._compare_and_set(changes, require_owner=False)
            except BaseException:
                self.forget()  # not ours after all: never count as a live owner
                raise
            if won:
                return found
            self.forget()
        raise self.held_error(self.read())

    def held_error(self, found: State) -> LockHeldError:
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(found.started_at or 0))
        beat = time.time() - (found.heartbeat_at or 0)
        return LockHeldError(
            f"{self.table} is being refreshed by {found.owner_description()}: phase "
            f"{found.phase} since {since}, last heartbeat {beat:.0f}s ago (lock_timeout "
            f"{self.lock_timeout:.0f}s). Wait for it to finish; if that run is dead, the lock "
            f"is free once its heartbeat is older than lock_timeout, or release it now with "
            f"`dbt run-operation refreshable_unlock --args '{{model: <name>, force: true}}'`."
        )

    def restart_cycle(self) -> None:
        """Discard the cycle in REFRESHING we took over: same phase, a new refresh id."""
        if not self._compare_and_set(
            {"refresh_id": uuid.uuid4().hex, "started_at": time.time()}, require_owner=True
        ):
            self._lose("restarting the cycle")

    def transition(self, to: Phase, **changes: Any) -> None:
        """Move to phase ``to``; only the owner may, and only along TRANSITIONS."""
        with self._lock:
            current = self.state.current_phase
            if to not in TRANSITIONS[current]:
                raise ValueError(f"state machine: {current.value} -> {to.value} is not allowed")
            if not self._compare_and_set({"phase": to.value, **changes}, require_owner=True):
                self._lose(f"moving to {to.value}")

    def heartbeat(self) -> None:
        with self._lock:
            if self.lost is not None or self.state.owner_id != self.me.owner_id:
                return  # not holding it (e.g. between cleanup and the next cycle)
            if self._compare_and_set({"heartbeat_at": time.time()}, require_owner=True):
                return
            # a conflict may be transient: look again before giving up
            self.read()
            if self.state.owner_id != self.me.owner_id or not self._compare_and_set(
                {"heartbeat_at": time.time()}, require_owner=True
            ):
                self._lose("renewing the heartbeat")

    def ensure_held(self) -> None:
        """Before a chunk's retry: stop if the lease was taken over."""
        with self._lock:
            if self.lost is None and self.read().owner_id != self.me.owner_id:
                self._lose("checking the lease")
            if self.lost is not None:
                raise LeaseLostError(self.lost)

    def release(self, **changes: Any) -> None:
        """Give the lease up (the phase stays unless ``changes`` say otherwise), so the next
        run can go on at once. Does nothing if we no longer hold it."""
        try:
            with self._lock:
                if self.lost is None:
                    self._compare_and_set({**RELEASED_OWNER, **changes}, require_owner=True)
        finally:
            self.forget()

    def force_release(self) -> None:
        """Take the lease from whoever holds it (an operator's unlock)."""
        if not self._compare_and_set(dict(RELEASED_OWNER), require_owner=False):
            raise LeaseLostError(f"{self.table} changed while unlocking; look again and retry.")

    def forget(self) -> None:
        mark_stopped(self.me)

    def _lose(self, doing: str) -> None:
        try:
            found = self.read()
        except Exception:
            found = self.state
        self.lost = (
            f"This run lost the refresh lock on {self.table} while {doing}: it is now held by "
            f"{found.owner_description()} in phase {found.phase}. This run stopped; the new "
            f"owner carries on from the last checkpoint."
        )
        raise LeaseLostError(self.lost)


class Heartbeat:
    """Renews a lease in the background every ``interval`` seconds while a run works."""

    def __init__(self, lease: Lease, interval: float) -> None:
        self.lease = lease
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="refreshable-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.lease.heartbeat()
            except LeaseLostError:
                return
            except Exception:
                continue
