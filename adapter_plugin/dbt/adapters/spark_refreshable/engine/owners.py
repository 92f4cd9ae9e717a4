"""Who owns a refresh, and whether that owner may still be working.

The owner of a non-IDLE state holds a lease renewed by heartbeats. It counts as gone when
it released the lease, when its heartbeat is older than ``lock_timeout``, or at once when
it ran on this host and its process is gone (process id checked with its start time, so a
reused id is not mistaken for it), or ran in this process and is no longer running.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from dataclasses import dataclass

from dbt.adapters.spark_refreshable.engine.state import State

# Leases held by runs in this process right now (owner ids).
_ACTIVE_OWNERS: set[str] = set()
_ACTIVE_LOCK = threading.Lock()


def mark_running(owner: Owner) -> None:
    """``owner``, a run of this process, counts as alive from now on."""
    with _ACTIVE_LOCK:
        _ACTIVE_OWNERS.add(owner.owner_id)


def mark_stopped(owner: Owner) -> None:
    with _ACTIVE_LOCK:
        _ACTIVE_OWNERS.discard(owner.owner_id)


def _process_start(pid: int) -> str | None:
    """The start time of a process (Linux /proc), to tell a reused pid from the owner."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class Owner:
    """Who runs a refresh: a fresh id per run, plus where it runs, for humans and liveness."""

    owner_id: str
    host: str
    pid: int
    pid_started: str | None
    invocation: str

    @classmethod
    def this_process(cls, invocation: str) -> Owner:
        pid = os.getpid()
        return cls(uuid.uuid4().hex, socket.gethostname(), pid, _process_start(pid), invocation)


def clock_margin(timeout: float) -> float:
    """Slack for comparing a heartbeat written by another machine's clock with ours."""
    return min(max(2.0, 0.1 * timeout), 60.0)


def owner_is_alive(state: State, me: Owner, lock_timeout: float, now: float) -> bool:
    """Whether the owner of ``state`` may still be working. Its own lease duration (stored
    when it claimed) decides, not the reader's ``lock_timeout`` (used for rows that store
    none), plus a margin for clock skew between machines."""
    if state.owner_id is None:
        return False
    if (
        state.owner_host == me.host
        and state.owner_pid == me.pid
        and (state.owner_pid_started == me.pid_started)
    ):
        with _ACTIVE_LOCK:
            return state.owner_id in _ACTIVE_OWNERS
    if state.owner_host == me.host and state.owner_pid is not None:
        if not _process_exists(state.owner_pid):
            return False
        started = _process_start(state.owner_pid)
        if started is not None and started != state.owner_pid_started:
            return False
    timeout = state.lease_timeout or lock_timeout
    return state.heartbeat_at is not None and now - state.heartbeat_at < (
        timeout + clock_margin(timeout)
    )
