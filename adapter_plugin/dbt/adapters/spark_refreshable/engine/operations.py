"""Operations for people, run from the dbt process: a model's status, and releasing a
stuck lock (refused while its owner is alive, unless forced)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import Any

from dbt.adapters.spark_refreshable.engine import progress
from dbt.adapters.spark_refreshable.engine.cycle_plan import LoadedCycle, resumable_cycle
from dbt.adapters.spark_refreshable.engine.lease import Lease, read_state
from dbt.adapters.spark_refreshable.engine.merge import MainHistory
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.owners import Owner, owner_is_alive
from dbt.adapters.spark_refreshable.engine.spec import DEFAULTS
from dbt.adapters.spark_refreshable.engine.tables import table_exists


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) if epoch else "never"


def status_of(spark: Any, tables: ModelTables) -> dict[str, Any]:
    """A model's state for people and programs: phase, the cycle in progress (owner,
    heartbeat, merge progress), the last completed refresh (counts, duration) and the last
    failed run (message, time, phase). Times are epoch seconds."""
    tables = _where_kept(spark, tables)
    if not table_exists(spark, tables.state):
        return {"model": tables.display, "phase": None}
    state = read_state(spark, tables.state).state
    found: dict[str, Any] = {
        "model": tables.display,
        "phase": state.phase,
        "last_completed": {
            "refresh_id": state.last_refresh_id,
            "at": state.last_completed_at,
            "rows": state.last_rows,
            **json.loads(state.last_result or "{}"),
        },
        "last_error": json.loads(state.last_error) if state.last_error else None,
    }
    if state.phase != "IDLE":
        found["cycle"] = {
            "refresh_id": state.refresh_id,
            "started_at": state.started_at,
            "owner": state.owner_description(),
            "heartbeat_at": state.heartbeat_at,
            "chunks_total": state.chunks_total,
        }
    merging = resumable_cycle(spark, tables, state)
    if merging is not None:
        found["cycle"].update(
            merging=True,
            chunks_total=len(merging.plan.chunks),
            chunks_done=len(_chunks_done(spark, tables, merging)),
        )
    return found


def newest_state(spark: Any, tables: ModelTables) -> dict[str, Any] | None:
    """A model's state row as the lease reads it (see ``state_log``); None before its first
    run. A table scan would not do: a compare-and-set that lost leaves its row."""
    if not table_exists(spark, tables.state):
        return None
    return asdict(read_state(spark, tables.state).state)


def _where_kept(spark: Any, tables: ModelTables) -> ModelTables:
    """The model's tables, with its bookkeeping beside main while an earlier version's
    state table is there and the next run has not moved it yet."""
    beside = tables.beside_main()
    if table_exists(spark, tables.state) or not table_exists(spark, beside.state):
        return tables
    return beside


def _chunks_done(spark: Any, tables: ModelTables, cycle: LoadedCycle) -> set[int]:
    """The chunks of a cycle left to merge that are merged: checkpointed, or committed to
    main (a run's last chunk has no checkpoint)."""
    done: set[int] = set()
    if table_exists(spark, tables.progress):
        done |= progress.read_checkpoint(spark, tables, cycle.refresh_id).chunks
    if table_exists(spark, tables.main):
        history = MainHistory.since(spark, tables, cycle.plan.base_version)
        done |= set(history.committed_chunks(cycle.refresh_id))
    return done


def status(spark: Any, tables: ModelTables, as_json: bool = False) -> str:
    """:func:`status_of` as lines of text, or as one JSON object."""
    found = status_of(spark, tables)
    if as_json:
        return json.dumps(found, sort_keys=True)
    if found["phase"] is None:
        return f"{tables.display}: not built yet"
    last = found["last_completed"]
    lines = [
        f"{tables.display}: {found['phase']}"
        + (", merging" if found.get("cycle", {}).get("merging") else ""),
        f"  last completed refresh: {_when(last['at'])}, {last['rows']} rows "
        f"(cycle {last['refresh_id']})",
    ]
    if "seconds" in last:
        lines.append(
            f"    +{last['inserted']} ~{last['updated']} -{last['deleted']} "
            f"={last['unchanged']} in {last['chunks']} chunk(s), {last['seconds']}s"
            + (" (resumed)" if last["resumed"] else "")
        )
    cycle = found.get("cycle")
    if cycle:
        beat = cycle["heartbeat_at"]
        lines.append(
            f"  cycle {cycle['refresh_id']} since {_when(cycle['started_at'])}, owner "
            f"{cycle['owner']}, last heartbeat "
            + (f"{time.time() - beat:.0f}s ago" if beat else "n/a")
        )
        if "chunks_done" in cycle:
            lines.append(
                f"  merge progress: {cycle['chunks_done']}/{cycle['chunks_total']} chunks done"
            )
    error = found["last_error"]
    if error:
        message = error["message"].replace("\n", "\n    ")
        lines.append(
            f"  last failed run: {_when(error['at'])}, in phase {error['phase']} "
            f"(cycle {error['refresh_id']}):\n    {message}"
        )
    return "\n".join(lines)


def unlock(spark: Any, tables: ModelTables, lock_timeout: float | None, force: bool) -> str:
    """Release the lease. The phase stays: the next run resumes an unowned cycle whose plan
    is committed (see ``cycle_plan``) and discards any other REFRESHING."""
    timeout = float(lock_timeout or DEFAULTS["lock_timeout"])
    tables = _where_kept(spark, tables)
    lease = Lease(spark, tables.state, Owner.this_process("unlock"), timeout)
    found = lease.read()
    if found.owner_id is None:
        return f"{tables.display}: not locked (phase {found.phase})"
    if owner_is_alive(found, lease.me, timeout, time.time()) and not force:
        raise lease.held_error(found)
    lease.force_release()
    return (
        f"{tables.display}: released the lock held by {found.owner_description()} in phase "
        f"{found.phase}; the next `dbt run` recovers from there."
    )
