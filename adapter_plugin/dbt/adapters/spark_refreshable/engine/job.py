"""The contract of the Python job the materialization submits (the ``refresh_job`` macro):
the request it sends, the result the engine hands back, and the names of the job's globals.

The macro writes the request into the job's code as JSON; the adapter turns the result into
dbt's adapter response (``responses.response_for``), which ``run_results.json`` keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

# The job's globals: its session and JobContext (set by the adapter's job runner, read by
# the macro's code) and its result (set by the macro's code, read by the runner).
SESSION_GLOBAL = "spark"
JOB_GLOBAL = "dbt_job"
RESULT_GLOBAL = "dbt_job_result"


@dataclass(frozen=True)
class RefreshRequest:
    """One refresh of one model. ``sql``: a SQL model's compiled code, its snapshot (None
    for a Python model, whose snapshot the job passes as a function); ``empty``: dbt's
    ``--empty``."""

    schema: str
    identifier: str
    config: dict[str, Any]
    full_refresh: bool = False
    empty: bool = False
    invocation_id: str = "unknown"
    sql: str | None = None
    model: str | None = None

    @classmethod
    def from_json(cls, request: dict[str, Any]) -> RefreshRequest:
        """The request as the macro encodes it; a key it does not send is an error."""
        unknown = sorted(set(request) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"a refresh request has no field(s) {unknown}")
        return cls(**{**request, "invocation_id": request.get("invocation_id") or "unknown"})


@dataclass
class RefreshCounts:
    """What one run of a refreshable model did, as the result and dbt's adapter response
    both report it. ``refresh_id``: the cycle it completed (or, when ``skipped``, the last
    completed one); ``chunks_done``: by this run; ``main_compacted``: main's files before
    and after, if this run compacted it; ``scratch_vacuumed``: the files deleted per scratch
    table this run vacuumed ('staging', 'changes'), if it vacuumed one."""

    skipped: bool = False  # by refresh_every, or skip_unchanged_inputs
    refresh_id: str | None = None
    resumed: bool = False
    chunks_done: int = 0
    chunks_total: int = 0
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    rows_unchanged: int = 0
    seconds_load: float = 0.0
    seconds_diff: float = 0.0
    seconds_fetch: float = 0.0
    seconds_merge: float = 0.0
    seconds_bookkeeping: float = 0.0
    main_compacted: list[int] | None = None
    scratch_vacuumed: dict[str, int] | None = None

    def counts(self) -> dict[str, Any]:
        """The counts alone, to build the other report from."""
        return {f.name: getattr(self, f.name) for f in fields(RefreshCounts)}


@dataclass
class RefreshResult(RefreshCounts):
    """The engine's result: the counts, dbt's one-line ``message``, ``diff_read_main``: its
    diff read main's rows (not the hashes kept from the last cycle), ``diff_skipped``: the
    snapshot was the last one again (its rows and checksum), so no diff ran, and
    ``main_replaced``: a --full-refresh replaced main with the snapshot in one commit before
    its cycle (the rows it wrote count as inserted, with what the cycle's diff found)."""

    message: str = ""
    diff_read_main: bool = False
    diff_skipped: bool = False
    main_replaced: bool = False

    @property
    def rows_affected(self) -> int:
        return self.rows_inserted + self.rows_updated + self.rows_deleted
