"""Operations for people, run from the dbt process: a model's status, and releasing a
stuck lock (refused while its owner is alive, unless forced)."""

from __future__ import annotations

import time
from typing import Any

from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.spec import DEFAULTS
from dbt.adapters.spark_refreshable.engine.sql import literal
from dbt.adapters.spark_refreshable.engine.state import Lease, Owner, owner_is_alive
from dbt.adapters.spark_refreshable.engine.tables import table_exists


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) if epoch else "never"


def status(spark: Any, tables: ModelTables) -> str:
    if not table_exists(spark, tables.state):
        return f"{tables.display}: not built yet"
    state = Lease(spark, tables.state, Owner.this_process("status"), 0).read()
    lines = [
        f"{tables.display}: {state.phase}",
        f"  last completed refresh: {_when(state.last_completed_at)}, {state.last_rows} rows "
        f"(cycle {state.last_refresh_id})",
    ]
    if state.phase != "IDLE":
        beat = f"{time.time() - state.heartbeat_at:.0f}s ago" if state.heartbeat_at else "n/a"
        lines.append(
            f"  cycle {state.refresh_id} since {_when(state.started_at)}, owner "
            f"{state.owner_description()}, last heartbeat {beat}"
        )
    if state.phase == "FINISHING" and table_exists(spark, tables.progress):
        done = spark.sql(
            f"SELECT count(DISTINCT chunk) AS done FROM {tables.progress} "
            f"WHERE refresh_id = {literal(state.refresh_id)}"
        ).collect()[0]["done"]
        lines.append(f"  merge progress: {done}/{state.chunks_total} chunks done")
    return "\n".join(lines)


def unlock(spark: Any, tables: ModelTables, lock_timeout: float | None, force: bool) -> str:
    """Release the lease. The phase stays: an unowned REFRESHING is discarded by the next
    run, an unowned FINISHING is resumed."""
    timeout = float(lock_timeout or DEFAULTS["lock_timeout"])
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
