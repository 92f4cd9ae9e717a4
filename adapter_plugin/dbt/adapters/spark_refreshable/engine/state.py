"""The state machine: one source of truth for what a model's refresh is doing.

A model's state is the newest row (highest ``lease_version``) of a Delta table used as a
log (``naming.ModelTables.state``), changed only through the lease (``lease.Lease``).

Phases and the only transitions allowed::

    IDLE --acquire--> REFRESHING --merged (the plan in the change set's commit)--> IDLE
                      REFRESHING --a first build's staging whole--> FINISHING --merged--> IDLE
                      REFRESHING --merge failed or stopped--> FINISHING
                      REFRESHING --load failed / orphaned--> IDLE
                      FINISHING --main replaced, or merge failed on resume--> REFRESHING
    CLEANUP --> IDLE  (a state left by 0.1.0, which emptied tables there)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from enum import Enum

from dbt.adapters.spark_refreshable.engine.sql import literal


class Phase(str, Enum):
    IDLE = "IDLE"
    REFRESHING = "REFRESHING"
    FINISHING = "FINISHING"
    CLEANUP = "CLEANUP"


TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.IDLE: frozenset({Phase.REFRESHING}),
    Phase.REFRESHING: frozenset({Phase.FINISHING, Phase.IDLE}),
    Phase.FINISHING: frozenset({Phase.IDLE, Phase.REFRESHING}),
    Phase.CLEANUP: frozenset({Phase.IDLE}),
}


@dataclass(frozen=True)
class State:
    """The state row. Times are epoch seconds."""

    phase: str = Phase.IDLE.value
    lease_version: int = 0
    refresh_id: str | None = None
    owner_id: str | None = None
    owner_host: str | None = None
    owner_pid: int | None = None
    owner_pid_started: str | None = None
    owner_invocation: str | None = None
    started_at: float | None = None
    heartbeat_at: float | None = None
    vnodes: int | None = None
    chunks_total: int | None = None
    snapshot_rows: int | None = None
    snapshot_checksum: str | None = None
    cycle_plan: str | None = None  # JSON: keys, columns, columns to add and drop
    last_refresh_id: str | None = None
    last_completed_at: float | None = None
    last_rows: int | None = None
    last_checksum: str | None = None
    last_columns: str | None = None
    lease_timeout: float | None = None  # the owner's lock_timeout (None: rows of 0.1.0)
    last_result: str | None = None  # JSON: what the last completed refresh did, how long
    last_error: str | None = None  # JSON: the last failed run's message, time, phase
    last_inputs: str | None = None  # JSON: what the last completed cycle read (inputs.Recorded)

    @classmethod
    def initial(cls) -> State:
        """The row of a new state table: at rest, never refreshed, its lease version above
        any that a dropped state table reached (see ``Lease.fence``)."""
        return cls(lease_version=int(time.time() * 1000))

    @property
    def current_phase(self) -> Phase:
        return Phase(self.phase)

    def owner_description(self) -> str:
        if self.owner_id is None:
            return "nobody (released)"
        return (
            f"dbt invocation {self.owner_invocation} (host {self.owner_host}, pid {self.owner_pid})"
        )


STATE_COLUMNS: dict[str, str] = {
    "phase": "STRING",
    "lease_version": "BIGINT",
    "refresh_id": "STRING",
    "owner_id": "STRING",
    "owner_host": "STRING",
    "owner_pid": "BIGINT",
    "owner_pid_started": "STRING",
    "owner_invocation": "STRING",
    "started_at": "DOUBLE",
    "heartbeat_at": "DOUBLE",
    "vnodes": "BIGINT",
    "chunks_total": "BIGINT",
    "snapshot_rows": "BIGINT",
    "snapshot_checksum": "STRING",
    "cycle_plan": "STRING",
    "last_refresh_id": "STRING",
    "last_completed_at": "DOUBLE",
    "last_rows": "BIGINT",
    "last_checksum": "STRING",
    "last_columns": "STRING",
    "lease_timeout": "DOUBLE",
    "last_result": "STRING",
    "last_error": "STRING",
    "last_inputs": "STRING",
}
assert list(STATE_COLUMNS) == [f.name for f in fields(State)]


def state_row_select(state: State) -> str:
    """A ``SELECT`` of ``state`` as one row of the state table."""
    return "SELECT " + ", ".join(
        f"CAST({literal(getattr(state, name))} AS {sql_type}) AS {name}"
        for name, sql_type in STATE_COLUMNS.items()
    )


RELEASED_OWNER = dict.fromkeys(
    ("owner_id", "owner_host", "owner_pid", "owner_pid_started", "owner_invocation", "heartbeat_at")
)
