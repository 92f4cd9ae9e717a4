"""Adapter responses of Python jobs, as dbt prints them and writes them to run_results.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.spark_refreshable.engine.job import RefreshResult


@dataclass
class RefreshAdapterResponse(AdapterResponse):
    """What one refresh of a refreshable model did."""

    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    rows_unchanged: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    resumed: bool = False
    skipped: bool = False  # by refresh_every, or skip_unchanged_inputs
    refresh_id: str | None = None
    seconds_load: float = 0.0
    seconds_diff: float = 0.0
    seconds_fetch: float = 0.0
    seconds_merge: float = 0.0
    seconds_bookkeeping: float = 0.0
    main_compacted: list[int] | None = None  # main's files before and after, if compacted


def response_for(result: Any) -> AdapterResponse:
    """The adapter response of a Python job's result: a refresh's (see ``engine.job``), or
    dbt's plain OK for any other Python model."""
    if not isinstance(result, RefreshResult):
        return AdapterResponse(_message="OK")
    shared = set(RefreshAdapterResponse.__dataclass_fields__) & set(result.__dataclass_fields__)
    return RefreshAdapterResponse(
        _message=result.message,
        rows_affected=result.rows_affected,
        **{name: getattr(result, name) for name in shared},
    )
