"""Adapter responses of Python jobs, as dbt prints them and writes them to run_results.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.spark_refreshable.engine.job import RefreshCounts, RefreshResult


@dataclass
class RefreshAdapterResponse(RefreshCounts, AdapterResponse):
    """What one refresh of a refreshable model did (AdapterResponse's fields come first)."""


def response_for(result: Any) -> AdapterResponse:
    """The adapter response of a Python job's result: a refresh's (see ``engine.job``), or
    dbt's plain OK for any other Python model."""
    if not isinstance(result, RefreshResult):
        return AdapterResponse(_message="OK")
    return RefreshAdapterResponse(
        _message=result.message, rows_affected=result.rows_affected, **result.counts()
    )
